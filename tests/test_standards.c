/* The named precision standards at their thresholds: just inside passes, just outside fails, for
 * each dtype a standard defines. The numbers here are restated from the sources (docs/standards.md)
 * so a change of a constant in harness/judge/standards.c shows up as a failure. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "standards.h"

#define N_MAX 20000
static double g[N_MAX], a[N_MAX], b[N_MAX];

static std_result judge(const char *name, conform_dtype dt, int64_t n, int with_bench)
{
    int s = standard_index(name);
    cr_assert(s >= 0, "%s is not in the table", name);
    std_input in = {g, a, with_bench ? b : NULL, n, dt, NULL, NULL, 0};
    std_result r;
    memset(&r, 0, sizeof r);
    conform_standards[s].evaluate(&in, &r);
    return r;
}

static void fill(int64_t n, double gv, double av)
{
    for (int64_t i = 0; i < n; i++) { g[i] = gv; a[i] = av; b[i] = av; }
}

/* ---- ascend-v2-mixed ------------------------------------------------------------------------- */

static const struct { conform_dtype dt; double rtol, atol, cap; } v2[] = {
    {CONFORM_DTYPE_FLOAT16, 0x1p-9, 0x1p-9, 0.1}, {CONFORM_DTYPE_BFLOAT16, 0x1p-6, 0x1p-6, 1.0}, {CONFORM_DTYPE_FLOAT32, 0x1p-10, 0x1p-16, 0.01}};

Test(standards, ascend_v2_element_bound)
{
    for (size_t k = 0; k < 3; k++) {
        double edge = 1 + v2[k].atol + v2[k].rtol; /* exact: sums of powers of two */
        fill(1, 1.0, edge);
        cr_assert(judge("ascend-v2-mixed", v2[k].dt, 1, 0).passed, "dtype %zu: on the element bound", k);
        a[0] = nextafter(edge, 2);
        cr_assert(!judge("ascend-v2-mixed", v2[k].dt, 1, 0).passed, "dtype %zu: just beyond the element bound", k);
    }
}

Test(standards, ascend_v2_ratio_99_percent)
{
    for (size_t k = 0; k < 3; k++) {
        fill(100, 1.0, 1.0);
        a[0] = 1 + v2[k].cap / 2; /* beyond the element bound, under the cap: 99 of 100 match */
        cr_assert(judge("ascend-v2-mixed", v2[k].dt, 100, 0).passed, "dtype %zu: 99%% matched", k);
        a[1] = a[0];
        std_result r = judge("ascend-v2-mixed", v2[k].dt, 100, 0);
        cr_assert(!r.passed, "dtype %zu: 98%% matched", k);
        cr_assert_float_eq(r.fig[0].value, 0.98, 1e-12);
    }
}

Test(standards, ascend_v2_cap)
{
    for (size_t k = 0; k < 3; k++) {
        fill(1000, 0.0, 0.0);
        a[0] = v2[k].cap; /* golden 0: the error is exactly the value */
        cr_assert(judge("ascend-v2-mixed", v2[k].dt, 1000, 0).passed, "dtype %zu: at the cap", k);
        a[0] = nextafter(v2[k].cap, 1e9);
        cr_assert(!judge("ascend-v2-mixed", v2[k].dt, 1000, 0).passed, "dtype %zu: beyond the cap", k);
    }
}

Test(standards, ascend_v2_cap_or_32_ulp)
{
    /* golden 2^20 in float32: 1 ULP = 2^-3, 32 ULP = 4, far above the cap 0.01 and within rtol */
    fill(100, 0x1p20, 0x1p20);
    a[0] = 0x1p20 + 4;
    cr_assert(judge("ascend-v2-mixed", CONFORM_DTYPE_FLOAT32, 100, 0).passed, "32 ULP beyond the cap");
    a[0] = 0x1p20 + 4.125;
    cr_assert(!judge("ascend-v2-mixed", CONFORM_DTYPE_FLOAT32, 100, 0).passed, "33 ULP beyond the cap");
    /* float16 at 2^6: 1 ULP = 2^-4, 32 ULP = 2 */
    fill(100, 64.0, 64.0);
    a[0] = 66.0;
    cr_assert(judge("ascend-v2-mixed", CONFORM_DTYPE_FLOAT16, 100, 0).passed);
    a[0] = 66.0625;
    cr_assert(!judge("ascend-v2-mixed", CONFORM_DTYPE_FLOAT16, 100, 0).passed);
}

Test(standards, ascend_v2_nonfinite)
{
    fill(200, 1.0, 1.0);
    g[0] = a[0] = NAN;
    g[1] = a[1] = INFINITY;
    cr_assert(judge("ascend-v2-mixed", CONFORM_DTYPE_FLOAT32, 200, 0).passed, "agreeing NaN and inf are matches");
    a[1] = -INFINITY;
    cr_assert(!judge("ascend-v2-mixed", CONFORM_DTYPE_FLOAT32, 200, 0).passed, "an infinity of the other sign is unbounded");
}

/* ---- ascend-v1-mere-mare --------------------------------------------------------------------- */

static const struct { conform_dtype dt; double t; } v1[] = {{CONFORM_DTYPE_FLOAT16, 0x1p-10}, {CONFORM_DTYPE_BFLOAT16, 0x1p-7}, {CONFORM_DTYPE_FLOAT32, 0x1p-13}};

Test(standards, ascend_v1_mere)
{
    for (size_t k = 0; k < 3; k++) {
        double rel_unit = 1 + 1e-7; /* rel = |a-g| / (|g| + 1e-7) with g = 1 */
        fill(10, 1.0, 1 + v1[k].t * rel_unit * (1 - 1e-9));
        cr_assert(judge("ascend-v1-mere-mare", v1[k].dt, 10, 0).passed, "dtype %zu: MERE just under T", k);
        fill(10, 1.0, 1 + v1[k].t * rel_unit * (1 + 1e-9));
        cr_assert(!judge("ascend-v1-mere-mare", v1[k].dt, 10, 0).passed, "dtype %zu: MERE just over T", k);
    }
}

Test(standards, ascend_v1_mare)
{
    for (size_t k = 0; k < 3; k++) {
        double rel_unit = 1 + 1e-7;
        fill(100, 1.0, 1.0);
        a[0] = 1 + 10 * v1[k].t * rel_unit * (1 - 1e-9); /* MERE is a tenth of T */
        cr_assert(judge("ascend-v1-mere-mare", v1[k].dt, 100, 0).passed, "dtype %zu: MARE just under 10T", k);
        a[0] = 1 + 10 * v1[k].t * rel_unit * (1 + 1e-9);
        cr_assert(!judge("ascend-v1-mere-mare", v1[k].dt, 100, 0).passed, "dtype %zu: MARE just over 10T", k);
    }
}

/* ---- double-thousandth ----------------------------------------------------------------------- */

Test(standards, double_thousandth_counts)
{
    const struct { conform_dtype dt; double p; int64_t n; } cases[] = {
        {CONFORM_DTYPE_FLOAT16, 1e-3, 1000}, {CONFORM_DTYPE_FLOAT32, 1e-4, 10000}, {CONFORM_DTYPE_FLOAT64, 1e-4, 10000}};
    for (size_t k = 0; k < 3; k++) {
        /* p*N = 1: one element failing both rules is allowed, two are not */
        fill(cases[k].n, 1.0, 1.0);
        a[0] = 1 + 3 * cases[k].p;
        cr_assert(judge("double-thousandth", cases[k].dt, cases[k].n, 0).passed, "dtype %zu: p*N elements over", k);
        a[1] = a[0];
        cr_assert(!judge("double-thousandth", cases[k].dt, cases[k].n, 0).passed, "dtype %zu: p*N+1 elements over", k);
    }
}

Test(standards, double_thousandth_needs_both)
{
    /* many elements over the relative rule but within p absolutely: not a failure */
    fill(10000, 1.0, 1.0);
    for (int i = 0; i < 100; i++) { g[i] = 1e-6; a[i] = 2e-6; }
    std_result r = judge("double-thousandth", CONFORM_DTYPE_FLOAT32, 10000, 0);
    cr_assert(r.passed);
    cr_assert_eq(r.fig[0].value, 100); /* n_rel_over */
    /* the relative error is symmetric (max(|a|,|g|)) with a floor m = 1e-9: at a = 0 it is 1 */
    g[0] = 2e-4;
    a[0] = 0;
    g[1] = 2e-4;
    a[1] = 0;
    cr_assert(!judge("double-thousandth", CONFORM_DTYPE_FLOAT32, 10000, 0).passed);
    g[0] = a[0] = NAN;
    g[1] = a[1] = 1;
    cr_assert(judge("double-thousandth", CONFORM_DTYPE_FLOAT32, 10000, 0).passed, "NaN positions agree");
    a[0] = 0;
    cr_assert(!judge("double-thousandth", CONFORM_DTYPE_FLOAT32, 10000, 0).passed, "NaN positions differ");
    cr_assert(!judge("double-thousandth", CONFORM_DTYPE_BFLOAT16, 10000, 0).defined, "torch_npu has no bfloat16");
}

/* ---- commercial-ratio ------------------------------------------------------------------------ */

static void scaled(int64_t n, double e, double k)
{
    for (int64_t i = 0; i < n; i++) { g[i] = 1.0; b[i] = 1 + e; a[i] = 1 + k * e; }
}

Test(standards, commercial_levels)
{
    /* uniform errors: the three ratios are equal, so the MERE/RMSE limits decide the level */
    const double e = 1e-3, unit = (e + 1e-7) / e; /* ratio = k e / (e + 1e-7) */
    const struct { double limit; const char *inside, *outside; } lv[] = {{1.2, "L2", "L1"}, {1.5, "L1", "L0"}, {2.0, "L0", "none"}};
    for (int std_i = 0; std_i < 3; std_i++) {
        conform_dtype dt = (conform_dtype[]){CONFORM_DTYPE_FLOAT16, CONFORM_DTYPE_BFLOAT16, CONFORM_DTYPE_FLOAT32}[std_i];
        for (size_t k = 0; k < 3; k++) {
            scaled(100, e, lv[k].limit * unit * (1 - 1e-9));
            std_result r = judge("commercial-ratio", dt, 100, 1);
            cr_assert_str_eq(r.level, lv[k].inside, "dtype %d, ratio just under %g", std_i, lv[k].limit);
            scaled(100, e, lv[k].limit * unit * (1 + 1e-9));
            r = judge("commercial-ratio", dt, 100, 1);
            cr_assert_str_eq(r.level, lv[k].outside, "dtype %d, ratio just over %g", std_i, lv[k].limit);
            cr_assert_eq(r.passed, strcmp(lv[k].outside, "none") != 0);
        }
    }
}

Test(standards, commercial_mare_limit)
{
    /* one outlier moves MARE, barely MERE and RMSE: MARE ratio 10 is L0, just over is no level */
    const double e = 1e-3, unit = (e + 1e-7) / e;
    scaled(10000, e, 1.0);
    a[0] = 1 + 10 * unit * e * (1 - 1e-9);
    std_result r = judge("commercial-ratio", CONFORM_DTYPE_FLOAT32, 10000, 1);
    cr_assert_str_eq(r.level, "L0");
    a[0] = 1 + 10 * unit * e * (1 + 1e-9);
    r = judge("commercial-ratio", CONFORM_DTYPE_FLOAT32, 10000, 1);
    cr_assert_str_eq(r.level, "none");
    cr_assert(!r.passed);
}

Test(standards, commercial_small_values)
{
    const struct { conform_dtype dt; double thr, err; } sv[] = {
        {CONFORM_DTYPE_FLOAT16, 0x1p-11, 0x1p-16}, {CONFORM_DTYPE_BFLOAT16, 0x1p-8, 0x1p-16}, {CONFORM_DTYPE_FLOAT32, 0x1p-14, 0x1p-30}};
    for (size_t k = 0; k < 3; k++) {
        fill(100, 1.0, 1.0);
        for (int i = 0; i < 10; i++) g[i] = a[i] = b[i] = sv[k].thr / 2; /* in the small-value domain */
        b[0] = sv[k].thr / 2 + 2 * sv[k].err; /* the benchmark: one error */
        a[0] = a[1] = sv[k].thr / 2 + 2 * sv[k].err;
        a[2] = sv[k].thr / 2 + sv[k].err; /* on the error bound: not an error */
        cr_assert(judge("commercial-ratio", sv[k].dt, 100, 1).passed, "dtype %zu: twice the benchmark's count", k);
        a[3] = a[0];
        cr_assert(!judge("commercial-ratio", sv[k].dt, 100, 1).passed, "dtype %zu: three times", k);
        /* a benchmark without small-value errors counts as one */
        b[0] = sv[k].thr / 2;
        a[3] = sv[k].thr / 2;
        cr_assert(judge("commercial-ratio", sv[k].dt, 100, 1).passed, "dtype %zu: 2 against max(0, 1)", k);
        a[3] = a[0];
        cr_assert(!judge("commercial-ratio", sv[k].dt, 100, 1).passed, "dtype %zu: 3 against max(0, 1)", k);
    }
}

Test(standards, commercial_needs_a_benchmark)
{
    fill(10, 1.0, 1.0);
    std_result r = judge("commercial-ratio", CONFORM_DTYPE_FLOAT32, 10, 0);
    cr_assert(r.defined && !r.passed);
    cr_assert_str_eq(r.level, "none");
    cr_assert(!judge("commercial-ratio", CONFORM_DTYPE_FLOAT64, 10, 1).defined);
}

/* ---- torch-assert-close ---------------------------------------------------------------------- */

Test(standards, torch_assert_close_defaults)
{
    const struct { conform_dtype dt; double rtol, atol; } tc[] = {
        {CONFORM_DTYPE_FLOAT16, 1e-3, 1e-5}, {CONFORM_DTYPE_BFLOAT16, 1.6e-2, 1e-5}, {CONFORM_DTYPE_FLOAT32, 1.3e-6, 1e-5}, {CONFORM_DTYPE_FLOAT64, 1e-7, 1e-7}};
    for (size_t k = 0; k < 4; k++) {
        double allowed = tc[k].atol + tc[k].rtol * 2.0;
        fill(5, 2.0, 2.0 + allowed * (1 - 1e-6));
        cr_assert(judge("torch-assert-close", tc[k].dt, 5, 0).passed, "dtype %zu: inside", k);
        a[4] = 2.0 + allowed * (1 + 1e-6);
        cr_assert(!judge("torch-assert-close", tc[k].dt, 5, 0).passed, "dtype %zu: outside", k);
    }
    fill(5, 1.0, 1.0);
    g[0] = a[0] = INFINITY;
    cr_assert(judge("torch-assert-close", CONFORM_DTYPE_FLOAT32, 5, 0).passed, "equal infinities match");
    g[0] = a[0] = NAN;
    cr_assert(!judge("torch-assert-close", CONFORM_DTYPE_FLOAT32, 5, 0).passed, "equal_nan is False by default");
}

/* ---- table, dtypes, names -------------------------------------------------------------------- */

Test(standards, undefined_dtype_judges_nothing)
{
    fill(4, 1.0, 5.0);
    for (int s = 0; s < N_STANDARDS; s++) {
        std_input in = {g, a, b, 4, CONFORM_DTYPE_FLOAT64, NULL, NULL, 0};
        std_result r;
        memset(&r, 0, sizeof r);
        conform_standards[s].evaluate(&in, &r);
        int defined_f64 = !strcmp(conform_standards[s].name, "double-thousandth") || !strcmp(conform_standards[s].name, "torch-assert-close");
        cr_assert_eq(r.defined, defined_f64, "%s", conform_standards[s].name);
        if (!r.defined) cr_assert(r.passed && strstr(r.note, "not defined"), "%s", conform_standards[s].name);
        else cr_assert(!r.passed, "%s fails an error of 4", conform_standards[s].name);
    }
}

/* run judges float32 outputs as written (actual_f32, bench_f32) with no decoded copy: every figure
   of every standard the same as from the values in double */
Test(standards, float32_values_in_place)
{
    static float af[N_MAX], bf[N_MAX];
    const int64_t n = 1000;
    for (int64_t i = 0; i < n; i++) {
        g[i] = (i % 7 ? 1.0 : -3e-5) * (1 + 1e-3 * (double)(i % 13));
        af[i] = (float)(g[i] * (1 + 2e-7 * (double)(i % 5))), bf[i] = (float)g[i];
        a[i] = af[i], b[i] = bf[i];
    }
    g[3] = a[3] = af[3] = INFINITY, g[4] = NAN, a[4] = af[4] = 1; /* the non-finite paths too */
    for (int s = 0; s < N_STANDARDS; s++) {
        std_input in64 = {g, a, b, n, CONFORM_DTYPE_FLOAT32, NULL, NULL, 0}, in32 = {g, NULL, NULL, n, CONFORM_DTYPE_FLOAT32, af, bf, 0};
        std_result r64, r32;
        memset(&r64, 0, sizeof r64);
        memset(&r32, 0, sizeof r32);
        conform_standards[s].evaluate(&in64, &r64);
        conform_standards[s].evaluate(&in32, &r32);
        cr_assert_eq(r64.passed, r32.passed, "%s", conform_standards[s].name);
        cr_assert_eq(r64.n_fig, r32.n_fig, "%s", conform_standards[s].name);
        for (int f = 0; f < r64.n_fig; f++)
            cr_assert(!memcmp(&r64.fig[f].value, &r32.fig[f].value, sizeof(double)), "%s %s: %.17g != %.17g",
                      conform_standards[s].name, r64.fig[f].name, r64.fig[f].value, r32.fig[f].value);
    }
}

/* commercial-ratio with the values under test as their own benchmark sums them once: the same
   figures as from an equal copy, non-finite elements included */
Test(standards, commercial_self_benchmark_is_its_copy)
{
    const int64_t n = 500;
    for (int64_t i = 0; i < n; i++) g[i] = 1 + 1e-3 * (double)(i % 17), a[i] = b[i] = g[i] * (1 + 3e-7 * (double)(i % 3));
    g[7] = NAN, a[7] = b[7] = 2, g[8] = a[8] = b[8] = -INFINITY, g[9] = 1e-6; /* and a small value */
    int s = standard_index("commercial-ratio");
    std_input self = {g, a, a, n, CONFORM_DTYPE_FLOAT32, NULL, NULL, 0}, copy = {g, a, b, n, CONFORM_DTYPE_FLOAT32, NULL, NULL, 0};
    std_result r1, r2;
    memset(&r1, 0, sizeof r1);
    memset(&r2, 0, sizeof r2);
    conform_standards[s].evaluate(&self, &r1);
    conform_standards[s].evaluate(&copy, &r2);
    cr_assert_eq(r1.passed, r2.passed);
    cr_assert_str_eq(r1.level, r2.level);
    cr_assert_eq(r1.n_fig, r2.n_fig);
    for (int f = 0; f < r1.n_fig; f++)
        cr_assert(!memcmp(&r1.fig[f].value, &r2.fig[f].value, sizeof(double)), "%s: %.17g != %.17g", r1.fig[f].name,
                  r1.fig[f].value, r2.fig[f].value);
}

Test(standards, rounding_to_dtype)
{
    cr_assert_eq(dtype_round(CONFORM_DTYPE_FLOAT16, 1 + 0x1p-11), 1.0); /* a tie goes to even */
    cr_assert_eq(dtype_round(CONFORM_DTYPE_FLOAT16, 1 + 3 * 0x1p-11), 1 + 0x1p-9);
    cr_assert_eq(dtype_round(CONFORM_DTYPE_FLOAT16, 65519.0), 65504.0);
    cr_assert(isinf(dtype_round(CONFORM_DTYPE_FLOAT16, 65520.0)));
    cr_assert_eq(dtype_round(CONFORM_DTYPE_FLOAT16, 3 * 0x1p-25), 0x1p-23); /* subnormal quantum 2^-24 */
    cr_assert_eq(dtype_round(CONFORM_DTYPE_BFLOAT16, 1 + 0x1p-8), 1.0);
    cr_assert_eq(dtype_round(CONFORM_DTYPE_BFLOAT16, 1 + 3 * 0x1p-8), 1 + 0x1p-6);
    cr_assert_eq(dtype_round(CONFORM_DTYPE_FLOAT32, 1 + 0x1p-30), 1.0);
}

Test(standards, gate_list)
{
    char err[512];
    int m = standards_parse_list("ascend-v2-mixed,torch-assert-close", err, sizeof err);
    cr_assert_eq(m, (1 << standard_index("ascend-v2-mixed")) | (1 << standard_index("torch-assert-close")));
    cr_assert_eq(standards_parse_list("ascend-v3", err, sizeof err), -1);
    cr_assert(strstr(err, "ascend-v3") && strstr(err, "commercial-ratio") && strstr(err, "double-thousandth"), "%s", err);
    cr_assert_eq(standards_parse_list("", err, sizeof err), -1);
}

/* ---- the vector blocks against the element loops --------------------------------------------- */

static uint64_t xs = 0x2545f4914f6cdd1dull;
static uint64_t next_u64(void) { xs ^= xs << 13; xs ^= xs >> 7; xs ^= xs << 17; return xs; }
static double uniform(void) { return (double)(next_u64() >> 11) * 0x1p-53; }

static double odd_value(void)
{
    static const double v[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 0x1p-149, 1e-45, 3e38, 1e300, 100.0, -5000.0};
    return v[next_u64() % (sizeof v / sizeof v[0])];
}

static int same_bits(double x, double y) { return memcmp(&x, &y, sizeof x) == 0 || (isnan(x) && isnan(y)); }

static void assert_same_results(const std_result *v, const std_result *s, const char *what)
{
    for (int k = 0; k < N_STANDARDS; k++) {
        cr_assert(v[k].defined == s[k].defined && v[k].passed == s[k].passed && v[k].n_fig == s[k].n_fig &&
                      !strcmp(v[k].note, s[k].note) && (v[k].level == s[k].level || (v[k].level && s[k].level && !strcmp(v[k].level, s[k].level))),
                  "%s: %s differs", what, conform_standards[k].name);
        for (int f = 0; f < v[k].n_fig; f++)
            cr_assert(same_bits(v[k].fig[f].value, s[k].fig[f].value), "%s: %s %s: %.17g vs %.17g", what,
                      conform_standards[k].name, v[k].fig[f].name, v[k].fig[f].value, s[k].fig[f].value);
    }
}

/* Every figure of the vector blocks (where this CPU has them) is bit for bit the element loops':
   random values of every dtype with zeros, small goldens, non-finite pairs (agreeing or not),
   errors beyond the caps, float32 values in place, with and without a benchmark */
Test(standards, vector_blocks_equal_the_element_loops)
{
    static float a32[N_MAX];
    for (int round = 0; round < 120; round++) {
        double odd = round % 3 ? 0.004 : 0.0, zeros = (double)(round % 4) / 4, spread = round % 5 == 4 ? 1e-2 : 1e-6;
        for (int i = 0; i < N_MAX; i++) {
            g[i] = uniform() < zeros ? 0.0 : (uniform() - 0.5) * exp((uniform() - 0.5) * 30);
            a32[i] = (float)(g[i] * (1 + (uniform() - 0.5) * spread));
            if (uniform() < odd) g[i] = odd_value();
            if (uniform() < odd) a32[i] = (float)g[i];
            if (uniform() < odd) a32[i] = (float)odd_value();
            a[i] = a32[i];
            b[i] = uniform() < odd ? odd_value() : (double)(float)(g[i] * (1 + (uniform() - 0.5) * spread));
        }
        int64_t n = round < 60 ? N_MAX : (int64_t)(next_u64() % N_MAX);
        conform_dtype dt = (conform_dtype)(round % 4);
        std_input forms[4] = {{g, a, b, n, dt, NULL, NULL, 0}, {g, a, a, n, dt, NULL, NULL, 0}, {g, NULL, NULL, n, dt, a32, a32, 0},
                              {g, NULL, b, n, dt, a32, NULL, 0}};
        for (int f = 0; f < 4; f++) {
            std_result v[N_STANDARDS], s[N_STANDARDS];
            standards_evaluate_all(&forms[f], v);
            forms[f].scalar_only = 1;
            standards_evaluate_all(&forms[f], s);
            char what[64];
            snprintf(what, sizeof what, "round %d, form %d, dtype %d, n %lld", round, f, (int)dt, (long long)n);
            assert_same_results(v, s, what);
        }
    }
}
