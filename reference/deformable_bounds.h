/* Helpers of the deformable offsets bounds, shared by the fast golden (deformable_offsets.c) and
 * the plain one (plain/deformable_offsets.c), so the two cannot drift on them: a sample's cell, its
 * position error, the branches rounding may select, the corner-weight form's widening and the
 * pixels a float twin may reach across a cell edge. Internal to reference/. */
#ifndef CONFORM_DEFORMABLE_BOUNDS_H
#define CONFORM_DEFORMABLE_BOUNDS_H

#include "ref_internal.h"

/* One sample: corner cell and weights of a position, as the spec writes them. */
typedef struct {
    int64_t h0, w0;
    double lh, lw, hh, hw;
} cell;

/* the cell of position (py, px), its floor clamped far outside the plane (so it fits an int64) */
cell deform_cell_at(const ref_deformable_params *p, double py, double px);

/* the float32 rounding error of a position v = base + offset whose integer base includes -pad */
double deform_pos_error(double v, int64_t pad, double pos_rel_err);

/* The branches a position within rounding d of a discontinuity can take: floor on either side
 * of an integer line in [-1, n] (with its window test), or just the nominal one. */
typedef struct {
    int count;
    int64_t h0[2];
    double l[2];
    int in[2];
} branches;
branches deform_axis_branches(double v, double d, int64_t n, int64_t h0, double l);

/* the corner-weight form's extra position error on a high row's (column's) factor */
double deform_corner_form_err(double v, double d, double pre);
/* the most a grad_x weight factor of row (column) k can be */
double deform_factor_bound(int64_t k, const int64_t ks[2], const double w[2], double d, double e);
/* the rows a position can scatter into (clipped), and whether they pass the cell's one-row ring */
int deform_reach_rows(double v, double d, double e, int64_t h0, int64_t n, int64_t *a, int64_t *b);

/* The pixels (h W + w) a sample's float twin may reach across an edge of the cell of rows hs,
 * columns ws (weights wy, wx, position errors dy, dx, the corner-weight form's extras ey, ex),
 * each with the most weight it may get, in the order ref_neighbour_weights finds them; returns
 * how many (in-plane only). */
int deform_neighbours(int64_t H, int64_t W, const int64_t hs[2], const int64_t ws[2], const double wy[2],
                      const double wx[2], double dy, double dx, double ey, double ex, int64_t pix[16], double w[16]);

#endif
