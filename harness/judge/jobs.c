/* conform run --jobs N: a scheduler of at most N worker processes.
 *
 * A case is admitted only while its memory estimate fits the free part of the budget, so N big
 * cases never oversubscribe the machine; a case alone always runs (one over the whole budget is
 * then refused by case_build, with its sizes). A worker runs whole cases (the reference there, the
 * implementation still in its own child), one after another, and writes each case's report object
 * down a pipe; it keeps the pages of its big buffers for the next case (bigbuf.h), counted in the
 * budget. The parent hands results on in suite order, so the report does not depend on which
 * worker finished first. Cases start in suite order: suites list their big cases first (on the
 * models suite's case times that order ends within 1% of the longest-first schedule). */
#include "jobs.h"

#include "bigbuf.h"
#include "conform_opt.h"

#include <errno.h>
#include <math.h>
#include <omp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
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

/* ---- workers that run case after case ------------------------------------------------------ */

/* A worker takes cases from its command pipe (index and memory estimate) and answers each with its
 * report object, length first, down its result pipe; at the end of the command pipe it exits. It
 * keeps its big buffers from case to case (bigbuf.h) up to what the budget counts for it (the
 * command's bytes), so a case reuses the pages the last one faulted in; a worker with nothing to
 * do, or idle while the next case waits for memory, is retired, which returns every page it held. */
typedef struct {
    pid_t pid;     /* 0: free slot */
    int fd;        /* read end of the result pipe */
    int cmd;       /* write end of the command pipe */
    int index;     /* the case it runs, -1: idle */
    double bytes;  /* admitted for that case: its estimate, or what the worker kept if more */
    char *buf;
    size_t len, cap;
} worker;

typedef struct {
    int index;
    double bytes;
} job_cmd;

static void write_all(int fd, const void *p, size_t n)
{
    const char *s = p;
    while (n) {
        ssize_t w = write(fd, s, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return;
        s += w;
        n -= (size_t)w;
    }
}

static int read_all(int fd, void *p, size_t n)
{
    char *s = p;
    while (n) {
        ssize_t r = read(fd, s, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -1;
        s += r;
        n -= (size_t)r;
    }
    return 0;
}

static void worker_loop(int cmd, int out, const job_case *cases, const run_env *env, job_run_fn run)
{
    job_cmd c;
    bigbuf_keep_heap();
    while (!read_all(cmd, &c, sizeof c)) {
        bigbuf_set_cap(c.bytes);
        cJSON *j = run(&cases[c.index], env);
        conform_opt_scratch_release(); /* the kernels' buffers: the next case was admitted for its own */
        char *text = j ? cJSON_PrintUnformatted(j) : NULL;
        if (!text) _exit(3);
        uint64_t len = strlen(text);
        write_all(out, &len, sizeof len);
        write_all(out, text, len);
        cJSON_free(text);
        cJSON_Delete(j);
    }
    _exit(0); /* no atexit work: the parent owns the reports */
}

static int launch(worker *w, const job_case *cases, const run_env *env, job_run_fn run)
{
    int p[2], q[2];
    if (pipe(p)) return -1;
    if (pipe(q)) {
        close(p[0]);
        close(p[1]);
        return -1;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        close(p[0]); close(p[1]); close(q[0]); close(q[1]);
        return -1;
    }
    if (pid == 0) {
        /* its own process group: the parent stops a worker and its implementation child together,
           and a terminal's Ctrl-C reaches only the parent, which decides */
        setpgid(0, 0);
        close(p[0]);
        close(q[1]);
        worker_loop(q[0], p[1], cases, env, run);
    }
    setpgid(pid, pid); /* also here, so a kill right after the fork finds the group */
    close(p[1]);
    close(q[0]);
    *w = (worker){pid, p[0], q[1], -1, 0, NULL, 0, 0};
    return 0;
}

/* Hands an idle worker case index; -1 when it is gone (with SIGPIPE held back: a worker that died
   idle must not end the run). */
static int assign(worker *w, int index, double bytes)
{
    job_cmd c = {index, bytes};
    w->index = index;
    w->bytes = bytes;
    w->len = 0;
    sigset_t pipe_sig, old;
    sigemptyset(&pipe_sig);
    sigaddset(&pipe_sig, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_sig, &old);
    ssize_t wr = write(w->cmd, &c, sizeof c);
    if (wr < 0) {
        const struct timespec none = {0, 0};
        sigtimedwait(&pipe_sig, NULL, &none); /* the SIGPIPE this write raised, if any */
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return wr == (ssize_t)sizeof c ? 0 : -1;
}

/* Reads what is there: 1 once a whole result is in or at end of file (the worker died or left),
   0 while more is to come. */
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
        uint64_t want;
        if (w->len >= sizeof want) {
            memcpy(&want, w->buf, sizeof want);
            if (w->len >= sizeof want + want) return 1;
        }
        struct pollfd pf = {w->fd, POLLIN, 0};
        if (poll(&pf, 1, 0) <= 0) return 0;
    }
}

/* the worker's result when a whole one came in, else NULL */
static cJSON *take_result(worker *w)
{
    uint64_t want;
    if (w->len < sizeof want) return NULL;
    memcpy(&want, w->buf, sizeof want);
    if (w->len < sizeof want + want) return NULL;
    w->buf[sizeof want + want] = '\0';
    return cJSON_Parse(w->buf + sizeof want);
}

/* Ends a worker: its command pipe closed (an idle one leaves by itself), its group killed, waited
   for. Its status, for a death verdict. */
static int retire(worker *w)
{
    int status = 0;
    close(w->cmd);
    close(w->fd);
    /* killed, not asked: the pages it holds go back at once, and a worker that already died keeps
       the status it died with */
    kill(-w->pid, SIGKILL); /* with an implementation child it left behind */
    kill(w->pid, SIGKILL);
    while (waitpid(w->pid, &status, 0) < 0 && errno == EINTR) {}
    free(w->buf);
    *w = (worker){0, -1, -1, -1, 0, NULL, 0, 0};
    return status;
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

static void stop_all(worker *ws, int jobs)
{
    for (int k = 0; k < jobs; k++)
        if (ws[k].pid) retire(&ws[k]);
}

static int run_in_process(const job_case *cases, int n, const run_env *env, job_run_fn run, job_report_fn report,
                          void *ctx, jobs_stats *stats)
{
    int done = 0;
    bigbuf_keep_heap();
    for (int i = 0; i < n && !*env->policy.stop; i++) {
        stats->max_running = 1;
        bigbuf_set_cap(fmin(case_memory_estimate(cases[i].c), memory_budget())); /* pages kept case to case */
        cJSON *j = run(&cases[i], env);
        /* the kernels keep their buffers for a case's repeated calls, not beyond its memory estimate */
        conform_opt_scratch_release();
        if (*env->policy.stop) { /* the signal may have reached the case's child too: not a verdict */
            cJSON_Delete(j);
            break;
        }
        report(&cases[i], j, ctx);
        done++;
    }
    bigbuf_set_cap(0);
    return done;
}

/* The next case onto a worker: an idle one, else a new one. An idle worker keeps the pages of its
   cases (up to what it was admitted for) while the budget has room for them beside the others,
   else it keeps no more than the new case needs. *charge: what the budget then counts for it.
   0: launched; 1: no worker could take it now; -1: no process to spare at all (run it here). */
static int launch_next(worker *ws, int jobs, int index, double need, double room, const job_case *cases,
                       const run_env *env, job_run_fn run, double *charge, jobs_stats *stats)
{
    int k = 0;
    while (k < jobs && !(ws[k].pid && ws[k].index < 0)) k++; /* an idle worker */
    *charge = need;
    if (k < jobs && ws[k].bytes > need && ws[k].bytes <= room) *charge = ws[k].bytes;
    if (k == jobs) {
        for (k = 0; k < jobs && ws[k].pid; k++) {}
        if (k == jobs) return 1;
        if (launch(&ws[k], cases, env, run)) return -1;
        stats->workers_started++;
    }
    if (!assign(&ws[k], index, *charge)) return 0;
    retire(&ws[k]); /* it left: a new one takes the case */
    *charge = need;
    if (launch(&ws[k], cases, env, run)) return -1;
    stats->workers_started++;
    return assign(&ws[k], index, need) ? -1 : 0;
}

/* a result, or the worker's death (the case's verdict); the worker is idle or gone after */
static cJSON *collect(worker *w, const job_case *jc, jobs_stats *stats)
{
    cJSON *j = take_result(w);
    if (j) {
        w->index = -1; /* w->bytes stays: what it may keep */
        w->len = 0;
        return j;
    }
    double bytes = w->bytes;
    int status = retire(w);
    stats->worker_deaths++;
    return death_verdict(jc, status, bytes);
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
            double charge;
            int rc = launch_next(ws, jobs, next_launch, need, budget - admitted, cases, env, run, &charge, stats);
            if (rc > 0 || (rc < 0 && running)) break; /* no process to spare now: try again when one ends */
            if (rc < 0) results[next_launch] = run(&cases[next_launch], env); /* none at all: run it here */
            else {
                admitted += charge;
                running++;
                if (running > stats->max_running) stats->max_running = running;
                if (admitted > stats->max_admitted_bytes) stats->max_admitted_bytes = admitted;
            }
            next_launch++;
        }
        /* an idle worker holds the pages of its last case, which the budget no longer counts:
           retired when no case is left for it or the next one waits for memory */
        if (next_launch == n || waiting == next_launch)
            for (int k = 0; k < jobs; k++)
                if (ws[k].pid && ws[k].index < 0) retire(&ws[k]);
        int np = 0;
        for (int k = 0; k < jobs; k++)
            if (ws[k].pid && ws[k].index >= 0) { pf[np] = (struct pollfd){ws[k].fd, POLLIN, 0}; slot_of[np++] = k; }
        if (np && poll(pf, (nfds_t)np, 200) > 0) {
            for (int q = 0; q < np; q++) {
                worker *w = &ws[slot_of[q]];
                if (!(pf[q].revents & (POLLIN | POLLHUP | POLLERR)) || !drain(w)) continue;
                double bytes = w->bytes;
                int index = w->index;
                results[index] = collect(w, &cases[index], stats);
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
