/* The fast golden held to the plain one, bit for bit (check_golden.h). */
#include "check_golden.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "compare.h"

/* Ops excused from having a plain golden, temporarily (while one is being written); an op of the
 * table neither listed nor with one fails check-golden. None now. */
static const char *const plain_exempt[] = {
    NULL,
};

int golden_plain_exempt(const char *op_name)
{
    for (size_t i = 0; i < sizeof plain_exempt / sizeof plain_exempt[0]; i++)
        if (plain_exempt[i] && !strcmp(plain_exempt[i], op_name)) return 1;
    return 0;
}

/* one golden's outputs: values and four bound arrays per output */
typedef struct {
    double *a[CONFORM_MAX_TENSORS][5];
    ref_bounds b[CONFORM_MAX_TENSORS];
} golden_bufs;

static const char *const array_name[5] = {"value", "abs_sum", "n_terms", "pos_err", "ambig"};

static void bufs_free(golden_bufs *g)
{
    for (int o = 0; o < CONFORM_MAX_TENSORS; o++)
        for (int t = 0; t < 5; t++) free(g->a[o][t]);
}

/* zeroed, as the harness hands them to a golden (a backward may accumulate into them) */
static int bufs_alloc(const problem_t *p, golden_bufs *g)
{
    memset(g, 0, sizeof *g);
    for (int o = 0; o < p->op->n_outputs; o++) {
        const size_t n = (size_t)shape_numel(&p->out_shape[o]);
        for (int t = 0; t < 5; t++)
            if (!(g->a[o][t] = calloc(n ? n : 1, sizeof(double)))) return -1;
        g->b[o] = (ref_bounds){p->op->tol[o].k_pos * CONFORM_U_F32, g->a[o][1], g->a[o][2], g->a[o][3], g->a[o][4]};
    }
    return 0;
}

/* bitwise the same, or both NaN (a NaN's payload is not part of the spec) */
static int same(double x, double y) { return (isnan(x) && isnan(y)) || !memcmp(&x, &y, sizeof x); }

/* the first difference of array t of output o, into why; the count of differing elements */
static int64_t compare_array(const problem_t *p, int o, int t, const double *fast, const double *plain,
                             char *why, size_t len, int first)
{
    const int64_t n = shape_numel(&p->out_shape[o]);
    int64_t bad = 0, at = -1;
    for (int64_t i = 0; i < n; i++)
        if (!same(fast[i], plain[i]) && bad++ == 0) at = i;
    if (bad && first) {
        const double x = fast[at], y = plain[at];
        snprintf(why, len, "%s: output %s, %s[%lld] of %lld: fast %.17g, plain %.17g (differ by %.3g, "
                 "%.3g relative); %lld element%s of this array differ",
                 p->op->name, p->op->outputs[o].name, array_name[t], (long long)at, (long long)n, x, y, x - y,
                 fabs(x - y) / fmax(fabs(x), fabs(y)), (long long)bad, bad == 1 ? "" : "s");
    }
    return bad;
}

static double wall_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

golden_result golden_check_problem(const problem_t *p, int64_t *n_diff, double secs[2], char *why, size_t len)
{
    const op_desc *op = p->op;
    golden_bufs f, g;
    int64_t bad = 0;
    if (n_diff) *n_diff = 0;
    if (!op->plain) {
        snprintf(why, len, "%s: no plain golden (op_desc.plain is NULL)", op->name);
        return GOLDEN_NO_PLAIN;
    }
    if (bufs_alloc(p, &f) || bufs_alloc(p, &g)) {
        bufs_free(&f);
        bufs_free(&g);
        snprintf(why, len, "%s: out of memory for the two goldens' outputs and bounds", op->name);
        return GOLDEN_ERROR;
    }
    double *fo[CONFORM_MAX_TENSORS] = {0}, *go[CONFORM_MAX_TENSORS] = {0};
    for (int o = 0; o < op->n_outputs; o++) {
        fo[o] = f.a[o][0];
        go[o] = g.a[o][0];
    }
    const double t0 = wall_seconds();
    op->reference(p, fo, f.b);
    const double t1 = wall_seconds();
    op->plain(p, go, g.b);
    if (secs) {
        secs[0] = t1 - t0;
        secs[1] = wall_seconds() - t1;
    }
    for (int o = 0; o < op->n_outputs; o++)
        for (int t = 0; t < 5; t++) bad += compare_array(p, o, t, f.a[o][t], g.a[o][t], why, len, bad == 0);
    bufs_free(&f);
    bufs_free(&g);
    if (n_diff) *n_diff = bad;
    return bad ? GOLDEN_DIFFERS : GOLDEN_EQUAL;
}
