/* The comparator: one output of the implementation under test against the double reference,
 * element by element, each against its own derived tolerance. */
#ifndef CONFORM_COMPARE_H
#define CONFORM_COMPARE_H

#include <stdint.h>

#include "dtype.h"
#include "op.h"

#define COMPARE_HIST_BINS 10

/* What the "max ulp" columns of every report mean */
#define COMPARE_ULP_MEANING "max ulp = |got - ref| in ULPs of the element's scale, the larger of |ref| and "\
                            "the magnitude its tolerance is built on (sum of |term|, plus the position error in "\
                            "the same units); ULPs of the dtype under test, no finer than its smallest subnormal"

/* The tolerance formula in words, as compare_element_tol computes it: every report prints it and
 * docs/tolerances.md quotes it verbatim (tests/test_compare.c checks both). u and eta are the
 * dtype's unit roundoff and underflow bound (dtype.h); pos_err and ambig are sized by the reference
 * with CONFORM_POS_REL_ERR. */
#define CONFORM_TOL_FORMULA "tol = u*(k_val + n_terms)*abs_sum + pos_err + eta*(k_val + n_terms)"
#define CONFORM_TOL_AMBIG "an ambiguous element is held to tol + ambig"
/* the two in one line, as report.json holds them */
#define CONFORM_TOL_RULE CONFORM_TOL_FORMULA "; " CONFORM_TOL_AMBIG
/* the relative position error the reference sizes pos_err and ambig with (judge.c): float32's u at
 * every dtype, since sample coordinates stay float32 */
#define CONFORM_POS_REL_ERR "pos_rel_err = k_pos*2^-24"

/* unit roundoff of float32 (round to nearest) */
#define CONFORM_U_F32 (1.0 / 16777216.0)

typedef struct {
    const dtype_desc *dt; /* the precision under test: its unit roundoff u and subnormal bound eta */
    const tol_model *model;
    const double *abs_sum, *n_terms, *pos_err, *ambig; /* reference bounds; NULL counts as 0 */
} tol_inputs;

typedef struct {
    int64_t n;             /* elements compared */
    int64_t n_over;        /* beyond their tolerance (ambiguous ones beyond the widened one) */
    int64_t n_ambiguous;   /* within rounding of a discontinuity of the rule */
    int64_t n_nonfinite_mismatch; /* NaN/Inf on one side only, or different infinities */
    /* over every finite element, ambiguous ones included (max_err_over_tol: an ambiguous one against
       tol + ambig, the same elements and bounds n_over counts, so it passes 1 exactly when n_over
       counts some; infinite when any element is a NaN/Inf mismatch or an exact-0 reference nothing
       reaches is not 0); max_ulp is |got - ref| in ULPs
       (of the precision under test) of the element's scale (compare_scale), over elements whose
       scale is a normal float32 number: */
    double max_abs_err, max_rel_err, max_ulp, max_err_over_tol;
    /* over the ambiguous elements, against their widened tolerance; over the others (what the
       worst err/tol is when no element is ambiguous: how near the plain elements come to their bound): */
    double ambiguous_max_err_over_tol, plain_max_err_over_tol;
    int64_t worst_index;   /* the element with the largest err/tol (or the first non-finite mismatch) */
    double worst_ref, worst_got, worst_tol;
    int worst_only_zero;   /* the worst is a reference of exactly 0 nothing is summed into (only 0 is legal):
                              its err/tol is infinite, printed "ref exactly 0, got X" */
    double max_tol;        /* the largest tolerance applied (non-ambiguous) */
    int all_zero;          /* every got is 0 while some reference element is clearly not */
    /* histograms over every finite element, err/tol of an ambiguous one against tol + ambig (bin edges: compare_hist_edges) */
    int64_t hist_ratio[COMPARE_HIST_BINS]; /* err / tol */
    int64_t hist_ulp[COMPARE_HIST_BINS];   /* ULPs of the element's scale (normal ones) */
} compare_result;

/* Bin b holds values v with edge[b-1] < v <= edge[b]; bin 0 is exactly 0, the last is beyond. */
extern const double compare_ratio_edges[COMPARE_HIST_BINS - 1];
extern const double compare_ulp_edges[COMPARE_HIST_BINS - 1];
int compare_bin(const double *edges, double v);

/* The tolerance formula, the one definition (CONFORM_TOL_FORMULA): a NaN result allows nothing (0). */
double compare_element_tol(const dtype_desc *dt, double k_val, double n_terms, double abs_sum, double pos_err);
/* The scale an element's ULPs are measured in (see compare_scale); |ref| where that is not finite. */
double compare_element_scale(const dtype_desc *dt, double k_val, double n_terms, double abs_sum, double pos_err,
                             double ref);
/* The comparator's AVX2 lanes' tol and scale of n elements (the arrays all of n), for the test that
 * holds them bit for bit to the two above; 0 (nothing written) without AVX2 in this build or CPU. */
int compare_bounds_avx2(const dtype_desc *dt, double k_val, int64_t n, const double *nt, const double *as,
                        const double *pe, const double *ref, double *tol, double *scale);
/* Tolerance of element i (compare_element_tol of its bounds); *ambig receives the widening (0 when
 * the element is not ambiguous). */
double compare_tolerance(const tol_inputs *t, int64_t i, double *ambig);
/* Distance in float32 ULPs of the reference value. */
double compare_ulps(double ref, double got);
/* The scale an element's ULPs are measured in: max(|ref|, abs_sum + pos_err / (u (k_val + n_terms))),
 * the magnitude its tolerance is built on (tol = u (k_val + n_terms) times that), so an element
 * within its tolerance is within about k_val + n_terms ULPs of it; |ref| alone without bounds, and
 * where the maximum is not finite. */
double compare_scale(const tol_inputs *t, int64_t i, double ref);
/* Blocks of elements in the CPU's vector unit where the judge uses AVX2 (judge_avx2.h), with
 * results bit for bit those of the element loop. */
void compare_f32(const double *ref, const float *got, int64_t n, const tol_inputs *t, compare_result *r);
/* the same for outputs held in double (any dtype, decoded) */
void compare_f64(const double *ref, const double *got, int64_t n, const tol_inputs *t, compare_result *r);
/* the two by the element loop alone (a test holds the vector blocks to it) */
void compare_f32_loop(const double *ref, const float *got, int64_t n, const tol_inputs *t, compare_result *r);
void compare_f64_loop(const double *ref, const double *got, int64_t n, const tol_inputs *t, compare_result *r);

#endif
