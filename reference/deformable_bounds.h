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

/* Unbounded ambiguity: where rounding may move a sample's box across an integer line (its cell, its
 * window test at -1 and n, or a corner weight's vanishing may change) and a non-finite input meets
 * it, one evaluation gives a number and another NaN or an infinity (0 x inf; a NaN pixel read at
 * weight 0, or not read). deform_box_on_line: whether the box touches such a line on either axis;
 * an exact position (d = 0) keeps its cell and weights in every form and never does. */
int deform_box_on_line(double py, double dy, double px, double dx);
/* the backward's: only a sample inside the window (-1, H) x (-1, W) can be on a line, since one
 * on or beyond a window line is outside in every float32 form of its position */
int deform_bwd_on_line(const ref_deformable_params *p, double py, double dy, double px, double dx);
/* the ambiguity of a forward value m * bilinear at a sample whose box is on a line (on_line), with
 * spread the range of the zero-padded taps it reaches (infinite where one is not finite) */
double deform_value_ambig(int on_line, double m, double spread);
/* grad_x's: every pixel of image n's rows [r0, r1] x columns [k0, k1] (the box's reach) gets unbounded
 * ambiguity (ambig_n: image n's grad_x ambig) in each channel of [c0, c1) whose G m is not finite */
void deform_grad_x_unbounded(double *ambig_n, int64_t W, int64_t C, int64_t r0, int64_t r1, int64_t k0, int64_t k1,
                             const double *G, double m, int64_t c0, int64_t c1);

#endif
