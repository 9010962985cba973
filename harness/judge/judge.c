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
        j->bounds[o] = (ref_bounds){op->tol[o].k_pos * CONFORM_U_F32, j->bound[o][0], j->bound[o][1], j->bound[o][2],
                                    j->bound[o][3]};
    }
    if (!oom) return 0;
    judge_ref_free(j);
    return -1;
}

void judge_ref_compute(const problem_t *p, judge_ref *j) { p->op->reference(p, j->ref, j->bounds); }

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
        double ratio = (isnan(f) && isnan(g)) || f == g ? 0 : fabs(g - f) / (tol + ambig);
        if (!(ratio <= 1e6)) ratio = 1e6; /* NaN/Inf mismatches show as the hottest cells */
        int64_t r = i / cols, c = i % cols;
        float *cell = &out->heat[(r * out->heat_rows / rows) * out->heat_cols + c * out->heat_cols / cols];
        if (ratio > *cell) *cell = (float)ratio;
    }
}

static int judge_any(const tol_inputs *t, const double *ref, const float *got_f32, const double *got_f64, int64_t n,
                     output_result *out, char *msg, size_t len)
{
    const compare_result *m = &out->cmp;
    if (got_f32) compare_f32(ref, got_f32, n, t, &out->cmp);
    else compare_f64(ref, got_f64, n, t, &out->cmp);
    if (m->n_over) heat_map(out, ref, got_f32, got_f64, t);
    msg[0] = 0;
    char at[96];
    if (m->all_zero) snprintf(msg, len, "%s: all zeros where the reference is not", out->name);
    else if (m->n_nonfinite_mismatch)
        snprintf(msg, len, "%s: %lld elements NaN/Inf on one side only (first at %s: ref %.9g, got %.9g)", out->name,
                 (long long)m->n_nonfinite_mismatch, index_str(&out->shape, m->worst_index, at, sizeof at), m->worst_ref,
                 m->worst_got);
    else if (m->n_over)
        snprintf(msg, len, "%s: %lld of %lld elements beyond tolerance (worst at %s: ref %.9g, got %.9g, tol %.3g)",
                 out->name, (long long)m->n_over, (long long)m->n, index_str(&out->shape, m->worst_index, at, sizeof at),
                 m->worst_ref, m->worst_got, m->worst_tol);
    return msg[0] != 0;
}

int judge_output(const judge_ref *j, int o, const double *got, output_result *out, char *msg, size_t len)
{
    tol_inputs t = judge_tol(j, o);
    return judge_values(&t, j->ref[o], got, j->n[o], out, msg, len);
}

int judge_output_f32(const judge_ref *j, int o, const float *got, output_result *out, char *msg, size_t len)
{
    tol_inputs t = judge_tol(j, o);
    return judge_values_f32(&t, j->ref[o], got, j->n[o], out, msg, len);
}

int judge_values(const tol_inputs *t, const double *ref, const double *got, int64_t n, output_result *out, char *msg,
                 size_t len)
{
    return judge_any(t, ref, NULL, got, n, out, msg, len);
}

int judge_values_f32(const tol_inputs *t, const double *ref, const float *got, int64_t n, output_result *out, char *msg,
                     size_t len)
{
    return judge_any(t, ref, got, NULL, n, out, msg, len);
}
