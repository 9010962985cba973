/* Helpers shared by the reference kernels (not part of the public API). */
#ifndef CONFORM_REF_INTERNAL_H
#define CONFORM_REF_INTERNAL_H

#include "conform_ref.h"

#include <math.h>

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
 * neighbourhood of the sample: bounds the slope of rule A near it, also across cell edges.
 * Pixel (r, c) at plane[(r W + c) cs]. */
void ref_local_slopes(const double *plane, int64_t H, int64_t W, int64_t cs, const ref_bilinear *b,
                      double *sy, double *sx);

/* The 4x4 slope bound: the largest |difference| of vertical (*sy) and horizontal (*sx) neighbours
 * of a sample's window, cell (a, b) of it at v[4 a + b] (rows and columns clamped onto the plane:
 * a repeated one adds differences of 0), each a run of `lanes` values (one channel a lane); a NaN
 * difference is passed over. Bounds the slope of rule A near the sample, also across cell edges. One
 * definition for every op and both goldens. */
static inline void ref_window_slopes(const double *const v[16], int lanes, double *sy, double *sx)
{
    for (int l = 0; l < lanes; l++) sy[l] = sx[l] = 0;
    for (int k = 0; k < 12; k++)
        for (int l = 0; l < lanes; l++) {
            double d = fabs(v[k + 4][l] - v[k][l]);
            sy[l] = d > sy[l] ? d : sy[l];
            d = fabs(v[k / 3 * 4 + k % 3 + 1][l] - v[k / 3 * 4 + k % 3][l]);
            sx[l] = d > sx[l] ? d : sx[l];
        }
}

/* ref_window_slopes of one lane on a 4x4 window held as an array, t[a][b] at row a, column b */
static inline void ref_window_slopes_4x4(const double t[4][4], double *sy, double *sx)
{
    const double *v[16];
    for (int k = 0; k < 16; k++) v[k] = &t[k / 4][k % 4];
    ref_window_slopes(v, 1, sy, sx);
}

/* v is a float32 number: a float32 evaluation that yields it exactly has no rounding error */
static inline int ref_is_f32(double v) { return (double)(float)v == v; }

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

/* Bound on the change of corner weight wy*wx when the sample moves by (dy, dx): first order, and
 * never more than 1, as a bilinear weight lies in [0, 1] wherever the sample moves (the first-order
 * form grows without bound with the box, e.g. at coordinates near 2^24 where dy passes a pixel). */
static inline double ref_weight_pos_err(double wy, double wx, double dy, double dx)
{
    return fmin((wx + dx) * dy + (wy + dy) * dx, 1.0);
}

/* The values a bilinear sample can take while its position moves within [y - dy, y + dy] x
 * [x - dx, x + dx]: [*lo, *hi], the range of every tap it can reach (rows floor(y - dy) ..
 * floor(y + dy) + 1, columns likewise), since its weights are convex. Taps outside the plane are
 * clamped onto it (clamp = 1, rule A clamps the position) or are 0 (clamp = 0, zero padding: 0 joins
 * the range). Element (r, c) of the plane is plane[(r W + c) cs]. A box that is not finite reaches
 * every tap. Bounds every position term of a bilinear sample (the first-order terms grow without
 * bound with the box; the value cannot leave its taps' range). */
void ref_tap_range(const double *plane, int64_t H, int64_t W, int64_t cs, double y, double x, double dy, double dx,
                   int clamp, double *lo, double *hi);
/* ref_tap_range in two steps, for a box used on many planes (channels): the rectangle of taps it
 * reaches (zero: 0 joins the range), then the range of one plane's taps in it */
typedef struct {
    int64_t r0, r1, c0, c1;
    int zero;
} ref_tap_rect;
void ref_tap_rect_of(int64_t H, int64_t W, double y, double x, double dy, double dx, int clamp, ref_tap_rect *t);
void ref_tap_rect_range(const double *plane, int64_t W, int64_t cs, const ref_tap_rect *t, double *lo, double *hi);

/* The taps [first, last] of an axis (integers, or infinite) clipped to an axis of n pixels: [*a, *b],
 * empty (a > b) when they lie wholly beyond one side, and kept within [-1, n] so the casts stay
 * defined for positions of any size. A NaN end reaches the plane's own end on that side. */
void ref_clip_taps(double first, double last, int64_t n, int64_t *a, int64_t *b);

/* hi - lo of ref_tap_range: the most a bilinear sample's position can change its value */
double ref_tap_spread(const double *plane, int64_t H, int64_t W, int64_t cs, double y, double x, double dy,
                      double dx, int clamp);

/* ---- the RoIAlign family (roi_align, roi_align_rotated): bins of rule-A samples ------------- */

/* Whether every float32 form of an axis of sample positions start + p bin + (i + 0.5) bin / g computes
 * each position exactly, where start = c1 s - off and the extent is (c2 + plus) s - off - start (or
 * c2 s, its clamp 1): see bilinear.c. roi_align passes its corners, roi_align_rotated at angle 0 its
 * centre and size. */
int ref_axis_exact(double c1, double c2, double s, double plus, double off, double mag, int64_t pooled, int64_t g);

/* ceil(q) of an adaptive sample count, 0 when q is not finite (nothing can be sampled) */
int64_t ref_adaptive_count(double q);
/* the divisor of a bin: gh gw, at least 1 */
double ref_sample_count(int64_t gh, int64_t gw);

/* The adaptive sample counts rounding can reach: gh in [gh_lo, gh_hi], gw in [gw_lo, gw_hi]. */
typedef struct {
    int64_t gh_lo, gh_hi, gw_lo, gw_hi;
} ref_count_range;
static inline int ref_counts_ambiguous(const ref_count_range *c)
{
    return c->gh_lo != c->gh_hi || c->gw_lo != c->gw_hi;
}
/* Absurd rois (an extent whose rounding spans more than a few sample counts, or an alternative
 * count of more than 2^20 samples a bin, which the main count's work budget did not see) are not
 * evaluated count by count: their elements are ambiguous without bound. */
static inline int ref_counts_enumerable(const ref_count_range *c)
{
    return c->gh_hi - c->gh_lo <= 2 && c->gw_hi - c->gw_lo <= 2 && (double)c->gh_hi * (double)c->gw_hi <= (double)(1 << 20);
}

/* A roi of the family as the shared loops see it: the first member of each op's roi geometry. */
typedef struct {
    int64_t b;          /* -1: skipped (batch index not finite or outside [0, B)) */
    int64_t gh, gw;     /* samples per bin per axis as the spec computes them */
    ref_count_range cr; /* adaptive sample counts reachable by rounding */
} ref_roi_head;

/* emit(ctx, y, x, dy, dx): one sample at (y, x) with the position errors (dy, dx) of a float32 twin */
typedef void (*ref_sample_fn)(void *ctx, double y, double x, double dy, double dx);

/* An op of the family: features [B, C, H, W], rois [K, roi_len], pooled [K, C, PH, PW].
 * geometry(op, roi, pos_rel_err, g) writes one roi's geometry (geo_size bytes, beginning with its
 * ref_roi_head); bin(op, g, ph, pw, gh, gw, pos_rel_err, emit, ctx) emits the samples of bin (ph, pw)
 * of roi g with gh x gw of them, in the spec's order (none when a count is not positive). */
typedef struct {
    const void *op;
    int64_t B, C, H, W, K, PH, PW, roi_len;
    void (*geometry)(const void *op, const double *roi, double pos_rel_err, void *g);
    size_t geo_size;
    void (*bin)(const void *op, const ref_roi_head *g, int64_t ph, int64_t pw, int64_t gh, int64_t gw,
                double pos_rel_err, ref_sample_fn emit, void *ctx);
    int nhwc; /* channels-last: features and grad [B, H, W, C], pooled [K, PH, PW, C] */
} ref_roi_op;

/* output [K, C, PH, PW] (nhwc: [K, PH, PW, C]): each element the mean of rule A over its bin's samples, and its bounds
 * (NULL: none); when rounding may pick other sample counts the ambiguity covers each of them */
void ref_roi_forward(const ref_roi_op *op, const double *input, const double *rois, double *output,
                     ref_bounds *bounds);
/* grad [B, C, H, W] and its bounds (NULL: none) from grad_output [K, C, PH, PW]: every sample
 * scatters go w / count into its corners, in the order of rois, bins and samples */
void ref_roi_backward(const ref_roi_op *op, const double *grad_output, const double *rois, double *grad,
                      ref_bounds *bounds);

/* body(ctx, i) for every i in [0, n), on ref_get_threads() threads (parallel.c). Items must be
 * independent: each writes only its own elements, so the numbers are the same for every count. */
typedef void (*ref_item_fn)(void *ctx, int64_t i);
void ref_parallel_for(int64_t n, ref_item_fn body, void *ctx);

/* The threads split a backward's scatter into blocks of channels of one image, each running every
 * sample in order: about two blocks a thread over the N images. The block size decides which
 * thread adds a term, never the order of a pixel's terms: the numbers are the same for every
 * thread count. */
int64_t ref_channel_block(int64_t N, int64_t C);

/* ---- hooks of the reachable ranges (range.c, conform_range.h) ------------------------------- */

/* the taps grid point g's float32 rounding box reaches (the rectangle its value_reach uses), and
 * whether the box passes the int32 range of an unpadded coordinate (bicubic may then sample 0) */
void ref_grid_sampler_reach(const ref_grid_sampler_params *p, const double *g, double pos_rel_err, ref_tap_rect *t,
                            int *past_int32);
/* the family descriptions of roi_align and roi_align_rotated (nhwc set from p) */
ref_roi_op ref_roi_align_family(const ref_roi_align_params *p);
ref_roi_op ref_roi_align_rotated_family(const ref_roi_align_rotated_params *p);
/* deformable sample (g, i, j) of output pixel (ho, wo) of the image whose offsets start at off_n:
 * its position, mask and position errors, as the forward computes them */
typedef struct {
    double py, px, m, dy, dx;
} ref_deformable_sample;
void ref_deformable_sample_at(const ref_deformable_params *p, const double *off_n, int64_t ho, int64_t wo, int64_t g,
                              int64_t i, int64_t j, double pos_rel_err, ref_deformable_sample *s);

#endif
