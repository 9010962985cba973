/* golden_hash: a fingerprint of the golden of every case of some suites, for changes that must not
 * move a bit of it (a faster reference): per case, FNV-1a over the reference values, its four bound
 * arrays and the tolerance and ambiguity the comparator derives from them for float32, float16 and
 * bfloat16; per suite, over its cases. Inputs are built and rounded to float32 as `conform run`
 * builds them. Also prints each case's reference CPU time (the process's, so every golden thread).
 *
 *   build/golden_hash [--seed S] [--threads N] [--filter PATTERN] suite.json ...
 *
 * Compare two builds' outputs with diff after cutting the times (tools/golden_hash.sh does both). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compare.h"
#include "suite.h"

static double cpu_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* the hash of one built problem's golden, bounds and derived tolerances; its CPU time in *cpu */
static uint64_t golden_hash(const problem_t *p, double *cpu)
{
    const op_desc *op = p->op;
    double *out[CONFORM_MAX_TENSORS] = {0}, *bound[CONFORM_MAX_TENSORS][4] = {{0}};
    ref_bounds b[CONFORM_MAX_TENSORS];
    int64_t n[CONFORM_MAX_TENSORS];
    for (int o = 0; o < op->n_outputs; o++) {
        n[o] = shape_numel(&p->out_shape[o]);
        size_t k = (size_t)(n[o] ? n[o] : 1);
        out[o] = calloc(k, sizeof(double));
        for (int t = 0; t < 4; t++) bound[o][t] = calloc(k, sizeof(double));
        if (!out[o] || !bound[o][3]) {
            fprintf(stderr, "golden_hash: out of memory\n");
            exit(2);
        }
        b[o] = (ref_bounds){op->tol[o].k_pos * CONFORM_U_F32, bound[o][0], bound[o][1], bound[o][2], bound[o][3]};
    }
    double t0 = cpu_seconds();
    op->reference(p, out, b);
    *cpu = cpu_seconds() - t0;
    uint64_t h = FNV1A64_INIT;
    static const conform_dtype dts[] = {CONFORM_DTYPE_FLOAT32, CONFORM_DTYPE_FLOAT16, CONFORM_DTYPE_BFLOAT16};
    for (int o = 0; o < op->n_outputs; o++) {
        h = fnv1a64(h, out[o], sizeof(double) * (size_t)n[o]);
        for (int t = 0; t < 4; t++) h = fnv1a64(h, bound[o][t], sizeof(double) * (size_t)n[o]);
        for (int d = 0; d < 3; d++) {
            tol_inputs ti = {dtype_get(dts[d]), &op->tol[o], bound[o][0], bound[o][1], bound[o][2], bound[o][3]};
            for (int64_t i = 0; i < n[o]; i++) {
                double tv[2];
                tv[0] = compare_tolerance(&ti, i, &tv[1]);
                h = fnv1a64(h, tv, sizeof tv);
            }
        }
        free(out[o]);
        for (int t = 0; t < 4; t++) free(bound[o][t]);
    }
    return h;
}

static int hash_suite(const char *path, int seed_set, uint64_t seed, const char *filter)
{
    suite_t s;
    char err[CONFORM_ERR_LEN];
    if (suite_load(path, &s, err, sizeof err)) {
        fprintf(stderr, "golden_hash: %s\n", err);
        return 2;
    }
    uint64_t run_seed = seed_set ? seed : s.seed, all = FNV1A64_INIT;
    double total = 0;
    int n = 0;
    for (int i = 0; i < s.n_cases; i++) {
        const case_t *c = &s.cases[i];
        problem_t p;
        if (filter && !case_matches(c, filter)) continue;
        if (case_expect_error(c)) continue;
        int rc = case_build(c, case_seed(c, run_seed), &p, err, sizeof err);
        if (!rc) {
            for (int k = 0; k < p.op->n_inputs; k++) dtype_round_array(CONFORM_DTYPE_FLOAT32, p.in[k].data, tensor_numel(&p.in[k]));
            rc = p.op->validate(&p, err, sizeof err);
        }
        if (!rc) {
            double cpu;
            uint64_t h = golden_hash(&p, &cpu);
            all = fnv1a64(all, &h, sizeof h);
            total += cpu;
            n++;
            printf("%016llx %8.3f %s\n", (unsigned long long)h, cpu, c->id);
            fflush(stdout);
        }
        problem_free(&p);
    }
    printf("%016llx %8.3f suite %s seed %llu: %d cases\n", (unsigned long long)all, total, path,
           (unsigned long long)run_seed, n);
    suite_free(&s);
    return 0;
}

int main(int argc, char **argv)
{
    int seed_set = 0, rc = 0;
    uint64_t seed = 0;
    const char *filter = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
            seed = strtoull(argv[++i], NULL, 10);
            seed_set = 1;
        } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            ref_set_threads(atoi(argv[++i]));
        } else if (!strcmp(argv[i], "--filter") && i + 1 < argc) {
            filter = argv[++i];
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: golden_hash [--seed S] [--threads N] [--filter PATTERN] suite.json ...\n");
            return 2;
        } else {
            rc |= hash_suite(argv[i], seed_set, seed, filter);
        }
    }
    return rc;
}
