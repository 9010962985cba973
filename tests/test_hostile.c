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

#include "cli.h"
#include "report.h"
#include "suite.h"

static char dir[64];

static void setup(void)
{
    cr_redirect_stdout();
    cr_redirect_stderr();
    snprintf(dir, sizeof dir, "/tmp/conform-hostile-XXXXXX");
    cr_assert(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

Test(hostile, sigterm_leaves_a_valid_report_that_says_interrupted, .init = setup, .fini = teardown)
{
    char rep[128];
    snprintf(rep, sizeof rep, "%s/r", dir);
    /* a plugin that hangs in roi_align keeps the run busy until the signal comes */
    const char *argv[] = {"conform", "run", "cases/smoke.json", "--impl", "plugin:build/plugins/faulty_hang.so", "--timeout",
                          "60", "--report-dir", rep, "--quiet", "--filter", "smoke/*grid*"};
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) _exit(cmd_run(12, (char **)argv));
    usleep(500000);
    kill(pid, SIGTERM);
    int status;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status), "the run must end on its own terms, not die of the signal");
    cr_assert_eq(WEXITSTATUS(status), EXIT_FAIL);
    char path[256], err[256];
    snprintf(path, sizeof path, "%s/report.json", rep);
    cJSON *r = read_json_file(path, err, sizeof err);
    cr_assert(r, "%s", err);
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(r, "interrupted")));
    cr_assert_gt(cJSON_GetObjectItem(r, "cases_not_run")->valuedouble, 0);
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
