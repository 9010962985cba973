/* The named standards through the harness: every computed output of every report format carries
 * them, --gate-on moves the verdict and the exit code (and junit) to them, merge keeps them. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "npy.h"
#include "report.h"
#include "scratch.h"
#include "test_files.h"
#include "standards.h"

static char dir[64];

static void setup(void) { scratch_make_quiet(dir, sizeof dir, "std"); }

static void teardown(void) { scratch_remove(dir); }

static char *slurp(const char *path) { return test_slurp(path); }

static cJSON *load(const char *sub) { return test_report(dir, sub); }

static int run_into(const char *sub, const char *filter, const char *impl, const char *gate)
{
    char rep[128];
    snprintf(rep, sizeof rep, "%s/%s", dir, sub);
    const char *argv[16] = {"conform", "run", "cases/smoke.json", "--filter", filter, "--report-dir", rep, "--quiet"};
    int argc = 8;
    if (impl) { argv[argc++] = "--impl"; argv[argc++] = impl; }
    if (gate) { argv[argc++] = "--gate-on"; argv[argc++] = gate; }
    return cmd_run(argc, (char **)argv);
}

/* every computed output has every standard, each with a bool "passed" */
static int count_outputs_with_all_standards(const cJSON *report)
{
    int n = 0;
    const cJSON *c, *o;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(report, "cases")) {
        cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(c, "outputs")) {
            if (!cJSON_GetObjectItemCaseSensitive(o, "numel")) continue; /* not computed */
            const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "standards");
            cr_assert(s, "an output without standards");
            for (int k = 0; k < N_STANDARDS; k++) {
                const cJSON *e = cJSON_GetObjectItemCaseSensitive(s, conform_standards[k].name);
                cr_assert(cJSON_IsBool(cJSON_GetObjectItemCaseSensitive(e, "passed")), "%s", conform_standards[k].name);
            }
            n++;
        }
    }
    return n;
}

Test(standards_reports, every_output_in_every_format, .init = setup, .fini = teardown)
{
    cr_assert_eq(run_into("a", "smoke/fwd_grid*", NULL, NULL), EXIT_OK);
    cJSON *r = load("a");
    cr_assert_gt(count_outputs_with_all_standards(r), 0);
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(r, "gated_on")->valuestring, "derived");
    /* the optimized path is its own benchmark: commercial ratios are x/(x+1e-7) <= 1, level L2 */
    const cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(r, "cases"), 0);
    const cJSON *cr = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(c, "outputs"), 0), "standards"),
        "commercial-ratio");
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(cr, "level")->valuestring, "L2");
    cr_assert_leq(cJSON_GetObjectItemCaseSensitive(cr, "mere_ratio")->valuedouble, 1.0);
    const cJSON *per_op = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "ops"), "roi_align"), "standards");
    cr_assert_gt(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(per_op, "ascend-v2-mixed"), "judged")->valuedouble, 0);
    cJSON_Delete(r);
    char p[256];
    snprintf(p, sizeof p, "%s/a/report.md", dir);
    char *md = slurp(p);
    snprintf(p, sizeof p, "%s/a/report.html", dir);
    char *html = slurp(p);
    for (int k = 0; k < N_STANDARDS; k++) {
        cr_assert(strstr(md, conform_standards[k].name), "report.md lacks %s", conform_standards[k].name);
        cr_assert(strstr(html, conform_standards[k].name), "report.html lacks %s", conform_standards[k].name);
    }
    cr_assert(strstr(md, "gated on **the derived bound**"));
    free(md);
    free(html);
}

/* The faulty plugin scales roi_align_v2_backward by 1.001: beyond the derived bound, within the
 * v2 mixed tolerance (rtol 2^-10 plus atol) on these cases, beyond torch_npu's 1e-4. */
Test(standards_reports, gate_on_moves_the_verdict, .init = setup, .fini = teardown)
{
    const char *wrong = "plugin:" TEST_BUILD "/plugins/faulty_wrong.so", *filter = "smoke/bwd_grid*";
    cr_assert_eq(run_into("derived", filter, wrong, NULL), EXIT_FAIL);
    cr_assert_eq(run_into("v2", filter, wrong, "ascend-v2-mixed"), EXIT_OK);
    cr_assert_eq(run_into("dt", filter, wrong, "ascend-v2-mixed,double-thousandth"), EXIT_FAIL);
    cJSON *r = load("v2");
    const cJSON *gated = cJSON_GetObjectItemCaseSensitive(r, "gated_on");
    cr_assert(cJSON_IsArray(gated));
    cr_assert_str_eq(cJSON_GetArrayItem(gated, 0)->valuestring, "ascend-v2-mixed");
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(r, "cases")) {
        cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(c, "status")->valuestring, "failed");
        cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(c, "gate_status")->valuestring, "passed");
    }
    cJSON_Delete(r);
    char p[256];
    snprintf(p, sizeof p, "%s/v2/junit.xml", dir);
    char *xml = slurp(p);
    cr_assert_null(strstr(xml, "<failure"), "junit follows the gate");
    free(xml);
    snprintf(p, sizeof p, "%s/dt/junit.xml", dir);
    xml = slurp(p);
    cr_assert(strstr(xml, "fails the gated standard double-thousandth"));
    free(xml);
}

Test(standards_reports, unknown_standard_is_refused, .init = setup, .fini = teardown)
{
    cr_assert_eq(run_into("bad", "smoke/fwd_grid*", NULL, "ascend-v3"), EXIT_USAGE);
    char p[256];
    snprintf(p, sizeof p, "%s/bad/report.json", dir);
    cr_assert_neq(access(p, F_OK), 0, "nothing is written");
}

Test(standards_reports, merge_keeps_standards_and_gate, .init = setup, .fini = teardown)
{
    char sh[2][128], merged[128];
    for (int i = 0; i < 2; i++) {
        char shard[8];
        snprintf(sh[i], sizeof sh[i], "%s/s%d", dir, i);
        snprintf(shard, sizeof shard, "%d/2", i + 1);
        const char *argv[] = {"conform", "run", "cases/smoke.json", "--filter", "smoke/bwd_grid*", "--report-dir", sh[i],
                              "--quiet", "--shard", shard, "--impl", "plugin:" TEST_BUILD "/plugins/faulty_wrong.so", "--gate-on",
                              "ascend-v2-mixed"};
        cmd_run(14, (char **)argv);
    }
    snprintf(merged, sizeof merged, "%s/m", dir);
    const char *m[] = {"conform", "merge", "--report-dir", merged, sh[0], sh[1]};
    cr_assert_eq(cmd_merge(6, (char **)m), EXIT_OK, "the gate decides the merged verdict too");
    cJSON *r = load("m");
    cr_assert_eq(count_outputs_with_all_standards(r), 8);
    cr_assert(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(r, "gated_on")));
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(r, "summary"), "gate_failed")->valuedouble, 0);
    cJSON_Delete(r);
}


/* conform check: torchvision's float32 RoIAlign output scaled by 1 + 5e-4 (a scale bug beyond
 * the derived bound, within 2^-10 relative) fails by default and passes gated on v2 mixed, fails
 * gated on torch-assert-close; the report carries the standards and says what gated. */
Test(standards_reports, check_gate_on, .init = setup, .fini = teardown)
{
    char err[256], scaled[128], rep[128];
    tensor_t y;
    cr_assert_eq(npy_read("cases/check/roi_align/output.npy", &y, err, sizeof err), 0, "%s", err);
    int64_t n = tensor_numel(&y);
    float *f = malloc((size_t)n * sizeof *f);
    for (int64_t i = 0; i < n; i++) f[i] = (float)(y.data[i] * (1 + 5e-4));
    snprintf(scaled, sizeof scaled, "%s/scaled.npy", dir);
    cr_assert_eq(npy_write_f32(scaled, &y.shape, f, err, sizeof err), 0, "%s", err);
    free(f);
    tensor_free(&y);
    char actual[160];
    snprintf(actual, sizeof actual, "output=%s", scaled);
    snprintf(rep, sizeof rep, "%s/chk", dir);
    const char *argv[] = {"conform", "check", "roi_align", "--attr", "pooled_h=3", "--attr", "pooled_w=4", "--attr",
                          "spatial_scale=0.25", "--attr", "sampling_ratio=2", "--input", "input=cases/check/roi_align/input.npy",
                          "--input", "rois=cases/check/roi_align/rois.npy", "--actual", actual, "--report-dir", rep,
                          "--gate-on", "ascend-v2-mixed"};
    cr_assert_eq(cmd_check(19, (char **)argv), EXIT_FAIL, "the derived bound");
    cr_assert_eq(cmd_check(21, (char **)argv), EXIT_OK, "gated on ascend-v2-mixed");
    cJSON *r = load("chk");
    cr_assert_eq(count_outputs_with_all_standards(r), 1);
    cr_assert(cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(r, "gated_on")));
    cJSON_Delete(r);
    argv[20] = "torch-assert-close";
    cr_assert_eq(cmd_check(21, (char **)argv), EXIT_FAIL, "gated on torch-assert-close");
    argv[20] = "no-such-standard";
    cr_assert_eq(cmd_check(21, (char **)argv), EXIT_USAGE);
}
