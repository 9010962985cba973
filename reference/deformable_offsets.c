/* deformable_offsets (spec 5) and deformable_offsets_grad (spec 6) in double: the fast golden.
 * Its loops follow the spec's, with channels taken eight at a time where they share a sample's
 * 4x4 window and tap rectangle, and threads over output rows and blocks of channels;
 * reference/plain/deformable_offsets.c is the same a channel at a time, single-threaded, and
 * make check-golden holds the two bitwise equal, values and bounds.
 *
 * Continuity, which decides what is smooth (pos_err) and what is ambiguous (ambig):
 *   y, grad_x and the mask gradient are continuous in the sample position (zero padding makes
 *   every corner weight vanish where its pixel leaves the plane, and the window test only cuts
 *   where they already vanish); the x-offset gradient jumps where px crosses an integer in
 *   [-1, W] (floor switches cells, the window test switches at -1 and W) and the y-offset
 *   gradient where py crosses an integer in [-1, H]. */
#include "deformable_bounds.h"

#include <math.h>
#include <string.h>

/* V(h, w) of spec 5: the pixel, or 0 outside the plane */
static double V(const ref_deformable_params *p, const double *xn, int64_t h, int64_t w, int64_t c)
{
    if (h < 0 || h >= p->H || w < 0 || w >= p->W) return 0.0;
    return xn[(h * p->W + w) * p->C + c];
}

/* The sample (ho, wo, k) of image n: positions and mask. */
static void sample_pos(const ref_deformable_params *p, const double *off_n, int64_t ho, int64_t wo, int64_t g,
                       int64_t i, int64_t j, double *py, double *px, double *m)
{
    const int64_t K = p->kh * p->kw, dgK = p->dg * K, k = g * K + i * p->kw + j;
    const double *o = off_n + (ho * p->Wo + wo) * 3 * dgK;
    *px = (double)(wo * p->sw - p->pl + j * p->dw) + o[0 * dgK + k];
    *py = (double)(ho * p->sh - p->pt + i * p->dh) + o[1 * dgK + k];
    *m = o[2 * dgK + k];
}

/* The 4x4 neighbourhood of a cell as element offsets of channel 0 in the image (-1: outside, a
 * zero of the padded plane): the same for every channel, so found once per sample */
typedef struct {
    int64_t off[4][4];
} window;

static void window_of(const ref_deformable_params *p, const cell *s, window *w)
{
    for (int a = 0; a < 4; a++)
        for (int k = 0; k < 4; k++) {
            const int64_t h = s->h0 - 1 + a, x = s->w0 - 1 + k;
            w->off[a][k] = h < 0 || h >= p->H || x < 0 || x >= p->W ? -1 : (h * p->W + x) * p->C;
        }
}

/* Channels are taken DB at a time where every channel does the same: one cache line of a tap */
enum { DB = 8 };

/* Largest |difference| between vertically (sy) and horizontally (sx) neighbouring values of the
 * zero-padded plane in the 4x4 neighbourhood of the cell (window w), for channels [c, c + nc) (nc
 * <= DB; lane l: channel c + l): bounds the slope of the bilinear value near the sample, also
 * across cell edges and the plane's border. */
/* slopes() of one channel c: the same maxima (of the same differences, so the same numbers) */
static void slopes_one(const window *w, const double *xn, int64_t c, double *sy, double *sx)
{
    double t[4][4];
    for (int a = 0; a < 4; a++)
        for (int k = 0; k < 4; k++) t[a][k] = w->off[a][k] < 0 ? 0.0 : xn[w->off[a][k] + c];
    ref_window_slopes_4x4(t, sy, sx); /* zero-padded taps of the cell and its neighbours */
}

static void slopes(const window *w, const double *xn, int64_t c, int nc, double sy[DB], double sx[DB])
{
    if (nc < DB) { /* a block's tail, or a group of few channels: its lanes alone, not eight */
        for (int l = 0; l < DB; l++) sy[l] = sx[l] = 0;
        for (int l = 0; l < nc; l++) slopes_one(w, xn, c + l, &sy[l], &sx[l]);
        return;
    }
    double t[4][4][DB]; /* rows h0 - 1 .. h0 + 2, columns w0 - 1 .. w0 + 2: each value read once */
    for (int a = 0; a < 4; a++)
        for (int k = 0; k < 4; k++) {
            const int64_t o = w->off[a][k];
            if (o >= 0) memcpy(t[a][k], xn + o + c, sizeof t[a][k]);
            else for (int l = 0; l < DB; l++) t[a][k][l] = 0.0;
        }
    /* the largest |difference|, a NaN one passed over (as fmax does, without its call) */
    double my[DB] = {0}, mx[DB] = {0};
    for (int a = 0; a < 3; a++)
        for (int k = 0; k < 4; k++)
            for (int l = 0; l < DB; l++) {
                const double d = fabs(t[a + 1][k][l] - t[a][k][l]);
                my[l] = d > my[l] ? d : my[l];
            }
    for (int a = 0; a < 4; a++)
        for (int k = 0; k < 3; k++)
            for (int l = 0; l < DB; l++) {
                const double d = fabs(t[a][k + 1][l] - t[a][k][l]);
                mx[l] = d > mx[l] ? d : mx[l];
            }
    memcpy(sy, my, sizeof my);
    memcpy(sx, mx, sizeof mx);
}

/* ref_tap_spread over a rectangle found once, for channels [c, c + nc) of the image xn (lane l:
 * channel c + l; the steps of ref_tap_rect_range per lane) */
static void tap_spreads(const double *xn, int64_t W, int64_t C, const ref_tap_rect *reach, int64_t c, int nc,
                        double spread[DB])
{
    double mn[DB], mx[DB];
    for (int l = 0; l < DB; l++) mn[l] = mx[l] = 0;
    for (int l = 0; !reach->zero && l < DB; l++) { mn[l] = INFINITY; mx[l] = -INFINITY; }
    for (int64_t r = reach->r0; r <= reach->r1; r++)
        for (int64_t k = reach->c0; k <= reach->c1; k++) {
            const double *v = xn + (r * W + k) * C + c;
            for (int l = 0; l < nc; l++) {
                if (v[l] < mn[l]) mn[l] = v[l];
                if (v[l] > mx[l]) mx[l] = v[l];
                if (isnan(v[l])) mn[l] = mx[l] = NAN; /* nothing bounds a NaN tap: no cap */
            }
        }
    for (int l = 0; l < DB; l++) {
        if (mn[l] > mx[l]) mn[l] = mx[l] = 0; /* no tap at all */
        const double d = mx[l] - mn[l];
        spread[l] = isnan(d) ? INFINITY : d;
    }
}

/* One sample as every channel of its group sees it: position, mask and position errors; where
 * finite, its cell, the 4x4 window around it (corner (h0 + u, w0 + v) at off[1 + u][1 + v]) and
 * the taps its box reaches */
typedef struct {
    double py, px, m, dy, dx;
    int finite, on_line; /* on_line: deform_box_on_line */
    cell s;
    window win;
    ref_tap_rect reach;
} sample_geo;

/* V(h0 + u, w0 + v) of channel c through the window */
static double corner(const window *w, const double *xn, int u, int v, int64_t c)
{
    const int64_t o = w->off[1 + u][1 + v];
    return o < 0 ? 0.0 : xn[o + c];
}

static double clamp(double v, double lo, double hi) { return v < lo ? lo : v > hi ? hi : v; }

/* ---- forward ---------------------------------------------------------------------------- */

/* The bounds of output element e, channel c of sample q (its slopes sy, sx and tap spread, when
 * pos_err is asked for) */
static void forward_bounds(const double *xn, const sample_geo *q, int64_t c, double sy, double sx, double spread,
                           int64_t e, ref_bounds *bounds)
{
    double av = 0, pe = 0;
    if (q->finite) {
        const cell *s = &q->s;
        double v1 = corner(&q->win, xn, 0, 0, c), v2 = corner(&q->win, xn, 0, 1, c);
        double v3 = corner(&q->win, xn, 1, 0, c), v4 = corner(&q->win, xn, 1, 1, c);
        av = fabs(q->m) * (fabs(s->hh * s->hw * v1) + fabs(s->hh * s->lw * v2) + fabs(s->lh * s->hw * v3) +
                           fabs(s->lh * s->lw * v4));
        /* capped by the zero-padded taps' range the box reaches */
        if (bounds->pos_err) pe = fabs(q->m) * fmin(ref_value_pos_err(sy, sx, q->dy, q->dx), spread);
    }
    if (bounds->abs_sum) bounds->abs_sum[e] = av;
    if (bounds->n_terms) bounds->n_terms[e] = q->finite ? 4 : 0;
    if (bounds->pos_err) bounds->pos_err[e] = pe;
    /* continuous in the position, but where a non-finite input meets a box on a line */
    if (bounds->ambig) bounds->ambig[e] = q->finite ? deform_value_ambig(q->on_line, q->m, spread) : 0;
}

/* Elements [e0 + c, e0 + c + nc) of the output: channels [c, c + nc) of sample q */
static void forward_channels(const ref_deformable_params *p, const double *xn, const sample_geo *q, int64_t c,
                             int nc, double *y, int64_t e0, ref_bounds *bounds)
{
    double sy[DB], sx[DB], spread[DB];
    if (bounds && (bounds->pos_err || bounds->ambig) && q->finite) {
        slopes(&q->win, xn, c, nc, sy, sx);
        tap_spreads(xn, p->W, p->C, &q->reach, c, nc, spread);
    }
    for (int l = 0; l < nc; l++) {
        double val = 0;
        if (q->finite) { /* a non-finite position samples nothing (spec 0) */
            const cell *s = &q->s;
            double v1 = corner(&q->win, xn, 0, 0, c + l), v2 = corner(&q->win, xn, 0, 1, c + l);
            double v3 = corner(&q->win, xn, 1, 0, c + l), v4 = corner(&q->win, xn, 1, 1, c + l);
            val = q->m * (s->hh * s->hw * v1 + s->hh * s->lw * v2 + s->lh * s->hw * v3 + s->lh * s->lw * v4);
        }
        y[e0 + c + l] = val;
        if (bounds) forward_bounds(xn, q, c + l, sy[l], sx[l], spread[l], e0 + c + l, bounds);
    }
}

/* The forward's tensors, for one output row of it */
typedef struct {
    const ref_deformable_params *p;
    const double *x, *offsets;
    double *y;
    ref_bounds *bounds;
} fwd_ctx;

/* Output row (n, ho): independent of every other row */
static void forward_row(void *ctx, int64_t nh)
{
    const fwd_ctx *f = ctx;
    const ref_deformable_params *p = f->p;
    const double *x = f->x, *offsets = f->offsets;
    double *y = f->y;
    ref_bounds *bounds = f->bounds;
    const int64_t K = p->kh * p->kw, cpg = p->dg > 0 ? p->C / p->dg : 0;
    const int64_t YH = p->Ho * p->kh, YW = p->Wo * p->kw;
    const double pre = bounds ? bounds->pos_rel_err : 0.0;
    const int64_t n = nh / p->Ho, ho = nh % p->Ho;
    const double *xn = x + n * p->H * p->W * p->C, *off_n = offsets + n * p->Ho * p->Wo * 3 * p->dg * K;
    for (int64_t wo = 0; wo < p->Wo; wo++)
        for (int64_t g = 0; g < p->dg; g++)
            for (int64_t i = 0; i < p->kh; i++)
                for (int64_t j = 0; j < p->kw; j++) {
                    sample_geo q;
                    sample_pos(p, off_n, ho, wo, g, i, j, &q.py, &q.px, &q.m);
                    const int64_t e0 = ((n * YH + ho * p->kh + i) * YW + wo * p->kw + j) * p->C;
                    q.finite = isfinite(q.py) && isfinite(q.px);
                    q.s = q.finite ? deform_cell_at(p, q.py, q.px) : (cell){0, 0, 0, 0, 0, 0};
                    q.dy = deform_pos_error(q.py, p->pt, pre);
                    q.dx = deform_pos_error(q.px, p->pl, pre);
                    q.on_line = deform_box_on_line(q.py, q.dy, q.px, q.dx);
                    if (q.finite) window_of(p, &q.s, &q.win);
                    if (q.finite && bounds) ref_tap_rect_of(p->H, p->W, q.py, q.px, q.dy, q.dx, 0, &q.reach);
                    for (int64_t c = g * cpg; c < (g + 1) * cpg; c += DB)
                        forward_channels(p, xn, &q, c, (g + 1) * cpg - c < DB ? (int)((g + 1) * cpg - c) : DB, y, e0, bounds);
                }
}

void f64_deformable_offsets_fwd__ref(const ref_deformable_params *p, const double *x, const double *offsets,
                                     double *y, ref_bounds *bounds)
{
    fwd_ctx f = {p, x, offsets, y, bounds};
    ref_parallel_for(p->N * p->Ho, forward_row, &f);
}

/* ---- backward --------------------------------------------------------------------------- */

/* The three channel sums of one sample over its group's channels, without the window test:
 * s[0] x offset, s[1] y offset, s[2] mask; a[t] the matching sums of |expanded terms|. */
static void group_sums(const ref_deformable_params *p, const double *xn, const double *G, int64_t c0, int64_t c1,
                       const cell *s, double m, double *sum, double *a)
{
    for (int t = 0; t < 3; t++) sum[t] = a[t] = 0;
    for (int64_t c = c0; c < c1; c++) {
        double v1 = V(p, xn, s->h0, s->w0, c), v2 = V(p, xn, s->h0, s->w0 + 1, c);
        double v3 = V(p, xn, s->h0 + 1, s->w0, c), v4 = V(p, xn, s->h0 + 1, s->w0 + 1, c);
        double g = G[c];
        sum[1] += g * m * (s->hw * (v3 - v1) + s->lw * (v4 - v2));
        sum[0] += g * m * (s->hh * (v2 - v1) + s->lh * (v4 - v3));
        sum[2] += g * (s->hh * s->hw * v1 + s->hh * s->lw * v2 + s->lh * s->hw * v3 + s->lh * s->lw * v4);
        double gm = fabs(g * m);
        a[1] += gm * (s->hw * (fabs(v3) + fabs(v1)) + s->lw * (fabs(v4) + fabs(v2)));
        a[0] += gm * (s->hh * (fabs(v2) + fabs(v1)) + s->lh * (fabs(v4) + fabs(v3)));
        a[2] += fabs(g) * (fabs(s->hh * s->hw * v1) + fabs(s->hh * s->lw * v2) + fabs(s->lh * s->hw * v3) +
                           fabs(s->lh * s->lw * v4));
    }
}

/* The backward's tensors, for one sample's share of them */
typedef struct {
    const ref_deformable_params *p;
    const double *grad, *x, *offsets;
    double *grad_x, *grad_offsets;
    double *tx[4], *to[4]; /* bounds of grad_x and grad_offsets: abs_sum, n_terms, pos_err, ambig */
    double pre;
    int64_t cb, nb; /* the grad_x pass: nb blocks of cb channels per image */
} bwd_ctx;

/* One sample of the backward as the bookkeeping sees it: where it is and what it scatters */
typedef struct {
    int64_t n;
    const double *xn, *G; /* image n of x; the sample's grad row (channels) */
    double py, px, m, dy, dx;
    int64_t c0, c1, w0, w1; /* its group's channels; this pass's grad_x channels */
    int64_t eot[3];         /* its grad_offsets elements: x, y, mask */
} bwd_sample;

/* The offset gradients' jumps of a sample (ambig of grad_offsets): every branch rounding can
 * select, against the nominal sums (sum). The smooth part is pos_err (pe), already in tol: an
 * offset gradient is constant along its own axis inside a cell, and pe's slopes (sx, sy) span the
 * 4x4 window, so they bound the other branch's drift along the other axis as well as the nominal
 * one's; adding pe here again granted it twice. */
static void offset_ambiguity(const bwd_ctx *b, const bwd_sample *q, const cell *s, const double sum[3],
                             const double pe[4])
{
    const ref_deformable_params *p = b->p;
    const double *xn = q->xn, *G = q->G, py = q->py, px = q->px, dy = q->dy, dx = q->dx, m = q->m;
    const int64_t c0 = q->c0, c1 = q->c1, cpg = c1 - c0, *eot = q->eot;
    /* a box holding more than one line of [-1, n] (wider than a cell) may land in any cell it
       reaches: the offset gradient of that axis may then be anything its taps allow (pe[3]) */
    const int wide[2] = {floor(fmin(px + dx, (double)p->W)) - ceil(fmax(px - dx, -1.0)) >= 1,
                         floor(fmin(py + dy, (double)p->H)) - ceil(fmax(py - dy, -1.0)) >= 1};
    for (int t = 0; t < 2; t++)
        if (wide[t]) b->to[3][eot[t]] = fmax(pe[3] - pe[t], 0);
    branches by = deform_axis_branches(py, dy, p->H, s->h0, s->lh);
    branches bxr = deform_axis_branches(px, dx, p->W, s->w0, s->lw);
    if (by.count == 1 && bxr.count == 1) return;
    double worst[3] = {0, 0, 0}, worst_abs[3] = {0, 0, 0};
    for (int u = 0; u < by.count; u++)
        for (int v = 0; v < bxr.count; v++) {
            double alt[3] = {0, 0, 0}, aa[3] = {0, 0, 0};
            if (by.in[u] && bxr.in[v]) {
                cell br = {by.h0[u], bxr.h0[v], by.l[u], bxr.l[v], 1.0 - by.l[u], 1.0 - bxr.l[v]};
                group_sums(p, xn, G, c0, c1, &br, m, alt, aa);
            }
            for (int t = 0; t < 3; t++) {
                worst[t] = fmax(worst[t], fabs(alt[t] - sum[t]));
                worst_abs[t] = fmax(worst_abs[t], aa[t]);
            }
        }
    /* x jumps only with px, y only with py; the mask gradient is continuous.
       A kernel on another branch rounds that branch's sum: the element's
       abs_sum and n_terms cover the largest branch (at float32 this adds
       ~1e-6 of ambig; at bfloat16 the rounding of the other slope is what
       a correct kernel showed beyond ambig) */
    for (int t = 0; t < 2; t++) {
        if (!(t == 0 ? bxr.count == 2 : by.count == 2) || !(worst[t] > 0) || wide[t]) continue;
        b->to[3][eot[t]] = worst[t];
        if (b->to[0]) b->to[0][eot[t]] = fmax(b->to[0][eot[t]], worst_abs[t]);
        if (b->to[1]) b->to[1][eot[t]] = 4.0 * (double)cpg;
    }
}

/* spec 6: grad_x[n, corner, c] += G m weight(corner) for each in-bounds corner, with the terms'
 * abs_sum and n_terms */
static void scatter_grad_x(const bwd_ctx *b, const bwd_sample *q, const cell *s)
{
    const ref_deformable_params *p = b->p;
    const int64_t hs[2] = {s->h0, s->h0 + 1}, ws[2] = {s->w0, s->w0 + 1}, HWC = p->H * p->W * p->C;
    const double wy[2] = {s->hh, s->lh}, wx[2] = {s->hw, s->lw};
    for (int u = 0; u < 2; u++)
        for (int v = 0; v < 2; v++) {
            if (hs[u] < 0 || hs[u] >= p->H || ws[v] < 0 || ws[v] >= p->W) continue;
            const int64_t e0 = q->n * HWC + (hs[u] * p->W + ws[v]) * p->C;
            for (int64_t c = q->w0; c < q->w1; c++) {
                const double t = q->G[c] * q->m * wy[u] * wx[v];
                b->grad_x[e0 + c] += t;
                if (b->tx[0]) b->tx[0][e0 + c] += fabs(t);
                if (b->tx[1]) b->tx[1][e0 + c] += 1;
            }
        }
}

/* The position terms of a sample's offset gradients (rounding moves it by dy, dx) at cell sc: pe[]
 * of the three, and pe[3] the most they can move anywhere in the box (2 sum |G m| spread); returns
 * whether a non-finite input meets the sample (a G m, or a tap its box reaches) */
static int offsets_pos_err(const bwd_ctx *b, const bwd_sample *q, const cell *sc, double pe[4])
{
    const ref_deformable_params *p = b->p;
    const double dy = q->dy, dx = q->dx;
    ref_tap_rect reach; /* the taps the box reaches: the same in every channel */
    ref_tap_rect_of(p->H, p->W, q->py, q->px, dy, dx, 0, &reach);
    window win;
    window_of(p, sc, &win);
    int nonfinite = 0;
    for (int64_t c0 = q->c0; c0 < q->c1; c0 += DB) {
        const int nc = q->c1 - c0 < DB ? (int)(q->c1 - c0) : DB;
        double sy[DB], sx[DB], sp[DB];
        slopes(&win, q->xn, c0, nc, sy, sx);
        tap_spreads(q->xn, p->W, p->C, &reach, c0, nc, sp);
        for (int l = 0; l < nc; l++) {
            const int64_t c = c0 + l;
            const double gm = fabs(q->G[c] * q->m), spread = sp[l];
            /* caps: the value stays within the range of the zero-padded taps the box reaches
               (spread), and an offset gradient, a difference of two such taps, within +-spread */
            pe[0] += gm * fmin(2.0 * sx[l] * dy, 2.0 * spread); /* x-offset gradient: linear in py in a cell */
            pe[1] += gm * fmin(2.0 * sy[l] * dx, 2.0 * spread); /* y-offset gradient: linear in px */
            pe[2] += fabs(q->G[c]) * fmin(ref_value_pos_err(sy[l], sx[l], dy, dx), spread);
            pe[3] += gm * 2.0 * spread;
            nonfinite |= !isfinite(gm) || spread == INFINITY;
        }
    }
    return nonfinite;
}

/* grad_x's pos_err of a sample at cell sc, for this pass's channels: at its corners and across cell
 * edges, or over the whole rectangle the box reaches when it is wider than a cell */
static void grad_x_pos_err(const bwd_ctx *b, const bwd_sample *q, const cell *sc)
{
    const ref_deformable_params *p = b->p;
    const int64_t hs[2] = {sc->h0, sc->h0 + 1}, ws[2] = {sc->w0, sc->w0 + 1}, HWC = p->H * p->W * p->C;
    const double wy[2] = {sc->hh, sc->lh}, wx[2] = {sc->hw, sc->lw}, dy = q->dy, dx = q->dx;
    const double ey = deform_corner_form_err(q->py, dy, b->pre), ex = deform_corner_form_err(q->px, dx, b->pre);
    double *const pos = b->tx[2] ? b->tx[2] + q->n * HWC : NULL;
    int64_t r0, r1, k0, k1;
    const int wide = deform_reach_rows(q->py, dy, ey, sc->h0, p->H, &r0, &r1) | deform_reach_rows(q->px, dx, ex, sc->w0, p->W, &k0, &k1);
    if (b->tx[3] && deform_bwd_on_line(p, q->py, dy, q->px, dx))
        deform_grad_x_unbounded(b->tx[3] + q->n * HWC, p->W, p->C, r0, r1, k0, k1, q->G, q->m, q->w0, q->w1);
    if (!pos) return;
    if (wide) { /* every pixel the box reaches may gain or lose this sample's weight, in [0, 1] */
        for (int64_t r = r0; r <= r1; r++)
            for (int64_t k = k0; k <= k1; k++)
                for (int64_t c = q->w0; c < q->w1; c++) {
                    const double gm = fabs(q->G[c] * q->m);
                    if (isfinite(gm)) pos[(r * p->W + k) * p->C + c] += gm;
                }
        return;
    }
    for (int u = 0; u < 2; u++)
        for (int v = 0; v < 2; v++) {
            if (hs[u] < 0 || hs[u] >= p->H || ws[v] < 0 || ws[v] >= p->W) continue;
            const double f = ref_weight_pos_err(wy[u], wx[v], dy + (u ? ey : 0.0), dx + (v ? ex : 0.0));
            double *e = pos + (hs[u] * p->W + ws[v]) * p->C;
            for (int64_t c = q->w0; c < q->w1; c++) {
                /* an infinite (or NaN) G m: a non-finite term, or ambiguous, never a bound (0 x inf) */
                const double gm = fabs(q->G[c] * q->m);
                if (isfinite(gm)) e[c] += gm * f;
            }
        }
    /* pixels across a cell edge the float twin may reach */
    int64_t pix[16];
    double nw[16];
    const int nn = deform_neighbours(p->H, p->W, hs, ws, wy, wx, dy, dx, ey, ex, pix, nw);
    for (int k = 0; k < nn; k++)
        for (int64_t c = q->w0; c < q->w1; c++) {
            const double gm = fabs(q->G[c] * q->m);
            if (isfinite(gm)) pos[pix[k] * p->C + c] += gm * nw[k];
        }
}

static int any_bounds(const bwd_ctx *b)
{
    for (int t = 0; t < 4; t++)
        if (b->tx[t] || b->to[t]) return 1;
    return 0;
}

/* Sample (n, ho, wo, g, i, j) of the backward. Its grad_x terms go to channels [cx0, cx1) of its
 * group only (a pass over one block of channels: every pixel then sums its terms in sample order,
 * whatever thread runs the block); with offs, it also writes its own grad_offsets elements. */
static void backward_sample(const bwd_ctx *b, int64_t n, int64_t ho, int64_t wo, int64_t g, int64_t i, int64_t j,
                            int64_t cx0, int64_t cx1, int offs)
{
    const ref_deformable_params *p = b->p;
    const int64_t K = p->kh * p->kw, dgK = p->dg * K, cpg = p->C / p->dg;
    const int64_t YH = p->Ho * p->kh, YW = p->Wo * p->kw, eo = ((n * p->Ho + ho) * p->Wo + wo) * 3 * dgK + g * K + i * p->kw + j;
    bwd_sample q = {n, b->x + n * p->H * p->W * p->C, b->grad + ((n * YH + ho * p->kh + i) * YW + wo * p->kw + j) * p->C,
                    0, 0, 0, 0, 0, g * cpg, (g + 1) * cpg, 0, 0, {eo, eo + dgK, eo + 2 * dgK}};
    q.w0 = cx0 > q.c0 ? cx0 : q.c0;
    q.w1 = cx1 < q.c1 ? cx1 : q.c1;
    sample_pos(p, b->offsets + n * p->Ho * p->Wo * 3 * dgK, ho, wo, g, i, j, &q.py, &q.px, &q.m);
    if (!isfinite(q.py) || !isfinite(q.px)) return; /* spec 0: nothing */
    const cell s = deform_cell_at(p, q.py, q.px);
    const int inside = q.py > -1 && q.py < (double)p->H && q.px > -1 && q.px < (double)p->W;
    double sum[3] = {0, 0, 0}, a[3];
    if (inside) {
        scatter_grad_x(b, &q, &s);
        if (offs) { /* grad_offsets: x, y, mask, sums over the group's channels */
            group_sums(p, q.xn, q.G, q.c0, q.c1, &s, q.m, sum, a);
            for (int t = 0; t < 3; t++) {
                b->grad_offsets[q.eot[t]] = sum[t];
                if (b->to[0]) b->to[0][q.eot[t]] = a[t];
                if (b->to[1]) b->to[1][q.eot[t]] = 4.0 * (double)cpg;
            }
        }
    }
    if (!any_bounds(b)) return;
    q.dy = deform_pos_error(q.py, p->pt, b->pre);
    q.dx = deform_pos_error(q.px, p->pl, b->pre);
    const int near = q.py >= -1.0 - q.dy && q.py <= (double)p->H + q.dy && q.px >= -1.0 - q.dx && q.px <= (double)p->W + q.dx;
    if (!inside && !near) return;
    /* smooth part, at the position moved onto the window when rounding could put it inside: what
       the sample may add there */
    const cell sc = inside ? s : deform_cell_at(p, clamp(q.py, -1.0, (double)p->H), clamp(q.px, -1.0, (double)p->W));
    if (!offs) {
        grad_x_pos_err(b, &q, &sc);
        return;
    }
    double pe[4] = {0, 0, 0, 0};
    const int nonfinite = offsets_pos_err(b, &q, &sc, pe);
    for (int t = 0; t < 3; t++) if (b->to[2]) b->to[2][q.eot[t]] = pe[t];
    if (b->to[3]) offset_ambiguity(b, &q, &s, sum, pe);
    /* all three sum every corner of the group's channels times G m: unbounded ambiguity */
    if (b->to[3] && nonfinite && deform_bwd_on_line(p, q.py, q.dy, q.px, q.dx))
        for (int t = 0; t < 3; t++) b->to[3][q.eot[t]] = INFINITY;
}

static void backward_offsets_row(void *ctx, int64_t nh)
{
    const bwd_ctx *b = ctx;
    const ref_deformable_params *p = b->p;
    for (int64_t wo = 0; wo < p->Wo; wo++)
        for (int64_t g = 0; g < p->dg; g++)
            for (int64_t i = 0; i < p->kh; i++)
                for (int64_t j = 0; j < p->kw; j++) backward_sample(b, nh / p->Ho, nh % p->Ho, wo, g, i, j, 0, 0, 1);
}

static void backward_grad_x_block(void *ctx, int64_t nc)
{
    const bwd_ctx *b = ctx;
    const ref_deformable_params *p = b->p;
    const int64_t n = nc / b->nb, cx0 = nc % b->nb * b->cb, cx1 = cx0 + b->cb, cpg = p->C / p->dg;
    for (int64_t ho = 0; ho < p->Ho; ho++)
        for (int64_t wo = 0; wo < p->Wo; wo++)
            for (int64_t g = 0; g < p->dg; g++) {
                if ((g + 1) * cpg <= cx0 || g * cpg >= cx1) continue; /* no channel of this block */
                for (int64_t i = 0; i < p->kh; i++)
                    for (int64_t j = 0; j < p->kw; j++) backward_sample(b, n, ho, wo, g, i, j, cx0, cx1, 0);
            }
}

void f64_deformable_offsets_bwd__ref(const ref_deformable_params *p, const double *grad, const double *x,
                                     const double *offsets, double *grad_x, double *grad_offsets,
                                     ref_bounds *bx, ref_bounds *bo)
{
    const int64_t dgK = p->dg * p->kh * p->kw;
    const int64_t nx = p->N * p->H * p->W * p->C, no = p->N * p->Ho * p->Wo * 3 * dgK;
    bwd_ctx b = {p, grad, x, offsets, grad_x, grad_offsets, {NULL}, {NULL}, bx ? bx->pos_rel_err : bo ? bo->pos_rel_err : 0.0,
                 0, 0};
    if (bx) { b.tx[0] = bx->abs_sum; b.tx[1] = bx->n_terms; b.tx[2] = bx->pos_err; b.tx[3] = bx->ambig; }
    if (bo) { b.to[0] = bo->abs_sum; b.to[1] = bo->n_terms; b.to[2] = bo->pos_err; b.to[3] = bo->ambig; }
    for (int64_t e = 0; e < nx; e++) {
        grad_x[e] = 0;
        for (int t = 0; t < 4; t++) if (b.tx[t]) b.tx[t][e] = 0;
    }
    for (int64_t e = 0; e < no; e++) {
        grad_offsets[e] = 0;
        for (int t = 0; t < 4; t++) if (b.to[t]) b.to[t][e] = 0;
    }
    if (p->dg <= 0) return;
    /* grad_offsets: each sample writes its own elements, so output rows (n, ho) are independent */
    ref_parallel_for(p->N * p->Ho, backward_offsets_row, &b);
    /* grad_x: blocks of channels of one image, every sample in order within a block, so each pixel
       sums its terms in sample order whatever thread runs the block */
    b.cb = ref_channel_block(p->N, p->C);
    b.nb = (p->C + b.cb - 1) / b.cb;
    ref_parallel_for(p->N * b.nb, backward_grad_x_block, &b);
}

/* ---- the reachable range (range.c) -------------------------------------------------------------- */

void ref_deformable_sample_at(const ref_deformable_params *p, const double *off_n, int64_t ho, int64_t wo, int64_t g,
                              int64_t i, int64_t j, double pos_rel_err, ref_deformable_sample *s)
{
    sample_pos(p, off_n, ho, wo, g, i, j, &s->py, &s->px, &s->m);
    s->dy = deform_pos_error(s->py, p->pt, pos_rel_err);
    s->dx = deform_pos_error(s->px, p->pl, pos_rel_err);
}
