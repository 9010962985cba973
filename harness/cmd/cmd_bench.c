/* conform bench: timings of both paths on one problem, against the machine's streaming bandwidth. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "eval_buffers.h"
#include "help.h"
#include "npy.h"
#include "report.h"
#include "runner.h"

/* Streaming bandwidth with the given threads: read one buffer, write another (best of 3). */
static double stream_bandwidth(int threads)
{
    const size_t n = (size_t)64 << 20; /* 256 MiB per buffer: far beyond any cache */
    float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    double best = 0;
    if (!a || !b) { free(a); free(b); return 0; }
#pragma omp parallel for num_threads(threads) schedule(static)
    for (size_t i = 0; i < n; i++) { a[i] = (float)(i & 1023); b[i] = 0; }
    for (int r = 0; r < 3; r++) {
        double t0 = now_seconds();
#pragma omp parallel for num_threads(threads) schedule(static)
        for (size_t i = 0; i < n; i++) b[i] = a[i] * 1.0001f;
        double bw = 2.0 * (double)(n * sizeof(float)) / (now_seconds() - t0);
        if (bw > best) best = bw;
    }
    free(a);
    free(b);
    return best;
}

/* The bytes that must move: every input read once and every output written once, in float32. */
static double compulsory_bytes(const problem_t *p)
{
    double bytes = 0;
    for (int i = 0; i < p->op->n_inputs; i++) bytes += 4.0 * (double)tensor_numel(&p->in[i]);
    for (int o = 0; o < p->op->n_outputs; o++)
        if (!p->out_skipped[o]) bytes += 4.0 * (double)shape_numel(&p->out_shape[o]);
    return bytes;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

typedef struct {
    int impl;
    long long repeat;
    const char *append;
} bench_opts;

static int bench_option(void *ctx, const char *o, const char *v, int *i)
{
    bench_opts *x = ctx;
    if (!strcmp(o, "--impl")) {
        if (parse_impl(v, &x->impl)) {
            cli_bad_value("--impl", v, "reference, optimized, both");
            return -1;
        }
    } else if (!strcmp(o, "--repeat")) {
        if (parse_int_arg(o, v, 1, 100000, &x->repeat)) return -1;
    } else if (!strcmp(o, "--append") && v) x->append = v;
    else return 0;
    ++*i;
    return 1;
}

int cmd_bench(int argc, char **argv)
{
    eval_args e;
    bench_opts x = {3, 10, NULL};
    int rc = eval_parse(argc, argv, "bench", "conform bench OP [--attr ...] [--input ...|--shape ...]", 1, &e,
                        bench_option, &x);
    if (rc) return rc;
    const op_desc *op = e.op;
    int impl = x.impl;
    long long repeat = x.repeat;
    const char *append = x.append;
    problem_t p;
    if ((rc = eval_problem(&e, &p))) return rc;
    conform_exec ex = e.ex;
    buffers b;
    if (buffers_alloc(&p, &b)) { rc = usage_error("bench: out of memory"); goto out; }
    double bytes = compulsory_bytes(&p), bandwidth = stream_bandwidth(ex.threads);
    /* the command that measures this again, for the gate's re-measurement (without --append) */
    char cmd[4096];
    {
        int n = 0;
        char *args[256];
        for (int i = 0; i < argc && n < 256; i++) {
            if (!strcmp(argv[i], "--append")) { i++; continue; }
            args[n++] = argv[i];
        }
        command_line(n, args, cmd, sizeof cmd);
    }
    cJSON *results = cJSON_CreateArray();
    for (int which = 1; which <= 2; which++) {
        if (!(impl & which)) continue;
        int reps = which == 1 ? (int)(repeat < 3 ? repeat : 3) : (int)repeat; /* the reference is slow */
        double *t = calloc((size_t)reps, sizeof *t);
        if (run_impl(&p, which == 1, &b, &ex)) { free(t); rc = usage_error("bench: the optimized kernel failed"); goto out_results; }
        for (int r = 0; r < reps; r++) {
            double t0 = now_seconds();
            run_impl(&p, which == 1, &b, &ex);
            t[r] = now_seconds() - t0;
        }
        qsort(t, (size_t)reps, sizeof *t, cmp_double);
        double median = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
        double floor_s = bandwidth > 0 ? bytes / bandwidth : 0;
        cJSON *jr = cJSON_CreateObject();
        cJSON_AddStringToObject(jr, "op", op->name);
        cJSON_AddStringToObject(jr, "impl", which == 1 ? "reference" : "optimized");
        cJSON_AddStringToObject(jr, "isa", which == 1 ? "double" : conform_isa_name(ex.isa));
        cJSON_AddNumberToObject(jr, "threads", ex.threads);
        cJSON_AddNumberToObject(jr, "median_s", median);
        cJSON_AddNumberToObject(jr, "min_s", t[0]);
        cJSON_AddNumberToObject(jr, "floor_s", floor_s);
        cJSON_AddStringToObject(jr, "command", cmd);
        cJSON_AddItemToArray(results, jr);
        printf("{\"op\": \"%s\", \"impl\": \"%s\", \"isa\": \"%s\", \"threads\": %d, \"repeat\": %d, "
               "\"median_s\": %.6g, \"min_s\": %.6g, \"max_s\": %.6g, \"bytes\": %.0f, "
               "\"stream_gbs\": %.2f, \"floor_s\": %.6g, \"median_over_floor\": %.3g}\n",
               op->name, which == 1 ? "reference" : "optimized", which == 1 ? "double" : conform_isa_name(ex.isa),
               ex.threads, reps, median, t[0], t[reps - 1], bytes, bandwidth / 1e9, floor_s,
               floor_s > 0 ? median / floor_s : 0);
        free(t);
    }
    if (append) {
        char err[CONFORM_ERR_LEN];
        cJSON *doc = NULL;
        FILE *f = fopen(append, "rb");
        if (f) { fclose(f); doc = read_json_file(append, err, sizeof err); if (!doc) { rc = usage_error("--append %s", err); goto out_results; } }
        if (!doc) {
            doc = cJSON_CreateObject();
            cJSON_AddStringToObject(doc, "schema", "conform-bench");
            cJSON_AddNumberToObject(doc, "schema_version", 1);
            cJSON_AddArrayToObject(doc, "results");
        }
        cJSON *list = cJSON_GetObjectItemCaseSensitive(doc, "results");
        const cJSON *jr;
        cJSON_ArrayForEach(jr, results) cJSON_AddItemToArray(list, cJSON_Duplicate(jr, 1));
        if (write_json_atomic(append, doc, err, sizeof err)) rc = usage_error("%s", err);
        cJSON_Delete(doc);
    }
out_results:
    cJSON_Delete(results);
out:
    buffers_free(&b);
    problem_free(&p);
    return rc;
}
