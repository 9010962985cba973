/* Property tests of the caps for deformable_offsets and deformable_offsets_grad: offsets that put a
 * sample at extreme but finite positions (up to 1e9, around 2^24, near the int32 limits, both signs)
 * on one or both axes, or on the plane (also under pads and strides of 2^20, the harness's limit,
 * where the nnabla order rounds base + offset at |position + pad|); masks of either sign; planes of
 * values in [1, 20]. Every element's pos_err + ambig stays within what the element can change by,
 * and an output moved by that much (and its own rounding) fails.
 *
 * What an element can change by (G the incoming gradient, m the sample's mask):
 *   y: m times a convex combination of zero-padded taps in [0, 20]: within [0, 20 |m|].
 *   grad_x: each sample gives a pixel G m w, w in [0, 1] its corner weight (the four corners are
 *     distinct pixels), so a sample moves it by at most |G m|; only a sample that can reach the
 *     pixel counts: within its rounding box (twice the model's u (|p| + |p + pad|)) and 2 pixels.
 *   grad_offsets x and y: G m times a difference of two taps in [0, 20], summed over the group's
 *     channels: within +-20 sum |G m|, a range of 40 sum |G m|.
 *   mask gradient: G times a value in [0, 20], summed: a range of 20 sum |G|. */
#include "tolerance_caps.h"

#define DF_N 250
#define DF_H 9
#define DF_W 7
#define DF_C 4
#define DF_DG 2

/* one axis of a sample: extreme, or an offset that lands the position on the plane or just off it */
static double offset_for(unsigned *s, int extreme_axis, double base, int64_t n)
{
    if (extreme_axis) return extreme(s);
    return (double)(float)(-2.0 + ((double)n + 3.0) * uniform(s) - base);
}

static double *deform_offsets(const ref_deformable_params *p, unsigned *s)
{
    const int64_t K = p->kh * p->kw, dgK = p->dg * K;
    double *off = malloc(sizeof(double) * (size_t)(p->N * p->Ho * p->Wo * 3 * dgK));
    for (int64_t n = 0; n < p->N; n++)
        for (int64_t ho = 0; ho < p->Ho; ho++)
            for (int64_t wo = 0; wo < p->Wo; wo++)
                for (int64_t k = 0; k < dgK; k++) {
                    double *o = off + ((n * p->Ho + ho) * p->Wo + wo) * 3 * dgK;
                    const int64_t i = k % K / p->kw, j = k % p->kw, mode = rand_r(s) % 4;
                    o[k] = offset_for(s, mode == 0 || mode == 1, (double)(wo * p->sw - p->pl + j * p->dw), p->W);
                    o[dgK + k] = offset_for(s, mode == 0 || mode == 2, (double)(ho * p->sh - p->pt + i * p->dh), p->H);
                    o[2 * dgK + k] = (double)(float)((rand_r(s) % 2 ? 1 : -1) * (0.25 + 1.75 * uniform(s)));
                }
    return off;
}

/* the reaches of the backward's outputs (see the top) */
static void deform_reach(const ref_deformable_params *p, const double *off, const double *G, double *rx, double *ro)
{
    const int64_t K = p->kh * p->kw, dgK = p->dg * K, cpg = p->C / p->dg, YH = p->Ho * p->kh, YW = p->Wo * p->kw;
    for (int64_t n = 0; n < p->N; n++)
        for (int64_t ho = 0; ho < p->Ho; ho++)
            for (int64_t wo = 0; wo < p->Wo; wo++)
                for (int64_t k = 0; k < dgK; k++) {
                    const int64_t g = k / K, i = k % K / p->kw, j = k % p->kw;
                    const int64_t eo = ((n * p->Ho + ho) * p->Wo + wo) * 3 * dgK;
                    const double px = (double)(wo * p->sw - p->pl + j * p->dw) + off[eo + k];
                    const double py = (double)(ho * p->sh - p->pt + i * p->dh) + off[eo + dgK + k], m = off[eo + 2 * dgK + k];
                    const double my = 2.0 + 2.0 * ldexp(1.0, -24) * (2 * fabs(py) + (double)p->pt);
                    const double mx = 2.0 + 2.0 * ldexp(1.0, -24) * (2 * fabs(px) + (double)p->pl);
                    const double *Gs = G + ((n * YH + ho * p->kh + i) * YW + wo * p->kw + j) * p->C;
                    double sgm = 0, sg = 0;
                    for (int64_t c = g * cpg; c < (g + 1) * cpg; c++) {
                        sgm += fabs(Gs[c] * m);
                        sg += fabs(Gs[c]);
                        add_rect(rx + n * p->H * p->W * p->C + c, p->H, p->W, p->C, py, px, my, mx, fabs(Gs[c] * m));
                    }
                    ro[eo + k] = ro[eo + dgK + k] = 2.0 * PLANE_HI * sgm;
                    ro[eo + 2 * dgK + k] = PLANE_HI * sg;
                }
}

static int64_t deform_property(int backward)
{
    const op_desc *op = op_find(backward ? "deformable_offsets_grad" : "deformable_offsets");
    unsigned seed = 2403;
    int64_t total = 0;
    for (int cfg = 0; cfg < 2; cfg++) {
        /* cfg 0: pads 1, strides 1 (Ho = H); cfg 1: pads and strides 2^20 (Ho = 3, bases -2^20, 0, 2^20) */
        const int64_t pad = cfg ? 1 << 20 : 1, st = cfg ? 1 << 20 : 1;
        ref_deformable_params p = {DF_N, DF_H, DF_W, DF_C, 3, 3, st, st, 1, 1, pad, pad, pad, pad, DF_DG, 0, 0};
        p.Ho = (p.H + 2 * pad - 3) / st + 1;
        p.Wo = (p.W + 2 * pad - 3) / st + 1;
        const int64_t nx = p.N * p.H * p.W * p.C, ny = p.N * p.Ho * 3 * p.Wo * 3 * p.C, no = p.N * p.Ho * p.Wo * 3 * p.dg * 9;
        double *x = plane_values(nx, &seed), *off = deform_offsets(&p, &seed);
        char what[64];
        snprintf(what, sizeof what, "%s pads %lld strides %lld", op->name, (long long)pad, (long long)st);
        if (!backward) {
            double *y = malloc(sizeof(double) * (size_t)ny), *reach = malloc(sizeof(double) * (size_t)ny);
            ref_bounds b = bounds_alloc(op->tol[0].k_pos * CONFORM_U_F32, ny);
            f64_deformable_offsets_fwd__ref(&p, x, off, y, &b);
            for (int64_t e = 0; e < ny; e++) { /* element (n, ho kh + i, wo kw + j, c): its mask */
                const int64_t c = e % p.C, col = e / p.C % (p.Wo * 3), row = e / p.C / (p.Wo * 3) % (p.Ho * 3), n = e / p.C / (p.Wo * 3) / (p.Ho * 3);
                const int64_t k = c / (p.C / p.dg) * 9 + row % 3 * 3 + col % 3;
                reach[e] = PLANE_HI * fabs(off[((n * p.Ho + row / 3) * p.Wo + col / 3) * 3 * p.dg * 9 + 2 * p.dg * 9 + k]);
            }
            assert_below_reach(op, 0, y, &b, ny, reach, 0, what);
            bounds_free(&b); free(y); free(reach);
            total += ny;
        } else {
            double *G = plane_values(ny, &seed), *gx = malloc(sizeof(double) * (size_t)nx), *go = malloc(sizeof(double) * (size_t)no);
            double *rx = calloc((size_t)nx, sizeof(double)), *ro = calloc((size_t)no, sizeof(double));
            ref_bounds bx = bounds_alloc(op->tol[0].k_pos * CONFORM_U_F32, nx), bo = bounds_alloc(op->tol[1].k_pos * CONFORM_U_F32, no);
            f64_deformable_offsets_bwd__ref(&p, G, x, off, gx, go, &bx, &bo);
            deform_reach(&p, off, G, rx, ro);
            assert_below_reach(op, 0, gx, &bx, nx, rx, 0, what);
            assert_below_reach(op, 1, go, &bo, no, ro, 0, what);
            bounds_free(&bx); bounds_free(&bo); free(G); free(gx); free(go); free(rx); free(ro);
            total += nx;
        }
        free(x); free(off);
    }
    return total;
}

Test(tolerance_caps, deformable_offsets_values_at_extreme_positions_stay_within_the_plane_range)
{
    cr_assert_geq(deform_property(0), 100000);
}

/* counts grad_x elements only (grad_offsets has many more) */
Test(tolerance_caps, deformable_offsets_grad_gradients_at_extreme_positions_stay_within_their_reach)
{
    cr_assert_geq(deform_property(1), 100000);
}

/* Boxes wider than a cell: the reference's bounds are public and take any pos_rel_err. At 2^-18 (a
 * position error of 4 pixels under pads of 2^20, as a kernel keeping positions in a narrow type
 * would have) every pixel and every cell the box reaches must be covered: the reference evaluated at
 * positions moved anywhere within 0.9 of their boxes stays within pos_err + ambig of the nominal one. */
Test(tolerance_caps, deformable_grad_bounds_cover_boxes_wider_than_a_cell)
{
    const int64_t pad = 1 << 20;
    ref_deformable_params p = {20, DF_H, DF_W, DF_C, 3, 3, pad, pad, 1, 1, pad, pad, pad, pad, DF_DG, 0, 0};
    p.Ho = (p.H + 2 * pad - 3) / pad + 1;
    p.Wo = (p.W + 2 * pad - 3) / pad + 1;
    const int64_t K = 9, dgK = p.dg * K, nx = p.N * p.H * p.W * p.C, no = p.N * p.Ho * p.Wo * 3 * dgK;
    const int64_t ny = p.N * p.Ho * 3 * p.Wo * 3 * p.C;
    const double pre = ldexp(1.0, -18);
    unsigned seed = 2404;
    double *x = plane_values(nx, &seed), *G = plane_values(ny, &seed), *off = malloc(sizeof(double) * (size_t)no);
    for (int64_t n = 0; n < p.N; n++) /* positions on the plane or just off it, masks of either sign */
        for (int64_t ho = 0; ho < p.Ho; ho++)
            for (int64_t wo = 0; wo < p.Wo; wo++)
                for (int64_t k = 0; k < dgK; k++) {
                    double *o = off + ((n * p.Ho + ho) * p.Wo + wo) * 3 * dgK;
                    o[k] = offset_for(&seed, 0, (double)(wo * p.sw - p.pl + k % 3), p.W);
                    o[dgK + k] = offset_for(&seed, 0, (double)(ho * p.sh - p.pt + k % K / 3), p.H);
                    o[2 * dgK + k] = (rand_r(&seed) % 2 ? 1 : -1) * (0.25 + 1.75 * uniform(&seed));
                }
    double *gx = malloc(sizeof(double) * (size_t)nx), *go = malloc(sizeof(double) * (size_t)no);
    ref_bounds bx = bounds_alloc(pre, nx), bo = bounds_alloc(pre, no);
    f64_deformable_offsets_bwd__ref(&p, G, x, off, gx, go, &bx, &bo);
    double *moved = malloc(sizeof(double) * (size_t)no), *mx = malloc(sizeof(double) * (size_t)nx);
    double *mo = malloc(sizeof(double) * (size_t)no);
    int64_t wide = 0;
    for (int trial = 0; trial < 8; trial++) {
        /* each position moved within 0.9 of its box (the pad-last form's rounding at |p + pad|) */
        for (int64_t e = 0; e < no; e++) {
            const int64_t k = e % (3 * dgK), cell = e / (3 * dgK), wo = cell % p.Wo, ho = cell / p.Wo % p.Ho;
            moved[e] = off[e];
            if (k >= 2 * dgK) continue;
            const double base = k < dgK ? (double)(wo * p.sw - p.pl + k % 3) : (double)(ho * p.sh - p.pt + k % K / 3);
            /* the reference's box (deformable_offsets.c pos_error): the spec's order, or the pad
               added first, exact where that sum is a float32 number */
            const double v = base + off[e], vp = v + (double)pad, f32v = (double)(float)v == v, f32vp = (double)(float)vp == vp;
            const double d = fmax(f32v ? 0 : pre * fabs(v), (f32vp ? 0 : pre * fabs(vp)) + (v < 0 && !(f32v && f32vp) ? pre * fabs(v) : 0));
            if (d > 1) wide++;
            moved[e] = off[e] + 0.9 * d * (2 * uniform(&seed) - 1);
        }
        f64_deformable_offsets_bwd__ref(&p, G, x, moved, mx, mo, NULL, NULL);
        for (int64_t e = 0; e < nx; e++)
            cr_assert(fabs(mx[e] - gx[e]) <= bx.pos_err[e] + bx.ambig[e], "grad_x %lld: moved by %g, pos_err %g + ambig %g",
                      (long long)e, fabs(mx[e] - gx[e]), bx.pos_err[e], bx.ambig[e]);
        for (int64_t e = 0; e < no; e++)
            cr_assert(fabs(mo[e] - go[e]) <= bo.pos_err[e] + bo.ambig[e],
                      "grad_offsets %lld: moved by %g, pos_err %g + ambig %g", (long long)e, fabs(mo[e] - go[e]),
                      bo.pos_err[e], bo.ambig[e]);
    }
    cr_assert_gt(wide, 1000, "boxes wider than a cell: %lld", (long long)wide);
    bounds_free(&bx); bounds_free(&bo);
    free(x); free(G); free(off); free(gx); free(go); free(moved); free(mx); free(mo);
}
