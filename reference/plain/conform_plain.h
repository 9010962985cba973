/* The plain golden: each op of docs/spec/ops.md as its straight loops in double, one function per
 * op and direction, with the same signature, outputs and bounds as its fast golden in
 * conform_ref.h (f64_<op>_<dir>__ref). No SIMD, tiles, threads, sorting or callbacks: a reader holds
 * the file beside ops.md. The fast golden must equal it bit for bit, values and the four bound
 * arrays (make check-golden); the bounds' long arithmetic is one helper both call (roi_bounds.h,
 * grid_bounds.h, deformable_bounds.h). */
#ifndef CONFORM_PLAIN_H
#define CONFORM_PLAIN_H

#include "conform_ref.h"

/* ops.md 1 and 2 (reference/plain/roi_family.c) */
void f64_roi_align_fwd__plain(const ref_roi_align_params *p, const double *input, const double *rois,
                              double *output, ref_bounds *bounds);
void f64_roi_align_bwd__plain(const ref_roi_align_params *p, const double *grad_output, const double *rois,
                              double *grad_input, ref_bounds *bounds);
/* ops.md 3 and 4, both data formats (reference/plain/roi_family.c) */
void f64_roi_align_rotated_fwd__plain(const ref_roi_align_rotated_params *p, const double *x, const double *rois,
                                      double *y, ref_bounds *bounds);
void f64_roi_align_rotated_bwd__plain(const ref_roi_align_rotated_params *p, const double *x_grad,
                                      const double *rois, double *y_grad, ref_bounds *bounds);
/* ops.md 5 and 6 (reference/plain/deformable_offsets.c) */
void f64_deformable_offsets_fwd__plain(const ref_deformable_params *p, const double *x, const double *offsets,
                                       double *y, ref_bounds *bounds);
void f64_deformable_offsets_bwd__plain(const ref_deformable_params *p, const double *grad, const double *x,
                                       const double *offsets, double *grad_x, double *grad_offsets,
                                       ref_bounds *bounds_x, ref_bounds *bounds_off);
/* ops.md 7 and 8 (reference/plain/grid_sampler.c) */
void f64_grid_sampler_2d_fwd__plain(const ref_grid_sampler_params *p, const double *input, const double *grid,
                                    double *output, ref_bounds *bounds);
void f64_grid_sampler_2d_bwd__plain(const ref_grid_sampler_params *p, const double *grad_output,
                                    const double *input, const double *grid, double *input_grad,
                                    double *grid_grad, ref_bounds *bounds);

#endif
