#include "runner.h"

#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bigbuf.h"
#include "fill.h"
#include "standards_run.h"

double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* The one place a case's status is set: the first failure reason wins; a later error, crash or
   timeout outranks a failure. A passed case may also take a message (a refusal expected). */
__attribute__((format(printf, 3, 4))) static void set_status(case_result *r, case_status status, const char *fmt, ...)
{
    int severe = status != CASE_FAILED;
    if (r->status == CASE_PASSED || (severe && r->status == CASE_FAILED)) {
        r->status = status;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r->message, sizeof r->message, fmt, ap);
        va_end(ap);
    }
}

static void check_expected(const case_t *c, const problem_t *p, int o, const double *ref, case_result *r)
{
    const cJSON *expect = cJSON_GetObjectItemCaseSensitive(c->spec, "expect");
    const cJSON *data = cJSON_GetObjectItemCaseSensitive(expect, p->op->outputs[o].name);
    if (!data) return;
    output_result *out = &r->out[o];
    int64_t n = shape_numel(&p->out_shape[o]);
    double *want = malloc((size_t)(n ? n : 1) * sizeof *want);
    char err[CONFORM_ERR_LEN];
    out->has_expect = 1;
    if (!want || fill_from_json(want, n, data, "expect", err, sizeof err)) {
        set_status(r, CASE_ERROR, "%s", want ? err : "no memory");
        free(want);
        return;
    }
    /* 1e-12 of the tensor's scale: another double evaluation order, nothing more */
    double scale = 0;
    for (int64_t i = 0; i < n; i++) if (fabs(want[i]) > scale) scale = fabs(want[i]);
    out->expect_ok = 1;
    for (int64_t i = 0; i < n; i++) {
        double e = fabs(ref[i] - want[i]);
        if (isnan(ref[i]) && isnan(want[i])) e = 0;
        if (!(e <= 1e-12 * scale)) out->expect_ok = 0;
        if (e > out->expect_max_abs_err || isnan(e)) out->expect_max_abs_err = isnan(e) ? INFINITY : e;
    }
    if (!out->expect_ok) {
        char m[200];
        snprintf(m, sizeof m, "the reference %s differs from the case's expected values by %.3g", p->op->outputs[o].name,
                 out->expect_max_abs_err);
        set_status(r, CASE_FAILED, "%s", m);
    }
    free(want);
}

void case_result_free(case_result *r)
{
    for (int o = 0; o < CONFORM_MAX_TENSORS; o++) {
        free(r->out[o].heat);
        r->out[o].heat = NULL;
    }
}

/* Inputs at the precision under test, so the reference and the implementation read the same
   numbers (generated values are float32 numbers; a suite's exact "data" may not be). When a value
   changes and exact is given, exact[i] keeps the case's own numbers: its expected values are
   for those. */
static void round_inputs(problem_t *p, const dtype_desc *dt, double **exact)
{
    for (int i = 0; i < p->op->n_inputs; i++) {
        int64_t n = tensor_numel(&p->in[i]);
        double *keep = exact ? malloc((size_t)(n ? n : 1) * sizeof *keep) : NULL;
        if (keep) memcpy(keep, p->in[i].data, (size_t)n * sizeof *keep);
        dtype_round_array(dt->id, p->in[i].data, n);
        if (keep && memcmp(keep, p->in[i].data, (size_t)n * sizeof *keep)) exact[i] = keep;
        else free(keep);
    }
}

/* The reference on the case's exact inputs, for its expected values; NULL when rounding changed
   nothing (the run's reference is that already). */
static int exact_reference(problem_t *p, double **exact, double **out)
{
    int changed = 0;
    for (int i = 0; i < p->op->n_inputs; i++) changed |= exact[i] != NULL;
    if (!changed) return 0;
    double *rounded[CONFORM_MAX_TENSORS];
    for (int o = 0; o < p->op->n_outputs; o++) {
        int64_t n = shape_numel(&p->out_shape[o]);
        if (!(out[o] = calloc((size_t)(n ? n : 1), sizeof(double)))) return -1;
    }
    for (int i = 0; i < p->op->n_inputs; i++) {
        rounded[i] = p->in[i].data;
        if (exact[i]) p->in[i].data = exact[i];
    }
    p->op->reference(p, out, NULL);
    for (int i = 0; i < p->op->n_inputs; i++) p->in[i].data = rounded[i];
    return 1;
}

/* "SIGSEGV" for 11 (glibc's abbreviation), "a signal" for a number it does not know */
static const char *signal_name(int sig, char *buf, size_t len)
{
    const char *abbrev = sigabbrev_np(sig);
    if (!abbrev) return "a signal";
    snprintf(buf, len, "SIG%s", abbrev);
    return buf;
}

/* Phase 1: the problem, built and rounded to the dtype, refused or accepted as the case expects,
 * with the implementation's own inputs where it has some. 0: go on and run it; 1: decided here. */
static int prepare_case(const case_t *c, uint64_t seed, const run_env *env, problem_t *p, double **exact_in,
                        case_result *r)
{
    const op_desc *op = c->op;
    char err[CONFORM_ERR_LEN];
    const char *expect_error = case_expect_error(c);
    const int has_expect = cJSON_GetObjectItemCaseSensitive(c->spec, "expect") != NULL;
    int rc = case_build(c, seed, p, err, sizeof err);
    if (!rc && !expect_error && case_inputs_overflow(p, env->impl->dtype, err, sizeof err)) {
        set_status(r, CASE_NOT_APPLICABLE, "%s", err);
        return 1;
    }
    if (!rc) round_inputs(p, env->impl->dtype, has_expect ? exact_in : NULL);
    if (!rc) rc = op->validate(p, err, sizeof err);
    if (rc) {
        if (expect_error && strstr(err, expect_error)) set_status(r, CASE_PASSED, "refused as expected: %s", err);
        else if (expect_error) set_status(r, CASE_FAILED, "refused with '%s', expected a message containing '%s'", err, expect_error);
        else set_status(r, CASE_ERROR, "%s", err);
        return 1;
    }
    if (!impl_supports(env->impl, op)) {
        const char *why = impl_why_not(env->impl, op);
        if (why) set_status(r, CASE_NOT_IMPLEMENTED, "%s: not run on this device: %s", op->name, why);
        else set_status(r, CASE_NOT_IMPLEMENTED, "%s does not implement %s", impl_name(env->impl), op->name);
        return 1;
    }
    if (expect_error) {
        set_status(r, CASE_FAILED, "accepted, but the case expects a refusal containing '%s'", expect_error);
        return 1;
    }
    exec_status in = impl_inputs(env->impl, c, p, &env->policy, err, sizeof err);
    if (in != EXEC_OK || op->validate(p, err, sizeof err)) {
        set_status(r, in == EXEC_TIMEOUT ? CASE_TIMEOUT : CASE_ERROR, "%s", err);
        return 1;
    }
    return 0;
}

/* a case's buffers: the reference with its bounds, the implementation's outputs in the dtype's
   storage (guarded) and, but for float32 (judged as written), decoded to double */
typedef struct {
    judge_ref ref;
    void *got[CONFORM_MAX_TENSORS];
    double *val[CONFORM_MAX_TENSORS];
} case_buffers;

static int buffers_alloc(const problem_t *p, const dtype_desc *dt, case_buffers *b)
{
    memset(b, 0, sizeof *b);
    if (judge_ref_alloc(p, dt, &b->ref)) return -1;
    int oom = 0;
    for (int o = 0; o < p->op->n_outputs; o++) {
        int64_t n = b->ref.n[o];
        b->got[o] = guarded_alloc(n, dt);
        if (dt->id != CONFORM_DTYPE_FLOAT32) b->val[o] = bigbuf_alloc((size_t)(n ? n : 1) * sizeof(double), 0, BIGBUF_NOT_INHERITED);
        oom |= !b->got[o] || (dt->id != CONFORM_DTYPE_FLOAT32 && !b->val[o]);
    }
    return oom ? -1 : 0;
}

static void buffers_free(case_buffers *b)
{
    judge_ref_free(&b->ref);
    for (int o = 0; o < CONFORM_MAX_TENSORS; o++) {
        guarded_free(b->got[o]);
        bigbuf_free(b->val[o]);
    }
}

/* Phase 2: the reference, then the implementation. 0 when it gave outputs; else the status says
   how it did not (crashed, timed out, missing, an error code). */
static int execute_case(const case_t *c, const problem_t *p, const run_env *env, case_buffers *b, case_result *r)
{
    double t0 = now_seconds();
    judge_ref_compute(p, &b->ref);
    double t1 = now_seconds();
    int code;
    char why[CONFORM_ERR_LEN];
    exec_status es = impl_outputs(env->impl, c, p, b->got, &env->ex, &env->policy, &code, why, sizeof why);
    double t2 = now_seconds();
    r->time_ref_s = t1 - t0;
    r->time_opt_s = t2 - t1;
    if (es == EXEC_OK) return 0;
    {
        char m[CONFORM_ERR_LEN], sig[32];
        if (es == EXEC_CRASHED) {
            snprintf(m, sizeof m, "%s crashed: killed by %s (signal %d)", impl_name(env->impl),
                     signal_name(code, sig, sizeof sig), code);
            set_status(r, CASE_CRASHED, "%s", m);
        } else if (es == EXEC_TIMEOUT) {
            snprintf(m, sizeof m, "%s gave no result within %.0f s%s%.*s", impl_name(env->impl), env->policy.timeout_s,
                     why[0] ? ": " : "", (int)sizeof m / 2, why);
            set_status(r, CASE_TIMEOUT, "%s", m);
        } else if (es == EXEC_MISSING || es == EXEC_BAD_OUTPUT || es == EXEC_REFUSED) {
            set_status(r, es == EXEC_MISSING ? CASE_MISSING : es == EXEC_REFUSED ? CASE_ERROR : CASE_FAILED, "%s", why);
        } else {
            snprintf(m, sizeof m, "%s returned error code %d%s", impl_name(env->impl), code,
                     code == CONFORM_E_ISA ? " (ISA not available)" : code == CONFORM_E_NOMEM ? " (out of memory)" : "");
            set_status(r, CASE_ERROR, "%s", m);
        }
    }
    return -1;
}

/* Phase 3: every computed output against its expected values, its guard bands and the reference */
static void judge_case(const case_t *c, const problem_t *p, case_buffers *b, double *const *exact_ref, case_result *r)
{
    const dtype_desc *dt = b->ref.dt;
    for (int o = 0; o < p->op->n_outputs; o++) {
        output_result *out = &r->out[o];
        judge_output_init(p, &b->ref, o, out);
        if (out->skipped) continue;
        check_expected(c, p, o, exact_ref[o] ? exact_ref[o] : b->ref.ref[o], r);
        out->guard_ok = guarded_check(b->got[o], b->ref.n[o], dt, &out->guard_offset);
        if (b->val[o]) dtype_decode(dt->id, b->got[o], b->val[o], b->ref.n[o]);
        char m[400];
        if (!out->guard_ok) {
            snprintf(m, 160, "%s: write outside the output buffer at element offset %lld", out->name,
                     (long long)out->guard_offset);
            set_status(r, CASE_FAILED, "%s", m);
        }
        out->n_unwritten = dtype_count_poison(dt->id, b->got[o], b->ref.n[o], &out->unwritten_index);
        if (out->n_unwritten) { /* before the comparison's message: a NaN golden would let it pass */
            char at[96];
            snprintf(m, sizeof m, "%s: %lld of %lld elements never written (still conform's poison NaN; first at %s)",
                     out->name, (long long)out->n_unwritten, (long long)b->ref.n[o],
                     index_str(&out->shape, out->unwritten_index, at, sizeof at));
            set_status(r, CASE_FAILED, "%s", m);
        }
        if (b->val[o] ? judge_output(&b->ref, o, b->val[o], out, m, sizeof m)
                      : judge_output_f32(&b->ref, o, b->got[o], out, m, sizeof m))
            set_status(r, CASE_FAILED, "%s", m);
    }
}

/* env's dump of a failing case, its outputs decoded to double (float32 ones are judged as
   written, so they are decoded here) */
static void dump_failure(const run_env *env, const case_t *c, const problem_t *p, case_buffers *b, int have_outputs,
                         const case_result *r)
{
    /* a missing output is the runner's to write, the export holds its inputs already */
    if (!env->dump || !status_fails(r->status) || r->status == CASE_MISSING) return;
    const double *got[CONFORM_MAX_TENSORS] = {0};
    double *mine[CONFORM_MAX_TENSORS] = {0};
    for (int o = 0; o < p->op->n_outputs && have_outputs; o++) {
        if (p->out_skipped[o]) continue;
        if (!b->val[o] && (mine[o] = malloc((size_t)(b->ref.n[o] ? b->ref.n[o] : 1) * sizeof(double))))
            dtype_decode(b->ref.dt->id, b->got[o], mine[o], b->ref.n[o]);
        got[o] = b->val[o] ? b->val[o] : mine[o];
    }
    env->dump(env->dump_dir, c, p, &b->ref, got, r);
    for (int o = 0; o < CONFORM_MAX_TENSORS; o++) free(mine[o]);
}

void run_case(const case_t *c, uint64_t seed, const run_env *env, case_result *r)
{
    memset(r, 0, sizeof *r);
    r->status = CASE_PASSED;
    r->seed = seed;
    ref_set_threads(env->ref_threads > 0 ? env->ref_threads : env->ex.threads); /* the golden's */
    problem_t p;
    double *exact_in[CONFORM_MAX_TENSORS] = {0}, *exact_ref[CONFORM_MAX_TENSORS] = {0};
    if (!prepare_case(c, seed, env, &p, exact_in, r)) {
        r->n_out = c->op->n_outputs;
        case_buffers b;
        const int has_expect = cJSON_GetObjectItemCaseSensitive(c->spec, "expect") != NULL;
        if (buffers_alloc(&p, env->impl->dtype, &b) || (has_expect && exact_reference(&p, exact_in, exact_ref) < 0))
            set_status(r, CASE_ERROR, "%s", "out of memory");
        else if (!execute_case(c, &p, env, &b, r)) {
            judge_case(c, &p, &b, exact_ref, r);
            standards_for_case(&p, b.ref.ref, b.val, (float *const *)b.got, env, r);
            dump_failure(env, c, &p, &b, 1, r);
        } else {
            for (int o = 0; o < r->n_out; o++) { /* named, with nothing compared */
                judge_output_init(&p, &b.ref, o, &r->out[o]);
                r->out[o].not_run = 1;
            }
            dump_failure(env, c, &p, &b, 0, r);
        }
        buffers_free(&b);
    }
    for (int o = 0; o < CONFORM_MAX_TENSORS; o++) {
        free(exact_in[o]);
        free(exact_ref[o]);
    }
    problem_free(&p);
}

static cJSON *hist_json(const int64_t *v)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < COMPARE_HIST_BINS; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v[i]));
    return a;
}

static cJSON *shape_json(const shape_t *s)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < s->rank; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber((double)s->dims[i]));
    return a;
}

/* JSON has no NaN or infinity: those become strings */
static cJSON *num(double v)
{
    if (isnan(v)) return cJSON_CreateString("nan");
    if (isinf(v)) return cJSON_CreateString(v > 0 ? "inf" : "-inf");
    return cJSON_CreateNumber(v);
}

static cJSON *index_json(const shape_t *s, int64_t flat)
{
    cJSON *a = cJSON_CreateArray();
    int64_t idx[CONFORM_MAX_RANK] = {0};
    for (int d = s->rank - 1; d >= 0 && flat >= 0; d--) {
        idx[d] = s->dims[d] ? flat % s->dims[d] : 0;
        flat = s->dims[d] ? flat / s->dims[d] : 0;
    }
    for (int d = 0; d < s->rank; d++) cJSON_AddItemToArray(a, cJSON_CreateNumber((double)idx[d]));
    return a;
}

cJSON *case_result_json(const case_t *c, const case_result *r, const char *repro)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "id", c->id);
    cJSON_AddStringToObject(j, "op", c->op->name);
    cJSON_AddStringToObject(j, "status", status_name(r->status));
    if (r->message[0]) cJSON_AddStringToObject(j, "message", r->message);
    cJSON_AddNumberToObject(j, "seed", (double)r->seed);
    cJSON_AddStringToObject(j, "repro", repro);
    /* judged by the harness's validation alone: the implementation never ran (report tables
       count these apart from the implementation's passes) */
    if (c->spec && case_expect_error(c)) cJSON_AddTrueToObject(j, "validation");
    cJSON *outs = cJSON_AddArrayToObject(j, "outputs");
    for (int o = 0; o < r->n_out; o++) {
        const output_result *out = &r->out[o];
        const compare_result *m = &out->cmp;
        const tol_model *tm = &c->op->tol[o];
        cJSON *jo = cJSON_CreateObject();
        cJSON_AddStringToObject(jo, "name", out->name);
        cJSON_AddItemToObject(jo, "shape", shape_json(&out->shape));
        if (out->skipped || out->not_run) {
            cJSON_AddStringToObject(jo, "status", out->skipped ? "not computed (output_mask)"
                                                               : "not compared: the implementation gave no output");
            cJSON_AddItemToArray(outs, jo);
            continue;
        }
        cJSON_AddNumberToObject(jo, "numel", (double)m->n);
        cJSON_AddItemToObject(jo, "max_abs_err", num(m->max_abs_err));
        cJSON_AddItemToObject(jo, "max_rel_err", num(m->max_rel_err));
        cJSON_AddItemToObject(jo, "max_ulp", num(m->max_ulp));
        cJSON_AddItemToObject(jo, "max_err_over_tol", num(m->max_err_over_tol));
        cJSON_AddNumberToObject(jo, "n_over_tol", (double)m->n_over);
        cJSON_AddNumberToObject(jo, "n_ambiguous", (double)m->n_ambiguous);
        cJSON_AddItemToObject(jo, "ambiguous_max_err_over_tol", num(m->ambiguous_max_err_over_tol));
        cJSON_AddItemToObject(jo, "plain_max_err_over_tol", num(m->plain_max_err_over_tol));
        cJSON_AddNumberToObject(jo, "n_nonfinite_mismatch", (double)m->n_nonfinite_mismatch);
        cJSON_AddBoolToObject(jo, "all_zero", m->all_zero);
        cJSON_AddBoolToObject(jo, "guard_intact", out->guard_ok);
        cJSON_AddNumberToObject(jo, "n_unwritten", (double)out->n_unwritten);
        if (out->has_range) { /* within tolerance but outside every value a legal evaluation reaches */
            cJSON_AddNumberToObject(jo, "n_out_of_range", (double)out->n_out_of_range);
            if (out->range_index >= 0) {
                cJSON *w = cJSON_AddObjectToObject(jo, "first_out_of_range");
                cJSON_AddItemToObject(w, "index", index_json(&out->shape, out->range_index));
                cJSON_AddItemToObject(w, "ref", num(out->range_ref));
                cJSON_AddItemToObject(w, "got", num(out->range_got));
                cJSON_AddItemToObject(w, "lo", num(out->range_lo));
                cJSON_AddItemToObject(w, "hi", num(out->range_hi));
            }
        }
        if (m->worst_index >= 0) {
            cJSON *w = cJSON_AddObjectToObject(jo, "worst");
            cJSON_AddItemToObject(w, "index", index_json(&out->shape, m->worst_index));
            cJSON_AddItemToObject(w, "ref", num(m->worst_ref));
            cJSON_AddItemToObject(w, "got", num(m->worst_got));
            cJSON_AddItemToObject(w, "tol", num(m->worst_tol));
            if (m->worst_only_zero) cJSON_AddBoolToObject(w, "ref_exactly_zero", 1); /* only 0 legal: err/tol inf */
        }
        cJSON_AddItemToObject(jo, "hist_err_over_tol", hist_json(m->hist_ratio));
        cJSON_AddItemToObject(jo, "hist_ulp", hist_json(m->hist_ulp));
        if (out->heat) {
            cJSON *h = cJSON_AddObjectToObject(jo, "heatmap");
            cJSON_AddNumberToObject(h, "rows", out->heat_rows);
            cJSON_AddNumberToObject(h, "cols", out->heat_cols);
            cJSON *cells = cJSON_AddArrayToObject(h, "max_err_over_tol");
            for (int i = 0; i < out->heat_rows * out->heat_cols; i++)
                cJSON_AddItemToArray(cells, cJSON_CreateNumber(round(out->heat[i] * 1e3) / 1e3));
        }
        cJSON *t = cJSON_AddObjectToObject(jo, "tolerance");
        cJSON_AddStringToObject(t, "formula", CONFORM_TOL_RULE);
        cJSON_AddNumberToObject(t, "u", out->dt ? out->dt->u : CONFORM_U_F32);
        cJSON_AddNumberToObject(t, "eta", (out->dt ? out->dt : DTYPE_FLOAT32)->eta);
        cJSON_AddNumberToObject(t, "k_val", tm->k_val);
        cJSON_AddNumberToObject(t, "k_pos", tm->k_pos);
        cJSON_AddItemToObject(t, "max_applied", num(m->max_tol));
        if (out->has_standards) cJSON_AddItemToObject(jo, "standards", standards_json(out));
        if (out->has_expect) {
            cJSON *e = cJSON_AddObjectToObject(jo, "expected_values");
            cJSON_AddBoolToObject(e, "reference_matches", out->expect_ok);
            cJSON_AddItemToObject(e, "max_abs_err", num(out->expect_max_abs_err));
        }
        cJSON_AddItemToArray(outs, jo);
    }
    cJSON_AddNumberToObject(j, "time_ref_s", r->time_ref_s);
    cJSON_AddNumberToObject(j, "time_opt_s", r->time_opt_s);
    return j;
}
