/* Helpers shared by the reference kernels (not part of the public API). */
#ifndef CONFORM_REF_INTERNAL_H
#define CONFORM_REF_INTERNAL_H

#include "conform_ref.h"

/* Where a sample of rule A sits relative to its discontinuities, given the position errors
 * dy, dx of the implementation under test. */
typedef enum {
    SAMPLE_EMPTY,     /* outside the window beyond any rounding, or not finite */
    SAMPLE_INSIDE,    /* inside, and stays inside under rounding */
    SAMPLE_AMBIGUOUS  /* within rounding of y = -1, y = H, x = -1 or x = W */
} sample_class;

sample_class ref_classify_sample(int64_t H, int64_t W, double y, double x, double dy, double dx);

/* Rule A evaluated at (y, x) moved onto the window when it lies just outside it: the value an
 * implementation would see if rounding put the sample inside. */
void ref_bilinear_rule_clamped(int64_t H, int64_t W, double y, double x, ref_bilinear *b);

/* Largest |difference| between neighbouring pixels along y (*sy) and along x (*sx) in the 4x4
 * neighbourhood of the sample: bounds the slope of rule A near it, also across cell edges. */
void ref_local_slopes(const double *plane, int64_t H, int64_t W, const ref_bilinear *b,
                      double *sy, double *sx);

/* Bound on the change of a rule-A value when the sample moves by (dy, dx). */
static inline double ref_value_pos_err(double sy, double sx, double dy, double dx)
{
    double s = sy > sx ? sy : sx;
    return sy * dy + sx * dx + 2.0 * s * dy * dx;
}

/* Rounding can move a sample across an edge of its cell: its float twin then scatters into a pixel
 * the double sample does not reach, with a weight no larger than the position error allows. For a
 * sample with corners (ys[i], xs[j]), weights wy[i]*wx[j] and position errors (dy, dx), calls
 * add(ctx, row, col, bound) for every pixel across an edge within reach (rows and columns may be
 * outside the plane: the callee skips those); bound is the most weight that pixel can receive. */
typedef void (*ref_pixel_fn)(void *ctx, int64_t row, int64_t col, double bound);
void ref_neighbour_weights(const int64_t ys[2], const int64_t xs[2], const double wy[2], const double wx[2],
                           double dy, double dx, ref_pixel_fn add, void *ctx);

/* ref_neighbour_weights for rule A on one H x W plane of pos_err: each pixel within reach gets
 * scale times its bound (a non-finite scale widens nothing: its own corners are NaN already). */
void ref_plane_neighbour_pos_err(double *pos_err, int64_t H, int64_t W, double scale, const ref_bilinear *r,
                                 double dy, double dx);

/* Bound on the change of corner weight wy*wx when the sample moves by (dy, dx). */
static inline double ref_weight_pos_err(double wy, double wx, double dy, double dx)
{
    return (wx + dx) * dy + (wy + dy) * dx;
}

#endif
