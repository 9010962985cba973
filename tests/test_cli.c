/* The command line: exit codes, messages, nothing half-written, the gate. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scratch.h"
#include "cli.h"
#include "npy.h"
#include "report.h"

static char dir[64];

/* the commands print tables and messages: keep the test log for the assertions */
static void quiet(void)
{
    cr_redirect_stdout();
    cr_redirect_stderr();
}

static void make_dir(void) { scratch_make(dir, sizeof dir, "cli"); }

static int count_files(const char *d)
{
    DIR *h = opendir(d);
    if (!h) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(h))) n += e->d_name[0] != '.';
    closedir(h);
    return n;
}

static int call(int (*cmd)(int, char **), int argc, const char **argv)
{
    return cmd(argc, (char **)argv);
}

/* doc vector inputs as .npy files */
static void write_doc_inputs(void)
{
    char p[128], err[256];
    double x[36], rois[5] = {0, -2, -2, 22, 22};
    for (int i = 0; i < 36; i++) x[i] = i + 1;
    int64_t xd[4] = {1, 1, 6, 6}, rd[2] = {1, 5};
    shape_t xs = shape_make(4, xd), rs = shape_make(2, rd);
    snprintf(p, sizeof p, "%s/x.npy", dir);
    cr_assert_eq(npy_write_f64(p, &xs, x, err, sizeof err), 0, "%s", err);
    snprintf(p, sizeof p, "%s/rois.npy", dir);
    cr_assert_eq(npy_write_f32(p, &rs, (float[]){0, -2, -2, 22, 22}, err, sizeof err), 0, "%s", err);
    (void)rois;
}

Test(cli, eval_reference_writes_the_documented_output, .init = quiet)
{
    make_dir();
    write_doc_inputs();
    char x[128], r[128], out[128], y[160];
    snprintf(x, sizeof x, "input=%s/x.npy", dir);
    snprintf(r, sizeof r, "rois=%s/rois.npy", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    const char *argv[] = {"conform", "eval", "roi_align", "--impl", "reference", "--attr", "pooled_h=3", "--attr",
                          "pooled_w=3", "--attr", "spatial_scale=0.25", "--attr", "sampling_ratio=2", "--attr",
                          "aligned=false", "--input", x, "--input", r, "--output-dir", out};
    cr_assert_eq(call(cmd_eval, 21, argv), EXIT_OK);
    tensor_t t;
    char err[256];
    snprintf(y, sizeof y, "%s/output.npy", out);
    cr_assert_eq(npy_read(y, &t, err, sizeof err), 0, "%s", err);
    cr_assert_eq(t.shape.rank, 4);
    cr_assert_float_eq(t.data[0], 4.5, 1e-12);
    cr_assert_float_eq(t.data[8], 32.5, 1e-12);
    tensor_free(&t);
    argv[4] = "optimized";
    cr_assert_eq(call(cmd_eval, 21, argv), EXIT_OK);
    cr_assert_eq(npy_read(y, &t, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(t.data[4], 18.5, 1e-5);
    tensor_free(&t);
    scratch_remove(dir);
}

static void expect_usage_error_writes_nothing(const char **argv, int argc)
{
    char out[128];
    snprintf(out, sizeof out, "%s/out", dir);
    cr_assert_eq(call(cmd_eval, argc, argv), EXIT_USAGE);
    cr_assert_eq(count_files(out), -1, "the output folder must not be created");
}

Test(cli, eval_bad_input_is_exit_2_and_writes_nothing, .init = quiet)
{
    make_dir();
    write_doc_inputs();
    char x[128], r[128], out[128];
    snprintf(x, sizeof x, "input=%s/x.npy", dir);
    snprintf(r, sizeof r, "rois=%s/rois.npy", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    /* rois given as the feature map: wrong shape */
    char bad[128];
    snprintf(bad, sizeof bad, "rois=%s/x.npy", dir);
    const char *a1[] = {"conform", "eval", "roi_align", "--impl", "reference", "--attr", "pooled_h=3", "--attr",
                        "pooled_w=3", "--input", x, "--input", bad, "--output-dir", out};
    expect_usage_error_writes_nothing(a1, 15);
    /* a missing attribute value, an unknown attribute, a bad boolean, a missing file */
    const char *a2[] = {"conform", "eval", "roi_align", "--impl", "reference", "--attr", "pooled_h=3", "--input", x,
                        "--input", r, "--output-dir", out};
    expect_usage_error_writes_nothing(a2, 13);
    const char *a3[] = {"conform", "eval", "roi_align", "--impl", "reference", "--attr", "pooled_h=3", "--attr",
                        "pooled_w=3", "--attr", "colour=red", "--input", x, "--input", r, "--output-dir", out};
    expect_usage_error_writes_nothing(a3, 17);
    const char *a4[] = {"conform", "eval", "roi_align", "--impl", "reference", "--attr", "pooled_h=3", "--attr",
                        "pooled_w=3", "--attr", "aligned=maybe", "--input", x, "--input", r, "--output-dir", out};
    expect_usage_error_writes_nothing(a4, 17);
    const char *a5[] = {"conform", "eval", "roi_align", "--impl", "reference", "--attr", "pooled_h=3", "--attr",
                        "pooled_w=3", "--input", "input=/nonexistent.npy", "--input", r, "--output-dir", out};
    expect_usage_error_writes_nothing(a5, 15);
    const char *a6[] = {"conform", "eval", "roi_align", "--impl", "golden", "--output-dir", out};
    expect_usage_error_writes_nothing(a6, 7);
    const char *a7[] = {"conform", "eval", "no_such_op", "--impl", "reference", "--output-dir", out};
    expect_usage_error_writes_nothing(a7, 7);
    const char *a8[] = {"conform", "eval", "roi_align", "--impl", "reference", "--attr", "pooled_h=3", "--attr",
                        "pooled_w=3", "--attr", "spatial_scale=-1", "--input", x, "--input", r, "--output-dir", out};
    expect_usage_error_writes_nothing(a8, 17);
    /* an attribute given twice is refused as an input given twice is: no silent last value */
    const char *a9[] = {"conform", "eval", "roi_align", "--impl", "reference", "--attr", "pooled_h=3", "--attr",
                        "pooled_w=3", "--attr", "pooled_h=4", "--input", x, "--input", r, "--output-dir", out};
    expect_usage_error_writes_nothing(a9, 17);
    scratch_remove(dir);
}

Test(cli, run_refuses_bad_suites_and_options_before_writing, .init = quiet)
{
    make_dir();
    char rep[128];
    snprintf(rep, sizeof rep, "%s/rep", dir);
    const char *a1[] = {"conform", "run", "/nonexistent.json", "--report-dir", rep};
    cr_assert_eq(call(cmd_run, 5, a1), EXIT_USAGE);
    const char *a2[] = {"conform", "run", "cases/smoke.json", "--threads", "zero", "--report-dir", rep};
    cr_assert_eq(call(cmd_run, 7, a2), EXIT_USAGE);
    const char *a3[] = {"conform", "run", "cases/smoke.json", "--filter", "no-such-case", "--report-dir", rep};
    cr_assert_eq(call(cmd_run, 7, a3), EXIT_USAGE);
    const char *a4[] = {"conform", "run", "cases/smoke.json", "--isa", "mmx", "--report-dir", rep};
    cr_assert_eq(call(cmd_run, 7, a4), EXIT_USAGE);
    /* the same suite twice would run, report and count every case twice under one id */
    const char *a5[] = {"conform", "run", "cases/smoke.json", "cases/smoke.json", "--filter", "smoke/fwd_grid", "--report-dir", rep};
    cr_assert_eq(call(cmd_run, 8, a5), EXIT_USAGE);
    cr_assert_eq(count_files(rep), -1);
    char ex[128];
    snprintf(ex, sizeof ex, "%s/ex", dir);
    const char *a6[] = {"conform", "export", "cases/smoke.json", "cases/smoke.json", "--filter", "smoke/fwd_grid", "--out", ex};
    cr_assert_eq(call(cmd_export, 8, a6), EXIT_USAGE);
    cr_assert_eq(count_files(ex), -1, "nothing exported");
    /* a golden folder that is not there is a typo, not a failed proof */
    const char *a7[] = {"conform", "run", "cases/smoke.json", "--filter", "smoke/fwd_grid", "--golden-dir", "/nonexistent", "--report-dir", rep};
    cr_assert_eq(call(cmd_run, 9, a7), EXIT_USAGE);
    cr_assert_eq(count_files(rep), -1);
    const char *a8[] = {"conform", "verify", "--op", "roi_align", "--golden-dir", "/nonexistent"};
    cr_assert_eq(call(cmd_verify, 6, a8), EXIT_USAGE);
    scratch_remove(dir);
}

static cJSON *run_report(const char *filter, const char *rep)
{
    const char *argv[] = {"conform", "run", "cases/smoke.json", "--filter", filter, "--report-dir", rep, "--quiet"};
    cr_assert_eq(call(cmd_run, 8, argv), EXIT_OK);
    char p[256], err[256];
    snprintf(p, sizeof p, "%s/report.json", rep);
    cJSON *j = read_json_file(p, err, sizeof err);
    cr_assert(j, "%s", err);
    return j;
}

Test(cli, run_report_has_the_contract_keys_and_repro_lines, .init = quiet)
{
    make_dir();
    char rep[128];
    snprintf(rep, sizeof rep, "%s/rep", dir);
    cJSON *j = run_report("*torch_npu_doc*", rep);
    const char *keys[] = {"schema", "schema_version", "command", "seed", "isa", "threads", "summary", "cases"};
    for (int i = 0; i < 8; i++) cr_assert(cJSON_GetObjectItem(j, keys[i]), "missing %s", keys[i]);
    cJSON *s = cJSON_GetObjectItem(j, "summary");
    cr_assert_eq(cJSON_GetObjectItem(s, "total")->valueint, 4);
    cr_assert_eq(cJSON_GetObjectItem(s, "passed")->valueint, 4);
    cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(j, "cases")) {
        cr_assert(strstr(cJSON_GetObjectItem(c, "repro")->valuestring, "--filter"));
        cJSON *o = cJSON_GetArrayItem(cJSON_GetObjectItem(c, "outputs"), 0);
        const char *m[] = {"max_abs_err", "max_rel_err", "max_ulp", "n_over_tol", "n_ambiguous", "tolerance"};
        for (int i = 0; i < 6; i++) cr_assert(cJSON_GetObjectItem(o, m[i]), "missing %s", m[i]);
        cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(o, "expected_values"), "reference_matches")));
    }
    cJSON_Delete(j);
    scratch_remove(dir);
}

static void write_report(const char *p, cJSON *j)
{
    char err[256];
    cr_assert_eq(write_json_atomic(p, j, err, sizeof err), 0, "%s", err);
}

/* one passing case whose error against its bound is r, absolute error a, n ambiguous elements */
static void gate_case_file(const char *path, double r, double a, int n)
{
    char text[512];
    snprintf(text, sizeof text,
             "{\"schema\": \"conform-report\", \"cases\": [{\"id\": \"s/c\", \"status\": \"passed\", \"outputs\": "
             "[{\"max_err_over_tol\": %g, \"max_ulp\": 1, \"max_abs_err\": %g, \"n_ambiguous\": %d}]}]}", r, a, n);
    cJSON *j = cJSON_Parse(text);
    cr_assert(j);
    write_report(path, j);
    cJSON_Delete(j);
}

/* what was printed since the last call (stdout is redirected by quiet) */
static const char *printed(void)
{
    fflush(stdout);
    static char buf[1 << 16];
    const size_t n = fread(buf, 1, sizeof buf - 1, cr_get_redirected_stdout());
    buf[n] = 0;
    return buf;
}

/* A growth of the error against the bound fails either way, but says when the output did not
 * change: the bound tightened (a newer tolerance model), or elements excused as ambiguous before
 * are judged now; a grown absolute error gets neither remark. */
Test(cli, gate_says_when_the_bound_tightened_and_not_the_output, .init = quiet)
{
    make_dir();
    char base[160], cur[160];
    snprintf(base, sizeof base, "%s/base.json", dir);
    snprintf(cur, sizeof cur, "%s/cur.json", dir);
    const char *argv[] = {"conform", "gate", "--baseline", base, "--current", cur};
    gate_case_file(base, 0.01, 1e-7, 0);
    gate_case_file(cur, 0.5, 1e-7, 0);
    cr_assert_eq(call(cmd_gate, 6, argv), EXIT_FAIL);
    cr_assert(strstr(printed(), "the bound tightened, not the output"));
    gate_case_file(base, 0.01, 1e-7, 12);
    gate_case_file(cur, 0.5, 3e-7, 0);
    cr_assert_eq(call(cmd_gate, 6, argv), EXIT_FAIL);
    cr_assert(strstr(printed(), "ambiguous elements 12 -> 0: judged now"));
    gate_case_file(cur, 0.5, 3e-7, 12);
    cr_assert_eq(call(cmd_gate, 6, argv), EXIT_FAIL);
    const char *out = printed();
    cr_assert(strstr(out, "max_err_over_tol grew 0.01 -> 0.5"), "%s", out);
    cr_assert(!strstr(out, "tightened") && !strstr(out, "ambiguous elements"), "a grown error is the output's: %s", out);
    scratch_remove(dir);
}

Test(cli, gate_passes_identical_and_fails_injected_regressions, .init = quiet)
{
    make_dir();
    char rep[128], base[160], cur[160];
    snprintf(rep, sizeof rep, "%s/rep", dir);
    snprintf(base, sizeof base, "%s/base.json", dir);
    snprintf(cur, sizeof cur, "%s/cur.json", dir);
    cJSON *j = run_report("smoke/fwd_grid*", rep);
    write_report(base, j);
    const char *argv[] = {"conform", "gate", "--baseline", base, "--current", cur};
    write_report(cur, j);
    cr_assert_eq(call(cmd_gate, 6, argv), EXIT_OK);

    cJSON *cases = cJSON_GetObjectItem(j, "cases");
    /* a case made to fail */
    cJSON *bad = cJSON_Duplicate(j, 1);
    cJSON_ReplaceItemInObject(cJSON_GetArrayItem(cJSON_GetObjectItem(bad, "cases"), 2), "status", cJSON_CreateString("failed"));
    write_report(cur, bad);
    cr_assert_eq(call(cmd_gate, 6, argv), EXIT_FAIL);
    cJSON_Delete(bad);
    /* an error grown tenfold */
    bad = cJSON_Duplicate(j, 1);
    cJSON *o = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(bad, "cases"), 1), "outputs"), 0);
    double m = cJSON_GetObjectItem(o, "max_err_over_tol")->valuedouble;
    cJSON_ReplaceItemInObject(o, "max_err_over_tol", cJSON_CreateNumber(m * 10 + 0.1));
    write_report(cur, bad);
    cr_assert_eq(call(cmd_gate, 6, argv), EXIT_FAIL);
    cJSON_Delete(bad);
    /* a case no longer implemented: coverage lost, a regression; the other way round is none */
    bad = cJSON_Duplicate(j, 1);
    cJSON_ReplaceItemInObject(cJSON_GetArrayItem(cJSON_GetObjectItem(bad, "cases"), 2), "status",
                              cJSON_CreateString("not_implemented"));
    write_report(cur, bad);
    cr_assert_eq(call(cmd_gate, 6, argv), EXIT_FAIL, "passed -> not_implemented must be a regression");
    const char *back[] = {"conform", "gate", "--baseline", cur, "--current", base};
    cr_assert_eq(call(cmd_gate, 6, back), EXIT_OK, "not_implemented -> passed is no regression");
    cJSON_Delete(bad);
    /* a case removed */
    bad = cJSON_Duplicate(j, 1);
    cJSON_DeleteItemFromArray(cJSON_GetObjectItem(bad, "cases"), 0);
    write_report(cur, bad);
    cr_assert_eq(call(cmd_gate, 6, argv), EXIT_FAIL);
    cJSON_Delete(bad);
    /* not a report */
    write_report(cur, cases);
    cr_assert_eq(call(cmd_gate, 6, argv), EXIT_USAGE);
    cJSON_Delete(j);
    scratch_remove(dir);
}

/* the exit code of cmd and its stderr (in buf) */
static int stderr_of(int (*cmd)(int, char **), int argc, const char **argv, char *buf, size_t len)
{
    char path[128];
    snprintf(path, sizeof path, "%s/stderr.txt", dir);
    fflush(stderr);
    int saved = dup(2);
    FILE *f = fopen(path, "w+");
    dup2(fileno(f), 2);
    int rc = cmd(argc, (char **)argv);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(f);
    size_t n = fread(buf, 1, len - 1, f);
    buf[n] = '\0';
    fclose(f);
    return rc;
}

/* a --shape with too many dims, or an empty one, is named; neither is read as another shape */
Test(cli, a_bad_shape_is_refused_with_its_reason, .init = quiet)
{
    make_dir();
    char msg[1024];
    const char *a1[] = {"conform", "bench", "roi_align", "--shape", "input=1,1,8,8,1,1,1,1,1", "--shape", "rois=2,5",
                        "--attr", "pooled_h=2", "--attr", "pooled_w=2"};
    cr_assert_eq(stderr_of(cmd_bench, 11, a1, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "--shape input=1,1,8,8,1,1,1,1,1: at most 8 dims"), "'%s'", msg);
    a1[4] = "input=1,1,,8";
    cr_assert_eq(stderr_of(cmd_bench, 11, a1, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "--shape takes an integer in [0, "), "'%s'", msg);
    cr_assert(strstr(msg, "got ''"), "'%s'", msg);
    scratch_remove(dir);
}

/* --rerun of a file that is no conform report says so, never "no case matches" */
Test(cli, rerun_of_a_file_that_is_not_a_report_says_so, .init = quiet)
{
    make_dir();
    char path[128], msg[1024];
    snprintf(path, sizeof path, "%s/other.json", dir);
    FILE *f = fopen(path, "w");
    fputs("{\"schema\": \"conform-bench\", \"results\": []}", f);
    fclose(f);
    const char *a[] = {"conform", "run", "cases/smoke.json", "--rerun", path, "--list"};
    cr_assert_eq(stderr_of(cmd_run, 6, a, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "--rerun") && strstr(msg, path) && strstr(msg, "not a conform report") &&
              strstr(msg, "conform-bench") && !strstr(msg, "no case matches"), "'%s'", msg);
    f = fopen(path, "w");
    fputs("[1, 2]", f);
    fclose(f);
    cr_assert_eq(stderr_of(cmd_run, 6, a, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "not a conform report") && strstr(msg, "no schema"), "'%s'", msg);
    scratch_remove(dir);
}

/* an output place that cannot be written is refused before any work, naming the option */
Test(cli, an_unusable_report_dir_or_bench_file_is_refused_before_the_work, .init = quiet)
{
    make_dir();
    char msg[1024], file[128], sub[160];
    const char *c[] = {"conform", "check", "roi_align", "--attr", "pooled_h=3", "--attr", "pooled_w=4", "--attr",
                       "spatial_scale=0.25", "--attr", "sampling_ratio=2", "--input", "input=cases/check/roi_align/input.npy",
                       "--input", "rois=cases/check/roi_align/rois.npy", "--actual",
                       "output=cases/check/roi_align/output.npy", "--report-dir", "/dev/null"};
    cr_assert_eq(stderr_of(cmd_check, 19, c, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "--report-dir /dev/null: /dev/null is not a folder"), "'%s'", msg);
    c[18] = "/dev/null/sub";
    cr_assert_eq(stderr_of(cmd_check, 19, c, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "--report-dir /dev/null/sub"), "'%s'", msg);
    const char *r[] = {"conform", "run", "cases/smoke.json", "--filter", "smoke/fwd_grid", "--report-dir", "/dev/null"};
    cr_assert_eq(stderr_of(cmd_run, 7, r, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "--report-dir /dev/null"), "'%s'", msg);
    const char *v[] = {"conform", "verify", "--op", "roi_align", "--report-dir", "/dev/null"};
    cr_assert_eq(stderr_of(cmd_verify, 6, v, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "--report-dir /dev/null"), "'%s'", msg);
    /* bench --append: a JSON that is no bench file would silently drop the results */
    snprintf(file, sizeof file, "%s/other.json", dir);
    FILE *f = fopen(file, "w");
    fputs("{}", f);
    fclose(f);
    const char *b[] = {"conform", "bench", "roi_align", "--shape", "input=1,1,8,8", "--shape", "rois=2,5", "--attr",
                       "pooled_h=2", "--attr", "pooled_w=2", "--impl", "optimized", "--repeat", "1", "--append", file};
    cr_assert_eq(stderr_of(cmd_bench, 17, b, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "--append") && strstr(msg, "not a conform-bench file"), "'%s'", msg);
    b[16] = dir;
    cr_assert_eq(stderr_of(cmd_bench, 17, b, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "--append") && strstr(msg, "not a regular file"), "'%s'", msg);
    snprintf(sub, sizeof sub, "%s/no/such/bench.json", dir);
    b[16] = sub;
    cr_assert_eq(stderr_of(cmd_bench, 17, b, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "--append") && strstr(msg, "not a writable folder"), "'%s'", msg);
    /* a new file in a folder that is there is fine */
    snprintf(sub, sizeof sub, "%s/bench.json", dir);
    b[16] = sub;
    cr_assert_eq(call(cmd_bench, 17, b), EXIT_OK);
    cr_assert_eq(call(cmd_bench, 17, b), EXIT_OK);
    scratch_remove(dir);
}

/* an option that takes one value, given twice, is refused naming both values: never the last silently */
Test(cli, a_single_value_option_given_twice_is_refused_with_both_values, .init = quiet)
{
    make_dir();
    char msg[1024];
    const char *r[] = {"conform", "run", "cases/smoke.json", "--seed", "3", "--list", "--seed", "7"};
    cr_assert_eq(stderr_of(cmd_run, 8, r, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "option --seed given twice (--seed 7, after --seed 3)"), "'%s'", msg);
    const char *t[] = {"conform", "run", "cases/smoke.json", "--threads", "1", "--threads", "2", "--list"};
    cr_assert_eq(stderr_of(cmd_run, 8, t, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "--threads given twice (--threads 2, after --threads 1)"), "'%s'", msg);
    struct {
        int (*cmd)(int, char **);
        const char *argv[12];
        int argc;
        const char *want;
    } twice[] = {
        {cmd_run, {"conform", "run", "--report-dir", "a", "--report-dir", "b"}, 6, "--report-dir b, after --report-dir a"},
        {cmd_run, {"conform", "run", "--filter", "x", "--filter", "y", "--list"}, 7, "--filter y, after --filter x"},
        {cmd_export, {"conform", "export", "--out", "a", "--out", "b"}, 6, "--out b, after --out a"},
        {cmd_check, {"conform", "check", "roi_align", "--dtype", "float16", "--dtype", "float32"}, 7, "--dtype float32, after --dtype float16"},
        {cmd_eval, {"conform", "eval", "roi_align", "--output-dir", "a", "--output-dir", "b"}, 7, "--output-dir b, after --output-dir a"},
        {cmd_bench, {"conform", "bench", "roi_align", "--seed", "1", "--repeat", "2", "--seed", "2"}, 9, "--seed 2, after --seed 1"},
        {cmd_verify, {"conform", "verify", "--report-dir", "a", "--report-dir", "b"}, 6, "--report-dir b, after --report-dir a"},
        {cmd_merge, {"conform", "merge", "--report-dir", "a", "--report-dir", "b", "c"}, 7, "--report-dir b, after --report-dir a"},
        {cmd_gate, {"conform", "gate", "--baseline", "a", "--current", "c", "--baseline", "b"}, 8, "--baseline b, after --baseline a"},
    };
    for (size_t k = 0; k < sizeof twice / sizeof twice[0]; k++) {
        cr_assert_eq(stderr_of(twice[k].cmd, twice[k].argc, twice[k].argv, msg, sizeof msg), EXIT_USAGE, "%s", twice[k].want);
        cr_assert(strstr(msg, twice[k].want) && strstr(msg, "given twice"), "want '%s', got '%s'", twice[k].want, msg);
    }
    /* options that gather still repeat; a value is never read as an option */
    const char *ops[] = {"conform", "run", "cases/smoke.json", "--op", "roi_align", "--op", "grid_sampler_2d", "--list"};
    cr_assert_eq(call(cmd_run, 8, ops), EXIT_OK);
    const char *val[] = {"conform", "run", "cases/smoke.json", "--filter", "--seed", "--seed", "3", "--list"};
    cr_assert_neq(stderr_of(cmd_run, 8, val, msg, sizeof msg), EXIT_OK);
    cr_assert(!strstr(msg, "given twice"), "'%s'", msg);
    scratch_remove(dir);
}
