/* The RoIAlign family's bounds, one named helper per bound, called by both goldens: the fast one
 * (roi_family.c, roi_align.c, roi_align_rotated.c) and the plain one (plain/roi_family.c), so the
 * two cannot drift on them (make check-golden holds the rest of them equal, bit for bit). */
#ifndef CONFORM_ROI_BOUNDS_H
#define CONFORM_ROI_BOUNDS_H

#include "ref_internal.h"

/* ---- the bounds' inputs of a roi ------------------------------------------------------------ */

/* What every sample of one axis of a roi shares for its position error: the magnitude behind the
 * position, and whether every float32 form computes each position exactly (then no error). */
typedef struct {
    double mag_y, mag_x;
    int exact_y, exact_x;
} ref_roi_axes;

/* roi_align (spec 1): from the roi (batch, x1, y1, x2, y2), its extents rh, rw (after the unaligned
 * max(r, 1)) and the spec's counts gh, gw: the axes, and the adaptive counts rounding can reach */
void ref_roi_align_axes(const ref_roi_align_params *p, const double *roi, double rh, double rw, int64_t gh, int64_t gw,
                        double pos_rel_err, ref_roi_axes *a, ref_count_range *cr);
/* roi_align_rotated (spec 3): from the roi (batch, cx, cy, w, h, angle), its extents Hr, Wr (after
 * the clamp) and the spec's counts gh, gw */
void ref_roi_rotated_axes(const ref_roi_align_rotated_params *p, const double *roi, double Hr, double Wr, int64_t gh,
                          int64_t gw, double pos_rel_err, ref_roi_axes *a, ref_count_range *cr);

/* the position error of a sample at v on an axis (mag, exact) taken with g samples where the spec
 * takes g0: none when every float32 form computes it exactly, else pos_rel_err (mag + |v|) */
static inline double ref_sample_pos_err(int exact, int64_t g, int64_t g0, double pos_rel_err, double mag, double v)
{
    return exact && g == g0 ? 0.0 : pos_rel_err * (mag + fabs(v));
}

/* ---- forward: a sample's terms and bounds ----------------------------------------------------- */

/* A forward sample of rule A: its corners and weights (clamped onto the window when it lies just
 * outside and is ambiguous), the taps its position box reaches, its position errors; far: the box
 * reaches beyond the 4x4 window its slopes are taken on (ref_roi_fwd_acc); read: the taps some
 * position of the box reads, at weight 0 included (the reach and, at the clamp onto 0, tap 1); core:
 * those every position reads alike, switched: some read tap is not one of them (the box meets a
 * cell line or a clamp line: rounding reads it at weight 0, at a small weight or not at all) */
typedef struct {
    ref_bilinear r;
    ref_tap_rect reach, read, core;
    double dy, dx;
    int inside, ambiguous, far, switched;
} ref_fwd_tap;

/* A forward bin's sums over its samples: value, |terms|, terms, position error, ambiguity. */
typedef struct {
    double sum, abs_sum, n_terms, pos_err, ambig;
} ref_bin_acc;

/* The sample at (y, x) with position errors (dy, dx); 0 when it is empty beyond any rounding. */
int ref_roi_fwd_tap_of(int64_t H, int64_t W, double y, double x, double dy, double dx, ref_fwd_tap *s);

/* Adds to a what sample s adds with value v (|terms| av), window slopes sy, sx and its taps' range
 * [lo, hi]: inside it counts in full; within rounding of the window's edge it widens the ambiguity.
 * far: the position box leaves the slopes' window, whose slopes then bound nothing (the range does) */
void ref_roi_fwd_acc(int inside, int ambiguous, int far, double dy, double dx, double v, double av, double sy,
                     double sx, double lo, double hi, ref_bin_acc *a);
/* The position term of a forward sample (ref_roi_fwd_acc): its first-order slope term, capped at the
 * range of the taps it reaches (NaN: no cap); only the range when the box leaves the window */
static inline double ref_roi_fwd_pos_term(int far, double sy, double sx, double dy, double dx, double lo, double hi)
{
    const double q = isnan(hi - lo) ? INFINITY : hi - lo;
    if (far) return q;
    const double p = ref_value_pos_err(sy, sx, dy, dx);
    return p < q ? p : q; /* fmin(p, q), q never NaN */
}
/* Whether a tap of read outside core (ref_fwd_tap) is not finite: rounding then decides between
 * NaN (read at weight 0), an infinity (at a small weight) and a number (not read) */
int ref_roi_fwd_switched_nonfinite(const double *plane, int64_t W, int64_t cs, const ref_tap_rect *read,
                                   const ref_tap_rect *core);
/* ref_roi_fwd_acc of sample s on one plane (pixel (r, c) at plane[(r W + c) cs]), its value v and
 * |terms| av: the slopes of its window and the range of its reach taken from the plane */
void ref_roi_fwd_sample_add(const double *plane, int64_t H, int64_t W, int64_t cs, const ref_fwd_tap *s, double v,
                            double av, ref_bin_acc *a);
/* An element of value `value` whose bin rounding may take with other counts: the bin o with that
 * count (alt_count its divisor) widens the element's ambig, abs_sum and n_terms */
void ref_roi_fwd_widen(const ref_bin_acc *o, double alt_count, double value, double *ambig, double *abs_sum,
                       double *n_terms);

/* ---- backward: one sample's scatter bounds ---------------------------------------------------- */

enum { REF_BWD_MAX_NB = 12 }; /* ref_neighbour_weights: 2 rows x 2 + 2 columns x 2 + 2 x 2 */

/* A backward sample: its corners (i, j) = 2 i + j (pixels r W + c), their weights and weights'
 * position bounds, and its bounds' distinct pixels (slots): corners that coincide (rule A clamps
 * both corners of an axis onto its last pixel) and pixels across an edge add up before the cap. */
typedef struct {
    int64_t e[4];
    double wy[2], wx[2], wpe[4];
    double count;
    size_t nb, n_nb; /* the fast golden's: its neighbours in its list, nbs[nb .. nb + n_nb) */
    uint32_t te[4];  /* the fast golden's: its corners in its group's tile */
    unsigned char slot[4], n_slots;
    unsigned char nominal; /* inside, at the spec's sample count: its terms are the gradient's */
    unsigned char widen;   /* ambiguous, or another count's: only widens the ambiguity */
    unsigned char far;     /* its position box reaches pixels beyond its slots: reach says which */
    unsigned char switched; /* read holds pixels outside core (as ref_fwd_tap's) */
    int64_t reach[4];      /* far: rows reach[0] .. reach[1], columns reach[2] .. reach[3] */
    ref_tap_rect read, core;
} ref_bwd_tap;

/* a pixel across a cell edge the float twin may reach: the most weight it can get there */
typedef struct {
    int64_t e;
    double bound;
    int slot;
    uint32_t te; /* the fast golden's: in its group's tile */
} ref_bwd_neighbour;

/* The sample at (y, x) with position errors (dy, dx) of a bin of count samples (as_alternative: a
 * count rounding may pick instead of the spec's) into s, its neighbours into nb (s->n_nb of them);
 * 0 when it is empty beyond any rounding. */
int ref_roi_bwd_tap_of(int64_t H, int64_t W, double y, double x, double dy, double dx, double count,
                       int as_alternative, ref_bwd_tap *s, ref_bwd_neighbour nb[REF_BWD_MAX_NB]);

/* A backward's planes of one (b, c): gradient and bounds, each may be NULL; pixel e of each at e ps,
 * pixel (r, c) at e = r W + c. */
typedef struct {
    double *grad, *abs_sum, *n_terms, *pos_err, *ambig;
    int64_t ps, W;
} ref_plane_out;

/* The bounds of sample s (neighbours nb) scattering grad_output go into plane o: abs_sum and
 * n_terms of every term it adds (or a rounding branch adds), and per pixel its position term and
 * its ambiguity, capped together at |go| / count (the gradient's own terms are the caller's). */
void ref_roi_bwd_bounds(const ref_plane_out *o, const ref_bwd_tap *s, const ref_bwd_neighbour *nb, double go);

#endif
