/* The device workflow: `conform export` writes a suite's inputs and a manifest, a device (here
 * conform's own kernels or an ABI-2 plugin) writes outputs, `run --impl dir:DIR` judges them.
 * A round trip gives the verdicts of `run`; every kind of bad directory is a per-case verdict
 * with a message; exports at every dtype are NumPy files of that dtype; plugins run at every
 * dtype, and a bug is caught at each. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scratch.h"
#include "test_files.h"
#include "cmd_argv.h"
#include "cli.h"
#include "dtype.h"
#include "impl.h"
#include "npy.h"
#include "report.h"
#include "runner.h"
#include "suite.h"

static char dir[64];

static void setup(void) { scratch_make_quiet(dir, sizeof dir, "devflow"); }

static void teardown(void) { scratch_remove(dir); }


static const char *sub(const char *name) { return sub_of(dir, name); }

static cJSON *load(const char *path) { return test_json(path); }

static cJSON *report(const char *rep) { return test_report(rep, NULL); }

static const cJSON *find_case(const cJSON *r, const char *id)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "cases"))
        if (!strcmp(cJSON_GetObjectItem(c, "id")->valuestring, id)) return c;
    return NULL;
}

static const char *status_of(const cJSON *r, const char *id)
{
    const cJSON *c = find_case(r, id);
    cr_assert(c, "no case %s", id);
    return cJSON_GetObjectItem(c, "status")->valuestring;
}

static const char *message_of(const cJSON *r, const char *id)
{
    const cJSON *m = cJSON_GetObjectItem(find_case(r, id), "message");
    return cJSON_IsString(m) ? m->valuestring : "";
}

static double summary(const cJSON *r, const char *key)
{
    return cJSON_GetObjectItem(cJSON_GetObjectItem(r, "summary"), key)->valuedouble;
}

static char *slurp(const char *path) { return test_slurp(path); }

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
}

/* the path (under the export) of one output or input of a case, from the manifest */
static void file_of(const char *ex, const char *id, const char *kind, const char *name, char *buf, size_t len)
{
    char p[300];
    snprintf(p, sizeof p, "%s/manifest.json", ex);
    cJSON *m = load(p);
    const cJSON *c, *e = NULL;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(m, "cases"))
        if (!strcmp(cJSON_GetObjectItem(c, "id")->valuestring, id)) e = c;
    cr_assert(e, "%s not exported", id);
    const cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(e, kind), name);
    if (cJSON_IsObject(v)) v = cJSON_GetObjectItem(v, "path");
    cr_assert(cJSON_IsString(v));
    snprintf(buf, len, "%s/%s", ex, v->valuestring);
    cJSON_Delete(m);
}

/* stderr of one command, through a file (Criterion's redirection only compares whole streams) */
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
    char *s = slurp(path);
    snprintf(buf, len, "%s", s);
    free(s);
    return rc;
}

/* ---- round trip ------------------------------------------------------------------------------ */

Test(devflow, round_trip_of_the_smoke_suite_gives_the_verdicts_of_run, .init = setup, .fini = teardown, .timeout = 600)
{
    cr_assert_eq(EXPORT("cases/smoke.json", "--out", sub("ex"), "--outputs", "optimized", "--threads", "2"), EXIT_OK);
    /* the verdicts of the cases are compared, not the reference proofs (no directory holds them;
       the "reference proofs" part of make test and the verify tests run them): 4.5 of the 10.5 CPU
       seconds of a smoke run */
    int rc_run = RUN("cases/smoke.json", "--report-dir", sub("run"), "--quiet", "--threads", "2", "--no-proofs");
    char impl[300];
    snprintf(impl, sizeof impl, "dir:%s", sub("ex"));
    int rc_dir = RUN("cases/smoke.json", "--impl", impl, "--report-dir", sub("dir"), "--quiet", "--threads", "2", "--no-proofs");
    cr_assert_eq(rc_dir, rc_run);
    cJSON *a = report(sub("run")), *b = report(sub("dir"));
    int n = cJSON_GetArraySize(cJSON_GetObjectItem(a, "cases"));
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(b, "cases")), n);
    cr_assert_gt(n, 900);
    const cJSON *c;
    int expect_error = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(a, "cases")) {
        const char *id = cJSON_GetObjectItem(c, "id")->valuestring;
        cr_assert_str_eq(status_of(b, id), cJSON_GetObjectItem(c, "status")->valuestring, "%s", id);
        expect_error += strstr(message_of(a, id), "refused as expected") != NULL;
    }
    cr_assert_gt(expect_error, 10, "refusals are part of the round trip too");
    cr_assert_str_eq(cJSON_GetObjectItem(b, "dtype")->valuestring, "float32");
    cJSON_Delete(a);
    cJSON_Delete(b);
}

/* ---- bad directories: a verdict per case, never a crash ---------------------------------------- */

#define GRID "smoke/fwd_grid"
#define VICTIM "smoke/fwd_grid/aligned=true,sampling_ratio=2"

/* the fwd_grid cases exported with conform's outputs; the report of judging them after `spoil` */
static cJSON *judge_spoiled(void (*spoil)(const char *ex), int expect_rc)
{
    const char *ex = sub("ex");
    cr_assert_eq(EXPORT("cases/smoke.json", "--filter", GRID, "--out", ex, "--outputs", "optimized"), EXIT_OK);
    spoil(ex);
    char impl[300];
    snprintf(impl, sizeof impl, "dir:%s", ex);
    cr_assert_eq(RUN("cases/smoke.json", "--filter", GRID, "--impl", impl, "--report-dir", sub("rep"), "--quiet"), expect_rc);
    cJSON *r = report(sub("rep"));
    cr_assert_eq(summary(r, "total"), 8);
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "cases"))
        if (strcmp(cJSON_GetObjectItem(c, "id")->valuestring, VICTIM))
            cr_assert_str_eq(cJSON_GetObjectItem(c, "status")->valuestring, "passed", "the rest of the suite goes on");
    return r;
}

static void victim_output(const char *ex, char *buf, size_t len) { file_of(ex, VICTIM, "outputs", "output", buf, len); }

/* the victim's status (NULL: not checked) and words of its message (NULL: none) after spoil */
static void expect_victim(void (*spoil)(const char *ex), int expect_rc, const char *status, const char *words)
{
    cJSON *r = judge_spoiled(spoil, expect_rc);
    if (status) cr_assert_str_eq(status_of(r, VICTIM), status);
    if (words) cr_assert(strstr(message_of(r, VICTIM), words), "%s", message_of(r, VICTIM));
    cJSON_Delete(r);
}

static void spoil_nothing(const char *ex) { (void)ex; }

static void remove_output(const char *ex)
{
    char p[600];
    victim_output(ex, p, sizeof p);
    cr_assert_eq(remove(p), 0);
}

Test(devflow, an_untouched_directory_passes, .init = setup, .fini = teardown)
{
    expect_victim(spoil_nothing, EXIT_OK, "passed", NULL);
}

Test(devflow, a_missing_output_is_its_own_status_in_every_format, .init = setup, .fini = teardown)
{
    cJSON *r = judge_spoiled(remove_output, EXIT_FAIL);
    cr_assert_str_eq(status_of(r, VICTIM), "missing");
    cr_assert(strstr(message_of(r, VICTIM), "output.npy not found"), "%s", message_of(r, VICTIM));
    cr_assert_eq(summary(r, "missing"), 1);
    cr_assert_eq(summary(r, "passed"), 7);
    char p[300];
    snprintf(p, sizeof p, "%s/junit.xml", sub("rep"));
    char *junit = slurp(p);
    cr_assert(strstr(junit, "<failure message=\"output output: "), "junit counts it a failure");
    snprintf(p, sizeof p, "%s/report.md", sub("rep"));
    char *md = slurp(p);
    cr_assert(strstr(md, "| missing |"));
    snprintf(p, sizeof p, "%s/report.html", sub("rep"));
    char *html = slurp(p);
    cr_assert(strstr(html, "<td class=\"st\">missing</td>"));
    free(junit); free(md); free(html);
    /* merge keeps it */
    const char *m[] = {"conform", "merge", "--report-dir", sub("merged"), sub("rep"), NULL};
    cr_assert_eq(cmd_merge(argc_of(m), (char **)m), EXIT_FAIL);
    cJSON *merged = report(sub("merged"));
    cr_assert_eq(summary(merged, "missing"), 1);
    cJSON_Delete(merged);
    cJSON_Delete(r);
    /* a waiver turns it into waived, and the run passes */
    FILE *w = fopen(sub("waivers.json"), "w");
    fprintf(w, "{\"waivers\": [{\"pattern\": \"%s\", \"reason\": \"device skips it\", \"link\": \"https://example.com/1\"}]}", VICTIM);
    fclose(w);
    char impl[300];
    snprintf(impl, sizeof impl, "dir:%s", sub("ex"));
    cr_assert_eq(RUN("cases/smoke.json", "--filter", GRID, "--impl", impl, "--report-dir", sub("rep2"), "--quiet",
                     "--waivers", sub("waivers.json")), EXIT_OK);
    r = report(sub("rep2"));
    cr_assert_str_eq(status_of(r, VICTIM), "waived");
    cJSON_Delete(r);
}

/* An export into a directory that holds an earlier export's outputs (--outputs) or a device's
   (its .npy, a raw .bin, its runner.json) leaves none of them: a case no device has run since is
   missing, never passed on an old file. */
Test(devflow, an_export_again_leaves_no_earlier_output_to_judge, .init = setup, .fini = teardown)
{
    const char *ex = sub("ex");
    cr_assert_eq(EXPORT("cases/smoke.json", "--filter", GRID, "--out", ex, "--outputs", "optimized"), EXIT_OK);
    char npy[600], bin[620], impl[300];
    victim_output(ex, npy, sizeof npy);
    snprintf(bin, sizeof bin, "%.*s_float32.bin", (int)strlen(npy) - 4, npy);
    write_text(bin, "an old raw output");
    write_text(sub("ex/runner.json"), "{\"schema\": \"conform-runner\", \"schema_version\": 1}");
    cr_assert_eq(EXPORT("cases/smoke.json", "--filter", GRID, "--out", ex), EXIT_OK);
    cr_assert_neq(access(npy, F_OK), 0, "%s is left", npy);
    cr_assert_neq(access(bin, F_OK), 0, "%s is left", bin);
    cr_assert_neq(access(sub("ex/runner.json"), F_OK), 0, "an earlier runner's record is left");
    snprintf(impl, sizeof impl, "dir:%s", ex);
    cr_assert_eq(RUN("cases/smoke.json", "--filter", GRID, "--impl", impl, "--report-dir", sub("rep"), "--quiet"), EXIT_FAIL);
    cJSON *r = report(sub("rep"));
    cr_assert_eq(summary(r, "missing"), 8);
    cr_assert_eq(summary(r, "passed"), 0);
    cJSON_Delete(r);
}

Test(devflow, shards_merge_rerun_and_gate_work_on_a_directory, .init = setup, .fini = teardown)
{
    cJSON *r = judge_spoiled(remove_output, EXIT_FAIL);
    cJSON_Delete(r);
    char impl[300], full[300];
    snprintf(impl, sizeof impl, "dir:%s", sub("ex"));
    cr_assert_eq(RUN("cases/smoke.json", "--filter", GRID, "--impl", impl, "--shard", "1/2", "--report-dir", sub("s1"), "--quiet") |
                     RUN("cases/smoke.json", "--filter", GRID, "--impl", impl, "--shard", "2/2", "--report-dir", sub("s2"), "--quiet"),
                 EXIT_FAIL);
    const char *m[] = {"conform", "merge", "--report-dir", sub("merged"), sub("s1"), sub("s2"), NULL};
    cr_assert_eq(cmd_merge(argc_of(m), (char **)m), EXIT_FAIL);
    r = report(sub("merged"));
    cr_assert_eq(summary(r, "total"), 8);
    cr_assert_eq(summary(r, "missing"), 1);
    cr_assert_str_eq(status_of(r, VICTIM), "missing");
    cJSON_Delete(r);
    /* the merged shards are the one run: the gate sees nothing new */
    snprintf(full, sizeof full, "%s/report.json", sub("rep"));
    char merged[300];
    snprintf(merged, sizeof merged, "%s/report.json", sub("merged"));
    const char *g[] = {"conform", "gate", "--baseline", full, "--current", merged, NULL};
    cr_assert_eq(cmd_gate(argc_of(g), (char **)g), EXIT_OK);
    /* --rerun --status missing takes the one case again */
    cr_assert_eq(RUN("cases/smoke.json", "--impl", impl, "--rerun", full, "--status", "missing", "--report-dir", sub("again"), "--quiet"),
                 EXIT_FAIL);
    r = report(sub("again"));
    cr_assert_eq(summary(r, "total"), 1);
    cr_assert_str_eq(status_of(r, VICTIM), "missing");
    const char *repro = cJSON_GetObjectItem(find_case(r, VICTIM), "repro")->valuestring;
    cr_assert(strstr(repro, "--impl dir:"), "%s", repro);
    cJSON_Delete(r);
}

static void wrong_shape(const char *ex)
{
    char p[600], err[256];
    victim_output(ex, p, sizeof p);
    float v[6] = {0};
    shape_t s = shape2(2, 3);
    cr_assert_eq(npy_write_f32(p, &s, v, err, sizeof err), 0);
}

Test(devflow, a_wrong_shape_fails_the_case_naming_both_shapes, .init = setup, .fini = teardown)
{
    expect_victim(wrong_shape, EXIT_FAIL, "failed", "output.npy has shape [2,3], expected [16,8,3,3]");
}

static void float64_output(const char *ex)
{
    char p[600], err[256];
    victim_output(ex, p, sizeof p);
    tensor_t t;
    cr_assert_eq(npy_read(p, &t, err, sizeof err), 0);
    cr_assert_eq(npy_write_f64(p, &t.shape, t.data, err, sizeof err), 0);
    tensor_free(&t);
}

Test(devflow, a_float64_file_where_float32_is_expected_fails_the_case, .init = setup, .fini = teardown)
{
    expect_victim(float64_output, EXIT_FAIL, "failed", "dtype '<f8', expected '<f4' (float32)");
}

static void truncate_output(const char *ex)
{
    char p[600];
    victim_output(ex, p, sizeof p);
    FILE *f = fopen(p, "rb");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    cr_assert_eq(truncate(p, n - 10), 0);
}

Test(devflow, a_truncated_file_fails_the_case, .init = setup, .fini = teardown)
{
    expect_victim(truncate_output, EXIT_FAIL, "failed", "output.npy: truncated data: expected 4608 bytes, file holds 4598");
}

static void not_npy(const char *ex)
{
    char p[600];
    victim_output(ex, p, sizeof p);
    FILE *f = fopen(p, "w");
    fputs("this is not numpy", f);
    fclose(f);
}

Test(devflow, a_file_that_is_not_npy_fails_the_case, .init = setup, .fini = teardown)
{
    expect_victim(not_npy, EXIT_FAIL, NULL, "bad magic: not a .npy file");
}

static void edit_input(const char *ex)
{
    char p[600];
    file_of(ex, VICTIM, "inputs", "input", p, sizeof p);
    FILE *f = fopen(p, "r+b");
    fseek(f, -4, SEEK_END);
    int low = fgetc(f);
    fseek(f, -4, SEEK_END);
    fputc(low ^ 1, f); /* the last element one ULP off: a valid float32 still, not the exported one */
    fclose(f);
}

Test(devflow, inputs_edited_after_the_export_are_an_error_naming_the_file, .init = setup, .fini = teardown)
{
    expect_victim(edit_input, EXIT_FAIL, "error", "input.npy changed since the export (FNV-1a 64 of the file");
}

static void raw_output(const char *ex, long drop)
{
    char p[600], err[256];
    victim_output(ex, p, sizeof p);
    tensor_t t;
    cr_assert_eq(npy_read(p, &t, err, sizeof err), 0);
    cr_assert_eq(remove(p), 0);
    strcpy(p + strlen(p) - 4, ".bin");
    FILE *f = fopen(p, "wb");
    for (int64_t i = 0; i < tensor_numel(&t) - drop; i++) {
        float v = (float)t.data[i];
        fwrite(&v, 4, 1, f);
    }
    fclose(f);
    tensor_free(&t);
}

static void right_bin(const char *ex) { raw_output(ex, 0); }
static void short_bin(const char *ex) { raw_output(ex, 1); }

Test(devflow, a_raw_bin_beside_the_npy_is_read_and_its_size_checked, .init = setup, .fini = teardown)
{
    expect_victim(right_bin, EXIT_OK, "passed", NULL);
    scratch_remove(dir);
    scratch_make(dir, sizeof dir, "devflow");
    expect_victim(short_bin, EXIT_FAIL, "failed", "output.bin: 4604 bytes, expected 4608 ([16,8,3,3] of float32");
}

/* A run of a directory judges what it holds: with no suite named, the export's; with a suite
   and a selection, the exported cases among them. A selection with no exported case is a usage
   error naming what the export holds, never a run of errors. */
Test(devflow, a_run_of_a_directory_judges_what_it_holds, .init = setup, .fini = teardown, .timeout = 300)
{
    cr_assert_eq(EXPORT("--op", "roi_align", "--out", sub("ex")), EXIT_OK);
    cJSON *m = load(sub("ex/manifest.json"));
    int exported = cJSON_GetArraySize(cJSON_GetObjectItem(m, "cases"));
    cr_assert_gt(exported, 100);
    cr_assert_str_eq(cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetObjectItem(m, "selection"), "ops"), 0)->valuestring,
                     "roi_align");
    cJSON_Delete(m);
    char impl[300], msg[1024];
    snprintf(impl, sizeof impl, "dir:%s", sub("ex"));
    cr_assert_eq(RUN("--impl", impl, "--report-dir", sub("rep"), "--quiet"), EXIT_FAIL);
    cJSON *r = report(sub("rep"));
    cr_assert_eq(summary(r, "total"), exported, "the run judges the export's cases, no more");
    cr_assert_eq(summary(r, "error"), 0);
    cr_assert_gt(summary(r, "missing"), 100, "nothing was written");
    cJSON_Delete(r);
    /* the run's own selection narrows it */
    cr_assert_eq(RUN("--impl", impl, "--filter", "conformance/fwd_grid", "--report-dir", sub("rep2"), "--quiet"), EXIT_FAIL);
    r = report(sub("rep2"));
    cr_assert(summary(r, "total") > 0 && summary(r, "total") < exported);
    cr_assert_eq(summary(r, "error"), 0);
    cJSON_Delete(r);
    /* another suite, or ops that were not exported: nothing of it is there */
    const char *a[] = {"conform", "run", "cases/smoke.json", "--impl", impl, NULL};
    cr_assert_eq(with_stderr(cmd_run, a, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "no selected case is in") && strstr(msg, "--op roi_align"), "%s", msg);
    const char *b[] = {"conform", "run", "--op", "grid_sampler_2d", "--impl", impl, NULL};
    cr_assert_eq(with_stderr(cmd_run, b, msg, sizeof msg), EXIT_USAGE);
}

/* an export of a shard is judged as that shard: its report says I/N for merge */
Test(devflow, a_run_of_an_exported_shard_is_that_shard, .init = setup, .fini = teardown)
{
    cr_assert_eq(EXPORT("cases/smoke.json", "--filter", GRID, "--shard", "2/3", "--out", sub("ex"), "--outputs", "optimized"),
                 EXIT_OK);
    char impl[300], msg[1024];
    snprintf(impl, sizeof impl, "dir:%s", sub("ex"));
    cr_assert_eq(RUN("--impl", impl, "--report-dir", sub("rep"), "--quiet"), EXIT_OK);
    cJSON *r = report(sub("rep"));
    cr_assert_str_eq(cJSON_GetObjectItem(r, "shard")->valuestring, "2/3");
    cr_assert_gt(summary(r, "passed"), 0);
    cr_assert_lt(summary(r, "passed"), 8);
    cJSON_Delete(r);
    const char *a[] = {"conform", "run", "--impl", impl, "--shard", "1/3", NULL};
    cr_assert_eq(with_stderr(cmd_run, a, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "holds shard 2/3"), "%s", msg);
}

Test(devflow, dtype_and_seed_of_a_directory_rule, .init = setup, .fini = teardown)
{
    cr_assert_eq(EXPORT("cases/smoke.json", "--filter", GRID, "--out", sub("ex"), "--dtype", "float16"), EXIT_OK);
    char impl[300], msg[1024];
    snprintf(impl, sizeof impl, "dir:%s", sub("ex"));
    const char *a[] = {"conform", "run", "cases/smoke.json", "--impl", impl, "--dtype", "float32", NULL};
    cr_assert_eq(with_stderr(cmd_run, a, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "--dtype float32, but") && strstr(msg, "exported at float16"), "%s", msg);
    const char *b[] = {"conform", "run", "cases/smoke.json", "--impl", impl, "--seed", "7", NULL};
    cr_assert_eq(with_stderr(cmd_run, b, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "exported with seed"), "%s", msg);
    const char *c[] = {"conform", "run", "cases/smoke.json", "--impl", "dir:/nonexistent", NULL};
    cr_assert_eq(with_stderr(cmd_run, c, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "dir:/nonexistent") && strstr(msg, "cannot resolve the directory"), "%s", msg);
}

/* the manifest is a file of DIR like any other: one linked from outside is refused, unread */
Test(devflow, a_manifest_linked_from_outside_the_directory_is_refused, .init = setup, .fini = teardown)
{
    cr_assert_eq(EXPORT("cases/smoke.json", "--filter", GRID, "--out", sub("ex"), "--outputs", "optimized"), EXIT_OK);
    char from[300], to[300], impl[300], msg[1024];
    snprintf(from, sizeof from, "%s/manifest.json", sub("ex"));
    snprintf(to, sizeof to, "%s", sub("elsewhere.json"));
    cr_assert_eq(rename(from, to), 0);
    cr_assert_eq(symlink(to, from), 0);
    snprintf(impl, sizeof impl, "dir:%s", sub("ex"));
    const char *a[] = {"conform", "run", "cases/smoke.json", "--filter", GRID, "--impl", impl, NULL};
    cr_assert_eq(with_stderr(cmd_run, a, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "outside the directory") && strstr(msg, "elsewhere.json"), "%s", msg);
}

/* ---- dtypes ---------------------------------------------------------------------------------- */

Test(devflow, rounding_to_each_format_is_to_nearest_even)
{
    cr_assert_eq(dtype_round(CONFORM_DTYPE_FLOAT16, 1 + 0x1p-11), 1.0, "a tie goes to even");
    cr_assert_eq(dtype_round(CONFORM_DTYPE_FLOAT16, 1 + 3 * 0x1p-12), 1 + 0x1p-10);
    cr_assert_eq(dtype_round(CONFORM_DTYPE_FLOAT16, 65519.0), 65504.0);
    cr_assert(isinf(dtype_round(CONFORM_DTYPE_FLOAT16, 65520.0)), "65520 is the first value that overflows");
    cr_assert_eq(dtype_round(CONFORM_DTYPE_FLOAT16, 0x1p-25), 0.0, "half the smallest subnormal ties to 0");
    cr_assert_eq(dtype_round(CONFORM_DTYPE_FLOAT16, 3 * 0x1p-26), 0x1p-24);
    cr_assert_eq(dtype_round(CONFORM_DTYPE_BFLOAT16, 1 + 0x1p-8), 1.0);
    cr_assert_eq(dtype_round(CONFORM_DTYPE_BFLOAT16, 1 + 3 * 0x1p-9), 1 + 0x1p-7);
    cr_assert_eq(dtype_round(CONFORM_DTYPE_FLOAT32, 1 + 0x1p-30), 1.0);
    cr_assert_eq(dtype_round(CONFORM_DTYPE_FLOAT64, 1 + 0x1p-30), 1 + 0x1p-30);
    double v[3] = {-2.5, 0x1p-24, 1.0 / 3}, back[3];
    uint16_t h[3];
    dtype_encode(CONFORM_DTYPE_FLOAT16, v, h, 3);
    cr_assert_eq(h[0], 0xc100);
    cr_assert_eq(h[1], 0x0001);
    cr_assert_eq(h[2], 0x3555);
    dtype_decode(CONFORM_DTYPE_FLOAT16, h, back, 3);
    cr_assert_eq(back[2], dtype_round(CONFORM_DTYPE_FLOAT16, 1.0 / 3));
    dtype_encode(CONFORM_DTYPE_BFLOAT16, v, h, 3);
    cr_assert_eq(h[0], 0xc020);
    cr_assert_eq(h[2], 0x3eab);
}

/* the header dict and the first values of an exported input, read as bytes */
static void check_export_file(const char *dtype, const char *descr, int itemsize)
{
    const char *ex = sub(dtype);
    cr_assert_eq(EXPORT("cases/smoke.json", "--filter", VICTIM, "--out", ex, "--dtype", dtype), EXIT_OK);
    char p[600];
    file_of(ex, VICTIM, "inputs", "input", p, sizeof p);
    FILE *f = fopen(p, "rb");
    unsigned char head[128];
    cr_assert_eq(fread(head, 1, 128, f), 128);
    cr_assert(!memcmp(head, "\x93NUMPY\x01\x00", 8));
    size_t hlen = (size_t)head[8] | (size_t)head[9] << 8;
    cr_assert_eq((10 + hlen) % 64, 0, "NumPy aligns the data to 64 bytes");
    char want[128];
    snprintf(want, sizeof want, "{'descr': '%s', 'fortran_order': False, 'shape': (2, 8, 24, 24), }", descr);
    cr_assert(!memcmp(head + 10, want, strlen(want)), "%.60s", head + 10);
    fseek(f, (long)(10 + hlen), SEEK_SET);
    unsigned char data[4 * 8];
    cr_assert_eq(fread(data, (size_t)itemsize, 4, f), 4);
    fclose(f);
    /* the same numbers as the case generates, rounded to the dtype */
    suite_t s;
    char err[512];
    cr_assert_eq(suite_load("cases/smoke.json", &s, err, sizeof err), 0);
    const case_t *c = NULL;
    for (int i = 0; i < s.n_cases; i++)
        if (!strcmp(s.cases[i].id, VICTIM)) c = &s.cases[i];
    problem_t pr;
    cr_assert_eq(case_build(c, case_seed(c, s.seed), &pr, err, sizeof err), 0, "%s", err);
    const dtype_desc *dt = dtype_find(dtype);
    for (int i = 0; i < 4; i++) {
        const unsigned char *b = data + i * itemsize;
        double got;
        if (itemsize == 2) {
            uint16_t u = (uint16_t)(b[0] | b[1] << 8);
            got = !strcmp(dtype, "bfloat16") ? npy_bf16_to_double(u) : npy_half_to_double(u);
        } else if (itemsize == 4) {
            float x;
            memcpy(&x, b, 4);
            got = x;
        } else memcpy(&got, b, 8);
        double gen = pr.in[0].data[i];
        cr_assert_eq(got, dtype_round(dt->id, gen), "%s element %d", dtype, i);
        cr_assert_leq(fabs(got - gen), dt->u * fabs(gen), "within half an ULP of the generated %.9g", gen);
    }
    problem_free(&pr);
    suite_free(&s);
}

Test(devflow, exports_at_each_dtype_are_numpy_files_of_that_dtype, .init = setup, .fini = teardown)
{
    check_export_file("float16", "<f2", 2);
    check_export_file("bfloat16", "<u2", 2);
    check_export_file("float64", "<f8", 8);
    check_export_file("float32", "<f4", 4);
}

/* the roi_align family of the smoke suite through a plugin at a dtype */
static cJSON *through(const char *plugin, const char *dtype, int expect_rc)
{
    char impl[200];
    snprintf(impl, sizeof impl, "plugin:" TEST_BUILD "/plugins/%s.so", plugin);
    cr_assert_eq(RUN("cases/smoke.json", "--op", "roi_align", "--op", "roi_align_v2_backward", "--impl", impl, "--dtype", dtype,
                     "--report-dir", sub(dtype), "--quiet", "--timeout", "60"),
                 expect_rc, "%s at %s", plugin, dtype);
    return report(sub(dtype));
}

Test(devflow, an_abi2_plugin_conforms_at_every_dtype_and_a_bug_fails_at_each, .init = setup, .fini = teardown, .timeout = 600)
{
    const char *dtypes[] = {"float32", "float16", "bfloat16", "float64"};
    for (int k = 0; k < 4; k++) {
        int f64 = k == 3;
        cJSON *r = through(f64 ? "plugin_roi_align_v2_f64" : "plugin_roi_align_v2", dtypes[k], EXIT_OK);
        cr_assert_gt(summary(r, "passed"), 100, "%s", dtypes[k]);
        cr_assert_str_eq(cJSON_GetObjectItem(r, "dtype")->valuestring, dtypes[k]);
        const cJSON *out = cJSON_GetArrayItem(cJSON_GetObjectItem(find_case(r, VICTIM), "outputs"), 0);
        cr_assert_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(out, "tolerance"), "u")->valuedouble, dtype_find(dtypes[k])->u);
        cJSON_Delete(r);
        r = through(f64 ? "faulty_v2_aligned_f64" : "faulty_v2_aligned", dtypes[k], EXIT_FAIL);
        cr_assert_gt(summary(r, "failed"), 40, "ignoring aligned is caught at %s", dtypes[k]);
        cr_assert_str_eq(status_of(r, VICTIM), "failed");
        cJSON_Delete(r);
    }
    /* the float build does not offer float64: not implemented, not failed */
    cJSON *r = through("plugin_roi_align_v2", "float64", EXIT_OK);
    cr_assert_eq(summary(r, "passed"), summary(r, "total") - summary(r, "not_implemented"));
    cr_assert_gt(summary(r, "not_implemented"), 100);
    cJSON_Delete(r);
}

Test(devflow, dtypes_an_implementation_cannot_compute_in_are_usage_errors, .init = setup, .fini = teardown)
{
    char msg[1024];
    const char *a[] = {"conform", "run", "cases/smoke.json", "--dtype", "float16", NULL};
    cr_assert_eq(with_stderr(cmd_run, a, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "optimized kernels compute in float32 only"), "%s", msg);
    const char *b[] = {"conform", "run", "cases/smoke.json", "--impl", "plugin:" TEST_BUILD "/plugins/plugin_roi_align.so", "--dtype",
                       "bfloat16", NULL};
    cr_assert_eq(with_stderr(cmd_run, b, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "ABI version 1 computes in float32 only"), "%s", msg);
    const char *c[] = {"conform", "run", "cases/smoke.json", "--dtype", "float8", NULL};
    cr_assert_eq(with_stderr(cmd_run, c, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "float32, float16, bfloat16 or float64, got 'float8'"), "%s", msg);
}

/* export --outputs refuses in its own option's words: never a "--impl" the user did not give */
Test(devflow, export_outputs_errors_name_outputs_not_impl, .init = setup, .fini = teardown)
{
    char msg[1024];
    const char *a[] = {"conform", "export", "cases/smoke.json", "--out", sub("ex"), "--dtype", "float64", "--outputs",
                       "optimized", NULL};
    cr_assert_eq(with_stderr(cmd_export, a, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "--outputs plugin:PATH.so") && !strstr(msg, "--impl") && !strstr(msg, "dir:"), "%s", msg);
    const char *b[] = {"conform", "export", "cases/smoke.json", "--out", sub("ex"), "--outputs", "plugin:", NULL};
    cr_assert_eq(with_stderr(cmd_export, b, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "--outputs plugin:") && !strstr(msg, "--impl"), "%s", msg);
    const char *c[] = {"conform", "export", "cases/smoke.json", "--out", sub("ex"), "--outputs", "optimised", NULL};
    cr_assert_eq(with_stderr(cmd_export, c, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "--outputs: 'optimised' is not one of optimized, plugin:PATH.so") && !strstr(msg, "--impl"), "%s", msg);
}

Test(devflow, a_float16_device_directory_round_trips, .init = setup, .fini = teardown)
{
    const char *ex = sub("ex");
    cr_assert_eq(EXPORT("cases/smoke.json", "--op", "roi_align", "--out", ex, "--dtype", "float16", "--outputs",
                        "plugin:" TEST_BUILD "/plugins/plugin_roi_align_v2.so"),
                 EXIT_OK);
    char impl[300];
    snprintf(impl, sizeof impl, "dir:%s", ex);
    cr_assert_eq(RUN("cases/smoke.json", "--op", "roi_align", "--impl", impl, "--report-dir", sub("rep"), "--quiet"), EXIT_OK);
    cJSON *r = report(sub("rep"));
    cr_assert_str_eq(cJSON_GetObjectItem(r, "dtype")->valuestring, "float16");
    cr_assert_gt(summary(r, "passed"), 50);
    cJSON_Delete(r);
    /* the optimized path computes in float32 and stores float16 results rounded, as a device may */
    cr_assert_eq(EXPORT("cases/smoke.json", "--op", "roi_align", "--out", sub("ex2"), "--dtype", "bfloat16", "--outputs",
                        "optimized"),
                 EXIT_OK);
    snprintf(impl, sizeof impl, "dir:%s", sub("ex2"));
    cr_assert_eq(RUN("cases/smoke.json", "--op", "roi_align", "--impl", impl, "--report-dir", sub("rep2"), "--quiet"), EXIT_OK);
    /* but float32 results are no float64 outputs */
    cr_assert_eq(EXPORT("cases/smoke.json", "--op", "roi_align", "--out", sub("ex3"), "--dtype", "float64", "--outputs",
                        "optimized"),
                 EXIT_USAGE);
}

/* A case whose finite inputs overflow the dtype (1e9 grid coordinates at float16 become inf) no
   longer means what it says: run reports it not_applicable naming the input, export writes no data
   for it and says so in the manifest, and it is neither a passed nor a failed case (a run of only
   such cases judged nothing, and fails on that). */
Test(devflow, a_case_whose_inputs_overflow_the_dtype_is_not_applicable, .init = setup, .fini = teardown, .timeout = 300)
{
    const char *ex = sub("ex"), *id = "smoke/grid_fwd_huge_coords/interpolation_mode=0,padding_mode=1,align_corners=false";
    cr_assert_eq(EXPORT("cases/smoke.json", "--filter", "smoke/grid_fwd_huge_coords*", "--out", ex, "--dtype", "float16",
                        "--outputs", "optimized"),
                 EXIT_OK);
    cJSON *m = load(sub("ex/manifest.json"));
    const cJSON *e, *entry = NULL;
    cJSON_ArrayForEach(e, cJSON_GetObjectItem(m, "cases")) if (!strcmp(cJSON_GetObjectItem(e, "id")->valuestring, id)) entry = e;
    cr_assert(entry, "no manifest entry %s", id);
    const cJSON *na = cJSON_GetObjectItem(entry, "not_applicable");
    cr_assert(cJSON_IsString(na) && strstr(na->valuestring, "input grid") && strstr(na->valuestring, "float16"), "%s",
              cJSON_Print(entry));
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(entry, "inputs")), 0, "no data for a case that does not apply");
    cJSON_Delete(m);
    char impl[300];
    snprintf(impl, sizeof impl, "dir:%s", ex);
    cr_assert_eq(RUN("cases/smoke.json", "--filter", "smoke/grid_fwd_huge_coords*", "--impl", impl, "--report-dir",
                     sub("rep"), "--quiet"),
                 EXIT_FAIL, "not applicable is no failed case, but a run of nothing else judged nothing");
    cJSON *r = report(sub("rep"));
    cr_assert_eq(summary(r, "failed"), 0, "not applicable is no failure");
    cr_assert_str_eq(status_of(r, id), "not_applicable");
    cr_assert(strstr(message_of(r, id), "round to infinity"), "%s", message_of(r, id));
    cr_assert_eq(summary(r, "not_applicable"), summary(r, "total"));
    cJSON_Delete(r);
    /* at float32 the same cases are judged */
    cr_assert_eq(RUN("cases/smoke.json", "--filter", "smoke/grid_fwd_huge_coords*", "--report-dir", sub("rep32"), "--quiet"),
                 EXIT_OK);
    r = report(sub("rep32"));
    cr_assert_eq(summary(r, "passed"), summary(r, "total"));
    cJSON_Delete(r);
}

/* A waiver with "dtypes" holds only at those dtypes (elsewhere it is neither applied nor stale); one
   with "outputs" waives a case only when every failing output is named. */
Test(devflow, waivers_scoped_by_dtype_and_output, .init = setup, .fini = teardown, .timeout = 300)
{
    const char *ex = sub("ex");
    cr_assert_eq(EXPORT("cases/smoke.json", "--filter", VICTIM, "--out", ex, "--outputs", "optimized"), EXIT_OK);
    char out[600];
    file_of(ex, VICTIM, "outputs", "output", out, sizeof out);
    FILE *f = fopen(out, "r+b"); /* the first element moved far beyond any tolerance */
    cr_assert(f);
    float big = 1e6f;
    unsigned char head[10];
    cr_assert_eq(fread(head, 1, 10, f), 10);
    cr_assert_eq(fseek(f, 10 + head[8] + 256 * head[9], SEEK_SET), 0); /* npy 1.0: the data after the header */
    cr_assert_eq(fwrite(&big, sizeof big, 1, f), 1);
    fclose(f);
    char impl[300];
    snprintf(impl, sizeof impl, "dir:%s", ex);
    struct { const char *scope; int rc; const char *status; int stale; } t[] = {
        {"\"dtypes\": [\"float32\"]", EXIT_OK, "waived", 0},
        {"\"dtypes\": [\"bfloat16\"]", EXIT_FAIL, "failed", 0},
        {"\"outputs\": [\"output\"]", EXIT_OK, "waived", 0},
        {"\"outputs\": [\"grad_offsets\"]", EXIT_FAIL, "failed", 1},
    };
    for (size_t k = 0; k < sizeof t / sizeof t[0]; k++) {
        char w[1024];
        snprintf(w, sizeof w, "{\"waivers\": [{\"pattern\": \"%s\", %s, \"reason\": \"test\", \"link\": \"x\"}]}", VICTIM,
                 t[k].scope);
        write_text(sub("w.json"), w);
        cr_assert_eq(RUN("cases/smoke.json", "--filter", VICTIM, "--impl", impl, "--waivers", sub("w.json"), "--report-dir",
                         sub("rep"), "--quiet"),
                     t[k].rc, "%s", t[k].scope);
        cJSON *r = report(sub("rep"));
        cr_assert_str_eq(status_of(r, VICTIM), t[k].status, "%s", t[k].scope);
        cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(r, "stale_waivers")), t[k].stale, "%s", t[k].scope);
        cJSON_Delete(r);
    }
    write_text(sub("w.json"), "{\"waivers\": [{\"pattern\": \"x\", \"dtypes\": [\"float8\"], \"reason\": \"r\", \"link\": \"l\"}]}");
    cr_assert_eq(RUN("cases/smoke.json", "--filter", VICTIM, "--impl", impl, "--waivers", sub("w.json"), "--report-dir",
                     sub("rep"), "--quiet"),
                 EXIT_USAGE, "an unknown dtype in a waiver is a usage error");
}

/* ---- check with raw files -------------------------------------------------------------------- */

#define V "cases/check/roi_align/"

static int check_actual(const char *file, const char *dtype)
{
    char a[300];
    snprintf(a, sizeof a, "output=%s", file);
    const char *argv[] = {"conform", "check", "roi_align", "--attr", "pooled_h=3", "--attr", "pooled_w=4", "--attr",
                          "spatial_scale=0.25", "--attr", "sampling_ratio=2", "--input", "input=" V "input.npy", "--input",
                          "rois=" V "rois.npy", "--actual", a, dtype ? "--dtype" : NULL, dtype, NULL};
    return cmd_check(argc_of(argv), (char **)argv);
}

static void write_bin(const char *path, const char *npy, const dtype_desc *dt, int64_t drop)
{
    tensor_t t;
    char err[256];
    cr_assert_eq(npy_read_ex(npy, &t, NPY_F16, err, sizeof err), 0, "%s", err);
    int64_t n = tensor_numel(&t) - drop;
    void *raw = malloc((size_t)n * (size_t)dt->itemsize);
    dtype_encode(dt->id, t.data, raw, n);
    FILE *f = fopen(path, "wb");
    fwrite(raw, (size_t)dt->itemsize, (size_t)n, f);
    fclose(f);
    free(raw);
    tensor_free(&t);
}

Test(devflow, check_takes_raw_bin_outputs, .init = setup, .fini = teardown)
{
    char p[300], msg[1024];
    snprintf(p, sizeof p, "%s/output.bin", dir);
    write_bin(p, V "output.npy", dtype_get(CONFORM_DTYPE_FLOAT32), 0);
    cr_assert_eq(check_actual(p, NULL), EXIT_OK);
    /* the dtype from the name */
    snprintf(p, sizeof p, "%s/output_float16.bin", dir);
    write_bin(p, V "output_f16.npy", dtype_get(CONFORM_DTYPE_FLOAT16), 0);
    cr_assert_eq(check_actual(p, NULL), EXIT_OK);
    cr_assert_eq(check_actual(p, "float16"), EXIT_OK);
    char a[300];
    snprintf(a, sizeof a, "output=%s", p);
    const char *clash[] = {"conform", "check", "roi_align", "--attr", "pooled_h=3", "--attr", "pooled_w=4", "--attr",
                           "spatial_scale=0.25", "--attr", "sampling_ratio=2", "--input", "input=" V "input.npy", "--input",
                           "rois=" V "rois.npy", "--actual", a, "--dtype", "float32", NULL};
    cr_assert_eq(with_stderr(cmd_check, clash, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "the name says float16, --dtype says float32"), "%s", msg);
    /* a size that is not the output's */
    snprintf(p, sizeof p, "%s/short.bin", dir);
    write_bin(p, V "output.npy", dtype_get(CONFORM_DTYPE_FLOAT32), 3);
    snprintf(a, sizeof a, "output=%s", p);
    clash[16] = a;
    clash[17] = NULL;
    cr_assert_eq(with_stderr(cmd_check, clash, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "short.bin: 1428 bytes, expected 1440 ([10,3,3,4] of float32"), "%s", msg);
}

/* ---- small things -------------------------------------------------------------------------- */

Test(devflow, output_mask_takes_two_bools)
{
    problem_t p;
    char err[256];
    const op_desc *op = op_find("grid_sampler_2d_backward");
    problem_init(&p, op);
    cr_assert_eq(problem_set_attr_text(&p, "output_mask", "true,false", err, sizeof err), 0, "%s", err);
    const attr_value *m = problem_attr(&p, "output_mask");
    cr_assert_eq(m->n, 2);
    cr_assert_eq(m->list[0], 1);
    cr_assert_eq(m->list[1], 0);
    cr_assert_eq(problem_set_attr_text(&p, "output_mask", "0,1", err, sizeof err), 0, "the integer form still works");
    cr_assert_eq(problem_attr(&p, "output_mask")->list[1], 1);
    cJSON *j = cJSON_Parse("[false, true]");
    cr_assert_eq(problem_set_attr_json(&p, "output_mask", j, err, sizeof err), 0, "%s", err);
    cr_assert_eq(problem_attr(&p, "output_mask")->list[0], 0);
    cr_assert_eq(problem_attr(&p, "output_mask")->list[1], 1);
    cJSON_Delete(j);
    cr_assert_neq(problem_set_attr_text(&p, "output_mask", "true,maybe", err, sizeof err), 0);
    problem_free(&p);
}

Test(devflow, a_bad_npy_names_the_argument_and_the_file, .init = setup, .fini = teardown)
{
    char p[200], arg[300], msg[1024];
    snprintf(p, sizeof p, "%s/int.npy", dir);
    FILE *f = fopen(p, "wb");
    const char *hdr = "{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }";
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 0, 0};
    size_t hlen = 64 - 10;
    pre[8] = (unsigned char)hlen;
    fwrite(pre, 1, 10, f);
    fprintf(f, "%-*s\n", (int)hlen - 1, hdr);
    int32_t one = 1;
    fwrite(&one, 4, 1, f);
    fclose(f);
    snprintf(arg, sizeof arg, "input=%s", p);
    const char *argv[] = {"conform", "check", "roi_align", "--attr", "pooled_h=3", "--attr", "pooled_w=4", "--input", arg, "--input", "rois=" V "rois.npy", "--actual",
                          "output=" V "output.npy", NULL};
    cr_assert_eq(with_stderr(cmd_check, argv, msg, sizeof msg), EXIT_USAGE);
    char want[400];
    snprintf(want, sizeof want, "--input input=%s: unsupported dtype '<i4'", p);
    cr_assert(strstr(msg, want), "%s", msg);
}

Test(devflow, an_unknown_impl_is_echoed_with_the_kinds)
{
    impl_t impl;
    char err[512];
    cr_assert_eq(impl_open("optimised", NULL, &impl, err, sizeof err), -1);
    cr_assert(strstr(err, "'optimised'") && strstr(err, "optimized, plugin:PATH.so or dir:DIR"), "%s", err);
    cr_assert_eq(impl_open("plugin:", NULL, &impl, err, sizeof err), -1);
    cr_assert(strstr(err, "plugin:PATH.so"), "%s", err);
}

/* ---- a hostile directory: no hang, no path outside it, a verdict per case ------------- */

/* the victim's output (or, with input set, its input) replaced by what make() puts at the path */
static void replace_victim(const char *ex, int input, void (*make)(const char *path))
{
    char p[600];
    if (input) file_of(ex, VICTIM, "inputs", "input", p, sizeof p);
    else victim_output(ex, p, sizeof p);
    cr_assert_eq(remove(p), 0);
    make(p);
}

static void make_fifo(const char *p) { cr_assert_eq(mkfifo(p, 0600), 0); }
static void make_dir(const char *p) { cr_assert_eq(mkdir(p, 0700), 0); }
static void make_zero_link(const char *p) { cr_assert_eq(symlink("/dev/zero", p), 0); }
static void make_socket(const char *p)
{
    struct sockaddr_un a = {.sun_family = AF_UNIX};
    snprintf(a.sun_path, sizeof a.sun_path, "%s", p);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    cr_assert_eq(bind(fd, (struct sockaddr *)&a, sizeof a), 0, "%s", p);
    close(fd); /* the socket file stays */
}
/* 3 GiB (sparse: no disk) where 4.6 KB is due: refused by its size, never read */
static void make_huge(const char *p)
{
    FILE *f = fopen(p, "wb");
    cr_assert(f);
    cr_assert_eq(fseek(f, 3L << 30, SEEK_SET), 0);
    fputc(0, f);
    fclose(f);
}

static void fifo_output(const char *ex) { replace_victim(ex, 0, make_fifo); }
static void fifo_input(const char *ex) { replace_victim(ex, 1, make_fifo); }
static void socket_output(const char *ex) { replace_victim(ex, 0, make_socket); }
static void dir_output(const char *ex) { replace_victim(ex, 0, make_dir); }
static void zero_output(const char *ex) { replace_victim(ex, 0, make_zero_link); }
static void huge_output(const char *ex) { replace_victim(ex, 0, make_huge); }

/* the victim's output path in the manifest set to rel */
static void set_victim_path(const char *ex, const char *rel)
{
    char p[300], err[256];
    snprintf(p, sizeof p, "%s/manifest.json", ex);
    cJSON *m = load(p), *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(m, "cases"))
        if (!strcmp(cJSON_GetObjectItem(c, "id")->valuestring, VICTIM))
            cJSON_ReplaceItemInObject(cJSON_GetObjectItem(cJSON_GetObjectItem(c, "outputs"), "output"), "path",
                                      cJSON_CreateString(rel));
    cr_assert_eq(write_json_atomic(p, m, err, sizeof err), 0, "%s", err);
    cJSON_Delete(m);
}

/* a good copy of the victim's output outside the export (beside it), at dir/outside/output.npy */
static const char *good_copy_outside(const char *ex)
{
    static char q[300];
    char p[600], cmd[1000];
    victim_output(ex, p, sizeof p);
    snprintf(q, sizeof q, "%s/outside/output.npy", dir);
    snprintf(cmd, sizeof cmd, "mkdir -p %s/outside && cp %s %s", dir, p, q);
    cr_assert_eq(system(cmd), 0);
    return q;
}

/* each would pass if read: the file it names is the right output, only outside the directory */
static void dotdot_path(const char *ex)
{
    good_copy_outside(ex);
    set_victim_path(ex, "smoke/../../outside/output.npy");
}
static void absolute_path(const char *ex) { set_victim_path(ex, good_copy_outside(ex)); }
static void escaping_link(const char *ex)
{
    char p[600];
    const char *q = good_copy_outside(ex);
    victim_output(ex, p, sizeof p);
    cr_assert_eq(remove(p), 0);
    cr_assert_eq(symlink(q, p), 0);
}

/* Each spoil ends the victim in its verdict with its words, the rest of the suite passes, and the
   run takes seconds: one that hung on a file would not finish (the per-case timeout is 120 s),
   one that read outside the directory would pass the victim (the file outside is its right
   output), one that read the 3 GiB file would take its time and memory. */
static const struct {
    void (*spoil)(const char *ex);
    const char *status, *words;
} hostile[] = {
    {fifo_output, "failed", "output.npy is a FIFO (named pipe), not a regular file"},
    {fifo_input, "error", "input.npy is a FIFO (named pipe), not a regular file"},
    {socket_output, "failed", "output.npy is a socket, not a regular file"},
    {dir_output, "failed", "output.npy is a directory, not a regular file"},
    {zero_output, "error", "resolves to /dev/zero, a character device, outside"},
    {huge_output, "failed", "has 3221225473 bytes, more than the"},
    {dotdot_path, "error", "'smoke/../../outside/output.npy' in"},
    {dotdot_path, "error", "has a '..' component (paths in a manifest stay inside its directory)"},
    {absolute_path, "error", "is absolute (paths in a manifest are relative to its directory)"},
    {escaping_link, "error", "outside/output.npy, a regular file, outside"},
};

Test(devflow, a_hostile_directory_ends_each_case_in_its_verdict_soon, .init = setup, .fini = teardown)
{
    for (size_t k = 0; k < sizeof hostile / sizeof hostile[0]; k++) {
        double t0 = now_seconds();
        expect_victim(hostile[k].spoil, EXIT_FAIL, hostile[k].status, hostile[k].words);
        cr_assert_lt(now_seconds() - t0, 60.0, "%s", hostile[k].words);
        scratch_remove(dir); /* a fresh export for the next */
        cr_assert_eq(mkdir(dir, 0700), 0);
    }
}

/* a read that stalls (here: a pipe nobody writes) ends as a timeout naming what it was reading */
static exec_status stalled_read(void *ctx, char *msg, size_t msglen)
{
    int *fds = ctx;
    char c;
    snprintf(msg, msglen, "output y: reading DIR/y.npy");
    return read(fds[0], &c, 1) == 1 ? EXEC_OK : EXEC_BAD_OUTPUT;
}

Test(devflow, a_stalled_read_ends_as_a_timeout)
{
    int fds[2];
    cr_assert_eq(pipe(fds), 0);
    exec_policy policy = {1, 1.0, NULL};
    char msg[CONFORM_ERR_LEN];
    double t0 = now_seconds();
    cr_assert_eq(impl_isolated_io(stalled_read, fds, &policy, msg, sizeof msg), EXEC_TIMEOUT);
    cr_assert_lt(now_seconds() - t0, 10.0);
    cr_assert(strstr(msg, "no file read within 1 s: stalled at output y: reading DIR/y.npy"), "%s", msg);
    close(fds[0]);
    close(fds[1]);
}

/* ---- full disks: a file-size limit (RLIMIT_FSIZE) stands for a disk that fills up ------------- */

/* cmd in a child process whose files may not grow past limit bytes (SIGXFSZ ignored, as main
   does); its exit code, its stderr in dir/stderr.txt */
static int with_fsize_limit(long limit, int (*cmd)(int, char **), const char **argv)
{
    fflush(NULL);
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        struct rlimit rl = {(rlim_t)limit, (rlim_t)limit};
        int fd = open(sub("stderr.txt"), O_CREAT | O_TRUNC | O_WRONLY, 0644);
        dup2(fd, 2);
        signal(SIGXFSZ, SIG_IGN);
        _exit(setrlimit(RLIMIT_FSIZE, &rl) ? 99 : cmd(argc_of(argv), (char **)argv));
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void expect_stderr(const char *words)
{
    char *e = slurp(sub("stderr.txt"));
    cr_assert(strstr(e, words), "stderr: %s", e);
    free(e);
}

/* no temporary file of an atomic write is left in folder (nor below it) */
static void no_temporary_files(const char *folder)
{
    char cmd[400];
    snprintf(cmd, sizeof cmd, "test -z \"$(find %s -name '*.tmp*')\"", folder);
    cr_assert_eq(system(cmd), 0, "temporary files left in %s", folder);
}

static int exists_file(const char *path) { return access(path, F_OK) == 0; }

Test(devflow, export_past_a_file_size_limit_exits_2_and_leaves_no_manifest, .init = setup, .fini = teardown)
{
    const char *ex = sub("ex"), *manifest = sub("ex/manifest.json");
    const char *argv[] = {"conform", "export", "cases/smoke.json", "--filter", GRID, "--out", ex, "--outputs", "optimized", NULL};
    cr_assert_eq(cmd_export(argc_of(argv), (char **)argv), EXIT_OK);
    cr_assert(exists_file(manifest));
    /* again, where no file may pass 4 KiB: the earlier manifest must not vouch for what is left */
    cr_assert_eq(with_fsize_limit(4096, cmd_export, argv), EXIT_USAGE);
    expect_stderr("File too large");
    expect_stderr("holds no manifest");
    cr_assert(!exists_file(manifest), "a manifest survived an export that did not finish");
    no_temporary_files(ex);
    /* room again: the same command finishes, and the directory judges as before */
    cr_assert_eq(cmd_export(argc_of(argv), (char **)argv), EXIT_OK);
    char impl[300];
    snprintf(impl, sizeof impl, "dir:%s", ex);
    cr_assert_eq(RUN("cases/smoke.json", "--filter", GRID, "--impl", impl, "--report-dir", sub("rep"), "--quiet"), EXIT_OK);
}

static long file_size(const char *path)
{
    struct stat st;
    cr_assert_eq(stat(path, &st), 0, "%s", path);
    return (long)st.st_size;
}

Test(devflow, reports_and_merge_past_a_file_size_limit_exit_2_and_keep_the_earlier_report, .init = setup, .fini = teardown)
{
    static const char *const names[] = {"report.json", "report.md", "junit.xml", "report.html"};
    const char *rep = sub("rep");
    const char *argv[] = {"conform", "run", "cases/smoke.json", "--filter", GRID, "--report-dir", rep, "--quiet", NULL};
    cr_assert_eq(cmd_run(argc_of(argv), (char **)argv), EXIT_OK);
    char *before[4], path[300];
    long largest = 0, second = 0;
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", rep, names[i]);
        before[i] = slurp(path);
        long n = file_size(path);
        if (n > largest) {
            second = largest;
            largest = n;
        } else if (n > second)
            second = n;
    }
    /* the largest of the four cannot be written, the others could (midway between the two
       largest: a rerun's timings change a size by a few bytes): none of them changes */
    const long limit = (largest + second) / 2;
    cr_assert_gt(largest - second, 1000);
    cr_assert_eq(with_fsize_limit(limit, cmd_run, argv), EXIT_USAGE);
    expect_stderr("File too large");
    expect_stderr("no report was written");
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", rep, names[i]);
        char *after = slurp(path);
        cr_assert_str_eq(after, before[i], "%s changed although the report could not be written whole", names[i]);
        free(after);
    }
    no_temporary_files(rep);
    const char *merge[] = {"conform", "merge", "--report-dir", sub("merged"), rep, NULL};
    cr_assert_eq(with_fsize_limit(limit, cmd_merge, merge), EXIT_USAGE);
    expect_stderr("File too large): no report was written");
    for (int i = 0; i < 4; i++) {
        snprintf(path, sizeof path, "%s/%s", sub("merged"), names[i]);
        cr_assert(!exists_file(path), "merge left %s of a report it could not write whole", names[i]);
    }
    no_temporary_files(sub("merged"));
    /* room again: both finish */
    cr_assert_eq(cmd_run(argc_of(argv), (char **)argv), EXIT_OK);
    cr_assert_eq(cmd_merge(argc_of(merge), (char **)merge), EXIT_OK);
    for (int i = 0; i < 4; i++) free(before[i]);
}

/* the files of a report as one: the second cannot be written, so the first keeps its old text */
static int write_pair(int argc, char **argv)
{
    char err[CONFORM_ERR_LEN], big[8192];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    const char *paths[2] = {argv[0], argv[1]}, *texts[2] = {"new", big};
    int rc = write_texts_atomic(2, paths, texts, err, sizeof err);
    fprintf(stderr, "%s\n", rc ? err : "written");
    return rc ? EXIT_USAGE : EXIT_OK;
}

Test(devflow, files_written_as_one_set_are_all_or_none, .init = setup, .fini = teardown)
{
    char a[300], b[300], err[256];
    snprintf(a, sizeof a, "%s", sub("a.txt"));
    snprintf(b, sizeof b, "%s", sub("b.txt"));
    cr_assert_eq(write_text_atomic(a, "old", err, sizeof err), 0);
    const char *argv[] = {a, b, NULL};
    cr_assert_eq(with_fsize_limit(4096, write_pair, argv), EXIT_USAGE);
    expect_stderr("b.txt: cannot write (File too large)");
    char *s = slurp(a);
    cr_assert_str_eq(s, "old");
    free(s);
    cr_assert(!exists_file(b));
    no_temporary_files(dir);
    cr_assert_eq(with_fsize_limit(1 << 20, write_pair, argv), EXIT_OK);
    s = slurp(a);
    cr_assert_str_eq(s, "new");
    free(s);
}

/* ---- the runner's record, DIR/runner.json (tools/torch_runner.py) ------------------------------- */

static const char *const RECORD =
    "{\"schema\": \"conform-runner\", \"schema_version\": 1, \"runner\": \"tools/torch_runner.py\", \"device\": \"npu\","
    " \"device_name\": \"Test NPU 910\", \"host\": \"box\", \"versions\": {\"torch\": \"1.13\", \"mmcv\": null},"
    " \"ops\": {\"roi_align\": {\"supported\": %s, \"reason\": \"mmcv is not installed\", \"call\": \"torch_npu.npu_roi_align(...)\"}},"
    " \"cases\": {\"" VICTIM "\": {\"status\": \"skipped\", \"reason\": \"the device refused it\"}}}";

static void declared_unsupported(const char *ex)
{
    char p[300], text[1024];
    snprintf(p, sizeof p, "%s/runner.json", ex);
    snprintf(text, sizeof text, RECORD, "false");
    write_text(p, text);
}

static int contains(const char *file, const char *words)
{
    char p[300];
    snprintf(p, sizeof p, "%s/%s", sub("rep"), file);
    char *s = slurp(p);
    int found = strstr(s, words) != NULL;
    free(s);
    return found;
}

Test(devflow, an_op_the_runner_declares_unsupported_is_not_implemented_and_every_format_says_what_ran, .init = setup,
     .fini = teardown)
{
    const char *ex = sub("ex");
    cr_assert_eq(EXPORT("cases/smoke.json", "--filter", GRID, "--out", ex, "--outputs", "optimized"), EXIT_OK);
    declared_unsupported(ex);
    char impl[300];
    snprintf(impl, sizeof impl, "dir:%s", ex);
    /* the op's cases are not failures, but they are all the run has: nothing was judged, and a
       PASS would vouch for a kernel that never ran */
    cr_assert_eq(RUN("cases/smoke.json", "--filter", GRID, "--impl", impl, "--report-dir", sub("rep"), "--quiet"), EXIT_FAIL,
                 "a run that judged no case cannot pass");
    cJSON *r = report(sub("rep"));
    cr_assert_eq(summary(r, "not_implemented"), 8);
    cr_assert_eq(summary(r, "failed"), 0, "an op the device cannot run is never a failed case");
    cr_assert(contains("report.md", "**FAIL: 8 cases: 0 passed, 0 failed, 8 not implemented**"));
    cr_assert(contains("report.md", "The run fails on: no case judged (every case was refused)."));
    cr_assert_str_eq(status_of(r, VICTIM), "not_implemented");
    cr_assert_str_eq(message_of(r, VICTIM), "roi_align: not run on this device: mmcv is not installed");
    const cJSON *run = cJSON_GetObjectItem(r, "runner");
    cr_assert_str_eq(cJSON_GetObjectItem(run, "device_name")->valuestring, "Test NPU 910");
    cr_assert_null(cJSON_GetObjectItem(run, "cases"), "per-case records stay in the case messages");
    cr_assert(contains("report.md", "## What ran") && contains("report.md", "Test NPU 910"));
    cr_assert(contains("report.md", "| roi_align | not on this device | mmcv is not installed |"));
    cr_assert(contains("report.html", "<h2>What ran</h2>") && contains("report.html", "mmcv not found"));
    cr_assert(contains("junit.xml", "<property name=\"runner.device\" value=\"npu\"/>"));
    cr_assert(contains("junit.xml", "<property name=\"runner.op.roi_align\" value=\"not run on this device: mmcv"));
    cJSON_Delete(r);
}

static void skipped_by_the_runner(const char *ex)
{
    char p[300], text[1024];
    snprintf(p, sizeof p, "%s/runner.json", ex);
    snprintf(text, sizeof text, RECORD, "true");
    write_text(p, text);
    remove_output(ex);
}

Test(devflow, a_missing_output_carries_the_reason_the_runner_recorded, .init = setup, .fini = teardown)
{
    expect_victim(skipped_by_the_runner, EXIT_FAIL, "missing", "(the runner skipped it: the device refused it)");
}

static void bad_record(const char *ex)
{
    char p[300];
    snprintf(p, sizeof p, "%s/runner.json", ex);
    write_text(p, "{\"schema\": \"conform-runner\", \"ops\": [");
}

Test(devflow, a_bad_runner_record_is_noted_and_ignored, .init = setup, .fini = teardown)
{
    cJSON *r = judge_spoiled(bad_record, EXIT_OK);
    const cJSON *note = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "runner"), "note");
    cr_assert(cJSON_IsString(note) && strstr(note->valuestring, "runner.json ignored"), "%s",
              cJSON_IsString(note) ? note->valuestring : "no note");
    cJSON_Delete(r);
}

static void linked_record(const char *ex)
{
    char p[300];
    snprintf(p, sizeof p, "%s/runner.json", ex);
    cr_assert_eq(symlink("/dev/zero", p), 0);
}

Test(devflow, a_runner_record_that_is_a_link_is_never_followed, .init = setup, .fini = teardown)
{
    cJSON *r = judge_spoiled(linked_record, EXIT_OK);
    const cJSON *note = cJSON_GetObjectItem(cJSON_GetObjectItem(r, "runner"), "note");
    cr_assert(cJSON_IsString(note) && strstr(note->valuestring, "not a regular file"), "%s",
              cJSON_IsString(note) ? note->valuestring : "no note");
    cJSON_Delete(r);
}

/* a manifest's suite names a suite of conform's own data, never a path: '../x' is refused, unread */
Test(devflow, a_manifest_suite_name_that_is_a_path_is_refused, .init = setup, .fini = teardown)
{
    cr_assert_eq(EXPORT("cases/smoke.json", "--filter", GRID, "--out", sub("ex")), EXIT_OK);
    cJSON *m = load(sub("ex/manifest.json"));
    cJSON_ReplaceItemInArray(cJSON_GetObjectItem(m, "suites"), 0, cJSON_CreateString("../../etc/passwd"));
    char *text = cJSON_Print(m);
    FILE *f = fopen(sub("ex/manifest.json"), "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
    free(text);
    cJSON_Delete(m);
    char impl[300], msg[1024];
    snprintf(impl, sizeof impl, "dir:%s", sub("ex"));
    const char *a[] = {"conform", "run", "--impl", impl, NULL};
    cr_assert_eq(with_stderr(cmd_run, a, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "'../../etc/passwd' is not a name"), "%s", msg);
}
