/* conform run --jobs N: cases in parallel worker processes under one shared memory budget, their
 * results reported in suite order, so a report is the same for every N apart from timings. */
#ifndef CONFORM_JOBS_H
#define CONFORM_JOBS_H

#include "runner.h"

/* One selected case, in suite order. */
typedef struct {
    const case_t *c;
    uint64_t seed;
    const char *repro; /* the command line that reruns it alone (owned by the caller) */
} job_case;

/* Runs one case and gives its report object (in a worker when jobs > 1). */
typedef cJSON *(*job_run_fn)(const job_case *jc, const run_env *env);
/* Receives each finished case, in suite order, in the calling process; owns case_json. */
typedef void (*job_report_fn)(const job_case *jc, cJSON *case_json, void *ctx);

/* What the scheduler did, for tests and the progress line. */
typedef struct {
    int max_running;          /* most cases running at once */
    double max_admitted_bytes; /* most estimated memory admitted at once */
    int waited_for_memory;    /* cases that waited because the free budget was too small */
    int worker_deaths;        /* workers that died without a result (each became a crashed case) */
    int workers_started;      /* worker processes forked (a worker runs case after case) */
} jobs_stats;

/* The default job function: run_case, then its report object. */
cJSON *job_run_case(const job_case *jc, const run_env *env);
/* Memory a case holds while it runs: its tensors (problem_bytes) and a worker's own pages. */
double case_memory_estimate(const case_t *c);
/* --jobs and --threads share the cores, so N jobs never run N x cores threads. Given as 0 (not
 * set): jobs = the cores / threads per job, no more of the largest case than fit in the memory
 * budget together, at least 1; threads = the cores / jobs, at least 1. */
void jobs_share_cores(const job_case *cases, int n, int *jobs, int *threads);
/* Runs n cases, at most jobs at a time, each admitted only while its estimate fits the free part
 * of the memory budget (a case alone always runs: over the budget it is refused with its sizes).
 * jobs == 1 runs in this process; jobs > 1 forks up to jobs workers, each running case after case
 * (keeping its big buffers, within what the budget counts for it), and a worker that dies becomes
 * its case's "crashed" verdict (a new worker takes the next case). Cases start in suite order. Stops launching when env->policy.stop is set, kills
 * the running workers and reports what finished. Returns the number of cases reported. */
int jobs_run(const job_case *cases, int n, int jobs, const run_env *env, job_run_fn run, job_report_fn report,
             void *ctx, jobs_stats *stats);

#endif
