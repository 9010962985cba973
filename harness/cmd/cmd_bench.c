/* conform bench: timings of both paths on one problem, against the machine's streaming bandwidth. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* The command that measures this again, for the gate's re-measurement (without --append) */
static void remeasure_command(int argc, char **argv, char *cmd, size_t len)
{
    int n = 0;
    char *args[256];
    for (int i = 0; i < argc && n < 256; i++) {
        if (!strcmp(argv[i], "--append")) { i++; continue; }
        args[n++] = argv[i];
    }
    command_line(n, args, cmd, len);
}

/* What one path is measured on, and against */
typedef struct {
    const problem_t *p;
    buffers *b;
    const conform_exec *ex;
    long long repeat;
    double bytes, bandwidth;
    const char *cmd;
} bench_run;

/* Times the reference (which = 1) or the optimized path (2): one line on stdout and its result
 * object, or NULL when the kernel fails */
static cJSON *time_path(const bench_run *br, int which)
{
    const op_desc *op = br->p->op;
    const conform_exec *ex = br->ex;
    int reps = which == 1 ? (int)(br->repeat < 3 ? br->repeat : 3) : (int)br->repeat; /* the reference is slow */
    if (run_impl(br->p, which == 1, br->b, ex)) return NULL;
    double *t = calloc((size_t)reps, sizeof *t);
    for (int r = 0; r < reps; r++) {
        double t0 = now_seconds();
        run_impl(br->p, which == 1, br->b, ex);
        t[r] = now_seconds() - t0;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    double median = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
    double floor_s = br->bandwidth > 0 ? br->bytes / br->bandwidth : 0;
    const char *impl = which == 1 ? "reference" : "optimized", *isa = which == 1 ? "double" : conform_isa_name(ex->isa);
    cJSON *jr = cJSON_CreateObject();
    cJSON_AddStringToObject(jr, "op", op->name);
    cJSON_AddStringToObject(jr, "impl", impl);
    cJSON_AddStringToObject(jr, "isa", isa);
    cJSON_AddNumberToObject(jr, "threads", ex->threads);
    cJSON_AddNumberToObject(jr, "median_s", median);
    cJSON_AddNumberToObject(jr, "min_s", t[0]);
    cJSON_AddNumberToObject(jr, "floor_s", floor_s);
    cJSON_AddStringToObject(jr, "command", br->cmd);
    printf("{\"op\": \"%s\", \"impl\": \"%s\", \"isa\": \"%s\", \"threads\": %d, \"repeat\": %d, "
           "\"median_s\": %.6g, \"min_s\": %.6g, \"max_s\": %.6g, \"bytes\": %.0f, "
           "\"stream_gbs\": %.2f, \"floor_s\": %.6g, \"median_over_floor\": %.3g}\n",
           op->name, impl, isa, ex->threads, reps, median, t[0], t[reps - 1], br->bytes, br->bandwidth / 1e9, floor_s,
           floor_s > 0 ? median / floor_s : 0);
    free(t);
    return jr;
}

/* --append PATH checked before anything is measured: a conform-bench file to add to, or one its
 * folder lets us create (the write goes through a temporary file beside it). EXIT_OK or EXIT_USAGE. */
static int append_usable(const char *path)
{
    char err[CONFORM_ERR_LEN], dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else slash[slash == dir] = '\0';
    struct stat st;
    if (stat(path, &st)) {
        if (errno != ENOENT) return usage_error("--append %s: cannot reach it (%s)", path, strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
        return usage_error("--append %s: not a regular file (a conform-bench file, or a new one)", path);
    } else {
        cJSON *doc = read_json_file(path, err, sizeof err);
        if (!doc) return usage_error("--append %s", err);
        const cJSON *schema = cJSON_GetObjectItemCaseSensitive(doc, "schema");
        int ok = cJSON_IsString(schema) && !strcmp(schema->valuestring, "conform-bench") &&
                 cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(doc, "results"));
        cJSON_Delete(doc);
        if (!ok) return usage_error("--append %s: not a conform-bench file (schema \"conform-bench\" with a \"results\" list)", path);
    }
    if (stat(dir, &st) || !S_ISDIR(st.st_mode) || access(dir, W_OK | X_OK))
        return usage_error("--append %s: folder %s is not a writable folder (the file is written beside itself)", path, dir);
    return EXIT_OK;
}

/* The results appended to the conform-bench document at path (created when absent) */
static int append_results(const char *path, const cJSON *results)
{
    char err[CONFORM_ERR_LEN];
    cJSON *doc = NULL;
    FILE *f = fopen(path, "rb");
    if (f) {
        fclose(f);
        if (!(doc = read_json_file(path, err, sizeof err))) return usage_error("--append %s", err);
    }
    if (!doc) {
        doc = cJSON_CreateObject();
        cJSON_AddStringToObject(doc, "schema", "conform-bench");
        cJSON_AddNumberToObject(doc, "schema_version", 1);
        cJSON_AddArrayToObject(doc, "results");
    }
    cJSON *list = cJSON_GetObjectItemCaseSensitive(doc, "results");
    const cJSON *jr;
    cJSON_ArrayForEach(jr, results) cJSON_AddItemToArray(list, cJSON_Duplicate(jr, 1));
    int rc = write_json_atomic(path, doc, err, sizeof err) ? usage_error("%s", err) : EXIT_OK;
    cJSON_Delete(doc);
    return rc;
}

int cmd_bench(int argc, char **argv)
{
    eval_args e;
    bench_opts x = {3, 10, NULL};
    int rc = eval_parse(argc, argv, "bench", "conform bench OP [--attr ...] [--input ...|--shape ...]", 1, &e,
                        bench_option, &x);
    if (rc || (x.append && (rc = append_usable(x.append)))) return rc;
    problem_t p;
    if ((rc = eval_problem(&e, &p))) return rc;
    buffers b;
    if (buffers_alloc(&p, &b)) {
        rc = usage_error("bench: out of memory");
    } else {
        char cmd[4096];
        remeasure_command(argc, argv, cmd, sizeof cmd);
        const bench_run br = {&p, &b, &e.ex, x.repeat, compulsory_bytes(&p), stream_bandwidth(e.ex.threads), cmd};
        cJSON *results = cJSON_CreateArray();
        for (int which = 1; which <= 2 && rc == EXIT_OK; which++) {
            if (!(x.impl & which)) continue;
            cJSON *jr = time_path(&br, which);
            if (jr) cJSON_AddItemToArray(results, jr);
            else rc = usage_error("bench: the optimized kernel failed");
        }
        if (rc == EXIT_OK && x.append) rc = append_results(x.append, results);
        cJSON_Delete(results);
    }
    buffers_free(&b);
    problem_free(&p);
    return rc;
}
