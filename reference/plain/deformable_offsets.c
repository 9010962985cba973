/* deformable_offsets (ops.md 5) and deformable_offsets_grad (ops.md 6) as the spec's straight loops:
 * the plain golden, a channel at a time. The fast golden (reference/deformable_offsets.c) is the
 * same computation with channels taken eight at a time, a sample's 4x4 window found once, and
 * threads over output rows and blocks of channels; make check-golden holds the two bitwise equal,
 * values and bounds. The bounds' helpers both call are in reference/deformable_bounds.c.
 *
 * Every element sums its terms in the spec's order: a grad_x element over the samples (n, ho, wo,
 * g, i, j) in that order, each sample's corners in the order (h0, w0), (h0, w1), (h1, w0),
 * (h1, w1); an offset gradient over its group's channels. */
#include "../deformable_bounds.h"
#include "conform_plain.h"

#include <math.h>

/* V(h, w) of spec 5: channel c of pixel (h, w) of image xn, or 0 outside the plane */
static double V(const ref_deformable_params *p, const double *xn, int64_t h, int64_t w, int64_t c)
{
    if (h < 0 || h >= p->H || w < 0 || w >= p->W) return 0.0;
    return xn[(h * p->W + w) * p->C + c];
}

/* spec 5: the sample (ho, wo, k = g kh kw + i kw + j) of image n: px, py and the mask m */
static void sample_at(const ref_deformable_params *p, const double *offsets, int64_t n, int64_t ho, int64_t wo,
                      int64_t g, int64_t i, int64_t j, double *py, double *px, double *m)
{
    const int64_t dgK = p->dg * p->kh * p->kw, k = g * p->kh * p->kw + i * p->kw + j;
    const double *off = offsets + ((n * p->Ho + ho) * p->Wo + wo) * 3 * dgK;
    *px = (double)(wo * p->sw - p->pl + j * p->dw) + off[0 * dgK + k];
    *py = (double)(ho * p->sh - p->pt + i * p->dh) + off[1 * dgK + k];
    *m = off[2 * dgK + k];
}

/* Largest |difference| between vertically (sy) and horizontally (sx) neighbouring values of the
 * zero-padded channel c in the 4x4 neighbourhood of cell s (a NaN difference passed over): bounds
 * the slope of the bilinear value near the sample, also across cell edges. */
static void slopes(const ref_deformable_params *p, const double *xn, const cell *s, int64_t c, double *sy, double *sx)
{
    double t[4][4];
    for (int a = 0; a < 4; a++)
        for (int k = 0; k < 4; k++) t[a][k] = V(p, xn, s->h0 - 1 + a, s->w0 - 1 + k, c);
    ref_window_slopes_4x4(t, sy, sx); /* zero-padded taps of the cell and its neighbours */
}

/* the range of channel c's zero-padded taps a position within (dy, dx) of (py, px) reaches */
static double spread_of(const ref_deformable_params *p, const double *xn, int64_t c, double py, double px, double dy,
                        double dx)
{
    return ref_tap_spread(xn + c, p->H, p->W, p->C, py, px, dy, dx, 0);
}

/* Spec 5 for one sample (n, ho, wo, g, i, j), every channel c of its group:
 *   y[n, ho kh + i, wo kw + j, c] = m (hh hw V(h0, w0) + hh lw V(h0, w1) + lh hw V(h1, w0) + lh lw V(h1, w1))
 * a non-finite position samples nothing (spec 0). Bounds: the terms' magnitudes, 4 terms, the
 * value's change within the position error (capped by the taps' range); the value is continuous in
 * the position, so ambiguous only where a non-finite input meets a box on a line (unbounded). */
static void forward_sample(const ref_deformable_params *p, const double *x, const double *offsets, int64_t n,
                           int64_t ho, int64_t wo, int64_t g, int64_t i, int64_t j, double *y, ref_bounds *bounds)
{
    const int64_t cpg = p->C / p->dg, YH = p->Ho * p->kh, YW = p->Wo * p->kw;
    const int64_t e0 = ((n * YH + ho * p->kh + i) * YW + wo * p->kw + j) * p->C;
    const double *xn = x + n * p->H * p->W * p->C, pre = bounds ? bounds->pos_rel_err : 0.0;
    double py, px, m;
    sample_at(p, offsets, n, ho, wo, g, i, j, &py, &px, &m);
    const int finite = isfinite(py) && isfinite(px);
    const cell s = finite ? deform_cell_at(p, py, px) : (cell){0, 0, 0, 0, 0, 0};
    const double dy = deform_pos_error(py, p->pt, pre), dx = deform_pos_error(px, p->pl, pre);
    for (int64_t c = g * cpg; c < (g + 1) * cpg; c++) {
        const double v1 = V(p, xn, s.h0, s.w0, c), v2 = V(p, xn, s.h0, s.w0 + 1, c);
        const double v3 = V(p, xn, s.h0 + 1, s.w0, c), v4 = V(p, xn, s.h0 + 1, s.w0 + 1, c);
        y[e0 + c] = finite ? m * (s.hh * s.hw * v1 + s.hh * s.lw * v2 + s.lh * s.hw * v3 + s.lh * s.lw * v4) : 0;
        if (!bounds) continue;
        double av = 0, pe = 0, am = 0, sy, sx;
        if (finite) {
            av = fabs(m) * (fabs(s.hh * s.hw * v1) + fabs(s.hh * s.lw * v2) + fabs(s.lh * s.hw * v3) +
                            fabs(s.lh * s.lw * v4));
            slopes(p, xn, &s, c, &sy, &sx);
            const double spread = spread_of(p, xn, c, py, px, dy, dx);
            pe = fabs(m) * fmin(ref_value_pos_err(sy, sx, dy, dx), spread);
            am = deform_value_ambig(deform_box_on_line(py, dy, px, dx), m, spread);
        }
        if (bounds->abs_sum) bounds->abs_sum[e0 + c] = av;
        if (bounds->n_terms) bounds->n_terms[e0 + c] = finite ? 4 : 0;
        if (bounds->pos_err) bounds->pos_err[e0 + c] = pe;
        if (bounds->ambig) bounds->ambig[e0 + c] = am;
    }
}

/* y sample by sample in the order (n, ho, wo, g, i, j); each element is written once */
void f64_deformable_offsets_fwd__plain(const ref_deformable_params *p, const double *x, const double *offsets,
                                       double *y, ref_bounds *bounds)
{
    for (int64_t n = 0; n < p->N; n++)
        for (int64_t ho = 0; ho < p->Ho; ho++)
            for (int64_t wo = 0; wo < p->Wo; wo++)
                for (int64_t g = 0; g < p->dg; g++)
                    for (int64_t i = 0; i < p->kh; i++)
                        for (int64_t j = 0; j < p->kw; j++) forward_sample(p, x, offsets, n, ho, wo, g, i, j, y, bounds);
}

/* ---- backward ------------------------------------------------------------------------------ */

/* One sample of the backward: where it is, its grad row and its grad_offsets elements */
typedef struct {
    int64_t n;
    const double *xn, *G;   /* image n of x; the sample's grad row (channels) */
    double py, px, m, dy, dx;
    int64_t c0, c1;         /* its group's channels */
    int64_t eo[3];          /* its grad_offsets elements: x, y, mask */
} sample;

/* The tensors the backward writes: grad_x and grad_offsets, and their bounds (each may be NULL:
 * abs_sum, n_terms, pos_err, ambig) */
typedef struct {
    double *grad_x, *grad_offsets;
    double *tx[4], *to[4];
    double pre;
} outputs;

/* spec 6, at cell s without the window test: sum over the group's channels of the x-offset (sum[0]),
 * y-offset (sum[1]) and mask (sum[2]) gradients, with G = grad and v1..v4 the corners:
 *   y:    G m (hw (v3 - v1) + lw (v4 - v2))
 *   x:    G m (hh (v2 - v1) + lh (v4 - v3))
 *   mask: G (hh hw v1 + hh lw v2 + lh hw v3 + lh lw v4)
 * and a[] the matching sums of |expanded term| */
static void offset_sums(const ref_deformable_params *p, const sample *q, const cell *s, double sum[3], double a[3])
{
    for (int t = 0; t < 3; t++) sum[t] = a[t] = 0;
    for (int64_t c = q->c0; c < q->c1; c++) {
        const double v1 = V(p, q->xn, s->h0, s->w0, c), v2 = V(p, q->xn, s->h0, s->w0 + 1, c);
        const double v3 = V(p, q->xn, s->h0 + 1, s->w0, c), v4 = V(p, q->xn, s->h0 + 1, s->w0 + 1, c);
        const double g = q->G[c], m = q->m;
        sum[1] += g * m * (s->hw * (v3 - v1) + s->lw * (v4 - v2));
        sum[0] += g * m * (s->hh * (v2 - v1) + s->lh * (v4 - v3));
        sum[2] += g * (s->hh * s->hw * v1 + s->hh * s->lw * v2 + s->lh * s->hw * v3 + s->lh * s->lw * v4);
        const double gm = fabs(g * m);
        a[1] += gm * (s->hw * (fabs(v3) + fabs(v1)) + s->lw * (fabs(v4) + fabs(v2)));
        a[0] += gm * (s->hh * (fabs(v2) + fabs(v1)) + s->lh * (fabs(v4) + fabs(v3)));
        a[2] += fabs(g) * (fabs(s->hh * s->hw * v1) + fabs(s->hh * s->lw * v2) + fabs(s->lh * s->hw * v3) +
                           fabs(s->lh * s->lw * v4));
    }
}

/* spec 6: grad_x[n, corner, c] += G m weight(corner) for each in-bounds corner of cell s, with the
 * terms' abs_sum and n_terms */
static void scatter_grad_x(const ref_deformable_params *p, const sample *q, const cell *s, const outputs *o)
{
    const int64_t hs[2] = {s->h0, s->h0 + 1}, ws[2] = {s->w0, s->w0 + 1}, HWC = p->H * p->W * p->C;
    const double wy[2] = {s->hh, s->lh}, wx[2] = {s->hw, s->lw};
    for (int u = 0; u < 2; u++)
        for (int v = 0; v < 2; v++) {
            if (hs[u] < 0 || hs[u] >= p->H || ws[v] < 0 || ws[v] >= p->W) continue;
            for (int64_t c = q->c0; c < q->c1; c++) {
                const int64_t e = q->n * HWC + (hs[u] * p->W + ws[v]) * p->C + c;
                const double t = q->G[c] * q->m * wy[u] * wx[v];
                o->grad_x[e] += t;
                if (o->tx[0]) o->tx[0][e] += fabs(t);
                if (o->tx[1]) o->tx[1][e] += 1;
            }
        }
}

/* grad_x's pos_err of the sample at cell sc: each corner's weight change within the position error
 * (the corner-weight form's high factors wider) and the pixels across a cell edge a float twin may
 * reach; a box wider than a cell: every pixel it reaches, by |G m| */
static void grad_x_pos_err(const ref_deformable_params *p, const sample *q, const cell *sc, const outputs *o)
{
    const int64_t hs[2] = {sc->h0, sc->h0 + 1}, ws[2] = {sc->w0, sc->w0 + 1}, HWC = p->H * p->W * p->C;
    const double wy[2] = {sc->hh, sc->lh}, wx[2] = {sc->hw, sc->lw}, dy = q->dy, dx = q->dx;
    const double ey = deform_corner_form_err(q->py, dy, o->pre), ex = deform_corner_form_err(q->px, dx, o->pre);
    int64_t r0, r1, k0, k1;
    const int wide_y = deform_reach_rows(q->py, dy, ey, sc->h0, p->H, &r0, &r1);
    const int wide_x = deform_reach_rows(q->px, dx, ex, sc->w0, p->W, &k0, &k1);
    /* a non-finite G m on a line: any value at every pixel the box reaches */
    if (o->tx[3] && deform_bwd_on_line(p, q->py, dy, q->px, dx))
        deform_grad_x_unbounded(o->tx[3] + q->n * HWC, p->W, p->C, r0, r1, k0, k1, q->G, q->m, q->c0, q->c1);
    if (!o->tx[2]) return;
    double *pos = o->tx[2] + q->n * HWC;
    if (wide_y || wide_x) {
        for (int64_t r = r0; r <= r1; r++)
            for (int64_t k = k0; k <= k1; k++)
                for (int64_t c = q->c0; c < q->c1; c++)
                    if (isfinite(fabs(q->G[c] * q->m))) pos[(r * p->W + k) * p->C + c] += fabs(q->G[c] * q->m);
        return;
    }
    for (int u = 0; u < 2; u++)
        for (int v = 0; v < 2; v++) {
            if (hs[u] < 0 || hs[u] >= p->H || ws[v] < 0 || ws[v] >= p->W) continue;
            const double f = ref_weight_pos_err(wy[u], wx[v], dy + (u ? ey : 0.0), dx + (v ? ex : 0.0));
            for (int64_t c = q->c0; c < q->c1; c++) /* a non-finite G m: never a bound (0 x inf) */
                if (isfinite(fabs(q->G[c] * q->m))) pos[(hs[u] * p->W + ws[v]) * p->C + c] += fabs(q->G[c] * q->m) * f;
        }
    int64_t pix[16];
    double w[16];
    const int nn = deform_neighbours(p->H, p->W, hs, ws, wy, wx, dy, dx, ey, ex, pix, w);
    for (int k = 0; k < nn; k++)
        for (int64_t c = q->c0; c < q->c1; c++)
            if (isfinite(fabs(q->G[c] * q->m))) pos[pix[k] * p->C + c] += fabs(q->G[c] * q->m) * w[k];
}

/* The offset gradients' position terms at cell sc, summed over the group's channels: pe[0] x
 * (linear in py within a cell), pe[1] y (linear in px), pe[2] the mask (the value's change), each
 * capped by the taps' range; pe[3] the most they can move anywhere in the box (2 sum |G m| spread).
 * Returns whether a non-finite input meets the sample (a G m, or a tap its box reaches). */
static int offsets_pos_err(const ref_deformable_params *p, const sample *q, const cell *sc, double pe[4])
{
    int nonfinite = 0;
    for (int t = 0; t < 4; t++) pe[t] = 0;
    for (int64_t c = q->c0; c < q->c1; c++) {
        double sy, sx;
        slopes(p, q->xn, sc, c, &sy, &sx);
        const double gm = fabs(q->G[c] * q->m), spread = spread_of(p, q->xn, c, q->py, q->px, q->dy, q->dx);
        pe[0] += gm * fmin(2.0 * sx * q->dy, 2.0 * spread);
        pe[1] += gm * fmin(2.0 * sy * q->dx, 2.0 * spread);
        pe[2] += fabs(q->G[c]) * fmin(ref_value_pos_err(sy, sx, q->dy, q->dx), spread);
        pe[3] += gm * 2.0 * spread;
        nonfinite |= !isfinite(gm) || spread == INFINITY;
    }
    return nonfinite;
}

/* The offset gradients' jumps (ambig): where rounding may put the position on the other side of an
 * integer line in [-1, n] (deform_axis_branches), the largest change of the sums over the cells it
 * may select; where the box holds more than one line, anything the taps allow (pe[3]). The x
 * gradient jumps with px only, y with py; the mask gradient is continuous. */
static void offset_ambiguity(const ref_deformable_params *p, const sample *q, const cell *s, const double sum[3],
                             const double pe[4], const outputs *o)
{
    const double py = q->py, px = q->px, dy = q->dy, dx = q->dx;
    const int wide[2] = {floor(fmin(px + dx, (double)p->W)) - ceil(fmax(px - dx, -1.0)) >= 1,
                         floor(fmin(py + dy, (double)p->H)) - ceil(fmax(py - dy, -1.0)) >= 1};
    for (int t = 0; t < 2; t++)
        if (wide[t]) o->to[3][q->eo[t]] = fmax(pe[3] - pe[t], 0);
    const branches by = deform_axis_branches(py, dy, p->H, s->h0, s->lh);
    const branches bx = deform_axis_branches(px, dx, p->W, s->w0, s->lw);
    if (by.count == 1 && bx.count == 1) return;
    double worst[3] = {0, 0, 0}, worst_abs[3] = {0, 0, 0};
    for (int u = 0; u < by.count; u++)
        for (int v = 0; v < bx.count; v++) {
            double alt[3] = {0, 0, 0}, aa[3] = {0, 0, 0};
            if (by.in[u] && bx.in[v]) {
                const cell br = {by.h0[u], bx.h0[v], by.l[u], bx.l[v], 1.0 - by.l[u], 1.0 - bx.l[v]};
                offset_sums(p, q, &br, alt, aa);
            }
            for (int t = 0; t < 3; t++) {
                worst[t] = fmax(worst[t], fabs(alt[t] - sum[t]));
                worst_abs[t] = fmax(worst_abs[t], aa[t]);
            }
        }
    /* a kernel on another branch rounds that branch's sum: abs_sum and n_terms of the largest */
    for (int t = 0; t < 2; t++) {
        if (!(t == 0 ? bx.count == 2 : by.count == 2) || !(worst[t] > 0) || wide[t]) continue;
        o->to[3][q->eo[t]] = worst[t];
        if (o->to[0]) o->to[0][q->eo[t]] = fmax(o->to[0][q->eo[t]], worst_abs[t]);
        if (o->to[1]) o->to[1][q->eo[t]] = 4.0 * (double)(q->c1 - q->c0);
    }
}

/* Spec 6 for one sample: if it lies inside (-1, H) x (-1, W), grad_x receives G m weight at its
 * in-bounds corners and its three offset gradients are the sums over its group's channels; else
 * they stay 0. With bounds, the position terms at the cell (the position moved onto the window
 * when rounding could put it inside) and the offset gradients' jumps. */
static void backward_sample(const ref_deformable_params *p, const double *grad, const double *x,
                            const double *offsets, int64_t n, int64_t ho, int64_t wo, int64_t g, int64_t i, int64_t j,
                            const outputs *o)
{
    const int64_t dgK = p->dg * p->kh * p->kw, cpg = p->C / p->dg, YH = p->Ho * p->kh, YW = p->Wo * p->kw;
    const int64_t eo = ((n * p->Ho + ho) * p->Wo + wo) * 3 * dgK + g * p->kh * p->kw + i * p->kw + j;
    sample q = {n, x + n * p->H * p->W * p->C, grad + ((n * YH + ho * p->kh + i) * YW + wo * p->kw + j) * p->C,
                0, 0, 0, 0, 0, g * cpg, (g + 1) * cpg, {eo, eo + dgK, eo + 2 * dgK}};
    sample_at(p, offsets, n, ho, wo, g, i, j, &q.py, &q.px, &q.m);
    if (!isfinite(q.py) || !isfinite(q.px)) return; /* spec 0: nothing */
    const cell s = deform_cell_at(p, q.py, q.px);
    const int inside = q.py > -1 && q.py < (double)p->H && q.px > -1 && q.px < (double)p->W;
    double sum[3] = {0, 0, 0}, a[3];
    if (inside) {
        scatter_grad_x(p, &q, &s, o);
        offset_sums(p, &q, &s, sum, a);
        for (int t = 0; t < 3; t++) {
            o->grad_offsets[q.eo[t]] = sum[t];
            if (o->to[0]) o->to[0][q.eo[t]] = a[t];
            if (o->to[1]) o->to[1][q.eo[t]] = 4.0 * (double)cpg;
        }
    }
    int any = 0;
    for (int t = 0; t < 4; t++) any |= o->tx[t] || o->to[t];
    if (!any) return;
    q.dy = deform_pos_error(q.py, p->pt, o->pre);
    q.dx = deform_pos_error(q.px, p->pl, o->pre);
    const int near = q.py >= -1.0 - q.dy && q.py <= (double)p->H + q.dy && q.px >= -1.0 - q.dx && q.px <= (double)p->W + q.dx;
    if (!inside && !near) return;
    const double cy = q.py < -1.0 ? -1.0 : q.py > (double)p->H ? (double)p->H : q.py;
    const double cx = q.px < -1.0 ? -1.0 : q.px > (double)p->W ? (double)p->W : q.px;
    const cell sc = inside ? s : deform_cell_at(p, cy, cx);
    grad_x_pos_err(p, &q, &sc, o);
    double pe[4];
    const int nonfinite = offsets_pos_err(p, &q, &sc, pe);
    for (int t = 0; t < 3; t++) if (o->to[2]) o->to[2][q.eo[t]] = pe[t];
    if (o->to[3]) offset_ambiguity(p, &q, &s, sum, pe, o);
    /* a non-finite input on a line: all three sum every corner times G m, any value */
    if (o->to[3] && nonfinite && deform_bwd_on_line(p, q.py, q.dy, q.px, q.dx))
        for (int t = 0; t < 3; t++) o->to[3][q.eo[t]] = INFINITY;
}

/* grad_x and grad_offsets from zeros, sample by sample in the order (n, ho, wo, g, i, j) */
void f64_deformable_offsets_bwd__plain(const ref_deformable_params *p, const double *grad, const double *x,
                                       const double *offsets, double *grad_x, double *grad_offsets,
                                       ref_bounds *bx, ref_bounds *bo)
{
    const int64_t nx = p->N * p->H * p->W * p->C, no = p->N * p->Ho * p->Wo * 3 * p->dg * p->kh * p->kw;
    outputs o = {grad_x, grad_offsets, {NULL}, {NULL}, bx ? bx->pos_rel_err : bo ? bo->pos_rel_err : 0.0};
    if (bx) { o.tx[0] = bx->abs_sum; o.tx[1] = bx->n_terms; o.tx[2] = bx->pos_err; o.tx[3] = bx->ambig; }
    if (bo) { o.to[0] = bo->abs_sum; o.to[1] = bo->n_terms; o.to[2] = bo->pos_err; o.to[3] = bo->ambig; }
    for (int64_t e = 0; e < nx; e++) {
        grad_x[e] = 0;
        for (int t = 0; t < 4; t++) if (o.tx[t]) o.tx[t][e] = 0;
    }
    for (int64_t e = 0; e < no; e++) {
        grad_offsets[e] = 0;
        for (int t = 0; t < 4; t++) if (o.to[t]) o.to[t][e] = 0;
    }
    if (p->dg <= 0) return;
    for (int64_t n = 0; n < p->N; n++)
        for (int64_t ho = 0; ho < p->Ho; ho++)
            for (int64_t wo = 0; wo < p->Wo; wo++)
                for (int64_t g = 0; g < p->dg; g++)
                    for (int64_t i = 0; i < p->kh; i++)
                        for (int64_t j = 0; j < p->kw; j++) backward_sample(p, grad, x, offsets, n, ho, wo, g, i, j, &o);
}
