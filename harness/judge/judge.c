#include "judge.h"

#include "bigbuf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int judge_ref_alloc(const problem_t *p, const dtype_desc *dt, judge_ref *j)
{
    const op_desc *op = p->op;
    memset(j, 0, sizeof *j);
    j->op = op;
    j->dt = dt;
    int oom = 0;
    for (int o = 0; o < op->n_outputs; o++) {
        j->n[o] = shape_numel(&p->out_shape[o]);
        size_t n = (size_t)(j->n[o] ? j->n[o] : 1);
        /* big buffers (bigbuf.h), zeroed: a backward reference accumulates into them */
        oom |= !(j->ref[o] = bigbuf_alloc(n * sizeof(double), 1, BIGBUF_NOT_INHERITED));
        for (int t = 0; t < 4; t++) oom |= !(j->bound[o][t] = bigbuf_alloc(n * sizeof(double), 1, BIGBUF_NOT_INHERITED));
        for (int t = 0; t < 3 && op->range; t++)
            oom |= !(j->range[o][t] = bigbuf_alloc(n * sizeof(double), 0, BIGBUF_NOT_INHERITED));
        j->bounds[o] = (ref_bounds){op->tol[o].k_pos * CONFORM_U_F32, j->bound[o][0], j->bound[o][1], j->bound[o][2],
                                    j->bound[o][3]};
    }
    if (!oom) return 0;
    judge_ref_free(j);
    return -1;
}

static void range_free(judge_ref *j, int o)
{
    for (int t = 0; t < 3; t++) {
        bigbuf_free(j->range[o][t]);
        j->range[o][t] = NULL;
    }
}

void judge_ref_compute(const problem_t *p, judge_ref *j)
{
    p->op->reference(p, j->ref, j->bounds);
    for (int o = 0; o < p->op->n_outputs && p->op->range; o++) {
        ref_range r = {j->bounds[o].pos_rel_err, j->range[o][0], j->range[o][1], j->range[o][2]};
        if (!r.lo || p->op->range(p, o, &r)) range_free(j, o); /* this output has none */
    }
}

int judge_reference(const problem_t *p, const dtype_desc *dt, judge_ref *j)
{
    if (judge_ref_alloc(p, dt, j)) return -1;
    judge_ref_compute(p, j);
    return 0;
}

void judge_ref_free(judge_ref *j)
{
    for (int o = 0; o < CONFORM_MAX_TENSORS; o++) {
        bigbuf_free(j->ref[o]);
        j->ref[o] = NULL;
        for (int t = 0; t < 4; t++) {
            bigbuf_free(j->bound[o][t]);
            j->bound[o][t] = NULL;
        }
        range_free(j, o);
    }
}

tol_inputs judge_tol(const judge_ref *j, int o)
{
    return (tol_inputs){j->dt, &j->op->tol[o], j->bound[o][0], j->bound[o][1], j->bound[o][2], j->bound[o][3]};
}

void judge_output_init(const problem_t *p, const judge_ref *j, int o, output_result *out)
{
    snprintf(out->name, sizeof out->name, "%s", p->op->outputs[o].name);
    out->shape = p->out_shape[o];
    out->skipped = p->out_skipped[o];
    out->dt = j->dt;
    out->guard_ok = 1;
}

static void heat_map(output_result *out, const double *ref, const float *got_f32, const double *got_f64, const tol_inputs *t)
{
    const shape_t *s = &out->shape;
    int64_t n = shape_numel(s), cols = 1;
    for (int d = s->rank - 2; d < s->rank; d++) if (d >= 0) cols *= s->dims[d];
    if (n <= 0 || cols <= 0) return;
    int64_t rows = n / cols;
    out->heat_rows = (int)(rows < HEAT ? rows : HEAT);
    out->heat_cols = (int)(cols < HEAT ? cols : HEAT);
    out->heat = calloc((size_t)(out->heat_rows * out->heat_cols), sizeof(float));
    if (!out->heat) return;
    for (int64_t i = 0; i < n; i++) {
        double ambig, tol = compare_tolerance(t, i, &ambig), g = got_f32 ? (double)got_f32[i] : got_f64[i], f = ref[i];
        double ratio = (isnan(f) && isnan(g)) || f == g || ambig == INFINITY ? 0 : fabs(g - f) / (tol + ambig);
        if (!(ratio <= 1e6)) ratio = 1e6; /* NaN/Inf mismatches show as the hottest cells */
        int64_t r = i / cols, c = i % cols;
        float *cell = &out->heat[(r * out->heat_rows / rows) * out->heat_cols + c * out->heat_cols / cols];
        if (ratio > *cell) *cell = (float)ratio;
    }
}

/* The reachable range, beside the tolerance: an element within tol + ambig of the reference but
   outside [lo - slack, hi + slack] fails all the same. slack is what a real kernel's rounding adds to
   a value of that range: each of its k_val + n_terms roundings is relative to a term, and the terms
   of any legal evaluation sum to at most mag in magnitude, so u (k_val + n_terms) mag (plus eta per
   rounding for underflow), the value part of the tolerance at the range's magnitude. Elements
   already beyond their tolerance or NaN/Inf are judged there, not counted again. */
static void range_interval(const tol_inputs *t, const double *const range[3], int64_t i, double *lo, double *hi)
{
    /* the tolerance's value part at the range's magnitude: the one formula, no position term */
    double slack = compare_element_tol(t->dt, t->model ? t->model->k_val : 0.0, t->n_terms ? t->n_terms[i] : 0.0,
                                       range[2][i], 0.0);
    *lo = range[0][i] - slack;
    *hi = range[1][i] + slack;
}

static void range_check(const tol_inputs *t, const double *const range[3], const double *ref, const float *got_f32,
                        const double *got_f64, int64_t n, output_result *out)
{
    out->has_range = 1;
    out->range_index = -1;
    for (int64_t i = 0; i < n; i++) {
        double g = got_f32 ? (double)got_f32[i] : got_f64[i], f = ref[i], lo, hi;
        if (!isfinite(g) || !isfinite(f)) continue;
        double ambig, tol = compare_tolerance(t, i, &ambig);
        if (fabs(g - f) > tol + ambig) continue;
        range_interval(t, range, i, &lo, &hi);
        if (!(g < lo || g > hi)) continue; /* NaN bounds: none */
        if (!out->n_out_of_range++) {
            out->range_index = i;
            out->range_ref = f;
            out->range_got = g;
            out->range_lo = lo;
            out->range_hi = hi;
        }
    }
}

int judge_range_interval(const judge_ref *j, int o, int64_t i, double *lo, double *hi)
{
    if (!j->range[o][0]) return 0;
    tol_inputs t = judge_tol(j, o);
    range_interval(&t, (const double *const *)j->range[o], i, lo, hi);
    return 1;
}

static int judge_any(const tol_inputs *t, const double *const range[3], const double *ref, const float *got_f32,
                     const double *got_f64, int64_t n, output_result *out, char *msg, size_t len)
{
    const compare_result *m = &out->cmp;
    if (got_f32) compare_f32(ref, got_f32, n, t, &out->cmp);
    else compare_f64(ref, got_f64, n, t, &out->cmp);
    if (range && range[0]) range_check(t, range, ref, got_f32, got_f64, n, out);
    if (m->n_over) heat_map(out, ref, got_f32, got_f64, t);
    msg[0] = 0;
    char at[96];
    if (m->all_zero) snprintf(msg, len, "%s: all zeros where the reference is not", out->name);
    else if (m->n_nonfinite_mismatch)
        snprintf(msg, len, "%s: %lld elements NaN/Inf on one side only (first at %s: ref %.9g, got %.9g)", out->name,
                 (long long)m->n_nonfinite_mismatch, index_str(&out->shape, m->worst_index, at, sizeof at), m->worst_ref,
                 m->worst_got);
    else if (m->n_over && m->worst_only_zero)
        snprintf(msg, len, "%s: %lld of %lld elements beyond tolerance (worst at %s: ref exactly 0, got %.9g: nothing "
                 "is summed into it, only 0 is legal; err/tol inf)", out->name, (long long)m->n_over, (long long)m->n,
                 index_str(&out->shape, m->worst_index, at, sizeof at), m->worst_got);
    else if (m->n_over)
        snprintf(msg, len, "%s: %lld of %lld elements beyond tolerance (worst at %s: ref %s%.9g, got %.9g, tol %.3g)",
                 out->name, (long long)m->n_over, (long long)m->n, index_str(&out->shape, m->worst_index, at, sizeof at),
                 m->worst_ref == 0 ? "exactly " : "", m->worst_ref, m->worst_got, m->worst_tol);
    else if (out->n_out_of_range)
        snprintf(msg, len, "%s: %lld of %lld elements outside the values any legal position can give, within "
                 "tolerance (first at %s: ref %.9g, got %.9g, reachable [%.9g, %.9g])", out->name,
                 (long long)out->n_out_of_range, (long long)m->n, index_str(&out->shape, out->range_index, at, sizeof at),
                 out->range_ref, out->range_got, out->range_lo, out->range_hi);
    return msg[0] != 0;
}

static const double *const *range_of(const judge_ref *j, int o) { return j->range[o][0] ? (const double *const *)j->range[o] : NULL; }

int judge_output(const judge_ref *j, int o, const double *got, output_result *out, char *msg, size_t len)
{
    tol_inputs t = judge_tol(j, o);
    return judge_any(&t, range_of(j, o), j->ref[o], NULL, got, j->n[o], out, msg, len);
}

int judge_output_f32(const judge_ref *j, int o, const float *got, output_result *out, char *msg, size_t len)
{
    tol_inputs t = judge_tol(j, o);
    return judge_any(&t, range_of(j, o), j->ref[o], got, NULL, j->n[o], out, msg, len);
}

int judge_values(const tol_inputs *t, const double *ref, const double *got, int64_t n, output_result *out, char *msg,
                 size_t len)
{
    return judge_any(t, NULL, ref, NULL, got, n, out, msg, len);
}

int judge_values_f32(const tol_inputs *t, const double *ref, const float *got, int64_t n, output_result *out, char *msg,
                     size_t len)
{
    return judge_any(t, NULL, ref, got, NULL, n, out, msg, len);
}
