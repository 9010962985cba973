/* conform reachable ranges: per output element, the interval [lo, hi] every legal evaluation of the
 * spec can reach in exact arithmetic, over the element's position box (the float32 rounding of its
 * sample positions, the boxes the bounds of conform_ref.h are built on) and its ambiguity, beside
 * the tolerance. Forward outputs only: every one is a fixed combination of sampled values whose
 * weights a position cannot make leave a known set (convex bilinear and nearest weights, bicubic's
 * bounded overshoot, a bin's mean, a mask times a sample). A backward output sums gradient terms
 * whose weights have no such hull worth a bound (see docs/tolerances.md).
 *
 * mag bounds the sum of |terms| of every legal evaluation, so that a caller adds the rounding of a
 * real kernel: u (k_val + n_terms) mag. An element with nothing derived gets lo = -inf, hi = +inf,
 * mag = 0 (a NaN tap, a non-finite position or count that the spec settles otherwise, a roi whose
 * sample count rounding may change). libc/libm only, like the kernels. */
#ifndef CONFORM_RANGE_H
#define CONFORM_RANGE_H

#include "conform_ref.h"

typedef struct {
    double pos_rel_err; /* as in ref_bounds: the relative error of a float32 sample position */
    double *lo, *hi, *mag; /* one per output element, none may be NULL */
} ref_range;

/* The cubic convolution's sum of |weights| per axis at A = -0.75: at most 11/8 (its maximum, at
 * t = 1/2: 2 (19/32) + 2 (3/32)); a 2-D sample's weights sum to 1 with sum |w| <= (11/8)^2 */
#define REF_CUBIC_ABS_SUM 1.375

void f64_grid_sampler_2d_fwd__range(const ref_grid_sampler_params *p, const double *input, const double *grid,
                                    ref_range *r);
void f64_roi_align_fwd__range(const ref_roi_align_params *p, const double *input, const double *rois, ref_range *r);
void f64_roi_align_rotated_fwd__range(const ref_roi_align_rotated_params *p, const double *x, const double *rois,
                                      ref_range *r);
void f64_deformable_offsets_fwd__range(const ref_deformable_params *p, const double *x, const double *offsets,
                                       ref_range *r);

#endif
