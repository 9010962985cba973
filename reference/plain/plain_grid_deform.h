/* The plain goldens of the grid sampler and deformable offsets families: the spec's straight loops
 * (docs/spec/ops.md 5 to 7), called as the fast goldens of conform_ref.h are, with the same numbers
 * bit for bit, values and bounds (make check-golden holds them to it). */
#ifndef CONFORM_PLAIN_GRID_DEFORM_H
#define CONFORM_PLAIN_GRID_DEFORM_H

#include "../conform_ref.h"

void f64_grid_sampler_2d_fwd__plain(const ref_grid_sampler_params *p, const double *input, const double *grid,
                                    double *output, ref_bounds *bounds);
void f64_grid_sampler_2d_bwd__plain(const ref_grid_sampler_params *p, const double *grad_output,
                                    const double *input, const double *grid, double *input_grad,
                                    double *grid_grad, ref_bounds *bounds);
void f64_deformable_offsets_fwd__plain(const ref_deformable_params *p, const double *x, const double *offsets,
                                       double *y, ref_bounds *bounds);
void f64_deformable_offsets_bwd__plain(const ref_deformable_params *p, const double *grad, const double *x,
                                       const double *offsets, double *grad_x, double *grad_offsets,
                                       ref_bounds *bounds_x, ref_bounds *bounds_off);

#endif
