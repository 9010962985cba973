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
#include "cli.h"
#include "npy.h"
#include "report.h"

static char dir[64];

static void setup(void) { scratch_make_quiet(dir, sizeof dir, "readable"); }

static void teardown(void) { scratch_remove(dir); }

static int argc_of(const char **argv)
{
    int n = 0;
    while (argv[n]) n++;
    return n;
}

#define RUN(...) cmd_run(argc_of((const char *[]){"conform", "run", __VA_ARGS__, NULL}), (char **)(const char *[]){"conform", "run", __VA_ARGS__, NULL})

static const char *sub(const char *name)
{
    static char buf[8][256];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

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
