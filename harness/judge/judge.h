/* The one judging path, shared by run, check, the fuzz target and the tests: an op's reference
 * with its bounds for a problem at a dtype, then an output judged against them. */
#ifndef CONFORM_JUDGE_H
#define CONFORM_JUDGE_H

#include "compare.h"
#include "standards.h"

#define HEAT 32

/* What the judging of one output found. */
typedef struct {
    char name[64];
    shape_t shape;
    int skipped;
    int not_run;          /* the implementation gave no output (crashed, timeout, missing, error): nothing compared */
    const dtype_desc *dt; /* the dtype its tolerance was derived for */
    compare_result cmp;
    int guard_ok;
    int64_t n_unwritten, unwritten_index; /* elements still holding the poison (dtype_poison), the first */
    int64_t guard_offset; /* element offset of the first guard write (negative: before the buffer) */
    /* where the errors sit, for failing outputs: the tensor seen as [rows, cols] (leading dims x
       last two dims), folded into at most HEAT x HEAT cells holding the largest err/tol */
    int heat_rows, heat_cols;
    float *heat;
    /* elements within their tolerance but outside the range every legal evaluation can reach
       (the op's range entry, plus a real kernel's rounding of it); the first of them */
    int has_range;
    int64_t n_out_of_range, range_index;
    double range_ref, range_got, range_lo, range_hi;
    int has_expect;
    double expect_max_abs_err;
    int expect_ok;
    /* the named precision standards, judged beside the derived bound (standards_run.c) */
    int has_standards;
    int bench_is_self; /* commercial-ratio's benchmark is the implementation under test itself */
    std_result standards[N_STANDARDS];
} output_result;

/* The reference outputs of a problem and their bounds (abs_sum, n_terms, pos_err, ambig), with
 * the dtype their tolerances are for. */
typedef struct {
    const op_desc *op;
    const dtype_desc *dt;
    int64_t n[CONFORM_MAX_TENSORS];
    double *ref[CONFORM_MAX_TENSORS];
    double *bound[CONFORM_MAX_TENSORS][4];
    ref_bounds bounds[CONFORM_MAX_TENSORS];
    /* the reachable range of each output (lo, hi, mag; NULL: none), conform_range.h */
    double *range[CONFORM_MAX_TENSORS][3];
} judge_ref;

/* Allocates the reference and its bounds for p's outputs; -1 when memory runs out (nothing kept). */
int judge_ref_alloc(const problem_t *p, const dtype_desc *dt, judge_ref *j);
/* The op's reference and bounds into j (allocated by judge_ref_alloc). Sample positions are float32
 * numbers whatever the dtype (an accelerator computes coordinates in float32 for 16-bit data), so
 * the position error handed to the reference is k_pos float32 roundings. */
void judge_ref_compute(const problem_t *p, judge_ref *j);
/* alloc then compute */
int judge_reference(const problem_t *p, const dtype_desc *dt, judge_ref *j);
void judge_ref_free(judge_ref *j);
/* the tolerance inputs of output o */
tol_inputs judge_tol(const judge_ref *j, int o);

/* [*lo, *hi]: what element i of output o may be, its reachable range (conform_range.h) widened by a
 * real kernel's rounding, u (k_val + n_terms) mag (+ eta per rounding); 0 when output o has none.
 * An element within tol + ambig of the reference but outside it fails. */
int judge_range_interval(const judge_ref *j, int o, int64_t i, double *lo, double *hi);

/* An output's result before it is judged: its name, shape, whether it was computed, its dtype. */
void judge_output_init(const problem_t *p, const judge_ref *j, int o, output_result *out);
/* Output o's values (decoded to double) against the reference: the metrics, a heat map when
 * elements are over, and why it fails in msg ("" and 0 when it passes; 1 when it fails: all zeros,
 * a NaN/Inf on one side only, or elements beyond their tolerance). */
int judge_output(const judge_ref *j, int o, const double *got, output_result *out, char *msg, size_t len);
/* the same for float32 values as the implementation wrote them (no decoded copy) */
int judge_output_f32(const judge_ref *j, int o, const float *got, output_result *out, char *msg, size_t len);
/* the same for n values against a reference and tolerance inputs of the caller's (out's name and
   shape set) */
int judge_values(const tol_inputs *t, const double *ref, const double *got, int64_t n, output_result *out, char *msg,
                 size_t len);
int judge_values_f32(const tol_inputs *t, const double *ref, const float *got, int64_t n, output_result *out, char *msg,
                     size_t len);

#endif
