/* Reports and the gate: four formats from one run, shards that merge into the one-run verdicts,
 * seeds that reproduce reports whatever the threads, waivers, and a bench gate that re-measures. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scratch.h"
#include "test_files.h"
#include "cli.h"
#include "compare.h"
#include "dtype.h"
#include "report.h"

static char dir[64];

static void setup(void) { scratch_make_quiet(dir, sizeof dir, "rep"); }

static void teardown(void) { scratch_remove(dir); }

static int run(const char **argv, int argc) { return cmd_run(argc, (char **)argv); }

static cJSON *load(const char *sub) { return test_report(dir, sub); }

static char *slurp(const char *sub, const char *name)
{
    char p[256];
    snprintf(p, sizeof p, "%s/%s/%s", dir, sub, name);
    return test_slurp(p);
}

Test(reports, one_run_writes_four_formats, .init = setup, .fini = teardown)
{
    char rep[128];
    snprintf(rep, sizeof rep, "%s/a", dir);
    const char *argv[] = {"conform", "run", "cases/smoke.json", "--filter", "smoke/fwd_grid*", "--report-dir", rep, "--quiet"};
    cr_assert_eq(run(argv, 8), EXIT_OK);
    char *md = slurp("a", "report.md"), *xml = slurp("a", "junit.xml"), *html = slurp("a", "report.html");
    cr_assert(strstr(md, "| op | cases | passed |"), "markdown summary table");
    cr_assert(strstr(md, "## Tolerances"));
    cr_assert(strstr(md, COMPARE_ULP_MEANING), "the markdown says what max ULP means");
    cr_assert(strstr(html, COMPARE_ULP_MEANING), "the html says what max ULP means");
    cr_assert(strstr(xml, "<testsuites name=\"conform\""));
    cr_assert(strstr(xml, "<testcase classname=\"conform.roi_align\""));
    cr_assert(strstr(html, "<svg"), "inline SVG histograms");
    cr_assert(!strstr(html, "http://") && !strstr(html, "https://") && !strstr(html, "<script src"), "self-contained");
    free(md); free(xml); free(html);
}

static int by_text(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* the ids and statuses of a report, one line each, sorted: what must not depend on sharding */
static char *verdicts(cJSON *r)
{
    int n = cJSON_GetArraySize(cJSON_GetObjectItem(r, "cases"));
    char **lines = calloc((size_t)n, sizeof *lines);
    int i = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "cases")) {
        lines[i] = malloc(600);
        char *o = cJSON_PrintUnformatted(cJSON_GetObjectItem(c, "outputs"));
        snprintf(lines[i], 600, "%s %s %.200s", cJSON_GetObjectItem(c, "id")->valuestring,
                 cJSON_GetObjectItem(c, "status")->valuestring, o);
        free(o);
        i++;
    }
    qsort(lines, (size_t)n, sizeof *lines, by_text);
    size_t total = 1;
    for (i = 0; i < n; i++) total += strlen(lines[i]) + 1;
    char *all = calloc(1, total);
    for (i = 0; i < n; i++) { strcat(all, lines[i]); strcat(all, "\n"); free(lines[i]); }
    free(lines);
    return all;
}

Test(reports, three_shards_merge_into_the_one_run_verdicts, .init = setup, .fini = teardown)
{
    char one[128], sh[3][128], merged[128];
    snprintf(one, sizeof one, "%s/one", dir);
    snprintf(merged, sizeof merged, "%s/merged", dir);
    const char *a1[] = {"conform", "run", "cases/smoke.json", "--report-dir", one, "--quiet"};
    cr_assert_eq(run(a1, 6), EXIT_OK);
    for (int i = 0; i < 3; i++) {
        char shard[8];
        snprintf(sh[i], sizeof sh[i], "%s/s%d", dir, i + 1);
        snprintf(shard, sizeof shard, "%d/3", i + 1);
        const char *a[] = {"conform", "run", "cases/smoke.json", "--shard", shard, "--report-dir", sh[i], "--quiet"};
        cr_assert_eq(run(a, 8), EXIT_OK);
    }
    const char *m[] = {"conform", "merge", "--report-dir", merged, sh[0], sh[1], sh[2]};
    cr_assert_eq(cmd_merge(7, (char **)m), EXIT_OK);
    cJSON *r1 = load("one"), *rm = load("merged");
    char *v1 = verdicts(r1), *vm = verdicts(rm);
    cr_assert_str_eq(v1, vm);
    const char *keys[] = {"total", "passed", "failed", "error", "waived", "ambiguous_elements", "proofs", "proofs_failed"};
    for (int k = 0; k < 8; k++)
        cr_assert_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(r1, "summary"), keys[k])->valuedouble,
                     cJSON_GetObjectItem(cJSON_GetObjectItem(rm, "summary"), keys[k])->valuedouble, "%s", keys[k]);
    /* each shard ran a part, none ran everything */
    cJSON *s1 = load("s1");
    double part = cJSON_GetObjectItem(cJSON_GetObjectItem(s1, "summary"), "total")->valuedouble;
    cr_assert(part > 0 && part < cJSON_GetObjectItem(cJSON_GetObjectItem(r1, "summary"), "total")->valuedouble);
    /* merging a shard twice is refused */
    const char *m2[] = {"conform", "merge", "--report-dir", merged, sh[0], sh[0]};
    cr_assert_eq(cmd_merge(6, (char **)m2), EXIT_USAGE);
    free(v1); free(vm);
    cJSON_Delete(r1); cJSON_Delete(rm); cJSON_Delete(s1);
}

/* shards of different runs (another seed: other inputs under the same ids) are refused, not
   merged into a report whose header describes only the first */
Test(reports, shards_of_different_runs_do_not_merge, .init = setup, .fini = teardown)
{
    char s1[128], s2[128], merged[128];
    snprintf(s1, sizeof s1, "%s/s1", dir);
    snprintf(s2, sizeof s2, "%s/s2", dir);
    snprintf(merged, sizeof merged, "%s/merged", dir);
    const char *a1[] = {"conform", "run", "cases/smoke.json", "--filter", "smoke/fwd_grid*", "--shard", "1/2", "--report-dir", s1, "--quiet"};
    const char *a2[] = {"conform", "run", "cases/smoke.json", "--filter", "smoke/fwd_grid*", "--shard", "2/2", "--seed", "7", "--report-dir", s2, "--quiet"};
    cr_assert_eq(run(a1, 10), EXIT_OK);
    cr_assert_eq(run(a2, 12), EXIT_OK);
    const char *m[] = {"conform", "merge", "--report-dir", merged, s1, s2};
    cr_assert_eq(cmd_merge(6, (char **)m), EXIT_USAGE);
    cr_assert(access(merged, F_OK) != 0, "nothing written");
    /* the same seed merges */
    const char *a3[] = {"conform", "run", "cases/smoke.json", "--filter", "smoke/fwd_grid*", "--shard", "2/2", "--report-dir", s2, "--quiet"};
    cr_assert_eq(run(a3, 10), EXIT_OK);
    cr_assert_eq(cmd_merge(6, (char **)m), EXIT_OK);
}

/* a report without what legitimately differs between runs: timings, command, thread count */
static char *stable(cJSON *r)
{
    const char *drop[] = {"command", "threads", "duration_s"};
    for (int i = 0; i < 3; i++) cJSON_DeleteItemFromObject(r, drop[i]);
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(r, "summary"), "duration_s");
    cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "cases")) {
        cJSON_DeleteItemFromObject(c, "time_ref_s");
        cJSON_DeleteItemFromObject(c, "time_opt_s");
        cJSON_DeleteItemFromObject(c, "repro");
    }
    return cJSON_PrintUnformatted(r);
}

Test(reports, same_seed_same_report_whatever_the_threads, .init = setup, .fini = teardown)
{
    char a[128], b[128];
    snprintf(a, sizeof a, "%s/t1", dir);
    snprintf(b, sizeof b, "%s/t2", dir);
    const char *r1[] = {"conform", "run", "cases/smoke.json", "--seed", "77", "--threads", "1", "--report-dir", a, "--quiet"};
    const char *r2[] = {"conform", "run", "cases/smoke.json", "--seed", "77", "--threads", "2", "--report-dir", b, "--quiet"};
    cr_assert_eq(run(r1, 10), EXIT_OK);
    cr_assert_eq(run(r2, 10), EXIT_OK);
    cJSON *j1 = load("t1"), *j2 = load("t2");
    char *s1 = stable(j1), *s2 = stable(j2);
    cr_assert(!strcmp(s1, s2), "reports differ beyond timings");
    free(s1); free(s2);
    cJSON_Delete(j1); cJSON_Delete(j2);
}

static const char *write_file(const char *name, const char *text)
{
    static char p[256];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
    return p;
}

Test(reports, waivers_turn_expected_failures_into_waived_and_stale_ones_are_reported, .init = setup, .fini = teardown)
{
    /* a case whose expected values are wrong: the reference is right, so the case fails */
    char suite[256];
    snprintf(suite, sizeof suite, "%s", write_file("s.json",
        "{\"suite\": \"w\", \"cases\": [{\"name\": \"wrong_expect\", \"op\": \"roi_align\", "
        "\"shapes\": {\"input\": [1,1,2,2], \"rois\": [1,5]}, \"attrs\": {\"pooled_h\": 1, \"pooled_w\": 1, \"aligned\": false, \"sampling_ratio\": 1}, "
        "\"gen\": {\"input\": {\"data\": [1,2,3,4]}, \"rois\": {\"data\": [0,0,0,1,1]}}, \"expect\": {\"output\": [9]}}]}"));
    char rep[128];
    snprintf(rep, sizeof rep, "%s/w", dir);
    const char *plain[] = {"conform", "run", suite, "--report-dir", rep, "--quiet"};
    cr_assert_eq(run(plain, 6), EXIT_FAIL);
    char waivers[256];
    snprintf(waivers, sizeof waivers, "%s", write_file("waivers.json",
        "{\"waivers\": [{\"pattern\": \"w/wrong_*\", \"reason\": \"documented vector is wrong\", \"link\": \"https://example.invalid/1\"},"
        " {\"pattern\": \"w/fixed_long_ago\", \"reason\": \"was broken\", \"link\": \"https://example.invalid/2\"},"
        /* a hunt's alone (a "when", no "pattern"): run neither applies it nor calls it stale */
        " {\"when\": {\"ops\": [\"roi_align\"], \"input\": \"rois\", \"nonfinite\": true}, \"reason\": \"h\", \"link\": \"l\"}]}"));
    const char *waived[] = {"conform", "run", suite, "--waivers", waivers, "--report-dir", rep, "--quiet"};
    cr_assert_eq(run(waived, 8), EXIT_OK);
    cJSON *r = load("w");
    cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "cases"), 0);
    cr_assert_str_eq(cJSON_GetObjectItem(c, "status")->valuestring, "waived");
    cr_assert_str_eq(cJSON_GetObjectItem(c, "waived_status")->valuestring, "failed");
    cJSON *stale = cJSON_GetObjectItem(r, "stale_waivers");
    cr_assert_eq(cJSON_GetArraySize(stale), 1);
    cr_assert_str_eq(cJSON_GetObjectItem(cJSON_GetArrayItem(stale, 0), "pattern")->valuestring, "w/fixed_long_ago");
    cJSON_Delete(r);
    /* a waiver without a reason is refused */
    const char *bad = write_file("bad.json", "{\"waivers\": [{\"pattern\": \"x\", \"link\": \"y\"}]}");
    char badp[256];
    snprintf(badp, sizeof badp, "%s", bad);
    const char *refused[] = {"conform", "run", suite, "--waivers", badp, "--report-dir", rep, "--quiet"};
    cr_assert_eq(run(refused, 8), EXIT_USAGE);
}

/* an op's worst err/tol and max ULP are over the cases judged, not the waived divergences */
/* The tolerances paragraph names the unit roundoff of the run's dtype, in both formats. */
Test(reports, the_tolerances_paragraph_gives_the_runs_u)
{
    const char *const dtypes[] = {"float32", "float16", "bfloat16"};
    const char *const html_u[] = {"u = 2<sup>-24</sup> (float32)", "u = 2<sup>-11</sup> (float16)",
                                  "u = 2<sup>-8</sup> (bfloat16)"};
    const char *const md_u[] = {"`u = 2^-24` (float32)", "`u = 2^-11` (float16)", "`u = 2^-8` (bfloat16)"};
    for (int i = 0; i < 3; i++) {
        cJSON *r = report_new("run", "avx512", 1);
        report_set_dtype(r, dtypes[i], dtype_find(dtypes[i])->u);
        report_summarize(r);
        char *html = report_html(r), *md = report_markdown(r);
        cr_assert(strstr(html, html_u[i]), "html for %s: wants %s", dtypes[i], html_u[i]);
        cr_assert(strstr(md, md_u[i]), "markdown for %s: wants %s", dtypes[i], md_u[i]);
        char eta[64]; /* and the formula the code computes, with the dtype's eta */
        snprintf(eta, sizeof eta, "`" CONFORM_TOL_FORMULA "`, `u = 2^%d` (%s), `eta = 2^%d`", ilogb(dtype_find(dtypes[i])->u),
                 dtypes[i], ilogb(dtype_find(dtypes[i])->eta));
        cr_assert(strstr(md, eta), "markdown for %s: wants %s", dtypes[i], eta);
        free(html);
        free(md);
        cJSON_Delete(r);
    }
}

Test(reports, an_ops_worst_leaves_out_its_waived_cases)
{
    cJSON *r = cJSON_Parse("{\"summary\": {}, \"ops\": {}, \"cases\": ["
        "{\"op\": \"roi_align\", \"status\": \"passed\", \"outputs\": [{\"max_err_over_tol\": 0.1, \"max_ulp\": 2}]},"
        "{\"op\": \"roi_align\", \"status\": \"waived\", \"outputs\": [{\"max_err_over_tol\": 1e6, \"max_ulp\": 1e9}]},"
        "{\"op\": \"roi_align\", \"status\": \"failed\", \"outputs\": [{\"max_err_over_tol\": 3, \"max_ulp\": 40}]}]}");
    report_summarize(r);
    cJSON *o = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "ops"), "roi_align");
    cr_assert_float_eq(cJSON_GetObjectItem(o, "max_err_over_tol")->valuedouble, 3.0, 0);
    cr_assert_float_eq(cJSON_GetObjectItem(o, "max_ulp")->valuedouble, 40.0, 0);
    cr_assert_float_eq(cJSON_GetObjectItem(o, "waived")->valuedouble, 1.0, 0, "still counted");
    cJSON_Delete(r);
}

Test(reports, an_ops_worst_is_inf_when_an_output_had_nans)
{
    /* a case failing on NaNs carries err/tol "inf": the op's worst must not stay at its finite
       cases' 0.1, and the console prints inf, not the 1e308 the JSON aggregate stores */
    cJSON *r = cJSON_Parse("{\"summary\": {}, \"ops\": {}, \"cases\": ["
        "{\"op\": \"roi_align\", \"status\": \"passed\", \"outputs\": [{\"name\": \"output\", \"numel\": 4, \"max_err_over_tol\": 0.1, \"max_ulp\": 2}]},"
        "{\"op\": \"roi_align\", \"status\": \"failed\", \"outputs\": [{\"name\": \"output\", \"numel\": 4, \"max_err_over_tol\": \"inf\", "
        "\"max_ulp\": 0}]}]}");
    report_summarize(r);
    cJSON *o = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "ops"), "roi_align");
    cr_assert(cJSON_GetObjectItem(o, "max_err_over_tol")->valuedouble >= 1e308);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    report_print_summary(r, f);
    fclose(f);
    cr_assert(strstr(buf, " inf ") && !strstr(buf, "1e+308"), "%s", buf);
    free(buf);
    cJSON_Delete(r);
}

Test(reports, markdown_shows_a_devices_html_as_text)
{
    /* a failing case's message quotes a device's file name, and runner.json names the device: in
       report.md neither may become markup (a renderer would run the tag) */
    cJSON *r = cJSON_Parse("{\"summary\": {}, \"ops\": {}, \"runner\": {\"kind\": \"dir\", \"runner\": \"<b>npu</b>\","
        " \"ops\": {\"roi_align\": {\"supported\": false, \"reason\": \"<img src=x onerror=alert(1)>\"}}},"
        " \"cases\": [{\"id\": \"t/a<b>\", \"op\": \"roi_align\", \"status\": \"failed\", \"message\": "
        "\"output: ex/<script>x</script>.npy & more\", \"repro\": \"conform run\", \"outputs\": []}]}");
    report_summarize(r);
    char *md = report_markdown(r);
    cr_assert(!strstr(md, "<script>") && !strstr(md, "<img") && !strstr(md, "<b>npu"), "%s", md);
    cr_assert(strstr(md, "ex/&lt;script&gt;x&lt;/script&gt;.npy &amp; more"), "%s", md);
    cr_assert(strstr(md, "&lt;img src=x onerror=alert(1)&gt;") && strstr(md, "&lt;b&gt;npu&lt;/b&gt;"), "%s", md);
    cr_assert(strstr(md, "`t/a<b>`"), "a code span shows its text as it is: %s", md);
    free(md);
    cJSON_Delete(r);
}

Test(reports, rerun_selects_the_failures_of_a_previous_report, .init = setup, .fini = teardown)
{
    char rep[128], prev[256];
    snprintf(rep, sizeof rep, "%s/r", dir);
    snprintf(prev, sizeof prev, "%s", write_file("prev.json",
        "{\"schema\": \"conform-report\", \"cases\": [{\"id\": \"smoke/fwd_empty_rois\", \"status\": \"failed\"},"
        " {\"id\": \"smoke/bwd_empty_rois\", \"status\": \"passed\"}]}"));
    const char *argv[] = {"conform", "run", "cases/smoke.json", "--rerun", prev, "--report-dir", rep, "--quiet"};
    cr_assert_eq(run(argv, 8), EXIT_OK);
    cJSON *r = load("r");
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(r, "cases")), 1);
    cJSON_Delete(r);
}

/* bench gate: a slower median is re-measured before it is called a regression */
static void bench_file(const char *name, double median, const char *command)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{\"schema\": \"conform-bench\", \"results\": [{\"op\": \"roi_align\", \"impl\": \"optimized\", \"isa\": \"avx2\", "
             "\"threads\": 2, \"median_s\": %g, \"command\": \"%s\"}]}", median, command);
    write_file(name, text);
}

Test(reports, bench_gate_remeasures_before_calling_a_regression, .init = setup, .fini = teardown)
{
    char base[256], cur[256];
    snprintf(base, sizeof base, "%s/base.json", dir);
    snprintf(cur, sizeof cur, "%s/cur.json", dir);
    const char *argv[] = {"conform", "gate", "--baseline", base, "--current", cur};
    bench_file("base.json", 0.001, "true");
    bench_file("cur.json", 0.001, "true");
    cr_assert_eq(cmd_gate(6, (char **)argv), EXIT_OK);
    /* 10x slower once, but a re-measurement is fast: noise (the command's JSON is escaped for
       the bench file, which is JSON itself) */
    bench_file("cur.json", 0.010, "echo '{\\\"op\\\": \\\"roi_align\\\", \\\"impl\\\": \\\"optimized\\\", \\\"median_s\\\": 0.0011}'");
    cr_assert_eq(cmd_gate(6, (char **)argv), EXIT_OK);
    /* 10x slower and slow again when re-measured: a regression */
    bench_file("cur.json", 0.010, "echo '{\\\"op\\\": \\\"roi_align\\\", \\\"impl\\\": \\\"optimized\\\", \\\"median_s\\\": 0.009}'");
    cr_assert_eq(cmd_gate(6, (char **)argv), EXIT_FAIL);
    /* a conformance report against a bench file is a usage error */
    write_file("cur.json", "{\"schema\": \"conform-report\", \"cases\": []}");
    cr_assert_eq(cmd_gate(6, (char **)argv), EXIT_USAGE);
}

Test(reports, gate_update_is_deliberate, .init = setup, .fini = teardown)
{
    char base[256], cur[256];
    snprintf(base, sizeof base, "%s/base.json", dir);
    snprintf(cur, sizeof cur, "%s/cur.json", dir);
    bench_file("base.json", 0.001, "true");
    bench_file("cur.json", 0.5, "true");
    const char *gate[] = {"conform", "gate", "--baseline", base, "--current", cur};
    cr_assert_eq(cmd_gate(6, (char **)gate), EXIT_FAIL);
    const char *update[] = {"conform", "gate", "--baseline", base, "--current", cur, "--update"};
    cr_assert_eq(cmd_gate(7, (char **)update), EXIT_OK);
    cr_assert_eq(cmd_gate(6, (char **)gate), EXIT_OK);
}
