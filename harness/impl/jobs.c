/* conform run --jobs N: a scheduler of worker processes, one per case.
 *
 * The parent keeps at most N workers running. A case is admitted only while its memory estimate
 * fits the free part of the budget, so N big cases never oversubscribe the machine; a case alone
 * always runs (one over the whole budget is then refused by case_build, with its sizes). Each
 * worker runs the whole case (the reference here, the implementation still in its own child) and
 * writes the case's report object down a pipe. The parent hands results on in suite order, so the
 * report does not depend on which worker finished first. */
#include "jobs.h"

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* A process's own pages beyond the tensors problem_bytes counts: libraries and the loaded suite,
 * the case's report object, GSL's generator, the implementation child's thread stacks and scratch.
 * Measured on the models suite: peak proportional set size of a run of one BEV grid_sampler_2d
 * case exceeds its problem_bytes (2991 MiB) by 82 MiB; 96 MiB covers it with room. */
#define WORKER_OWN_BYTES (96.0 * 1048576.0)

cJSON *job_run_case(const job_case *jc, const run_env *env)
{
    case_result r;
    run_case(jc->c, jc->seed, env, &r);
    cJSON *j = case_result_json(jc->c, &r, jc->repro);
    case_result_free(&r);
    return j;
}

double case_memory_estimate(const case_t *c)
{
    problem_t p;
    char err[CONFORM_ERR_LEN];
    double bytes = 0;
    if (!case_setup(c, &p, err, sizeof err) && !c->op->validate(&p, err, sizeof err)) bytes = problem_bytes(&p);
    problem_free(&p);
    return bytes + WORKER_OWN_BYTES;
}

void jobs_share_cores(const job_case *cases, int n, int *jobs, int *threads)
{
    const int cores = omp_get_max_threads(); /* the cores, or OMP_NUM_THREADS as before */
    if (*jobs <= 0) {
        double largest = 0;
        for (int i = 0; i < n; i++) largest = fmax(largest, case_memory_estimate(cases[i].c));
        double fit = floor(memory_budget() / largest);
        int want = cores / (*threads > 0 ? *threads : 1);
        if (fit < want) want = (int)fit;
        if (want > n) want = n;
        *jobs = want < 1 ? 1 : want;
    }
    if (*threads <= 0) *threads = cores / *jobs < 1 ? 1 : cores / *jobs;
}

/* ---- one worker per running case ----------------------------------------------------------- */

typedef struct {
    pid_t pid;     /* 0: free slot */
    int fd;        /* read end of the result pipe */
    int index;     /* case index */
    double bytes;  /* admitted estimate */
    char *buf;
    size_t len, cap;
} worker;

static void write_all(int fd, const char *s, size_t n)
{
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        s += w;
        n -= (size_t)w;
    }
}

static int launch(worker *w, int index, const job_case *jc, const run_env *env, job_run_fn run)
{
    int p[2];
    if (pipe(p)) return -1;
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    if (pid == 0) {
        /* its own process group: the parent stops a worker and its implementation child together,
           and a terminal's Ctrl-C reaches only the parent, which decides */
        setpgid(0, 0);
        close(p[0]);
        cJSON *j = run(jc, env);
        char *text = j ? cJSON_PrintUnformatted(j) : NULL;
        if (text) write_all(p[1], text, strlen(text));
        _exit(text ? 0 : 3); /* no atexit work: the parent owns the reports */
    }
    setpgid(pid, pid); /* also here, so a kill right after the fork finds the group */
    close(p[1]);
    *w = (worker){pid, p[0], index, 0, NULL, 0, 0};
    return 0;
}

/* Reads what is there; 1 at end of file. */
static int drain(worker *w)
{
    for (;;) {
        if (w->cap - w->len < 65536) {
            size_t ncap = w->cap ? 2 * w->cap : 262144;
            char *nb = realloc(w->buf, ncap);
            if (!nb) return 1; /* the result is lost; the verdict says the worker gave none */
            w->buf = nb;
            w->cap = ncap;
        }
        ssize_t r = read(w->fd, w->buf + w->len, w->cap - w->len - 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return 1;
        w->len += (size_t)r;
        struct pollfd pf = {w->fd, POLLIN, 0};
        if (poll(&pf, 1, 0) <= 0) return 0;
    }
}

/* A worker that died without a result: the case's verdict, never the run's end. */
static cJSON *death_verdict(const job_case *jc, int status, double bytes)
{
    case_result r;
    memset(&r, 0, sizeof r);
    r.status = CASE_CRASHED;
    r.seed = jc->seed;
    if (WIFSIGNALED(status))
        snprintf(r.message, sizeof r.message,
                 "the worker running this case was killed by signal %d (%s)%s; its memory estimate was %.0f MiB",
                 WTERMSIG(status), strsignal(WTERMSIG(status)),
                 WTERMSIG(status) == SIGKILL ? ", as the kernel's out-of-memory killer does" : "", bytes / 1048576.0);
    else
        snprintf(r.message, sizeof r.message, "the worker running this case exited with status %d and no result",
                 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    return case_result_json(jc->c, &r, jc->repro);
}

static cJSON *finish(worker *w, const job_case *jc, jobs_stats *stats)
{
    int status = 0;
    close(w->fd);
    while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR) {}
    kill(-w->pid, SIGKILL); /* an implementation child its worker left behind */
    cJSON *j = NULL;
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && w->buf) {
        w->buf[w->len] = '\0';
        j = cJSON_Parse(w->buf);
    }
    if (!j) {
        stats->worker_deaths++;
        j = death_verdict(jc, status, w->bytes);
    }
    free(w->buf);
    w->pid = 0;
    w->buf = NULL;
    return j;
}

static void stop_all(worker *ws, int jobs)
{
    for (int k = 0; k < jobs; k++) {
        if (!ws[k].pid) continue;
        kill(-ws[k].pid, SIGKILL);
        kill(ws[k].pid, SIGKILL);
        close(ws[k].fd);
        while (waitpid(ws[k].pid, NULL, 0) < 0 && errno == EINTR) {}
        free(ws[k].buf);
        ws[k].pid = 0;
    }
}

static int run_in_process(const job_case *cases, int n, const run_env *env, job_run_fn run, job_report_fn report,
                          void *ctx, jobs_stats *stats)
{
    int done = 0;
    for (int i = 0; i < n && !*env->policy.stop; i++) {
        stats->max_running = 1;
        cJSON *j = run(&cases[i], env);
        if (*env->policy.stop) { /* the signal may have reached the case's child too: not a verdict */
            cJSON_Delete(j);
            break;
        }
        report(&cases[i], j, ctx);
        done++;
    }
    return done;
}

int jobs_run(const job_case *cases, int n, int jobs, const run_env *env, job_run_fn run, job_report_fn report,
             void *ctx, jobs_stats *stats)
{
    memset(stats, 0, sizeof *stats);
    if (jobs <= 1) return run_in_process(cases, n, env, run, report, ctx, stats);
    volatile sig_atomic_t *stop = env->policy.stop;
    const double budget = memory_budget();
    worker *ws = calloc((size_t)jobs, sizeof *ws);
    cJSON **results = calloc((size_t)n + 1, sizeof *results);
    struct pollfd *pf = calloc((size_t)jobs, sizeof *pf);
    int *slot_of = calloc((size_t)jobs, sizeof *slot_of);
    if (!ws || !results || !pf || !slot_of) {
        free(ws); free(results); free(pf); free(slot_of);
        return run_in_process(cases, n, env, run, report, ctx, stats);
    }
    int next_launch = 0, next_report = 0, running = 0, done = 0, waiting = -1;
    double admitted = 0;
    while (next_report < n && !*stop) {
        while (running < jobs && next_launch < n && !*stop) {
            double need = fmin(case_memory_estimate(cases[next_launch].c), budget);
            if (running && admitted + need > budget) { /* waits until enough of the budget is free */
                if (waiting != next_launch) stats->waited_for_memory++;
                waiting = next_launch;
                break;
            }
            int k = 0;
            while (ws[k].pid) k++;
            if (launch(&ws[k], next_launch, &cases[next_launch], env, run)) {
                if (running) break; /* no process to spare now: try again when one ends */
                results[next_launch] = run(&cases[next_launch], env); /* none at all: run it here */
            } else {
                ws[k].bytes = need;
                admitted += need;
                running++;
                if (running > stats->max_running) stats->max_running = running;
                if (admitted > stats->max_admitted_bytes) stats->max_admitted_bytes = admitted;
            }
            next_launch++;
        }
        int np = 0;
        for (int k = 0; k < jobs; k++)
            if (ws[k].pid) { pf[np] = (struct pollfd){ws[k].fd, POLLIN, 0}; slot_of[np++] = k; }
        if (np && poll(pf, (nfds_t)np, 200) > 0) {
            for (int q = 0; q < np; q++) {
                worker *w = &ws[slot_of[q]];
                if (!(pf[q].revents & (POLLIN | POLLHUP | POLLERR)) || !drain(w)) continue;
                double bytes = w->bytes;
                int index = w->index;
                results[index] = finish(w, &cases[index], stats);
                admitted -= bytes;
                running--;
            }
        }
        for (; next_report < n && results[next_report] && !*stop; next_report++, done++) {
            report(&cases[next_report], results[next_report], ctx);
            results[next_report] = NULL;
        }
    }
    stop_all(ws, jobs);
    /* interrupted: what finished is reported, in suite order; the rest was not run */
    for (int i = next_report; i < n; i++)
        if (results[i]) {
            report(&cases[i], results[i], ctx);
            done++;
        }
    free(ws);
    free(results);
    free(pf);
    free(slot_of);
    return done;
}
