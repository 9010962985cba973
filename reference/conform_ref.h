/* conform reference kernels: double-precision golden implementations.
 *
 * The fast golden: each kernel computes docs/spec/ops.md in double, libc/libm only, organised for
 * speed where the models suite needs it (tiles, lanes, threads). The spec's straight loops are the
 * plain golden, reference/plain/conform_plain.h, one function per kernel here with the same
 * signature; `make check-golden` holds every kernel here to it, values and bounds bit for bit.
 * Callers validate shapes and attributes first (the harness does); the kernels
 * assume valid parameters. Backward kernels zero their outputs themselves.
 *
 * Each kernel can also report, per output element, the magnitudes a float32 (or other
 * precision) implementation's error depends on; see ref_bounds. */
#ifndef CONFORM_REF_H
#define CONFORM_REF_H

#include <stddef.h>
#include <stdint.h>

#define CONFORM_REF_VERSION 1

/* Threads the kernels below use (default 1). Every kernel gives bitwise the same numbers, bounds
 * included, for every count: forward kernels split independent outputs, backward kernels split
 * the scatter so that each element still sums its terms in the single-threaded order. The threads
 * are started and joined within each call (none outlives it: a process may fork afterwards). */
void ref_set_threads(int n);
int ref_get_threads(void);

/* Per-element inputs of the tolerance model, filled alongside one output tensor.
 * pos_rel_err is an input: the relative error assumed for a sample position computed in the
 * precision under test (for float32 a few units of 2^-24). Every array pointer may be NULL. */
typedef struct {
    double pos_rel_err;
    double *abs_sum; /* sum of |term| over the terms summed into the element */
    double *n_terms; /* how many terms were summed into the element */
    double *pos_err; /* bound on the element's change when each sample position moves by
                        pos_rel_err times its magnitude (first order plus the cross term) */
    double *ambig;   /* 0, or the largest change a sample within pos error of a discontinuity
                        (or a sample count within rounding of an integer) can make */
} ref_bounds;

/* The shared RoIAlign bilinear rule (spec section A), kept separable: corner (i, j) is the
 * pixel (y[i], x[j]) with weight wy[i] * wx[j]. Returns 1 when the point samples, 0 when it is
 * outside [-1, H] x [-1, W] or not finite (then b is untouched). */
typedef struct {
    int64_t y[2], x[2];
    double wy[2], wx[2];
} ref_bilinear;
int ref_bilinear_rule(int64_t H, int64_t W, double y, double x, ref_bilinear *b);

/* roi_align (spec 1) and roi_align_v2_backward (spec 2). The Ascend attribute roi_end_mode is
 * two switches here: 0 = {aligned 0}, 1 = {aligned 0, end_plus_one 1}, 2 and 3 = {aligned 1}
 * (docs/ops/roi_align.md gives the kernel evidence, mode 3 included). */
typedef struct {
    int64_t B, C, H, W; /* feature map [B, C, H, W] */
    int64_t K;          /* rois [K, 5] */
    int64_t pooled_h, pooled_w;
    double spatial_scale;
    int64_t sampling_ratio;
    int aligned;
    int end_plus_one;   /* the roi ends one image pixel further out: (x2 + 1, y2 + 1) before scaling
                           (Ascend roi_end_mode 1; with aligned 0) */
} ref_roi_align_params;

/* output [K, C, pooled_h, pooled_w] */
void f64_roi_align_fwd__ref(const ref_roi_align_params *p, const double *input, const double *rois,
                            double *output, ref_bounds *bounds);
/* grad_input [B, C, H, W] from grad_output [K, C, pooled_h, pooled_w] */
void f64_roi_align_bwd__ref(const ref_roi_align_params *p, const double *grad_output,
                            const double *rois, double *grad_input, ref_bounds *bounds);

/* roi_align_rotated (spec 3) and roi_align_rotated_grad (spec 4). */
typedef struct {
    int64_t B, C, H, W; /* feature map, [B, C, H, W] (NCHW) or [B, H, W, C] (NHWC) */
    int64_t K;          /* rois [K, 6] (NCHW) or [6, K] (NHWC): (batch, cx, cy, w, h, angle) */
    int64_t pooled_h, pooled_w;
    double spatial_scale;
    int64_t sampling_ratio;
    int aligned, clockwise;
    int nhwc;           /* data_format "NHWC": features, per-roi tensors channels-last, rois field-major */
} ref_roi_align_rotated_params;

/* y [K, C, pooled_h, pooled_w] (NCHW) or [K, pooled_h, pooled_w, C] (NHWC) */
void f64_roi_align_rotated_fwd__ref(const ref_roi_align_rotated_params *p, const double *x, const double *rois,
                                    double *y, ref_bounds *bounds);
/* y_grad (feature-map shape) from x_grad (the forward output's shape) */
void f64_roi_align_rotated_bwd__ref(const ref_roi_align_rotated_params *p, const double *x_grad,
                                    const double *rois, double *y_grad, ref_bounds *bounds);

/* deformable_offsets (spec 5) and deformable_offsets_grad (spec 6). Tensors are NHWC:
 * x [N, H, W, C], offsets [N, Ho, Wo, 3*dg*kh*kw] (x offsets, y offsets, masks; each group-major,
 * kernel row-major), y / grad [N, Ho*kh, Wo*kw, C]. Strides and dilations are the two entries
 * data_format selects; pads are [top, bottom, left, right].
 * Bounds: a sample position is base + offset with an exact integer base, one float32 rounding in
 * the spec's order; a position whose exact value is float32-representable is taken as exact,
 * others as off by pos_rel_err * |position|. */
typedef struct {
    int64_t N, H, W, C;
    int64_t kh, kw, sh, sw, dh, dw;
    int64_t pt, pb, pl, pr;
    int64_t dg;
    int64_t Ho, Wo; /* from the truncating division of spec 5 (the caller computes them) */
} ref_deformable_params;

/* y [N, Ho*kh, Wo*kw, C] */
void f64_deformable_offsets_fwd__ref(const ref_deformable_params *p, const double *x, const double *offsets,
                                     double *y, ref_bounds *bounds);
/* grad_x [N, H, W, C] and grad_offsets [N, Ho, Wo, 3*dg*kh*kw] from grad [N, Ho*kh, Wo*kw, C];
 * bounds_x / bounds_off may each be NULL */
void f64_deformable_offsets_bwd__ref(const ref_deformable_params *p, const double *grad, const double *x,
                                     const double *offsets, double *grad_x, double *grad_offsets,
                                     ref_bounds *bounds_x, ref_bounds *bounds_off);

/* grid_sampler_2d (spec 7) and grid_sampler_2d_backward (spec 8 = section 7's backward). */
typedef struct {
    int64_t N, C, H, W;     /* input [N, C, H, W] */
    int64_t Ho, Wo;         /* grid [N, Ho, Wo, 2], output / grad_output [N, C, Ho, Wo] */
    int interpolation_mode; /* 0 bilinear, 1 nearest, 2 bicubic */
    int padding_mode;       /* 0 zeros, 1 border, 2 reflection */
    int align_corners;
    int output_mask[2];     /* backward: compute input_grad, compute grid_grad */
} ref_grid_sampler_params;

/* output [N, C, Ho, Wo] */
void f64_grid_sampler_2d_fwd__ref(const ref_grid_sampler_params *p, const double *input, const double *grid,
                                  double *output, ref_bounds *bounds);
/* the half-width of the float32 rounding box of grid value g's coordinate on an axis of S pixels,
 * for unit roundoff u (the bounds' pos_rel_err): the position error a float32 kernel can make */
double ref_grid_sampler_box(const ref_grid_sampler_params *p, double g, int64_t S, double u);
/* input_grad [N, C, H, W] and grid_grad [N, Ho, Wo, 2] from grad_output [N, C, Ho, Wo]; an output
 * whose output_mask flag is 0 is left all zeros. bounds: NULL or two (input_grad, grid_grad). */
void f64_grid_sampler_2d_bwd__ref(const ref_grid_sampler_params *p, const double *grad_output,
                                  const double *input, const double *grid, double *input_grad,
                                  double *grid_grad, ref_bounds *bounds);

#endif
