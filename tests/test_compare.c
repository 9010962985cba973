/* The comparator judged on its own: it must fail what is wrong and pass only what is right. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "compare.h"
#include "test_files.h"

static const tol_model model = {6, "test", 16, "test"};

/* reference values with bounds as a 4-term sum of |terms| = |ref| would give */
#define N 8
static double ref[N] = {1.0, -2.0, 0.5, 0.0, 3.0, 1e-3, -7.0, 2.5};
static double abs_sum[N], n_terms[N], pos_err[N], ambig[N];

static tol_inputs inputs(void)
{
    for (int i = 0; i < N; i++) {
        abs_sum[i] = fabs(ref[i]);
        n_terms[i] = 4;
        pos_err[i] = 0;
        ambig[i] = 0;
    }
    return (tol_inputs){DTYPE_FLOAT32, &model, abs_sum, n_terms, pos_err, ambig};
}

static void as_float(float *got) { for (int i = 0; i < N; i++) got[i] = (float)ref[i]; }

Test(compare, correctly_rounded_values_pass)
{
    tol_inputs t = inputs();
    float got[N];
    compare_result r;
    as_float(got);
    compare_f32(ref, got, N, &t, &r);
    cr_assert_eq(r.n_over, 0);
    cr_assert_eq(r.n_ambiguous, 0);
    cr_assert(r.max_ulp <= 0.5 + 1e-12, "rounding to float is at most half an ULP, got %g", r.max_ulp);
    cr_assert(!r.all_zero);
}

Test(compare, one_wrong_element_fails_and_is_located)
{
    tol_inputs t = inputs();
    float got[N];
    compare_result r;
    as_float(got);
    got[4] = nextafterf(got[4], 10.0f);
    for (int k = 0; k < 20; k++) got[4] = nextafterf(got[4], 10.0f); /* 21 ULPs: beyond (6+4) u |ref| */
    compare_f32(ref, got, N, &t, &r);
    cr_assert_eq(r.n_over, 1);
    cr_assert_eq(r.worst_index, 4);
    cr_assert(r.max_err_over_tol > 1.0);
    cr_assert(r.max_ulp >= 20);
}

Test(compare, error_just_inside_the_bound_passes)
{
    tol_inputs t = inputs();
    float got[N];
    compare_result r;
    as_float(got);
    double tol = CONFORM_U_F32 * (6 + 4) * 3.0;
    got[4] = (float)(3.0 + 0.9 * tol); /* float rounding keeps it under the bound here */
    compare_f32(ref, got, N, &t, &r);
    cr_assert_eq(r.n_over, 0, "err %g tol %g", fabs(got[4] - 3.0), tol);
}

Test(compare, ambiguous_element_is_counted_not_failed)
{
    tol_inputs t = inputs();
    float got[N];
    compare_result r;
    as_float(got);
    ambig[2] = 0.5; /* a sample within rounding of y = H: the value may differ by up to 0.5 */
    got[2] = 0.1f;  /* differs by 0.4 */
    compare_f32(ref, got, N, &t, &r);
    cr_assert_eq(r.n_ambiguous, 1);
    cr_assert_eq(r.n_over, 0);
    /* the metrics hide nothing; the ambiguous element is also reported apart */
    cr_assert(fabs(r.max_abs_err - 0.4) < 1e-6, "max_abs_err %g covers the ambiguous element", r.max_abs_err);
    cr_assert(r.max_ulp > 0);
    cr_assert(r.ambiguous_max_err_over_tol > 0.7 && r.ambiguous_max_err_over_tol <= 1.0);
    /* the worst err/tol counts it as the verdict does, against tol + ambig: within 1, as n_over is 0 */
    cr_assert_eq(r.max_err_over_tol, r.ambiguous_max_err_over_tol, "worst err/tol %g", r.max_err_over_tol);
}

/* The numbers agree with the verdict: with every element ambiguous, an all-zero output is named as
   such, and the worst err/tol passes 1 where elements are counted beyond tolerance (a new user's
   roi with integer bin sizes showed "8 of 8 beyond tolerance" beside "worst err/tol 0") */
Test(compare, all_ambiguous_all_zero_output_is_caught_with_agreeing_numbers)
{
    tol_inputs t = inputs();
    float got[N] = {0};
    compare_result r;
    for (int i = 0; i < N; i++) ambig[i] = 1e-3 * fabs(ref[i]) + 1e-9;
    compare_f32(ref, got, N, &t, &r);
    cr_assert_eq(r.n_ambiguous, N);
    cr_assert(r.all_zero, "the all-zero rule did not fire");
    cr_assert_eq(r.n_over, N - 1); /* all but the reference of 0 */
    cr_assert(r.max_err_over_tol > 1, "worst err/tol %g beside %lld over", r.max_err_over_tol, (long long)r.n_over);
}

/* a reference of exactly 0 nothing is summed into: only 0 is legal, a number there is err/tol inf
   (not err over the underflow floor, 1e40 and more) and the worst element */
Test(compare, exact_zero_reference_with_nothing_summed_is_infinitely_wrong)
{
    tol_inputs t = inputs();
    float got[N];
    compare_result r;
    as_float(got);
    got[3] = 1e-3f; /* ref[3] is 0 with abs_sum 0 */
    got[0] = 2.0f;  /* a plain element off by 1: a finite ratio, smaller than inf */
    compare_f32(ref, got, N, &t, &r);
    cr_assert_eq(r.n_over, 2);
    cr_assert(isinf(r.max_err_over_tol), "worst err/tol %g", r.max_err_over_tol);
    cr_assert_eq(r.worst_index, 3);
    cr_assert(r.worst_only_zero);
    abs_sum[3] = 1.0; /* terms that cancelled to 0: a tolerance of their size, a finite ratio */
    compare_f32(ref, got, N, &t, &r);
    cr_assert(isfinite(r.max_err_over_tol) && !r.worst_only_zero);
}

Test(compare, ambiguity_does_not_hide_a_real_mismatch)
{
    tol_inputs t = inputs();
    float got[N];
    compare_result r;
    as_float(got);
    ambig[2] = 0.5;
    got[2] = 5.0f; /* 4.5 away: beyond anything the ambiguous sample can explain */
    compare_f32(ref, got, N, &t, &r);
    cr_assert_eq(r.n_ambiguous, 1);
    cr_assert_eq(r.n_over, 1);
    cr_assert_eq(r.worst_index, 2);
}

Test(compare, all_zero_output_is_caught)
{
    tol_inputs t = inputs();
    float got[N] = {0};
    compare_result r;
    compare_f32(ref, got, N, &t, &r);
    cr_assert(r.all_zero);
    cr_assert(r.n_over > 0);
}

Test(compare, all_zero_reference_and_output_is_not_all_zero_failure)
{
    double z[3] = {0, 0, 0}, a[3] = {0, 0, 0}, n[3] = {0, 0, 0};
    float got[3] = {0, 0, 0};
    tol_inputs t = {DTYPE_FLOAT32, &model, a, n, NULL, NULL};
    compare_result r;
    compare_f32(z, got, 3, &t, &r);
    cr_assert(!r.all_zero);
    cr_assert_eq(r.n_over, 0);
}

Test(compare, nan_against_a_number_fails)
{
    tol_inputs t = inputs();
    float got[N];
    compare_result r;
    as_float(got);
    got[1] = NAN;
    compare_f32(ref, got, N, &t, &r);
    cr_assert_eq(r.n_nonfinite_mismatch, 1);
    cr_assert_eq(r.n_over, 1);
    cr_assert_eq(r.worst_index, 1);
    /* the report's worst err/tol says so too: not the finite elements' ratio, below 1 */
    cr_assert(isinf(r.max_err_over_tol), "err/tol %g", r.max_err_over_tol);
}

Test(compare, nan_against_nan_and_same_infinity_pass)
{
    double f[3] = {NAN, INFINITY, -INFINITY}, a[3] = {0, 0, 0};
    float got[3] = {NAN, INFINITY, -INFINITY};
    tol_inputs t = {DTYPE_FLOAT32, &model, a, NULL, NULL, NULL};
    compare_result r;
    compare_f32(f, got, 3, &t, &r);
    cr_assert_eq(r.n_over, 0);
    got[2] = INFINITY;
    compare_f32(f, got, 3, &t, &r);
    cr_assert_eq(r.n_nonfinite_mismatch, 1);
}

Test(compare, unbounded_ambiguity_holds_a_non_finite_value_and_a_finite_one_does_not)
{
    /* a number against NaN, NaN against a number, an infinity against NaN: each element within
       rounding of reading a non-finite input or not (ambig = inf) may be any of them */
    double f[4] = {0.0, NAN, -INFINITY, 1.0}, a[4] = {0, 0, INFINITY, 1}, am[4] = {INFINITY, INFINITY, INFINITY, 1e30};
    float got[4] = {NAN, 0.0f, NAN, NAN};
    tol_inputs t = {DTYPE_FLOAT32, &model, a, NULL, NULL, am};
    compare_result r;
    compare_f32(f, got, 4, &t, &r);
    cr_assert_eq(r.n_ambiguous, 3);
    cr_assert_eq(r.n_over, 1, "a finite ambiguity, however large, holds no NaN: %lld over", (long long)r.n_over);
    cr_assert_eq(r.worst_index, 3);
    cr_assert_eq(r.n_nonfinite_mismatch, 1);
}

Test(compare, number_against_nan_reference_fails)
{
    double f[2] = {NAN, 1.0}, a[2] = {0, 1};
    float got[2] = {0.0f, 1.0f};
    tol_inputs t = {DTYPE_FLOAT32, &model, a, NULL, NULL, NULL};
    compare_result r;
    compare_f32(f, got, 2, &t, &r);
    cr_assert_eq(r.n_over, 1);
}

Test(compare, nan_bound_allows_nothing)
{
    double f[1] = {1.0}, a[1] = {NAN};
    float got[1] = {1.0000001f};
    tol_inputs t = {DTYPE_FLOAT32, &model, a, NULL, NULL, NULL};
    compare_result r;
    compare_f32(f, got, 1, &t, &r);
    cr_assert_eq(r.n_over, 1);
}

Test(compare, position_error_term_widens_the_bound)
{
    tol_inputs t = inputs();
    float got[N];
    compare_result r;
    as_float(got);
    got[0] = 1.001f;
    compare_f32(ref, got, N, &t, &r);
    cr_assert_eq(r.n_over, 1);
    pos_err[0] = 2e-3;
    compare_f32(ref, got, N, &t, &r);
    cr_assert_eq(r.n_over, 0);
}

Test(compare, ulps_are_float32_ulps_of_the_reference)
{
    cr_assert_float_eq(compare_ulps(1.0, 1.0 + ldexp(1.0, -23)), 1.0, 1e-12);
    cr_assert_float_eq(compare_ulps(1.5, 1.5 - 2 * ldexp(1.0, -23)), 2.0, 1e-12);
    cr_assert_float_eq(compare_ulps(1024.0, 1024.0 + ldexp(1.0, -13)), 1.0, 1e-12);
}

/* max_ulp is measured against the element's scale max(|ref|, abs_sum): a reference of 1e-12 left
   by cancelling terms of size 4 reports a few ULPs of 4, not 1e+7 ULPs of itself */
Test(compare, max_ulp_is_in_ulps_of_the_elements_scale)
{
    double r1[2] = {1e-12, 3.0}, as[2] = {4.0, 3.0}, nt[2] = {2, 2};
    float g1[2] = {(float)(1e-12 + 3 * ldexp(1.0, -22)), 3.0f}; /* 3 ULPs of 4 (ulp(4) = 2^-21: 1.5) */
    tol_inputs t = {DTYPE_FLOAT32, &model, as, nt, NULL, NULL};
    compare_result r;
    compare_f32(r1, g1, 2, &t, &r);
    cr_assert_float_eq(r.max_ulp, 1.5, 1e-3, "ulps of the scale 4: %g", r.max_ulp);
    cr_assert_float_eq(compare_scale(&t, 0, r1[0]), 4.0, 0);
    /* without bounds the scale is |ref| */
    tol_inputs bare = {DTYPE_FLOAT32, &model, NULL, NULL, NULL, NULL};
    cr_assert_float_eq(compare_scale(&bare, 0, -2.5), 2.5, 0);
    /* a zero scale has no ULPs: judged by err/tol alone, max_ulp stays 0 */
    double z[1] = {0}, zs[1] = {0};
    float gz[1] = {1e-30f};
    tol_inputs tz = {DTYPE_FLOAT32, &model, zs, NULL, NULL, NULL};
    compare_f32(z, gz, 1, &tz, &r);
    cr_assert_eq(r.max_ulp, 0.0);
    cr_assert_gt(r.n_over, 0);
}

/* A float16 ULP is never finer than float16's smallest subnormal (2^-24): a reference of 1.7e-9
   that a correct kernel stores as 0 (below half of it) is 0.03 ULPs off, not 2000 float32-scaled
   ones; at 1.0 a float16 ULP is 2^-10 */
Test(compare, float16_ulps_stop_at_the_smallest_subnormal)
{
    double r1[2] = {1.68e-9, 1.0}, as[2] = {1.68e-9, 1.0}, nt[2] = {4, 4}, got[2] = {0, 1.0 + ldexp(1.0, -10)};
    tol_inputs t = {dtype_get(CONFORM_DTYPE_FLOAT16), &model, as, nt, NULL, NULL};
    compare_result r;
    compare_f64(r1, got, 1, &t, &r);
    cr_assert_float_eq(r.max_ulp, 1.68e-9 / ldexp(1.0, -24), 1e-9, "%g", r.max_ulp);
    compare_f64(r1, got, 2, &t, &r);
    cr_assert_float_eq(r.max_ulp, 1.0, 1e-12, "%g", r.max_ulp);
}

/* max_ulp is |got - ref| over the dtype's ULP at the element's scale, 2^(e - 24) scaled by the
   dtype's precision for a scale m 2^e (m in [0.5, 1)), never under twice its subnormal bound:
   restated here with frexp/ldexp, on one element per binade from FLT_MIN up, both dtypes */
Test(compare, max_ulp_is_the_ulp_of_the_scale_in_every_binade)
{
    const dtype_desc *dts[] = {DTYPE_FLOAT32, dtype_get(CONFORM_DTYPE_FLOAT16)};
    for (int d = 0; d < 2; d++)
        for (int e = -126; e <= 127; e += 3) {
            double r1[1] = {ldexp(1.375, e)}, g1[1] = {r1[0] * (1 + 0x1p-20)};
            tol_inputs t = {dts[d], &model, NULL, NULL, NULL, NULL};
            compare_result r;
            compare_f64(r1, g1, 1, &t, &r);
            int ex;
            frexp(r1[0], &ex);
            double ulp = fmax(ldexp(1.0, ex - 24) * (dts[d]->u / CONFORM_U_F32), 2.0 * dts[d]->eta);
            cr_assert_eq(r.max_ulp, (g1[0] - r1[0]) / ulp, "dtype %s, 2^%d: %.17g", dts[d]->name, e, r.max_ulp);
        }
}

/* ---- the vector blocks against the element loop --------------------------------------------- */

static uint64_t xs = 0x9e3779b97f4a7c15ull;
static uint64_t next_u64(void) { xs ^= xs << 13; xs ^= xs >> 7; xs ^= xs << 17; return xs; }
static double uniform(void) { return (double)(next_u64() >> 11) * 0x1p-53; }

/* now and then a value a block must not take as plain, or one at an edge of the arithmetic */
static double odd_value(void)
{
    static const double v[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 0x1p-149, 0x1p-1074, 1e-45, 3e38, 1e300, -1.0};
    return v[next_u64() % (sizeof v / sizeof v[0])];
}

static int same_bits(double x, double y) { return memcmp(&x, &y, sizeof x) == 0 || (isnan(x) && isnan(y)); }

static void assert_same_result(const compare_result *v, const compare_result *s, const char *what)
{
    cr_assert(v->n == s->n && v->n_over == s->n_over && v->n_ambiguous == s->n_ambiguous &&
                  v->n_nonfinite_mismatch == s->n_nonfinite_mismatch && v->worst_index == s->worst_index &&
                  v->all_zero == s->all_zero, "%s: counts or worst index differ (%lld vs %lld)", what,
              (long long)v->worst_index, (long long)s->worst_index);
    const double a[] = {v->max_abs_err, v->max_rel_err, v->max_ulp, v->max_err_over_tol, v->ambiguous_max_err_over_tol,
                        v->worst_ref, v->worst_got, v->worst_tol, v->max_tol};
    const double b[] = {s->max_abs_err, s->max_rel_err, s->max_ulp, s->max_err_over_tol, s->ambiguous_max_err_over_tol,
                        s->worst_ref, s->worst_got, s->worst_tol, s->max_tol};
    for (int k = 0; k < 9; k++) cr_assert(same_bits(a[k], b[k]), "%s: figure %d: %.17g vs %.17g", what, k, a[k], b[k]);
    cr_assert(!memcmp(v->hist_ratio, s->hist_ratio, sizeof v->hist_ratio), "%s: err/tol histogram", what);
    cr_assert(!memcmp(v->hist_ulp, s->hist_ulp, sizeof v->hist_ulp), "%s: ulp histogram", what);
}

/* Every figure of the vector blocks (where this CPU has them) is bit for bit the element loop's:
   random outputs of every dtype, with ties, zeros, non-finite and ambiguous elements, NULL bounds */
Test(compare, vector_blocks_equal_the_element_loop)
{
    enum { M = 4099 };
    static double r1[M], g64[M], bnd[4][M];
    static float g32[M];
    for (int round = 0; round < 200; round++) {
        double odd = round % 3 ? 0.003 : 0.0, zeros = (double)(round % 4) / 4;
        for (int i = 0; i < M; i++) {
            double f = uniform() < zeros ? 0.0 : (uniform() - 0.5) * exp((uniform() - 0.5) * 40);
            r1[i] = uniform() < odd ? odd_value() : f;
            float g = (float)r1[i];
            if (round % 10 != 9 && uniform() < 0.3) g = nextafterf(g, INFINITY); /* 9: every ratio 0, a tie */
            if (round % 10 != 9 && uniform() < 0.01) g *= 1.0f + (float)((uniform() - 0.5) * 1e-3);
            g32[i] = uniform() < odd ? (float)odd_value() : g;
            g64[i] = g32[i];
            bnd[0][i] = fabs(r1[i]) * (1 + uniform());
            bnd[1][i] = (double)(next_u64() % 8);
            bnd[2][i] = uniform() < 0.5 ? 0 : fabs(r1[i]) * 1e-7;
            bnd[3][i] = uniform() < 0.99 ? 0 : fabs(r1[i]) * 1e-3;
            if (uniform() < odd) bnd[next_u64() % 4][i] = odd_value();
        }
        const tol_model m = {(double)(round % 7), "test", 1, "test"};
        tol_inputs t = {dtype_get((conform_dtype)(round % 4)), round % 5 ? &m : NULL, bnd[0], round % 6 ? bnd[1] : NULL,
                        round % 7 ? bnd[2] : NULL, round % 3 ? bnd[3] : NULL};
        int64_t n = round < 100 ? M : (int64_t)(next_u64() % M);
        compare_result v, s;
        char what[64];
        snprintf(what, sizeof what, "round %d, %s, n %lld", round, t.dt->name, (long long)n);
        for (int dbl = 0; dbl < 2; dbl++) {
            dbl ? compare_f64(r1, g64, n, &t, &v) : compare_f32(r1, g32, n, &t, &v);
            dbl ? compare_f64_loop(r1, g64, n, &t, &s) : compare_f32_loop(r1, g32, n, &t, &s);
            assert_same_result(&v, &s, what);
        }
    }
}

/* ---- the tolerance formula: one definition, its vector form and its words held to it -------- */

/* an operand of the formula: random magnitudes of every binade, or an edge of the arithmetic
   (zeros, denormals, huge, NaN, infinities, negatives) */
static double formula_operand(void)
{
    static const double edge[] = {0.0, -0.0, 0x1p-1074, 0x1p-1022, 0x1p-149, 0x1p-150, 1e-300, 1e300, 0x1.fffffffffffffp1023,
                                  INFINITY, -INFINITY, NAN, -1.0, 1.0, 4.0, 0x1p24};
    if (next_u64() % 4 == 0) return edge[next_u64() % (sizeof edge / sizeof edge[0])];
    return (uniform() < 0.1 ? -1 : 1) * ldexp(uniform(), (int)(next_u64() % 2200) - 1100);
}

/* The comparator's AVX2 lanes compute the tolerance and the scale bit for bit as the one scalar
   definition does, for every dtype and k_val, at random and edge operands */
Test(compare, vector_tolerance_is_the_scalar_formula_element_for_element)
{
    enum { M = 1027 };
    static double nt[M], as[M], pe[M], rf[M], tol[M], scale[M];
    const double k_vals[] = {0, 4, 6, 14, 28, NAN, INFINITY};
    int ran = 0;
    for (int round = 0; round < 4 * 7 * 3; round++) {
        const dtype_desc *dt = dtype_get((conform_dtype)(round % 4));
        double k_val = k_vals[(round / 4) % 7];
        for (int i = 0; i < M; i++) {
            nt[i] = next_u64() % 3 ? (double)(next_u64() % 64) : formula_operand();
            as[i] = formula_operand();
            pe[i] = next_u64() % 2 ? 0.0 : formula_operand();
            rf[i] = formula_operand();
        }
        if (!compare_bounds_avx2(dt, k_val, M - round % 4, nt, as, pe, rf, tol, scale)) continue;
        ran = 1;
        for (int i = 0; i < M - round % 4; i++) {
            double t = compare_element_tol(dt, k_val, nt[i], as[i], pe[i]);
            double s = compare_element_scale(dt, k_val, nt[i], as[i], pe[i], rf[i]);
            cr_assert(same_bits(tol[i], t), "%s k_val %g element %d (nt %a as %a pe %a): tol %a vs %a", dt->name, k_val, i,
                      nt[i], as[i], pe[i], tol[i], t);
            cr_assert(same_bits(scale[i], s), "%s k_val %g element %d (ref %a): scale %a vs %a", dt->name, k_val, i,
                      rf[i], scale[i], s);
            cr_assert(!isnan(t), "a NaN tolerance must allow nothing (0)");
        }
    }
    if (!ran) cr_log_info("no AVX2 on this machine or build: the element loop is the only path");
}

/* The definition is the formula its words say: u, eta, k_val + n_terms, abs_sum, pos_err */
Test(compare, the_formula_is_u_kk_abs_sum_plus_pos_err_plus_eta_kk)
{
    const dtype_desc *f16 = dtype_get(CONFORM_DTYPE_FLOAT16);
    cr_assert_eq(compare_element_tol(f16, 6, 2, 3, 0.5), 0x1p-11 * 8 * 3 + 0.5 + 0x1p-25 * 8);
    cr_assert_eq(compare_element_tol(DTYPE_FLOAT32, 0, 0, 0, 0), 0.0);
    cr_assert_eq(compare_element_tol(DTYPE_FLOAT32, 28, 4, 0, 0), 32 * 0x1p-150, "eta alone, of float32");
    cr_assert_eq(compare_element_tol(DTYPE_FLOAT32, 6, NAN, 1, 0), 0.0, "a NaN bound allows nothing");
}

/* The words every report prints and docs/tolerances.md say are the code's: the doc quotes them
   verbatim, and the formula names the terms the definition adds */
Test(compare, docs_quote_the_tolerance_formula_verbatim)
{
    char *doc = test_slurp("docs/tolerances.md");
    cr_assert(doc, "docs/tolerances.md not readable (run from the repository root)");
    cr_assert(strstr(doc, "`" CONFORM_TOL_FORMULA "`"), "docs/tolerances.md must quote `%s`", CONFORM_TOL_FORMULA);
    cr_assert(strstr(doc, "`" CONFORM_POS_REL_ERR "`"), "docs/tolerances.md must quote `%s`", CONFORM_POS_REL_ERR);
    cr_assert(strstr(doc, CONFORM_TOL_AMBIG), "docs/tolerances.md must say '%s'", CONFORM_TOL_AMBIG);
    free(doc);
    /* and no page of docs/ states the formula any other way */
    const char *pages[] = {"docs/tolerances.md", "docs/reports.md", "docs/architecture.md", "docs/ops/roi_align.md",
                           "docs/ops/roi_align_rotated.md", "docs/ops/deformable_offsets.md", "docs/ops/grid_sampler_2d.md",
                           "docs/ops/grid_sampler_2d_backward.md", "docs/ops/roi_align_v2_backward.md",
                           "docs/ops/roi_align_rotated_grad.md", "docs/ops/deformable_offsets_grad.md", "README.md"};
    for (size_t p = 0; p < sizeof pages / sizeof pages[0]; p++) {
        char *text = test_slurp(pages[p]);
        for (const char *at = strstr(text, "tol = u"); at; at = strstr(at + 1, "tol = u"))
            cr_assert(!strncmp(at, CONFORM_TOL_FORMULA, strlen(CONFORM_TOL_FORMULA)), "%s states the formula as '%.60s', not as '%s'",
                      pages[p], at, CONFORM_TOL_FORMULA);
        free(text);
    }
    const char *terms[] = {"u*", "k_val", "n_terms", "abs_sum", "pos_err", "eta*"};
    for (int i = 0; i < 6; i++) cr_assert(strstr(CONFORM_TOL_FORMULA, terms[i]), "the formula's words lack %s", terms[i]);
}
