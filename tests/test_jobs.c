/* conform run --jobs N: the same report for every N, a memory budget the running cases share (a
 * case waits, or is refused with its sizes), a dead worker as its case's verdict, interruption. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scratch.h"
#include "test_files.h"
#include "sigterm_run.h"
#include "cli.h"
#include "jobs.h"
#include "report.h"

static char dir[64];

static void setup(void) { scratch_make_quiet(dir, sizeof dir, "jobs"); }

static void teardown(void) { scratch_remove(dir); }

static cJSON *load(const char *sub) { return test_report(dir, sub); }

/* a report without what legitimately differs between these runs: the command line and timings */
static char *without_timings(cJSON *r)
{
    cJSON_DeleteItemFromObject(r, "command");
    cJSON_DeleteItemFromObject(r, "duration_s");
    cJSON_DeleteItemFromObject(cJSON_GetObjectItem(r, "summary"), "duration_s");
    cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "cases")) {
        cJSON_DeleteItemFromObject(c, "time_ref_s");
        cJSON_DeleteItemFromObject(c, "time_opt_s");
    }
    return cJSON_PrintUnformatted(r);
}

Test(jobs, the_smoke_report_is_the_same_for_one_and_two_jobs, .init = setup, .fini = teardown)
{
    char a[128], b[128];
    snprintf(a, sizeof a, "%s/j1", dir);
    snprintf(b, sizeof b, "%s/j2", dir);
    /* without the reference proofs: they run after the cases, in this process, at the same one
       thread whatever --jobs, so they are the same by construction (4.5 of the 10.5 CPU seconds of a
       smoke run) */
    const char *r1[] = {"conform", "run", "cases/smoke.json", "--jobs", "1", "--threads", "1", "--report-dir", a, "--quiet", "--no-proofs"};
    const char *r2[] = {"conform", "run", "cases/smoke.json", "--jobs", "2", "--threads", "1", "--report-dir", b, "--quiet", "--no-proofs"};
    cr_assert_eq(cmd_run(11, (char **)r1), EXIT_OK);
    cr_assert_eq(cmd_run(11, (char **)r2), EXIT_OK);
    cJSON *j1 = load("j1"), *j2 = load("j2");
    cr_assert_gt(cJSON_GetArraySize(cJSON_GetObjectItem(j1, "cases")), 500);
    char *s1 = without_timings(j1), *s2 = without_timings(j2);
    cr_assert(!strcmp(s1, s2), "the reports of --jobs 1 and --jobs 2 differ beyond timings");
    free(s1); free(s2);
    cJSON_Delete(j1); cJSON_Delete(j2);
}

/* ---- the scheduler itself, on a suite of known sizes ---------------------------------------- */

/* Two grid_sampler_2d cases of about 24 MiB each (input 1x4x512x512: 12 MiB as double and float,
 * output 1x4x256x256: 11 MiB as reference, bounds and result), so with a worker's 96 MiB about
 * 120 MiB each; and one of about 250 MiB of tensors. */
static const char *sized_suite =
    "{\"suite\": \"sized\", \"seed\": 3, \"cases\": ["
    "{\"name\": \"a\", \"op\": \"grid_sampler_2d\", \"shapes\": {\"input\": [1,4,512,512], \"grid\": [1,256,256,2]}},"
    "{\"name\": \"too_big\", \"op\": \"grid_sampler_2d\", \"shapes\": {\"input\": [1,4,1024,1024], \"grid\": [1,1024,1024,2]}},"
    "{\"name\": \"b\", \"op\": \"grid_sampler_2d\", \"shapes\": {\"input\": [1,4,512,512], \"grid\": [1,256,256,2]}}]}";

typedef struct {
    cJSON *cases[8];
    int n;
} collected;

static void collect(const job_case *jc, cJSON *case_json, void *ctx)
{
    collected *c = ctx;
    cr_assert_lt(c->n, 8);
    c->cases[c->n++] = case_json;
    (void)jc;
}

static const char *field(const collected *c, int i, const char *key)
{
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(c->cases[i], key));
    return v ? v : "";
}

static volatile sig_atomic_t never;

/* loads the sized suite and runs it with `jobs` workers under budget_mib */
static void run_sized(int jobs, double budget_mib, job_run_fn run, collected *out, jobs_stats *stats)
{
    char path[128], err[512];
    snprintf(path, sizeof path, "%s/sized.json", dir);
    FILE *f = fopen(path, "w");
    cr_assert(f);
    fputs(sized_suite, f);
    fclose(f);
    suite_t s;
    cr_assert_eq(suite_load(path, &s, err, sizeof err), 0, "%s", err);
    job_case todo[3];
    for (int i = 0; i < 3; i++) todo[i] = (job_case){&s.cases[i], case_seed(&s.cases[i], s.seed), "repro"};
    impl_t impl;
    cr_assert_eq(impl_open("optimized", NULL, &impl, err, sizeof err), 0, "%s", err);
    run_env env = {{conform_isa_best(), 1}, &impl, {1, 60.0, &never}, 0, NULL, NULL};
    conform_memory_budget = budget_mib * 1048576.0;
    memset(out, 0, sizeof *out);
    cr_assert_eq(jobs_run(todo, 3, jobs, &env, run, collect, out, stats), 3);
    impl_close(&impl);
    suite_free(&s);
}

static void free_collected(collected *c)
{
    for (int i = 0; i < c->n; i++) cJSON_Delete(c->cases[i]);
}

Test(jobs, cases_that_do_not_fit_together_wait_and_one_over_the_budget_is_refused_with_its_sizes, .init = setup,
     .fini = teardown)
{
    collected got;
    jobs_stats st;
    /* 160 MiB: either small case fits, both together (about 240 MiB) do not */
    run_sized(2, 160, job_run_case, &got, &st);
    cr_assert_eq(st.max_running, 1, "two cases ran at once over a budget that holds one");
    cr_assert_geq(st.waited_for_memory, 1);
    cr_assert_leq(st.max_admitted_bytes, 160 * 1048576.0);
    cr_assert_str_eq(field(&got, 0, "id"), "sized/a");
    cr_assert_str_eq(field(&got, 1, "id"), "sized/too_big");
    cr_assert_str_eq(field(&got, 2, "id"), "sized/b");
    cr_assert_str_eq(field(&got, 0, "status"), "passed");
    cr_assert_str_eq(field(&got, 2, "status"), "passed");
    cr_assert_str_eq(field(&got, 1, "status"), "error");
    cr_assert(strstr(field(&got, 1, "message"), "MiB, over the memory budget of 160 MiB"), "%s", field(&got, 1, "message"));
    free_collected(&got);
    /* with room for both, two run at once: the waiting above was the budget's doing */
    run_sized(2, 1024, job_run_case, &got, &st);
    cr_assert_eq(st.max_running, 2);
    cr_assert_eq(st.waited_for_memory, 0);
    /* and the two workers ran the three cases: one took a second case, with its buffers kept */
    cr_assert_eq(st.workers_started, 2);
    free_collected(&got);
}

/* dies like a worker the kernel's out-of-memory killer picked */
static cJSON *die_on_b(const job_case *jc, const run_env *env)
{
    if (!strcmp(jc->c->id, "sized/b")) raise(SIGKILL);
    return job_run_case(jc, env);
}

Test(jobs, a_worker_that_dies_is_its_cases_verdict_and_the_run_goes_on, .init = setup, .fini = teardown)
{
    collected got;
    jobs_stats st;
    run_sized(2, 1024, die_on_b, &got, &st);
    cr_assert_eq(st.worker_deaths, 1);
    cr_assert_str_eq(field(&got, 0, "status"), "passed");
    cr_assert_str_eq(field(&got, 2, "id"), "sized/b");
    cr_assert_str_eq(field(&got, 2, "status"), "crashed");
    cr_assert(strstr(field(&got, 2, "message"), "killed by signal 9"), "%s", field(&got, 2, "message"));
    cr_assert_str_eq(field(&got, 2, "repro"), "repro");
    free_collected(&got);
}

Test(jobs, sigterm_with_two_jobs_leaves_a_valid_report_that_says_interrupted, .init = setup, .fini = teardown)
{
    char rep[128];
    snprintf(rep, sizeof rep, "%s/r", dir);
    /* a plugin that hangs in roi_align keeps both workers busy until the signal comes */
    const char *argv[] = {"conform", "run", "cases/smoke.json", "--impl", "plugin:" TEST_BUILD "/plugins/faulty_hang.so", "--timeout",
                          "60", "--report-dir", rep, "--quiet", "--filter", "smoke/*grid*", "--jobs", "2"};
    cJSON *r = sigterm_run(argv, 14, rep);
    cJSON_Delete(r);
}
