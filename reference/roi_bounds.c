/* The RoIAlign family's bounds, shared by the fast and the plain golden (roi_bounds.h). */
#include "roi_bounds.h"

#include <math.h>
#include <string.h>

/* ---- the bounds' inputs of a roi ------------------------------------------------------------ */

void ref_roi_align_axes(const ref_roi_align_params *p, const double *roi, double rh, double rw, int64_t gh, int64_t gw,
                        double pos_rel_err, ref_roi_axes *a, ref_count_range *cr)
{
    const double s = p->spatial_scale, off = p->aligned ? 0.5 : 0.0, plus = p->end_plus_one ? 1.0 : 0.0;
    const int adaptive = p->sampling_ratio <= 0;
    a->mag_y = fabs(roi[2] * s) + fabs(roi[4] * s) + plus * s + off;
    a->mag_x = fabs(roi[1] * s) + fabs(roi[3] * s) + plus * s + off;
    a->exact_y = ref_axis_exact(roi[2], roi[4], s, plus, off, a->mag_y, p->pooled_h, gh);
    a->exact_x = ref_axis_exact(roi[1], roi[3], s, plus, off, a->mag_x, p->pooled_w, gw);
    cr->gh_lo = cr->gh_hi = gh;
    cr->gw_lo = cr->gw_hi = gw;
    /* rh/PH carries the rounding of rh: ceil may land on the next integer. Equal corners give
       an extent of exactly 0 in any precision (not so with end_plus_one): nothing to flip there. */
    if (adaptive && isfinite(rh) && (roi[2] != roi[4] || plus != 0)) {
        double dq = pos_rel_err * 2.0 * a->mag_y / (double)p->pooled_h;
        cr->gh_lo = ref_adaptive_count(rh / (double)p->pooled_h - dq);
        cr->gh_hi = ref_adaptive_count(rh / (double)p->pooled_h + dq);
    }
    if (adaptive && isfinite(rw) && (roi[1] != roi[3] || plus != 0)) {
        double dr = pos_rel_err * 2.0 * a->mag_x / (double)p->pooled_w;
        cr->gw_lo = ref_adaptive_count(rw / (double)p->pooled_w - dr);
        cr->gw_hi = ref_adaptive_count(rw / (double)p->pooled_w + dr);
    }
}

/* An extent after the unaligned max(r, 1) (a NaN extent stays NaN, as in roi_align). */
static double clamp_extent(double r, int aligned) { return (!aligned && r < 1.0) ? 1.0 : r; }

void ref_roi_rotated_axes(const ref_roi_align_rotated_params *p, const double *roi, double Hr, double Wr, int64_t gh,
                          int64_t gw, double pos_rel_err, ref_roi_axes *a, ref_count_range *cr)
{
    const double s = p->spatial_scale, off = p->aligned ? 0.5 : 0.0, w0 = roi[3] * s, h0 = roi[4] * s;
    const int adaptive = p->sampling_ratio <= 0;
    /* y = yy*cos - xx*sin + Cy with |yy| <= |Hr|/2 + bin, |xx| <= |Wr|/2 + bin: every rounding of
       the chain is relative to the centre term or to one of the two extents */
    double ext = fabs(Hr) + fabs(Wr);
    /* an angle given in double that float32 cannot hold is read rounded by u*|angle|: it turns
       every sample about the centre by up to that much times the extent */
    if (!ref_is_f32(roi[5]) && isfinite(roi[5])) ext *= 1.0 + fabs(roi[5]);
    a->mag_y = fabs(roi[2] * s) + off + ext;
    a->mag_x = fabs(roi[1] * s) + off + ext;
    /* At an angle of exactly 0 (either sign, either sense) every float32 evaluation has cos 1 and
       sin +-0 exactly (cosf, sinf of +-0; a degree conversion keeps 0), so y = yy + Cy and x = xx + Cx:
       roi_align's axis of start -Hr/2 + Cy (a halving: exact) and extent Hr = h s (or its clamp 1),
       whose exactness conditions (ref_axis_exact with c1 = cy, c2 = h) then hold as there. A sample
       exactly on y = -1 or y = H is then inside, not ambiguous. */
    a->exact_y = a->exact_x = 0;
    if (roi[5] == 0) {
        a->exact_y = ref_axis_exact(roi[2], roi[4], s, 0, off, a->mag_y, p->pooled_h, gh);
        a->exact_x = ref_axis_exact(roi[1], roi[3], s, 0, off, a->mag_x, p->pooled_w, gw);
    }
    cr->gh_lo = cr->gh_hi = gh;
    cr->gw_lo = cr->gw_hi = gw;
    /* h*s (and /PH) is rounded before ceil: the count may land on the next integer. The clamp
       is applied to both ends, so a clamped extent (exactly 1 in any precision) is not ambiguous. */
    if (adaptive && isfinite(h0)) {
        double d = pos_rel_err * fabs(h0);
        cr->gh_lo = ref_adaptive_count(clamp_extent(h0 - d, p->aligned) / (double)p->pooled_h);
        cr->gh_hi = ref_adaptive_count(clamp_extent(h0 + d, p->aligned) / (double)p->pooled_h);
    }
    if (adaptive && isfinite(w0)) {
        double d = pos_rel_err * fabs(w0);
        cr->gw_lo = ref_adaptive_count(clamp_extent(w0 - d, p->aligned) / (double)p->pooled_w);
        cr->gw_hi = ref_adaptive_count(clamp_extent(w0 + d, p->aligned) / (double)p->pooled_w);
    }
}

/* ---- forward ---------------------------------------------------------------------------------- */

/* The taps [*r0, *r1] of an axis of n pixels some position of [v - d, v + d] reads, at weight 0
 * included: the reach [t0, t1], and where the box reaches 0 or below, tap 1, which rule A's clamp
 * onto 0 reads at weight 0 (v <= 0 reads taps 0 and 1 at weights 1 and 0; the reach stops at 0) */
static void axis_read(double v, double d, int64_t n, int64_t t0, int64_t t1, int64_t *r0, int64_t *r1)
{
    *r0 = t0, *r1 = t1;
    if (n > 1 && v - d <= 0 && t1 < 1) *r1 = 1;
}

/* The taps [*a, *b] of the read taps [r0, r1] (axis_read) of an axis of n pixels that every
 * position of [v - d, v + d] reads alike (not at all, at weight 0, at a weight above 0), rule A's
 * clamp onto [0, n - 1] applied first: all of them when the clamped box is one point (an exact
 * position, d = 0, or a box wholly on one side of a clamp: every form computes the same taps and
 * weights); the reach's own [t0, t1] when the box meets no integer there; the one integer k it
 * meets (k - 1 and k + 1 get weight 0, a small weight or are not read), but none at k = n - 1,
 * where the clamp reads tap n - 1 as both corners, one at weight 0 (below it, once at a weight
 * above 0); none (a > b) when it meets two. */
static void axis_core(double v, double d, int64_t n, int64_t t0, int64_t t1, int64_t r0, int64_t r1, int64_t *a,
                      int64_t *b)
{
    const double top = (double)(n - 1), lo = fmin(fmax(v - d, 0), top), hi = fmin(fmax(v + d, 0), top);
    const double k = ceil(lo);
    *a = r0, *b = r1;
    if (d <= 0 || lo == hi) return;
    *a = t0, *b = t1;
    if (k > hi) return;
    *a = (int64_t)k, *b = k + 1 <= hi || k == top ? *a - 1 : *a;
}

/* read and core (axis_read, axis_core) of the sample at (y, x) with position errors (dy, dx) on an
 * H x W plane whose position box reaches the taps reach; whether they differ */
static int read_core_of(int64_t H, int64_t W, double y, double x, double dy, double dx, const ref_tap_rect *t,
                        ref_tap_rect *rd, ref_tap_rect *co)
{
    rd->zero = co->zero = 0;
    axis_read(y, dy, H, t->r0, t->r1, &rd->r0, &rd->r1);
    axis_read(x, dx, W, t->c0, t->c1, &rd->c0, &rd->c1);
    axis_core(y, dy, H, t->r0, t->r1, rd->r0, rd->r1, &co->r0, &co->r1);
    axis_core(x, dx, W, t->c0, t->c1, rd->c0, rd->c1, &co->c0, &co->c1);
    return co->r0 != rd->r0 || co->r1 != rd->r1 || co->c0 != rd->c0 || co->c1 != rd->c1;
}

static int in_rect(const ref_tap_rect *t, int64_t r, int64_t c)
{
    return r >= t->r0 && r <= t->r1 && c >= t->c0 && c <= t->c1;
}

int ref_roi_fwd_switched_nonfinite(const double *plane, int64_t W, int64_t cs, const ref_tap_rect *read,
                                   const ref_tap_rect *core)
{
    for (int64_t r = read->r0; r <= read->r1; r++)
        for (int64_t c = read->c0; c <= read->c1; c++) {
            if (!in_rect(core, r, c) && !isfinite(plane[(r * W + c) * cs])) return 1;
        }
    return 0;
}

int ref_roi_fwd_tap_of(int64_t H, int64_t W, double y, double x, double dy, double dx, ref_fwd_tap *s)
{
    sample_class cls = ref_classify_sample(H, W, y, x, dy, dx);
    s->inside = ref_bilinear_rule(H, W, y, x, &s->r);
    s->ambiguous = cls == SAMPLE_AMBIGUOUS;
    if (!s->inside && s->ambiguous) ref_bilinear_rule_clamped(H, W, y, x, &s->r);
    if (!s->inside && !s->ambiguous) return 0;
    ref_tap_rect_of(H, W, y, x, dy, dx, 1, &s->reach);
    /* the slopes are those of the window's rows y0 - 1 .. y0 + 2 and columns x0 - 1 .. x0 + 2: they
       bound a move within its cells only. A box of a pixel or more (k_pos u |position terms| >= 1:
       terms past about 2^20) can carry the sample to taps outside it, whatever the slopes there */
    const ref_tap_rect *t = &s->reach;
    s->far = t->r0 < s->r.y[0] - 1 || t->r1 > s->r.y[0] + 2 || t->c0 < s->r.x[0] - 1 || t->c1 > s->r.x[0] + 2;
    s->switched = read_core_of(H, W, y, x, dy, dx, t, &s->read, &s->core);
    s->dy = dy;
    s->dx = dx;
    return 1;
}

void ref_roi_fwd_acc(int inside, int ambiguous, int far, double dy, double dx, double v, double av, double sy,
                     double sx, double lo, double hi, ref_bin_acc *a)
{
    /* capped: a sample moving anywhere within its box stays within the range of the taps it reaches
       (at |position| near 2^24 the first-order term alone passes the plane's whole range) */
    double pe = ref_roi_fwd_pos_term(far, sy, sx, dy, dx, lo, hi);
    /* an ambiguous sample adds 0 or a value of [lo, hi]: it changes the bin's sum by at most the
       range of {0} and the taps, of which the position term already counted pe when it is inside */
    if (inside) {
        a->sum += v;
        a->abs_sum += av;
        a->n_terms += 4;
        a->pos_err += pe;
    } else if (av > 0) {
        /* outside, so ambiguous: a kernel that keeps the sample also rounds its terms, so the
           element's abs_sum and n_terms cover that branch (what a bfloat16 kernel's rounding of
           it needs) */
        a->abs_sum += av;
        a->n_terms += 4;
    }
    if (ambiguous) {
        double reach0 = isnan(hi - lo) ? INFINITY : fmax(hi, 0) - fmin(lo, 0);
        a->ambig += fmin(av + pe, inside ? fmax(reach0 - pe, 0) : reach0);
        /* kept or dropped, the bin is non-finite on one branch and not on the other (an infinite
           or NaN tap, also under a corner of weight 0: 0 * inf is NaN): unbounded */
        if (!isfinite(v) || !isfinite(lo) || !isfinite(hi)) a->ambig += INFINITY;
    }
}

void ref_roi_fwd_sample_add(const double *plane, int64_t H, int64_t W, int64_t cs, const ref_fwd_tap *s, double v,
                            double av, ref_bin_acc *a)
{
    double sy, sx, lo, hi;
    ref_local_slopes(plane, H, W, cs, &s->r, &sy, &sx);
    ref_tap_rect_range(plane, W, cs, &s->reach, &lo, &hi);
    ref_roi_fwd_acc(s->inside, s->ambiguous, s->far, s->dy, s->dx, v, av, sy, sx, lo, hi, a);
    /* a sample within rounding of a cell or clamp line reads a tap beyond it or not, at weight 0 or
       not: a non-finite one makes the bin NaN, infinite or a number by the rounding alone */
    if (s->switched && ref_roi_fwd_switched_nonfinite(plane, W, cs, &s->read, &s->core)) a->ambig += INFINITY;
}

void ref_roi_fwd_widen(const ref_bin_acc *o, double alt_count, double value, double *ambig, double *abs_sum,
                       double *n_terms)
{
    *ambig = fmax(*ambig, fabs(o->sum / alt_count - value) + (o->ambig + o->pos_err) / alt_count);
    *abs_sum = fmax(*abs_sum, o->abs_sum / alt_count);
    *n_terms = fmax(*n_terms, o->n_terms);
}

/* ---- backward --------------------------------------------------------------------------------- */

/* the slot of pixel e among the sample's n distinct pixels px (added when new) */
static int slot_of(int64_t px[16], int *n, int64_t e)
{
    int k = 0;
    while (k < *n && px[k] != e) k++;
    if (k == *n) px[(*n)++] = e;
    return k;
}

typedef struct {
    int64_t H, W, px[16];
    int n_px;
    ref_bwd_neighbour *nb;
    size_t n_nb;
} nb_ctx;

static void neighbour_of(void *ctx, int64_t row, int64_t col, double bound)
{
    nb_ctx *b = ctx;
    if (row < 0 || row >= b->H || col < 0 || col >= b->W) return;
    b->nb[b->n_nb++] = (ref_bwd_neighbour){row * b->W + col, bound, slot_of(b->px, &b->n_px, row * b->W + col), 0};
}

/* The slots (corners and neighbours) are rows x columns of the cell and the rows and columns across
 * its edges within the box: a rectangle. A box that reaches beyond it (a pixel or more: position
 * terms past about 2^20, k_pos u |terms| >= 1; or, for a sample off the nominal branch, whose
 * neighbours are not taken, across any cell edge) can carry the sample's float twin to taps no slot
 * bounds: the sample is far, and each such pixel of its reach may get any weight in [0, 1]. */
static void bwd_far_of(int64_t H, int64_t W, double y, double x, double dy, double dx, const nb_ctx *b,
                       ref_bwd_tap *s)
{
    int64_t r0 = INT64_MAX, r1 = -1, c0 = INT64_MAX, c1 = -1;
    for (int k = 0; k < b->n_px; k++) {
        const int64_t r = b->px[k] / W, c = b->px[k] % W;
        r0 = r < r0 ? r : r0, r1 = r > r1 ? r : r1, c0 = c < c0 ? c : c0, c1 = c > c1 ? c : c1;
    }
    ref_tap_rect t;
    ref_tap_rect_of(H, W, y, x, dy, dx, 1, &t);
    s->far = t.r0 < r0 || t.r1 > r1 || t.c0 < c0 || t.c1 > c1;
    s->reach[0] = t.r0, s->reach[1] = t.r1, s->reach[2] = t.c0, s->reach[3] = t.c1;
    s->switched = (unsigned char)read_core_of(H, W, y, x, dy, dx, &t, &s->read, &s->core);
}

int ref_roi_bwd_tap_of(int64_t H, int64_t W, double y, double x, double dy, double dx, double count,
                       int as_alternative, ref_bwd_tap *s, ref_bwd_neighbour nb[REF_BWD_MAX_NB])
{
    ref_bilinear r;
    sample_class cls = ref_classify_sample(H, W, y, x, dy, dx);
    int inside = ref_bilinear_rule(H, W, y, x, &r);
    if (!inside && cls == SAMPLE_AMBIGUOUS) ref_bilinear_rule_clamped(H, W, y, x, &r);
    if (!inside && cls != SAMPLE_AMBIGUOUS) return 0;
    memset(s, 0, sizeof *s);
    s->count = count;
    s->nominal = inside && !as_alternative;
    s->widen = as_alternative || cls == SAMPLE_AMBIGUOUS;
    nb_ctx b = {H, W, {0}, 0, nb, 0};
    for (int i = 0; i < 2; i++) {
        s->wy[i] = r.wy[i];
        s->wx[i] = r.wx[i];
        for (int j = 0; j < 2; j++) {
            s->e[2 * i + j] = r.y[i] * W + r.x[j];
            s->wpe[2 * i + j] = ref_weight_pos_err(r.wy[i], r.wx[j], dy, dx);
            s->slot[2 * i + j] = (unsigned char)slot_of(b.px, &b.n_px, s->e[2 * i + j]);
        }
    }
    if (s->nominal) ref_neighbour_weights(r.y, r.x, r.wy, r.wx, dy, dx, neighbour_of, &b);
    s->n_nb = b.n_nb;
    s->n_slots = (unsigned char)b.n_px;
    bwd_far_of(H, W, y, x, dy, dx, &b, s);
    return 1;
}

/* The pixels of a far sample's reach that are none of its slots (px: theirs): each may get any weight
 * in [0, 1], so |go| / count, the cap, in full: a position term on the nominal branch, an ambiguity
 * off it. An infinite cap is left out as the neighbours' is: a twin landing there gives a non-finite
 * value, which no tolerance holds. */
static void bwd_far_bounds(const ref_plane_out *o, const ref_bwd_tap *s, const int64_t px[16], double cap)
{
    double *f = s->nominal ? o->pos_err : o->ambig;
    if (!s->far || !f || !(cap > 0) || !isfinite(cap)) return;
    for (int64_t r = s->reach[0]; r <= s->reach[1]; r++)
        for (int64_t c = s->reach[2]; c <= s->reach[3]; c++) {
            const int64_t e = (r * o->W + c) * o->ps;
            int k = 0;
            while (k < s->n_slots && px[k] != e) k++;
            if (k == s->n_slots) f[e] += cap;
        }
}

/* A sample with an infinite or NaN gradient gives a pixel +-inf where its weight is > 0, NaN where
 * it is 0 (0 * inf) or the gradient NaN, nothing where it does not reach: where rounding decides
 * which (the sample kept or dropped; a weight within its position bound of 0; a pixel across an
 * edge or of a far box), no value is owed, and the pixel's ambiguity is unbounded. Setting it to
 * INFINITY commutes with every later addition, so the goldens may do it in any order. */
static void bwd_nonfinite(const ref_plane_out *o, const ref_bwd_tap *s, const ref_bwd_neighbour *nb)
{
    int64_t px[16];
    double w[16], wb[16];
    for (int k = 0; k < s->n_slots; k++) px[k] = -1, w[k] = wb[k] = 0;
    for (int c = 0; c < 4; c++) {
        px[s->slot[c]] = s->e[c] * o->ps;
        w[s->slot[c]] += s->wy[c >> 1] * s->wx[c & 1];
        wb[s->slot[c]] += s->wpe[c];
    }
    for (size_t n = 0; n < s->n_nb; n++) {
        px[nb[n].slot] = nb[n].e * o->ps;
        wb[nb[n].slot] += nb[n].bound;
    }
    for (int k = 0; k < s->n_slots; k++)
        if (px[k] >= 0 && (s->widen || (wb[k] > 0 && w[k] <= wb[k]))) o->ambig[px[k]] = INFINITY;
    /* a pixel some rounding reads and another does not, or reads at weight 0 where another does
       not (a weight-0 column beside a row line, the top clamp's second read): NaN, inf or nothing */
    for (int64_t r = s->read.r0; s->switched && r <= s->read.r1; r++)
        for (int64_t c = s->read.c0; c <= s->read.c1; c++)
            if (!in_rect(&s->core, r, c)) o->ambig[(r * o->W + c) * o->ps] = INFINITY;
    for (int64_t r = s->reach[0]; s->far && r <= s->reach[1]; r++)
        for (int64_t c = s->reach[2]; c <= s->reach[3]; c++) {
            const int64_t e = (r * o->W + c) * o->ps;
            int k = 0;
            while (k < s->n_slots && px[k] != e) k++;
            if (k == s->n_slots) o->ambig[e] = INFINITY;
        }
}

void ref_roi_bwd_bounds(const ref_plane_out *o, const ref_bwd_tap *s, const ref_bwd_neighbour *nb, double go)
{
    const double cap = fabs(go) / s->count;
    int64_t px[16];
    double pe_px[16], amb_px[16];
    for (int k = 0; k < s->n_slots; k++) {
        px[k] = 0;
        pe_px[k] = amb_px[k] = 0;
    }
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            const int64_t e = s->e[2 * i + j] * o->ps;
            const int k = s->slot[2 * i + j];
            double t = go * s->wy[i] * s->wx[j] / s->count;
            double pe = cap * s->wpe[2 * i + j];
            /* a term only another branch adds (another sample count, or the sample kept: outside,
               so ambiguous) is rounded by a kernel on that branch: abs_sum and n_terms cover it too */
            if (s->nominal || fabs(t) > 0) {
                if (o->abs_sum) o->abs_sum[e] += fabs(t);
                if (o->n_terms) o->n_terms[e] += 1;
            }
            px[k] = e;
            pe_px[k] += s->nominal ? pe : 0;
            amb_px[k] += s->widen ? fabs(t) + pe : 0;
        }
    /* pixels across a cell edge the float twin may reach, with the most weight it can get there */
    for (size_t n = 0; n < (s->nominal && isfinite(cap) ? s->n_nb : 0); n++) {
        px[nb[n].slot] = nb[n].e * o->ps;
        pe_px[nb[n].slot] += cap * nb[n].bound;
        amb_px[nb[n].slot] += 0;
    }
    /* capped per pixel: the weights a sample gives one pixel sum to a number in [0, 1] on every
       branch (coinciding corners included), so the sample moves that pixel's term by at most
       |go| / count; the position term takes its share first, the ambiguity the rest */
    for (int k = 0; k < s->n_slots; k++) {
        double pe = fmin(pe_px[k], cap), amb = fmin(amb_px[k], s->nominal ? fmax(cap - pe, 0) : cap);
        if (o->pos_err && pe > 0) o->pos_err[px[k]] += pe;
        if (o->ambig && amb > 0) o->ambig[px[k]] += amb;
    }
    bwd_far_bounds(o, s, px, cap);
    if (!isfinite(cap) && o->ambig) bwd_nonfinite(o, s, nb);
}
