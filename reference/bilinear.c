/* Rule A of the spec (RoIAlign's bilinear sampling) and the bins built of it, shared by roi_align
 * and roi_align_rotated. */
#include "roi_bounds.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int ref_bilinear_rule(int64_t H, int64_t W, double y, double x, ref_bilinear *b)
{
    if (!(y >= -1.0 && y <= (double)H && x >= -1.0 && x <= (double)W)) return 0;
    if (H <= 0 || W <= 0) return 0;
    if (y <= 0) y = 0;
    if (x <= 0) x = 0;
    int64_t y0 = (int64_t)y, x0 = (int64_t)x, y1, x1;
    if (y0 >= H - 1) { y0 = y1 = H - 1; y = (double)y0; } else y1 = y0 + 1;
    if (x0 >= W - 1) { x0 = x1 = W - 1; x = (double)x0; } else x1 = x0 + 1;
    double ly = y - (double)y0, lx = x - (double)x0;
    b->y[0] = y0; b->y[1] = y1; b->wy[0] = 1.0 - ly; b->wy[1] = ly;
    b->x[0] = x0; b->x[1] = x1; b->wx[0] = 1.0 - lx; b->wx[1] = lx;
    return 1;
}

static double clamp(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

void ref_bilinear_rule_clamped(int64_t H, int64_t W, double y, double x, ref_bilinear *b)
{
    ref_bilinear_rule(H, W, clamp(y, -1.0, (double)H), clamp(x, -1.0, (double)W), b);
}

static sample_class axis_class(double v, double n, double d)
{
    if (v >= -1.0 + d && v <= n - d) return SAMPLE_INSIDE;
    if (v < -1.0 - d || v > n + d) return SAMPLE_EMPTY;
    return SAMPLE_AMBIGUOUS;
}

sample_class ref_classify_sample(int64_t H, int64_t W, double y, double x, double dy, double dx)
{
    if (!isfinite(y) || !isfinite(x) || H <= 0 || W <= 0) return SAMPLE_EMPTY;
    sample_class cy = axis_class(y, (double)H, dy), cx = axis_class(x, (double)W, dx);
    if (cy == SAMPLE_EMPTY || cx == SAMPLE_EMPTY) return SAMPLE_EMPTY;
    if (cy == SAMPLE_INSIDE && cx == SAMPLE_INSIDE) return SAMPLE_INSIDE;
    return SAMPLE_AMBIGUOUS;
}

static int64_t clamp64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

/* the shared 4x4 slope bound (roi_bounds.h) on the sample's window clamped onto the plane */
void ref_local_slopes(const double *plane, int64_t H, int64_t W, int64_t cs, const ref_bilinear *b,
                      double *sy, double *sx)
{
    const double *v[16];
    for (int a = 0; a < 4; a++)
        for (int c = 0; c < 4; c++)
            v[4 * a + c] = plane + (clamp64(b->y[0] - 1 + a, 0, H - 1) * W + clamp64(b->x[0] - 1 + c, 0, W - 1)) * cs;
    ref_window_slopes(v, 1, sy, sx);
}

void ref_neighbour_weights(const int64_t ys[2], const int64_t xs[2], const double wy[2], const double wx[2],
                           double dy, double dx, ref_pixel_fn add, void *ctx)
{
    /* the row below the cell when the sample sits within dy of its lower edge (wy[1] = ly small),
       the row above when within dy of its upper edge (wy[0] small); columns likewise */
    int64_t rows[2], cols[2];
    int nr = 0, nc = 0;
    if (wy[1] <= dy) rows[nr++] = ys[0] - 1;
    if (wy[0] <= dy) rows[nr++] = ys[1] + 1;
    if (wx[1] <= dx) cols[nc++] = xs[0] - 1;
    if (wx[0] <= dx) cols[nc++] = xs[1] + 1;
    for (int a = 0; a < nr; a++)
        for (int j = 0; j < 2; j++) add(ctx, rows[a], xs[j], (wx[j] + dx) * dy);
    for (int b = 0; b < nc; b++)
        for (int i = 0; i < 2; i++) add(ctx, ys[i], cols[b], (wy[i] + dy) * dx);
    for (int a = 0; a < nr; a++)
        for (int b = 0; b < nc; b++) add(ctx, rows[a], cols[b], dy * dx);
}

/* ---- the range a bilinear sample can reach --------------------------------------------------- */

void ref_clip_taps(double first, double last, int64_t n, int64_t *a, int64_t *b)
{
    *a = (int64_t)(first > 0 ? (first < (double)n ? first : (double)n) : 0);
    *b = (int64_t)(last < (double)(n - 1) ? (last > -1 ? last : -1) : (double)(n - 1));
}

/* the taps [*a, *b] of an axis of n pixels a position in [v - d, v + d] reaches; *out: some tap
   lies outside the plane (clamped onto it when clamp) */
static void axis_reach(double v, double d, int64_t n, int clamped, int64_t *a, int64_t *b, int *out)
{
    double lo = floor(v - d), hi = floor(v + d) + 1;
    if (!isfinite(lo) || !isfinite(hi)) { lo = -1; hi = (double)n; } /* any tap */
    *out = lo < 0 || hi > (double)(n - 1);
    if (clamped) {
        *a = (int64_t)clamp(lo, 0, (double)(n - 1));
        *b = (int64_t)clamp(hi, 0, (double)(n - 1));
    } else {
        ref_clip_taps(lo, hi, n, a, b);
    }
}

void ref_tap_rect_of(int64_t H, int64_t W, double y, double x, double dy, double dx, int clamped, ref_tap_rect *t)
{
    int oy, ox;
    axis_reach(y, dy, H, clamped, &t->r0, &t->r1, &oy);
    axis_reach(x, dx, W, clamped, &t->c0, &t->c1, &ox);
    t->zero = !clamped && (oy || ox); /* a tap beyond the zero-padded plane */
}

void ref_tap_rect_range(const double *plane, int64_t W, int64_t cs, const ref_tap_rect *t, double *lo, double *hi)
{
    double mn = INFINITY, mx = -INFINITY;
    if (t->zero) mn = mx = 0;
    for (int64_t r = t->r0; r <= t->r1; r++)
        for (int64_t c = t->c0; c <= t->c1; c++) {
            double v = plane[(r * W + c) * cs];
            if (v < mn) mn = v;
            if (v > mx) mx = v;
            if (isnan(v)) mn = mx = NAN; /* nothing bounds a NaN tap: no cap */
        }
    if (mn > mx) mn = mx = 0; /* no tap at all */
    *lo = mn;
    *hi = mx;
}

void ref_tap_range(const double *plane, int64_t H, int64_t W, int64_t cs, double y, double x, double dy, double dx,
                   int clamped, double *lo, double *hi)
{
    ref_tap_rect t;
    ref_tap_rect_of(H, W, y, x, dy, dx, clamped, &t);
    ref_tap_rect_range(plane, W, cs, &t, lo, hi);
}

double ref_tap_spread(const double *plane, int64_t H, int64_t W, int64_t cs, double y, double x, double dy,
                      double dx, int clamped)
{
    double lo, hi;
    ref_tap_range(plane, H, W, cs, y, x, dy, dx, clamped, &lo, &hi);
    double s = hi - lo;
    return isnan(s) ? INFINITY : s;
}

/* ---- exact sample positions ----------------------------------------------------------------- */

/* the lowest set bit of v (a float32 value or a product of two, exact in double); inf for 0 */
static double lowest_bit(double v)
{
    if (v == 0) return INFINITY;
    int e;
    frexp(v, &e);
    double unit = ldexp(1.0, e - 53);
    while (fmod(v, 2 * unit) == 0) unit *= 2;
    return unit;
}

static int is_pow2(int64_t n) { return n > 0 && (n & (n - 1)) == 0; }

/* Whether every float32 form of spec 1 computes each sample position of an axis exactly: the
 * corners c1 s - off, (c2 + plus) s - off (or c2 s + plus s - off), the extent (or 1), the bin
 * extent / pooled (or extent * (1/pooled)), start + p bin + (i + 0.5) bin / g (any order, FMA or
 * not, bin / g or bin * (1/g)). With pooled and g powers of two (their reciprocals exact) every
 * intermediate is an integer multiple of unit = (the lowest bit of c1 s, c2 s, s, off, 1) / (2
 * pooled g), at most 2 mag + 2 in magnitude (and c2 + 1 a multiple of its own lowest bit): within
 * 2^24 units each is a float32 number, no rounding changes anything. */
int ref_axis_exact(double c1, double c2, double s, double plus, double off, double mag, int64_t pooled, int64_t g)
{
    if (!isfinite(c1) || !isfinite(c2) || !isfinite(s) || !is_pow2(pooled) || !is_pow2(g)) return 0;
    double u0 = fmin(fmin(lowest_bit(c1) * lowest_bit(s), lowest_bit(c2) * lowest_bit(s)), 1.0);
    if (plus != 0) {
        u0 = fmin(u0, lowest_bit(s));
        if ((fabs(c2) + 1) / fmin(lowest_bit(c2), 1.0) > 16777216.0) return 0; /* c2 + 1 itself */
    }
    if (off != 0) u0 = fmin(u0, off);
    double unit = u0 / (2.0 * (double)pooled * (double)g);
    return (2 * mag + 2) / unit <= 16777216.0; /* 2^24 */
}

int64_t ref_channel_block(int64_t N, int64_t C)
{
    const int64_t want = 2 * (int64_t)ref_get_threads(), per_n = N > 0 ? (want + N - 1) / N : 1;
    const int64_t cb = (C + per_n - 1) / per_n;
    return cb > 0 ? cb : 1;
}
