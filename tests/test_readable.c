/* What a person reads: reports ordered failures first with an anchor per case, small when large,
 * waivers with their reasons, validation cases apart from the kernel's; and the commands around
 * them: merge names missing or repeated shards, gate --update makes a first baseline, a selection
 * that matches nothing shows the id form, check takes float16 files. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scratch.h"
#include "test_files.h"
#include "cmd_argv.h"
#include "cli.h"
#include "npy.h"
#include "report.h"

static char dir[64];

static void setup(void) { scratch_make_quiet(dir, sizeof dir, "readable"); }

static void teardown(void) { scratch_remove(dir); }


static const char *sub(const char *name) { return sub_of(dir, name); }

/* stderr of one command, through a file */
static int with_stderr(int (*cmd)(int, char **), const char **argv, char *buf, size_t len)
{
    char path[128];
    snprintf(path, sizeof path, "%s/stderr.txt", dir);
    fflush(stderr);
    int saved = dup(2), fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    dup2(fd, 2);
    int rc = cmd(argc_of(argv), (char **)argv);
    fflush(stderr);
    dup2(saved, 2);
    close(fd);
    close(saved);
    char *s = test_slurp(path);
    snprintf(buf, len, "%s", s);
    free(s);
    return rc;
}

/* ---- merge: every shard of the run, each once ---------------------------------------------- */

Test(readable, merge_names_missing_and_repeated_shards, .init = setup, .fini = teardown)
{
    char shard[3][128], msg[2048];
    for (int i = 0; i < 3; i++) {
        char s[8];
        snprintf(shard[i], sizeof shard[i], "%s/s%d", dir, i + 1);
        snprintf(s, sizeof s, "%d/3", i + 1);
        cr_assert_eq(RUN("cases/smoke.json", "--filter", "smoke/fwd_grid*", "--shard", s, "--report-dir", shard[i], "--quiet"),
                     EXIT_OK);
        cJSON *r = test_report(shard[i], NULL);
        cr_assert_str_eq(cJSON_GetObjectItem(r, "shard")->valuestring, s, "a shard's report records I/N");
        cJSON_Delete(r);
    }
    const char *two[] = {"conform", "merge", "--report-dir", sub("m"), shard[0], shard[1], NULL};
    cr_assert_eq(with_stderr(cmd_merge, two, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "shard 3/3 missing") && strstr(msg, "2 of 3 given"), "%s", msg);
    cr_assert_neq(access(sub("m"), F_OK), 0, "nothing written");
    /* shard 1 of an empty selection twice: no case repeats, the shard does */
    const char *again[] = {"conform", "merge", "--report-dir", sub("m"), shard[0], shard[1], shard[2], shard[1], NULL};
    cr_assert_eq(with_stderr(cmd_merge, again, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "shard 2/3 given twice") && strstr(msg, shard[1]), "%s", msg);
    const char *all[] = {"conform", "merge", "--report-dir", sub("m"), shard[2], shard[0], shard[1], NULL};
    cr_assert_eq(cmd_merge(argc_of(all), (char **)all), EXIT_OK);
}

/* ---- gate: the first baseline ------------------------------------------------------------- */

Test(readable, gate_update_creates_a_missing_baseline, .init = setup, .fini = teardown)
{
    char msg[2048], cur[160];
    cr_assert_eq(RUN("cases/smoke.json", "--filter", "smoke/fwd_grid*", "--report-dir", sub("rep"), "--quiet"), EXIT_OK);
    snprintf(cur, sizeof cur, "%s/report.json", sub("rep"));
    const char *plain[] = {"conform", "gate", "--baseline", sub("base/baseline.json"), "--current", cur, NULL};
    cr_assert_eq(with_stderr(cmd_gate, plain, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "no baseline at") && strstr(msg, "--update"), "%s", msg);
    cr_assert_eq(mkdir(sub("base"), 0755), 0);
    const char *update[] = {"conform", "gate", "--baseline", sub("base/baseline.json"), "--current", cur, "--update", NULL};
    cr_assert_eq(cmd_gate(argc_of(update), (char **)update), EXIT_OK);
    cJSON *b = test_json(sub("base/baseline.json")), *c = test_json(cur);
    cr_assert(cJSON_Compare(b, c, 1), "the baseline is the current report");
    cJSON_Delete(b);
    cJSON_Delete(c);
    cr_assert_eq(cmd_gate(argc_of(plain), (char **)plain), EXIT_OK, "and gates the next run");
}

/* ---- a selection that matches nothing ------------------------------------------------------ */

Test(readable, a_filter_without_the_suite_name_suggests_the_id_form, .init = setup, .fini = teardown)
{
    char msg[2048];
    const char *a[] = {"conform", "run", "--filter", "fwd_grid*", "--list", NULL};
    cr_assert_eq(with_stderr(cmd_run, a, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "did you mean --filter 'conformance/fwd_grid*'") && strstr(msg, "e.g. conformance/fwd_grid/"), "%s",
              msg);
    const char *b[] = {"conform", "run", "cases/smoke.json", "--filter", "no_such_case", "--list", NULL};
    cr_assert_eq(with_stderr(cmd_run, b, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "ids are SUITE/NAME") && strstr(msg, "e.g. smoke/"), "%s", msg);
    const char *c[] = {"conform", "export", "--filter", "fwd_grid", "--out", sub("ex"), NULL};
    cr_assert_eq(with_stderr(cmd_export, c, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "did you mean --filter 'conformance/fwd_grid'"), "%s", msg);
}

/* ---- check: float16 files ------------------------------------------------------------------ */

/* the roi_align doc vector's inputs as float16 files, and an output at dtype (float16 or float32) */
static void write_f16_call(const char *out_dtype, double bump)
{
    char err[256];
    double x[36], rois[5] = {0, 0.5, 0.5, 3.5, 3.5}, out[4] = {0};
    for (int i = 0; i < 36; i++) x[i] = i + 1;
    int64_t xd[4] = {1, 1, 6, 6}, rd[2] = {1, 5}, od[4] = {1, 1, 2, 2};
    shape_t xs = shape_make(4, xd), rs = shape_make(2, rd), os = shape_make(4, od);
    const dtype_desc *f16 = dtype_get(CONFORM_DTYPE_FLOAT16);
    cr_assert_eq(npy_write_dtype(sub("x.npy"), &xs, f16, x, err, sizeof err), 0, "%s", err);
    cr_assert_eq(npy_write_dtype(sub("rois.npy"), &rs, f16, rois, err, sizeof err), 0, "%s", err);
    /* the same numbers (exact in float16) as float64, for eval */
    cr_assert_eq(npy_write_f64(sub("x64.npy"), &xs, x, err, sizeof err), 0, "%s", err);
    cr_assert_eq(npy_write_f64(sub("rois64.npy"), &rs, rois, err, sizeof err), 0, "%s", err);
    /* the reference of one bilinear sample per bin at the bin centres: (1,1.5)..: exact in float16 */
    const char *ev[] = {"conform", "eval", "roi_align", "--impl", "reference", "--attr", "pooled_h=2", "--attr", "pooled_w=2",
                        "--attr", "sampling_ratio=1", "--input", NULL, "--input", NULL, "--output-dir", sub("ref"), NULL};
    char in1[300], in2[300];
    snprintf(in1, sizeof in1, "input=%s", sub("x64.npy"));
    snprintf(in2, sizeof in2, "rois=%s", sub("rois64.npy"));
    ev[12] = in1;
    ev[14] = in2;
    cr_assert_eq(cmd_eval(argc_of(ev), (char **)ev), EXIT_OK);
    tensor_t r;
    char rp[300];
    snprintf(rp, sizeof rp, "%s/output.npy", sub("ref"));
    cr_assert_eq(npy_read(rp, &r, err, sizeof err), 0, "%s", err);
    for (int i = 0; i < 4; i++) out[i] = r.data[i] + (i == 0 ? bump : 0);
    tensor_free(&r);
    cr_assert_eq(npy_write_dtype(sub("out.npy"), &os, dtype_find(out_dtype), out, err, sizeof err), 0, "%s", err);
}

static int check_call(const char *dtype, char *msg, size_t len)
{
    char in1[300], in2[300], act[300];
    snprintf(in1, sizeof in1, "input=%s", sub("x.npy"));
    snprintf(in2, sizeof in2, "rois=%s", sub("rois.npy"));
    snprintf(act, sizeof act, "output=%s", sub("out.npy"));
    const char *a[] = {"conform", "check", "roi_align", "--attr", "pooled_h=2", "--attr", "pooled_w=2", "--attr", "sampling_ratio=1",
                       "--input", in1, "--input", in2, "--actual", act, "--report-dir", sub("chk"), dtype ? "--dtype" : NULL, dtype,
                       NULL};
    return with_stderr(cmd_check, a, msg, len);
}

Test(readable, check_takes_float16_inputs_and_reads_the_dtype_from_the_actual, .init = setup, .fini = teardown)
{
    char msg[2048];
    write_f16_call("float16", 0);
    cr_assert_eq(check_call(NULL, msg, sizeof msg), EXIT_OK, "%s", msg);
    cJSON *r = test_report(sub("chk"), NULL);
    cr_assert_str_eq(cJSON_GetObjectItem(r, "dtype")->valuestring, "float16", "the dtype comes from the '<f2' actual");
    cJSON_Delete(r);
    /* a float16 actual with another --dtype: which to pass */
    cr_assert_eq(check_call("float32", msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "pass --dtype float16"), "%s", msg);
    /* float16 inputs beside a float32 actual: widened exactly, and a wrong output still fails */
    write_f16_call("float32", 0);
    cr_assert_eq(check_call(NULL, msg, sizeof msg), EXIT_OK, "%s", msg);
    write_f16_call("float32", 0.25);
    cr_assert_eq(check_call(NULL, msg, sizeof msg), EXIT_FAIL, "%s", msg);
}

/* ---- reports: failures first, one anchor per case, missing grouped by reason ------------------ */

/* the path of a case's file from the export's manifest (kind "inputs" or "outputs") */
static void case_file(const char *ex, const char *id, const char *kind, const char *name, char *buf, size_t len)
{
    char p[300];
    snprintf(p, sizeof p, "%s/manifest.json", ex);
    cJSON *m = test_json(p);
    const cJSON *c, *e = NULL;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(m, "cases"))
        if (!strcmp(cJSON_GetObjectItem(c, "id")->valuestring, id)) e = c;
    cr_assert(e, "%s not exported", id);
    const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(e, kind), name);
    if (cJSON_IsObject(v)) v = cJSON_GetObjectItem(v, "path");
    snprintf(buf, len, "%s/%s", ex, v->valuestring);
    cJSON_Delete(m);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
}

#define FAILED_ID "smoke/fwd_grid/aligned=true,sampling_ratio=2"
#define ERROR_ID "smoke/fwd_grid/aligned=false,sampling_ratio=2"
#define SKIPPED_ID "smoke/fwd_grid/aligned=true,sampling_ratio=0"
#define LOST_ID "smoke/fwd_grid/aligned=false,sampling_ratio=0"

/* the fwd_grid cases with one of each: a wrong output (failed), an input edited since the export
   (error), an output the runner skipped with a reason and one it did not write (missing) */
static void mixed_run(void)
{
    const char *ex = sub("ex");
    cr_assert_eq(EXPORT("cases/smoke.json", "--filter", "smoke/fwd_grid", "--out", ex, "--outputs", "optimized"), EXIT_OK);
    char p[600], err[256];
    case_file(ex, FAILED_ID, "outputs", "output", p, sizeof p);
    tensor_t t;
    cr_assert_eq(npy_read(p, &t, err, sizeof err), 0, "%s", err);
    t.data[0] += 1;
    cr_assert_eq(npy_write_dtype(p, &t.shape, dtype_get(CONFORM_DTYPE_FLOAT32), t.data, err, sizeof err), 0);
    tensor_free(&t);
    case_file(ex, ERROR_ID, "inputs", "input", p, sizeof p);
    FILE *f = fopen(p, "ab");
    fputc(0, f);
    fclose(f);
    case_file(ex, SKIPPED_ID, "outputs", "output", p, sizeof p);
    cr_assert_eq(remove(p), 0);
    case_file(ex, LOST_ID, "outputs", "output", p, sizeof p);
    cr_assert_eq(remove(p), 0);
    snprintf(p, sizeof p, "%s/runner.json", ex);
    write_file(p, "{\"schema\": \"conform-runner\", \"schema_version\": 1, \"cases\": {\"" SKIPPED_ID
                  "\": {\"status\": \"skipped\", \"reason\": \"no float16 kernel here\"}}}");
    char impl[300];
    snprintf(impl, sizeof impl, "dir:%s", ex);
    cr_assert_eq(RUN("--impl", impl, "--report-dir", sub("rep"), "--quiet"), EXIT_FAIL);
}

/* where the row of a case (its anchor) is in an HTML report, -1 when nowhere; and how many */
static long anchor_at(const char *html, const char *id, int *count)
{
    char needle[400];
    snprintf(needle, sizeof needle, " id=\"%s\"", id);
    const char *first = strstr(html, needle);
    *count = 0;
    for (const char *p = first; p; p = strstr(p + 1, needle)) ++*count;
    return first ? first - html : -1;
}

Test(readable, failures_come_first_with_an_anchor_per_case_and_missing_grouped_by_reason, .init = setup, .fini = teardown)
{
    mixed_run();
    char p[300];
    snprintf(p, sizeof p, "%s/report.html", sub("rep"));
    char *html = test_slurp(p);
    int n;
    long failed = anchor_at(html, FAILED_ID, &n);
    cr_assert_eq(n, 1, "one anchor per case");
    long error = anchor_at(html, ERROR_ID, &n);
    cr_assert_eq(n, 1);
    long skipped = anchor_at(html, SKIPPED_ID, &n), lost = anchor_at(html, LOST_ID, &n);
    cr_assert(failed > 0 && failed < error && error < skipped && error < lost, "failed, then error, then missing: %ld %ld %ld %ld",
              failed, error, skipped, lost);
    /* every case of the report has exactly one anchor */
    cJSON *r = test_report(sub("rep"), NULL);
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "cases")) {
        anchor_at(html, cJSON_GetObjectItem(c, "id")->valuestring, &n);
        cr_assert_eq(n, 1, "%s has %d anchors", cJSON_GetObjectItem(c, "id")->valuestring, n);
    }
    cJSON_Delete(r);
    cr_assert(strstr(html, "<b>1 missing</b>: no float16 kernel here"), "a group per reason, with its count");
    cr_assert(strstr(html, "<b>1 missing</b>: no output file written"));
    free(html);
    snprintf(p, sizeof p, "%s/report.md", sub("rep"));
    char *md = test_slurp(p);
    const char *fm = strstr(md, "<a id=\"" FAILED_ID "\"></a>"), *em = strstr(md, "<a id=\"" ERROR_ID "\"></a>"),
               *mm = strstr(md, "### Missing outputs, by reason");
    cr_assert(fm && em && mm && fm < em && em < mm, "report.md: failed, error, then the missing by reason");
    cr_assert(strstr(md, "| 1 | no float16 kernel here | `" SKIPPED_ID "` |"), "%s", mm);
    free(md);
}

/* a failing run with many failures: each heat map drawn once, the first few only */
Test(readable, a_large_failing_report_stays_small, .init = setup, .fini = teardown)
{
    cr_assert_eq(RUN("cases/smoke.json", "--op", "roi_align_v2_backward", "--impl", "plugin:" TEST_BUILD "/plugins/faulty_wrong.so",
                     "--report-dir", sub("rep"), "--quiet"), EXIT_FAIL);
    cJSON *r = test_report(sub("rep"), NULL);
    int with_heat = 0;
    const cJSON *c, *o;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "cases")) {
        int h = 0;
        cJSON_ArrayForEach(o, cJSON_GetObjectItem(c, "outputs")) h |= cJSON_GetObjectItem(o, "heatmap") != NULL;
        with_heat += h;
    }
    cJSON_Delete(r);
    cr_assert_gt(with_heat, 40, "enough failing cases to matter");
    char p[300];
    snprintf(p, sizeof p, "%s/report.html", sub("rep"));
    char *html = test_slurp(p);
    int maps = 0, figures = 0;
    for (const char *q = strstr(html, "<svg class=\"heat\""); q; q = strstr(q + 1, "<svg class=\"heat\"")) maps++;
    (void)figures;
    cr_assert(maps > 0 && maps <= 20 * 3, "%d heat maps: the first 20 failures' (up to 3 outputs each)", maps);
    cr_assert(strstr(html, "heat map: in report.json"), "the others say where theirs are");
    struct stat st;
    cr_assert_eq(stat(p, &st), 0);
    cr_assert_lt(st.st_size, 2 << 20, "report.html is %lld bytes", (long long)st.st_size);
    free(html);
}

Test(readable, waiver_reasons_and_links_are_in_html_and_markdown, .init = setup, .fini = teardown)
{
    write_file(sub("w.json"), "{\"waivers\": [{\"pattern\": \"smoke/bwd_grid*\", \"reason\": \"ticket 123: known scale\", "
                              "\"link\": \"https://example.com/t/123\"}]}");
    cr_assert_eq(RUN("cases/smoke.json", "--filter", "smoke/bwd_grid*", "--op", "roi_align_v2_backward", "--impl",
                     "plugin:" TEST_BUILD "/plugins/faulty_wrong.so", "--waivers", sub("w.json"), "--report-dir", sub("rep"), "--quiet"),
                 EXIT_OK);
    char p[300];
    snprintf(p, sizeof p, "%s/report.html", sub("rep"));
    char *html = test_slurp(p);
    cr_assert(strstr(html, "ticket 123: known scale") && strstr(html, "<a href=\"https://example.com/t/123\">"));
    cr_assert(strstr(html, "<h2 id=\"waived\">Waived</h2>"));
    free(html);
    snprintf(p, sizeof p, "%s/report.md", sub("rep"));
    char *md = test_slurp(p);
    cr_assert(strstr(md, "| failed | ") && strstr(md, "ticket 123: known scale | <https://example.com/t/123> |"), "%s", md);
    free(md);
}

/* a plugin of the RoIAlign ops only: the other ops' refusals pass without it, counted apart */
Test(readable, validation_cases_are_counted_apart_from_the_implementation, .init = setup, .fini = teardown)
{
    cr_assert_eq(RUN("cases/smoke.json", "--op", "deformable_offsets", "--op", "roi_align", "--impl",
                     "plugin:" TEST_BUILD "/plugins/plugin_roi_align.so", "--report-dir", sub("rep"), "--quiet"), EXIT_OK);
    cJSON *r = test_report(sub("rep"), NULL);
    const cJSON *d = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "ops"), "deformable_offsets");
    double passed = cJSON_GetObjectItem(d, "passed")->valuedouble, validated = cJSON_GetObjectItem(d, "validation_passed")->valuedouble,
           total = cJSON_GetObjectItem(d, "total")->valuedouble;
    cr_assert(validated > 0 && validated == passed, "every deformable pass is a refusal: %g of %g", validated, passed);
    char row[200];
    snprintf(row, sizeof row, "| deformable_offsets | %.0f | 0 | %.0f |", total, validated);
    char p[300];
    snprintf(p, sizeof p, "%s/report.md", sub("rep"));
    char *md = test_slurp(p);
    cr_assert(strstr(md, "| op | cases | passed | validated |") && strstr(md, row), "%s\n%s", row, md);
    cr_assert(strstr(md, "validated: bad inputs the harness refused"));
    free(md);
    cJSON_Delete(r);
}
