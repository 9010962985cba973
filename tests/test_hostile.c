/* Hostile conditions: an interrupted run leaves a valid partial report, a case beyond the memory
 * budget is refused with a clear message, absurd shapes are caught before any allocation. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scratch.h"
#include "sigterm_run.h"
#include "cli.h"
#include "report.h"
#include "suite.h"
#include "npy.h"
#include "runner.h"

static char dir[64];

static void setup(void) { scratch_make_quiet(dir, sizeof dir, "hostile"); }

static void teardown(void) { scratch_remove(dir); }

Test(hostile, sigterm_leaves_a_valid_report_that_says_interrupted, .init = setup, .fini = teardown)
{
    char rep[128];
    snprintf(rep, sizeof rep, "%s/r", dir);
    /* a plugin that hangs in roi_align keeps the run busy until the signal comes */
    const char *argv[] = {"conform", "run", "cases/smoke.json", "--impl", "plugin:" TEST_BUILD "/plugins/faulty_hang.so", "--timeout",
                          "60", "--report-dir", rep, "--quiet", "--filter", "smoke/*grid*"};
    cJSON *r = sigterm_run(argv, 12, rep);
    cJSON_Delete(r);
    /* nothing half-written: no temporary files left beside the reports */
    char cmd[300];
    snprintf(cmd, sizeof cmd, "ls %s | grep -q tmp", rep);
    cr_assert_neq(system(cmd), 0);
}

Test(hostile, a_case_over_the_memory_budget_is_refused, .init = setup, .fini = teardown)
{
    char rep[128], suite[128];
    snprintf(rep, sizeof rep, "%s/m", dir);
    snprintf(suite, sizeof suite, "%s/big.json", dir);
    FILE *f = fopen(suite, "w");
    cr_assert(f);
    /* 1 x 64 x 128 x 128 inputs: about 12 MiB in the harness */
    fputs("{\"suite\": \"big\", \"cases\": [{\"name\": \"big\", \"op\": \"roi_align\", \"shapes\": "
          "{\"input\": [1,64,128,128], \"rois\": [4,5]}, \"attrs\": {\"pooled_h\": 2, \"pooled_w\": 2}}]}", f);
    fclose(f);
    const char *argv[] = {"conform", "run", suite, "--max-memory", "1", "--report-dir", rep, "--quiet"};
    cr_assert_eq(cmd_run(8, (char **)argv), EXIT_FAIL);
    char path[256], err[256];
    snprintf(path, sizeof path, "%s/report.json", rep);
    cJSON *r = read_json_file(path, err, sizeof err);
    cJSON *c = cJSON_GetArrayItem(cJSON_GetObjectItem(r, "cases"), 0);
    cr_assert_str_eq(cJSON_GetObjectItem(c, "status")->valuestring, "error");
    cr_assert(strstr(cJSON_GetObjectItem(c, "message")->valuestring, "over the memory budget of 1 MiB"));
    cJSON_Delete(r);
    /* eval and bench refuse it with exit 2 */
    const char *bench[] = {"conform", "bench", "roi_align", "--shape", "input=64,256,256,256", "--shape", "rois=10,5",
                           "--attr", "pooled_h=7", "--attr", "pooled_w=7", "--max-memory", "64"};
    cr_assert_eq(cmd_bench(13, (char **)bench), EXIT_USAGE);
}

Test(hostile, absurd_shapes_are_caught_before_allocation)
{
    /* 2^20 x 2^20 x 2^20: the product overflows the harness's limit */
    int64_t d[3] = {1 << 20, 1 << 20, 1 << 20};
    shape_t s = shape_make(3, d);
    cr_assert_eq(shape_numel(&s), -1);
    int64_t e[2] = {INT64_MAX / 2, 3};
    s = shape_make(2, e);
    cr_assert_eq(shape_numel(&s), -1);
    int64_t z[3] = {0, INT64_MAX, 5}; /* empty, but a dim that large is still refused */
    s = shape_make(3, z);
    cr_assert_eq(shape_numel(&s), 0);
}

/* found by fuzz_ops: tiny shapes, but rois so large that adaptive sampling asked for about 1e9
 * sample evaluations; the reference ran for minutes. The work budget refuses it at once. */
Test(hostile, absurd_adaptive_sampling_is_refused_by_the_work_budget, .init = setup, .fini = teardown)
{
    char x[128], r[128], out[128], err[256];
    snprintf(x, sizeof x, "%s/x.npy", dir);
    snprintf(r, sizeof r, "%s/r.npy", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    double xv[16] = {0}, rv[5] = {0, 0, 0, 3e6, 3e6};
    cr_assert_eq(npy_write_f64(x, &(shape_t){4, {1, 1, 4, 4}}, xv, err, sizeof err), 0);
    cr_assert_eq(npy_write_f64(r, &(shape_t){2, {1, 5}}, rv, err, sizeof err), 0);
    char xi[160], ri[160];
    snprintf(xi, sizeof xi, "input=%s", x);
    snprintf(ri, sizeof ri, "rois=%s", r);
    const char *argv[] = {"conform", "eval", "roi_align", "--impl", "reference", "--attr", "pooled_h=2", "--attr",
                          "pooled_w=2", "--input", xi, "--input", ri, "--output-dir", out};
    double t0 = now_seconds();
    cr_assert_eq(cmd_eval(15, (char **)argv), EXIT_USAGE);
    cr_assert_lt(now_seconds() - t0, 5.0);
}

/* found by fuzz_ops (a 40 s timeout): an aligned roi with a huge height and a negative width
 * under adaptive sampling gave counts of 1e9 and -1e9; the reference looped over the 1e9 rows of
 * samples although the negative axis had none. */
Test(hostile, a_negative_sample_count_on_one_axis_samples_nothing_at_once)
{
    double x[3 * 6] = {0}, y[6 * 4];
    for (int i = 0; i < 18; i++) x[i] = i;
    /* NCHW, one roi: (batch, cx, cy, w, h, angle) */
    double rois[6] = {0, 1, 1, -1e30, 1e30, 0.5};
    ref_roi_align_rotated_params p = {1, 6, 3, 1, 1, 1, 4, 1.0, 0, 1, 0, 0};
    double t0 = now_seconds();
    f64_roi_align_rotated_fwd__ref(&p, x, rois, y, NULL);
    cr_assert_lt(now_seconds() - t0, 1.0);
    for (int i = 0; i < 24; i++) cr_assert_eq(y[i], 0.0);
    double r2[5] = {0, 0, 0, -1e30, 1e30}, y2[4];
    ref_roi_align_params q = {1, 1, 3, 6, 1, 1, 4, 1.0, 0, 1, 0};
    t0 = now_seconds();
    f64_roi_align_fwd__ref(&q, x, r2, y2, NULL);
    cr_assert_lt(now_seconds() - t0, 1.0);
}
