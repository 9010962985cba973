/* Thread-count determinism: the golden (values and every bound array) and the optimized kernels
 * (every ISA this CPU has: the ISA is chosen at run time, so each one's drivers and microkernels
 * are checked) give bitwise the same numbers at 1, 2 and 4 threads, on every case of the smoke
 * suite (every op and direction, the layouts, the adaptive counts, the ambiguous points). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "opt_internal.h"
#include "compare.h"
#include "suite.h"

static const int thread_counts[] = {1, 2, 4};
#define N_COUNTS 3

/* The reference of one problem with its bounds, all in one block per output: values then the
 * four bound arrays. */
static double *reference_with_bounds(const problem_t *p, int threads, int64_t n[CONFORM_MAX_TENSORS])
{
    const op_desc *op = p->op;
    int64_t total = 0;
    for (int o = 0; o < op->n_outputs; o++) total += 5 * (n[o] = shape_numel(&p->out_shape[o]));
    double *all = malloc(sizeof(double) * (size_t)(total + 1)), *out[CONFORM_MAX_TENSORS];
    cr_assert(all);
    for (int64_t i = 0; i < total; i++) all[i] = -12345.0; /* what the kernel writes shows */
    ref_bounds b[CONFORM_MAX_TENSORS];
    double *q = all;
    for (int o = 0; o < op->n_outputs; o++) {
        out[o] = q;
        b[o] = (ref_bounds){op->tol[o].k_pos * CONFORM_U_F32, q + n[o], q + 2 * n[o], q + 3 * n[o], q + 4 * n[o]};
        q += 5 * n[o];
    }
    ref_set_threads(threads);
    op->reference(p, out, b);
    return all;
}

static float *optimized(const problem_t *p, float *const *in, conform_isa isa, int threads, int64_t *total)
{
    const op_desc *op = p->op;
    float *out[CONFORM_MAX_TENSORS];
    *total = 0;
    for (int o = 0; o < op->n_outputs; o++) *total += shape_numel(&p->out_shape[o]);
    float *all = malloc(sizeof(float) * (size_t)(*total + 1)), *q = all;
    cr_assert(all);
    memset(all, 0x7f, sizeof(float) * (size_t)(*total + 1));
    for (int o = 0; o < op->n_outputs; o++) {
        out[o] = q;
        q += shape_numel(&p->out_shape[o]);
    }
    conform_exec ex = {isa, threads};
    cr_assert_eq(op->optimized(p, (const float **)in, out, &ex), CONFORM_OK, "%s: optimized failed", op->name);
    return all;
}

/* poison: every kept scratch block overwritten before each call, with a byte that differs from
 * call to call (NaN patterns, then finite ones): a kernel that read what an older call left in
 * its buffers, or counted on fresh memory being zero, would not repeat its bits */
static void optimized_every_isa(const case_t *c, const problem_t *p, int poison)
{
    unsigned char byte = 0xff;
    float *in[CONFORM_MAX_TENSORS] = {0};
    for (int i = 0; i < p->op->n_inputs; i++) {
        int64_t n = tensor_numel(&p->in[i]);
        in[i] = malloc(sizeof(float) * (size_t)(n + 1));
        for (int64_t j = 0; j < n; j++) in[i][j] = (float)p->in[i].data[j];
    }
    int isas = 0;
    for (int isa = CONFORM_ISA_SCALAR; isa < CONFORM_ISA_COUNT; isa++) { /* every ISA this CPU has */
        if (!conform_isa_available((conform_isa)isa)) continue;
        isas++;
        int64_t n0, n;
        if (poison) conform_scratch_poison(byte--);
        float *first = optimized(p, in, (conform_isa)isa, 1, &n0);
        for (int t = 1; t < N_COUNTS; t++) {
            if (poison) conform_scratch_poison(byte -= 0x3b);
            float *again = optimized(p, in, (conform_isa)isa, thread_counts[t], &n);
            cr_assert(!memcmp(first, again, sizeof(float) * (size_t)n0), "%s %s: optimized differs between 1 and %d threads",
                      c->id, conform_isa_name((conform_isa)isa), thread_counts[t]);
            free(again);
        }
        free(first);
    }
    cr_assert_geq(isas, 1);
    for (int i = 0; i < p->op->n_inputs; i++) free(in[i]);
}

/* golden: 1 the reference, 0 the optimized kernels, 2 those on reused, poisoned scratch */
static void every_smoke_case(int golden)
{
    suite_t s;
    char err[CONFORM_ERR_LEN];
    cr_assert_eq(suite_load("cases/smoke.json", &s, err, sizeof err), 0, "%s", err);
    int checked = 0;
    for (int i = 0; i < s.n_cases; i++) {
        const case_t *c = &s.cases[i];
        problem_t p;
        if (case_expect_error(c)) continue;
        if (case_build(c, case_seed(c, s.seed), &p, err, sizeof err)) { /* refused cases hold partial inputs */
            problem_free(&p);
            continue;
        }
        if (golden == 1) {
            int64_t n[CONFORM_MAX_TENSORS], total = 0;
            double *first = reference_with_bounds(&p, 1, n);
            for (int o = 0; o < p.op->n_outputs; o++) total += 5 * n[o];
            for (int t = 1; t < N_COUNTS; t++) {
                double *again = reference_with_bounds(&p, thread_counts[t], n);
                cr_assert(!memcmp(first, again, sizeof(double) * (size_t)total),
                          "%s: the golden or its bounds differ between 1 and %d threads", c->id, thread_counts[t]);
                free(again);
            }
            free(first);
        } else {
            optimized_every_isa(c, &p, golden == 2);
        }
        problem_free(&p);
        checked++;
    }
    cr_assert_gt(checked, 100, "only %d smoke cases built", checked);
    suite_free(&s);
}

Test(threads, golden_and_bounds_are_bitwise_the_same_at_1_2_and_4_threads) { every_smoke_case(1); }
Test(threads, optimized_is_bitwise_the_same_at_1_2_and_4_threads) { every_smoke_case(0); }
/* every buffer kept and reused (the cache's size floor off), holding garbage when a call starts */
Test(threads, optimized_is_bitwise_the_same_on_reused_poisoned_scratch)
{
    conform_opt_scratch_keep_min = 0;
    every_smoke_case(2);
}

/* A larger backward than the smoke suite's: many rois per image and channel blocks per thread. */
Test(threads, golden_backward_of_bench_like_shapes_is_bitwise_the_same)
{
    const char *attrs_roi[] = {"input_shape=2,16,24,24", "pooled_height=7", "pooled_width=7", "spatial_scale=0.25",
                               "sampling_ratio=0", "aligned=true"};
    problem_args a;
    memset(&a, 0, sizeof a);
    a.seed = 3;
    for (int i = 0; i < 6; i++) a.attr[a.n_attr++] = attrs_roi[i];
    a.shape[a.n_shape++] = "grad_output=64,16,7,7";
    a.shape[a.n_shape++] = "boxes=64,5";
    a.gen = "{\"boxes\": {\"size\": [8, 80], \"image\": [96, 96]}}";
    problem_t p;
    cr_assert_eq(problem_from_args(op_find("roi_align_v2_backward"), &a, &p), 0);
    int64_t n[CONFORM_MAX_TENSORS];
    double *first = reference_with_bounds(&p, 1, n);
    for (int t = 1; t < N_COUNTS; t++) {
        double *again = reference_with_bounds(&p, thread_counts[t], n);
        cr_assert(!memcmp(first, again, sizeof(double) * (size_t)(5 * n[0])), "differs at %d threads", thread_counts[t]);
        free(again);
    }
    free(first);
    problem_free(&p);
}
