/* Helpers of the deformable offsets bounds (deformable_bounds.h). */
#include "deformable_bounds.h"

#include <math.h>

/* floor of a finite position, clamped far outside the plane (every corner is out there, so the
 * clamp changes no value) so it fits an int64 */
static int64_t floor_index(double v, int64_t n, double *frac)
{
    double f = floor(v);
    *frac = v - f;
    if (f < -3.0) return -3;
    if (f > (double)n + 2.0) return n + 2;
    return (int64_t)f;
}

cell deform_cell_at(const ref_deformable_params *p, double py, double px)
{
    cell s;
    s.h0 = floor_index(py, p->H, &s.lh);
    s.w0 = floor_index(px, p->W, &s.lw);
    s.hh = 1.0 - s.lh;
    s.hw = 1.0 - s.lw;
    return s;
}

/* Rounding error of a position v = base + offset in float32, whose integer base (exact) includes
 * -pad. In the spec's order (torchvision, mmcv, the Ascend kernels) base + offset is one rounding
 * at |v|. nnabla adds the offset before subtracting the pad: one rounding at |v + pad|, then
 * x - pad with x = fl(v + pad), exact when x >= pad (a multiple of ulp(x) no larger than x: every
 * v >= 0), else one more at |v| unless v + pad and v are both float32 numbers. The larger of the
 * two forms; 0 when both are exact. */
double deform_pos_error(double v, int64_t pad, double pos_rel_err)
{
    double spec = ref_is_f32(v) ? 0.0 : pos_rel_err * fabs(v);
    if (pad == 0) return spec;
    double vp = v + (double)pad;
    double first = ref_is_f32(vp) ? 0.0 : pos_rel_err * fabs(vp);
    double second = v < 0 && !(ref_is_f32(vp) && ref_is_f32(v)) ? pos_rel_err * fabs(v) : 0.0;
    return fmax(spec, first + second);
}

branches deform_axis_branches(double v, double d, int64_t n, int64_t h0, double l)
{
    branches b;
    double r = nearbyint(v);
    /* One-sided at the window lines: every float32 form of the position (base + offset rounded
       once, or the pad added and subtracted, or any chain of correctly rounded steps) is monotone
       in the exact position, so a position below -1 rounds to at most -1 and one above n to at
       least n: outside under the spec's strict test either way, only the spec's 0 is legal. */
    const int beyond = (r == -1.0 && v < -1.0) || (r == (double)n && v > (double)n);
    if (d > 0 && fabs(v - r) <= d && r >= -1.0 && r <= (double)n && !beyond) {
        int64_t k = (int64_t)r;
        b.count = 2;
        b.h0[0] = k - 1; b.l[0] = 1.0; b.in[0] = k >= 0 && k <= n;     /* just below the line */
        b.h0[1] = k;     b.l[1] = 0.0; b.in[1] = k >= -1 && k <= n - 1; /* just above it */
    } else {
        b.count = 1;
        b.h0[0] = h0; b.l[0] = l; b.in[0] = v > -1.0 && v < (double)n;
    }
    return b;
}

/* The corner-weight form (the DCNv2 CPU kernels' col2im, mmcv's modulated_deform_conv_cpu.cpp and
 * its GPU twin): the grad_x weight factor of a cell's high row is (p + 1) - h, of its low row
 * (h + 1) - p. fl(p + 1) rounds at |p + 1|, after the position's own rounding: the high factor
 * moves by up to u * |p + 1| more, as if its position moved that far (the low factor's rounding is
 * relative to it, in k_val). The cell and the visited corners follow fl(p) alone, so only the
 * high factors widen, not the reach. pre is one float32 rounding (k_pos = 1); the position itself
 * may be off by d, so |fl(p) + 1| <= |p + 1| + d; none when fl(p) = p exactly and p + 1 is a float32
 * number. Without it a correct kernel of that form failed grad_x at err/tol up to 2.6
 * (tools/deform_corner_weight.py, the default suite) and 54 over 11 seeds. */
double deform_corner_form_err(double v, double d, double pre)
{
    return d == 0 && ref_is_f32(v + 1.0) ? 0.0 : pre * (fabs(v + 1.0) + d);
}

/* The most a grad_x weight factor of row (or column) k can be, for a cell of rows ks with factors
 * w, position error d and the corner-weight form's extra e on a high row: a row across an edge
 * holds at most d (plus e above the cell, the float twin's high row). */
double deform_factor_bound(int64_t k, const int64_t ks[2], const double w[2], double d, double e)
{
    if (k == ks[0]) return w[0] + d;
    if (k == ks[1]) return w[1] + d + e;
    return k > ks[1] ? d + e : d;
}

/* The rows [*a, *b] a position v with box d (and the corner-weight form's extra e above) can scatter
 * into, clipped to the plane; whether they pass the cell's rows and their one-row ring (h0 - 1 ..
 * h0 + 2): a box wider than a cell */
int deform_reach_rows(double v, double d, double e, int64_t h0, int64_t n, int64_t *a, int64_t *b)
{
    const double first = floor(v - d), last = floor(v + d + e) + 1;
    ref_clip_taps(first, last, n, a, b);
    return first < (double)h0 - 1 || last > (double)h0 + 2;
}

/* the pixels a sample's float twin may reach across a cell edge, with the most weight each may get */
typedef struct {
    int64_t H, W;
    const int64_t *hs, *ws;
    const double *wy, *wx;
    double dy, dx, ey, ex;
    int n;
    int64_t *pix;
    double *w;
} neighbour_ctx;

static void add_neighbour(void *ctx, int64_t row, int64_t col, double bound)
{
    neighbour_ctx *nc = ctx;
    if (row < 0 || row >= nc->H || col < 0 || col >= nc->W) return;
    /* the shared bound with the corner-weight form's high factors: the same product of factors */
    (void)bound;
    double b = deform_factor_bound(row, nc->hs, nc->wy, nc->dy, nc->ey) * deform_factor_bound(col, nc->ws, nc->wx, nc->dx, nc->ex);
    nc->pix[nc->n] = row * nc->W + col;
    nc->w[nc->n++] = fmin(b, 1.0); /* a weight is at most 1 */
}

int deform_neighbours(int64_t H, int64_t W, const int64_t hs[2], const int64_t ws[2], const double wy[2],
                      const double wx[2], double dy, double dx, double ey, double ex, int64_t pix[16], double w[16])
{
    neighbour_ctx nc = {H, W, hs, ws, wy, wx, dy, dx, ey, ex, 0, pix, w};
    ref_neighbour_weights(hs, ws, wy, wx, dy, dx, add_neighbour, &nc);
    return nc.n;
}

int deform_box_on_line(double py, double dy, double px, double dx)
{
    return (dy > 0 && fabs(py - nearbyint(py)) <= dy) || (dx > 0 && fabs(px - nearbyint(px)) <= dx);
}

/* Every float32 form of a position is monotone in the exact one (deform_axis_branches): a
 * position at or beyond -1 (n) rounds to at or beyond it, outside the strict window either way */
int deform_bwd_on_line(const ref_deformable_params *p, double py, double dy, double px, double dx)
{
    const int inside = py > -1 && py < (double)p->H && px > -1 && px < (double)p->W;
    return inside && deform_box_on_line(py, dy, px, dx);
}

/* A non-finite tap the box reaches may be read or not, at weight 0 or not: NaN, an infinity or a
 * number. An infinite mask times a value that may be 0 in one evaluation and not in another (some
 * tap it reaches is not 0, and the weights may vanish) gives NaN or an infinity. A NaN mask gives
 * NaN whatever the value: no ambiguity. */
double deform_value_ambig(int on_line, double m, double spread)
{
    if (!on_line) return 0.0;
    return spread == INFINITY || (isinf(m) && spread > 0) ? INFINITY : 0.0;
}

/* A term G m w with G m infinite (or NaN) is an infinity where w > 0 and NaN where w = 0, and a pixel
 * is a corner of the sample or not, as rounding may decide on a line: any value. */
void deform_grad_x_unbounded(double *ambig_n, int64_t W, int64_t C, int64_t r0, int64_t r1, int64_t k0, int64_t k1,
                             const double *G, double m, int64_t c0, int64_t c1)
{
    for (int64_t c = c0; c < c1; c++) {
        if (isfinite(G[c] * m)) continue;
        for (int64_t r = r0; r <= r1; r++)
            for (int64_t k = k0; k <= k1; k++) ambig_n[(r * W + k) * C + c] = INFINITY;
    }
}
