/* The named precision standards. Numbers and sources: docs/standards.md. Every constant below is a
 * number of the standard it belongs to, not a tuning of ours. */
#include "standards.h"
#include "dtype.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* ---- shared pieces --------------------------------------------------------------------------- */

static void fig(std_result *r, const char *name, double v)
{
    if (r->n_fig < STD_MAX_FIGURES) r->fig[r->n_fig++] = (std_figure){name, v};
}

static int undefined_for(std_result *r, conform_dtype dt)
{
    r->defined = 0;
    r->passed = 1;
    snprintf(r->note, sizeof r->note, "not defined for %s by its source: nothing judged", dtype_get(dt)->name);
    return 1;
}

/* NaN against NaN and an infinity against the same infinity agree (TTK's rule for the Ascend
 * standards); any other non-finite pair is a disagreement. */
typedef enum { PAIR_FINITE, PAIR_AGREE, PAIR_DISAGREE } pair_kind;

static pair_kind pair(double g, double a)
{
    if (isfinite(g) && isfinite(a)) return PAIR_FINITE;
    if ((isnan(g) && isnan(a)) || (isinf(g) && g == a)) return PAIR_AGREE;
    return PAIR_DISAGREE;
}

/* element i of the values under test and of the benchmark, from whichever form they are held in */
static inline double actual_at(const std_input *in, int64_t i) { return in->actual ? in->actual[i] : in->actual_f32[i]; }
static inline double bench_at(const std_input *in, int64_t i) { return in->bench ? in->bench[i] : in->bench_f32[i]; }

/* One unit in the last place of x in dt (of the smallest normal binade for subnormals and 0). */
static double ulp_of(conform_dtype dt, double x)
{
    int frac = dt == CONFORM_DTYPE_FLOAT16 ? 10 : dt == CONFORM_DTYPE_BFLOAT16 ? 7 : dt == CONFORM_DTYPE_FLOAT32 ? 23 : 52;
    int emin = dt == CONFORM_DTYPE_FLOAT16 ? -14 : dt == CONFORM_DTYPE_FLOAT64 ? -1022 : -126;
    int e = x == 0 || !isfinite(x) ? emin : ilogb(x);
    return ldexp(1.0, (e < emin ? emin : e) - frac);
}

/* ---- ascend-v2-mixed: |a-g| <= atol + rtol|g| on >= 99 % of elements, max |a-g| <= cap -------- */

static void ascend_v2_mixed(const std_input *in, std_result *r)
{
    double rtol, atol, cap;
    switch (in->dtype) {
    case CONFORM_DTYPE_FLOAT16: rtol = atol = 0x1p-9; cap = 0.1; break;
    case CONFORM_DTYPE_BFLOAT16: rtol = atol = 0x1p-6; cap = 1.0; break;
    case CONFORM_DTYPE_FLOAT32: rtol = 0x1p-10; atol = 0x1p-16; cap = 0.01; break;
    default: undefined_for(r, in->dtype); return;
    }
    const double required = 0.99;
    int64_t matched = 0, over_cap = 0;
    double max_abs = 0, max_ulps_over_cap = 0;
    for (int64_t i = 0; i < in->n; i++) {
        double g = in->golden[i], a = actual_at(in, i);
        pair_kind k = pair(g, a);
        if (k == PAIR_AGREE) { matched++; continue; }
        double d = k == PAIR_FINITE ? fabs(a - g) : INFINITY; /* TTK: a position mismatch is unbounded */
        if (d > max_abs) max_abs = d;
        if (d <= atol + rtol * fabs(g)) matched++;
        /* the hard limit is "the cap or 32 ULP, whichever holds": an element beyond the cap may
           still be within 32 ULP of its golden, which needs |g| >= 4096 (float32), 4 (float16)
           or 8 (bfloat16) */
        if (d > cap) {
            double ulps = d / ulp_of(in->dtype, g);
            over_cap += !(ulps <= 32);
            if (ulps > max_ulps_over_cap || isnan(ulps)) max_ulps_over_cap = isnan(ulps) ? INFINITY : ulps;
        }
    }
    double ratio = in->n ? (double)matched / (double)in->n : 1.0;
    r->defined = 1;
    r->passed = ratio >= required && over_cap == 0;
    fig(r, "matched_ratio", ratio);
    fig(r, "required_ratio", required);
    fig(r, "max_abs_err", max_abs);
    fig(r, "max_abs_err_limit", cap);
    fig(r, "max_ulps_beyond_limit", max_ulps_over_cap);
    fig(r, "n_beyond_limit", (double)over_cap);
    fig(r, "rtol", rtol);
    fig(r, "atol", atol);
    snprintf(r->note, sizeof r->note, "hard limit per element: max_abs_err_limit or 32 ULP of the golden in the dtype, "
                                      "whichever is larger");
}

/* ---- ascend-v1-mere-mare: rel = |a-g|/(|g|+1e-7), mean < T, max < 10 T ------------------------ */

static void ascend_v1_mere_mare(const std_input *in, std_result *r)
{
    double t;
    switch (in->dtype) {
    case CONFORM_DTYPE_FLOAT16: t = 0x1p-10; break;
    case CONFORM_DTYPE_BFLOAT16: t = 0x1p-7; break;
    case CONFORM_DTYPE_FLOAT32: t = 0x1p-13; break;
    default: undefined_for(r, in->dtype); return;
    }
    double sum = 0, mare = 0;
    int64_t n = 0;
    for (int64_t i = 0; i < in->n; i++) {
        double g = in->golden[i], a = actual_at(in, i);
        pair_kind k = pair(g, a);
        if (k == PAIR_AGREE) continue; /* TTK stat_rel_err: agreeing non-finite values are excluded */
        double rel = k == PAIR_FINITE ? fabs(a - g) / (fabs(g) + 1e-7) : INFINITY;
        sum += rel;
        n++;
        if (rel > mare) mare = rel;
    }
    double mere = n ? sum / (double)n : 0;
    r->defined = 1;
    r->passed = mere < t && mare < 10 * t;
    fig(r, "mere", mere);
    fig(r, "mere_limit", t);
    fig(r, "mare", mare);
    fig(r, "mare_limit", 10 * t);
}

/* ---- double-thousandth (torch_npu assertRtolEqual) ------------------------------------------- */

static void double_thousandth(const std_input *in, std_result *r)
{
    double p, m; /* torch_npu: prec16 1e-3 with minimum16 6e-8; prec 1e-4 with minimum 1e-9 */
    switch (in->dtype) {
    case CONFORM_DTYPE_FLOAT16: p = 1e-3; m = 6e-8; break;
    case CONFORM_DTYPE_FLOAT32:
    case CONFORM_DTYPE_FLOAT64: p = 1e-4; m = 1e-9; break;
    default: undefined_for(r, in->dtype); return; /* bfloat16 is not in its numpy dtype list */
    }
    int64_t over_rel = 0, over_abs = 0, nan_mismatch = 0;
    for (int64_t i = 0; i < in->n; i++) {
        double g = in->golden[i], a = actual_at(in, i);
        if (isnan(g) != isnan(a)) { nan_mismatch++; continue; }
        /* NaN positions agree: their difference counts as 0; infinities go through the arithmetic
           as numpy does (inf - inf is NaN, which no comparison passes) */
        double d = isnan(g) ? 0 : fabs(a - g), deno = fmax(fabs(a), fabs(g));
        over_abs += !(d <= p);
        over_rel += !(d / (deno + m) <= p);
    }
    double allowed = p * (double)in->n;
    r->defined = 1;
    r->passed = !nan_mismatch && !((double)over_rel > allowed && (double)over_abs > allowed);
    fig(r, "n_rel_over", (double)over_rel);
    fig(r, "n_abs_over", (double)over_abs);
    fig(r, "allowed", allowed);
    fig(r, "p", p);
    fig(r, "minimum", m);
    fig(r, "n_nan_mismatch", (double)nan_mismatch);
}

/* ---- commercial-ratio: MARE/MERE/RMSE against a second implementation's ---------------------- */

typedef struct {
    double sum_rel, max_rel, sum_sq;
    int64_t n, small_errors;
} err_stats;

static void accumulate(err_stats *s, double g, double a, double small_thr, double small_err)
{
    if (!isfinite(g)) return; /* judged by the inf/nan rule */
    double d = isfinite(a) ? fabs(a - g) : INFINITY;
    if (fabs(g) < small_thr) {
        s->small_errors += d > small_err;
        return;
    }
    double rel = d / (fabs(g) + 1e-7);
    s->sum_rel += rel;
    if (rel > s->max_rel) s->max_rel = rel;
    s->sum_sq += d * d;
    s->n++;
}

static void commercial_ratio(const std_input *in, std_result *r)
{
    double thr, err; /* small-value domain: threshold on |golden|, error allowed there */
    switch (in->dtype) {
    case CONFORM_DTYPE_FLOAT16: thr = 0x1p-11; err = 0x1p-16; break;
    case CONFORM_DTYPE_BFLOAT16: thr = 0x1p-8; err = 0x1p-16; break;
    case CONFORM_DTYPE_FLOAT32: thr = 0x1p-14; err = 0x1p-30; break;
    default: undefined_for(r, in->dtype); return;
    }
    r->defined = 1;
    if (!in->bench && !in->bench_f32) {
        r->passed = 0;
        r->level = "none";
        snprintf(r->note, sizeof r->note, "no benchmark values: not judged");
        return;
    }
    err_stats k = {0}, b = {0};
    int64_t nonfinite_errors = 0;
    for (int64_t i = 0; i < in->n; i++) {
        double g = in->golden[i];
        accumulate(&k, g, actual_at(in, i), thr, err);
        accumulate(&b, g, bench_at(in, i), thr, err);
        /* a non-finite golden: wrong when the benchmark agrees with it and the kernel does not */
        if (!isfinite(g) && pair(g, actual_at(in, i)) != PAIR_AGREE && pair(g, bench_at(in, i)) == PAIR_AGREE) nonfinite_errors++;
    }
    double kmere = k.n ? k.sum_rel / (double)k.n : 0, bmere = b.n ? b.sum_rel / (double)b.n : 0;
    double krmse = k.n ? sqrt(k.sum_sq / (double)k.n) : 0, brmse = b.n ? sqrt(b.sum_sq / (double)b.n) : 0;
    /* the standard adds 1e-7 to each denominator against a benchmark error of 0 */
    double mare_ratio = k.max_rel / (b.max_rel + 1e-7), mere_ratio = kmere / (bmere + 1e-7), rmse_ratio = krmse / (brmse + 1e-7);
    static const struct { const char *name; double mare, mere, rmse; } levels[] = {
        {"L2", 2, 1.2, 1.2}, {"L1", 5, 1.5, 1.5}, {"L0", 10, 2, 2}};
    r->level = "none";
    for (int l = 2; l >= 0; l--)
        if (mare_ratio <= levels[l].mare && mere_ratio <= levels[l].mere && rmse_ratio <= levels[l].rmse) r->level = levels[l].name;
    int small_ok = (double)k.small_errors / (double)(b.small_errors > 1 ? b.small_errors : 1) <= 2;
    r->passed = strcmp(r->level, "none") && small_ok && !nonfinite_errors;
    fig(r, "mare_ratio", mare_ratio);
    fig(r, "mere_ratio", mere_ratio);
    fig(r, "rmse_ratio", rmse_ratio);
    fig(r, "mare", k.max_rel);
    fig(r, "mere", kmere);
    fig(r, "rmse", krmse);
    fig(r, "bench_mare", b.max_rel);
    fig(r, "bench_mere", bmere);
    fig(r, "bench_rmse", brmse);
    fig(r, "small_value_errors", (double)k.small_errors);
    fig(r, "bench_small_value_errors", (double)b.small_errors);
    fig(r, "nonfinite_errors", (double)nonfinite_errors);
}

/* ---- torch-assert-close: PyTorch's default rtol/atol, every element --------------------------- */

static void torch_assert_close(const std_input *in, std_result *r)
{
    double rtol, atol; /* torch.testing._comparison._DTYPE_PRECISIONS */
    switch (in->dtype) {
    case CONFORM_DTYPE_FLOAT16: rtol = 1e-3; atol = 1e-5; break;
    case CONFORM_DTYPE_BFLOAT16: rtol = 1.6e-2; atol = 1e-5; break;
    case CONFORM_DTYPE_FLOAT32: rtol = 1.3e-6; atol = 1e-5; break;
    default: rtol = 1e-7; atol = 1e-7; break;
    }
    int64_t mismatched = 0;
    double worst = 0; /* largest |a-g| / (atol + rtol|g|) */
    for (int64_t i = 0; i < in->n; i++) {
        double g = in->golden[i], a = actual_at(in, i);
        /* equal_nan defaults to False: NaN never matches; equal infinities do */
        if (isinf(g) && g == a) continue;
        double q = fabs(a - g) / (atol + rtol * fabs(g));
        if (!(q <= 1)) mismatched++;
        if (q > worst || isnan(q)) worst = isnan(q) ? INFINITY : q;
    }
    r->defined = 1;
    r->passed = mismatched == 0;
    fig(r, "n_mismatched", (double)mismatched);
    fig(r, "max_err_over_allowed", worst);
    fig(r, "rtol", rtol);
    fig(r, "atol", atol);
}

/* ---- the table ------------------------------------------------------------------------------- */

const precision_standard conform_standards[N_STANDARDS] = {
    {"ascend-v2-mixed", "docs/standards.md#ascend-v2-mixed", ascend_v2_mixed},
    {"ascend-v1-mere-mare", "docs/standards.md#ascend-v1-mere-mare", ascend_v1_mere_mare},
    {"double-thousandth", "docs/standards.md#double-thousandth", double_thousandth},
    {"commercial-ratio", "docs/standards.md#commercial-ratio", commercial_ratio},
    {"torch-assert-close", "docs/standards.md#torch-assert-close", torch_assert_close},
};

int standard_index(const char *name)
{
    for (int s = 0; s < N_STANDARDS; s++)
        if (!strcmp(conform_standards[s].name, name)) return s;
    return -1;
}

int standards_parse_list(const char *list, char *err, size_t errlen)
{
    int mask = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list ? list : "");
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int s = standard_index(tok);
        if (s < 0) {
            char valid[256] = "";
            for (int k = 0; k < N_STANDARDS; k++)
                snprintf(valid + strlen(valid), sizeof valid - strlen(valid), "%s%s", k ? ", " : "", conform_standards[k].name);
            snprintf(err, errlen, "--gate-on: unknown standard '%s' (valid: %s)", tok, valid);
            return -1;
        }
        mask |= 1 << s;
    }
    if (!mask) snprintf(err, errlen, "--gate-on takes NAME[,NAME...], got '%s'", list ? list : "");
    return mask ? mask : -1;
}

void standards_evaluate_all(const std_input *in, std_result *out)
{
    for (int s = 0; s < N_STANDARDS; s++) {
        memset(&out[s], 0, sizeof out[s]);
        conform_standards[s].evaluate(in, &out[s]);
    }
}

static cJSON *number(double v)
{
    if (isnan(v)) return cJSON_CreateString("nan");
    if (isinf(v)) return cJSON_CreateString(v > 0 ? "inf" : "-inf");
    return cJSON_CreateNumber(v);
}

cJSON *std_result_json(const std_result *r)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddBoolToObject(j, "passed", r->passed);
    cJSON_AddBoolToObject(j, "defined", r->defined);
    if (r->level) cJSON_AddStringToObject(j, "level", r->level);
    for (int f = 0; f < r->n_fig; f++) cJSON_AddItemToObject(j, r->fig[f].name, number(r->fig[f].value));
    if (r->note[0]) cJSON_AddStringToObject(j, "note", r->note);
    return j;
}
