/* The plain golden of the RoIAlign family: roi_align (ops.md 1), roi_align_v2_backward (2),
 * roi_align_rotated (3) and roi_align_rotated_grad (4), each the spec's loops over rois, channels,
 * bins and samples, with rule A (ops.md A: ref_bilinear_rule, bilinear.c) at every sample. The
 * bounds' arithmetic is the shared helpers of roi_bounds.h, which the fast golden calls too. */
#include "conform_plain.h"

#include <math.h>
#include <string.h>

#include "roi_bounds.h"

/* ---- what every op of the family shares ------------------------------------------------------- */

/* ops.md 0: b = floor(roi[0]); a roi whose b is not finite or not in [0, B) is skipped (-1) */
static int64_t batch_of(double v, int64_t B)
{
    const double b = floor(v);
    return isfinite(b) && b >= 0 && b < (double)B ? (int64_t)b : -1;
}

/* max(r, 1) of an unaligned extent (a NaN extent stays NaN: its samples are empty) */
static double at_least_1(double r, int aligned) { return !aligned && r < 1.0 ? 1.0 : r; }

static int64_t count_of(int64_t sr, double bin) { return sr > 0 ? sr : ref_adaptive_count(bin); }

/* Forward: B(F, y, x) of rule A added to the bin, plane F with pixel (r, c) at F[(r W + c) cs]:
 * the corners' weighted values, and the sample's bounds */
static void sample_add(const double *F, int64_t H, int64_t W, int64_t cs, double y, double x, double dy, double dx,
                       ref_bin_acc *a)
{
    ref_fwd_tap s;
    if (!ref_roi_fwd_tap_of(H, W, y, x, dy, dx, &s)) return; /* empty, whatever rounding does */
    double v = 0, av = 0;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            const double t = s.r.wy[i] * s.r.wx[j] * F[(s.r.y[i] * W + s.r.x[j]) * cs];
            v += t;
            av += fabs(t);
        }
    ref_roi_fwd_sample_add(F, H, W, cs, &s, v, av, a); /* adds v to the sum when the sample is inside */
}

/* Backward: the adjoint of B(F, y, x), each corner receiving go * weight / count, and its bounds */
static void sample_scatter(const ref_plane_out *o, int64_t H, int64_t W, double y, double x, double dy, double dx,
                           double count, int alternative, double go)
{
    ref_bwd_tap s;
    ref_bwd_neighbour nb[REF_BWD_MAX_NB];
    if (!ref_roi_bwd_tap_of(H, W, y, x, dy, dx, count, alternative, &s, nb)) return;
    for (int i = 0; i < 2 && s.nominal; i++)
        for (int j = 0; j < 2; j++) o->grad[s.e[2 * i + j] * o->ps] += go * s.wy[i] * s.wx[j] / count;
    ref_roi_bwd_bounds(o, &s, nb, go);
}

/* Element e of a forward: the bin's mean (a over count samples) and its bounds; alt[0 .. n_alt):
 * the bin with each other count rounding may pick (alt_count its divisor), unbounded: too many */
static void element(const ref_bin_acc *a, double count, const ref_bin_acc *alt, const double *alt_count, int n_alt,
                    int unbounded, double *out, int64_t e, ref_bounds *bounds)
{
    out[e] = a->sum / count;
    if (!bounds) return;
    double ambig = unbounded ? INFINITY : a->ambig / count, abs_sum = a->abs_sum / count, n_terms = a->n_terms;
    for (int i = 0; i < n_alt; i++) ref_roi_fwd_widen(&alt[i], alt_count[i], out[e], &ambig, &abs_sum, &n_terms);
    if (bounds->abs_sum) bounds->abs_sum[e] = abs_sum;
    if (bounds->n_terms) bounds->n_terms[e] = n_terms;
    if (bounds->pos_err) bounds->pos_err[e] = a->pos_err / count;
    if (bounds->ambig) bounds->ambig[e] = ambig;
}

/* plane (b, c) of a feature-shaped output and its bounds: NCHW, or NHWC (pixel stride C); rows of W */
static ref_plane_out plane_of(double *grad, const ref_bounds *bd, int64_t at, int64_t ps, int64_t W)
{
    ref_plane_out o = {grad + at, NULL, NULL, NULL, NULL, ps, W};
    if (bd && bd->abs_sum) o.abs_sum = bd->abs_sum + at;
    if (bd && bd->n_terms) o.n_terms = bd->n_terms + at;
    if (bd && bd->pos_err) o.pos_err = bd->pos_err + at;
    if (bd && bd->ambig) o.ambig = bd->ambig + at;
    return o;
}

/* a backward's outputs start at 0 (ops.md 0) */
static void zero_all(double *grad, const ref_bounds *bd, int64_t n)
{
    double *a[5] = {grad, bd ? bd->abs_sum : NULL, bd ? bd->n_terms : NULL, bd ? bd->pos_err : NULL,
                    bd ? bd->ambig : NULL};
    for (int t = 0; t < 5; t++)
        for (int64_t i = 0; a[t] && i < n; i++) a[t][i] = 0;
}

/* ---- roi_align (ops.md 1) and roi_align_v2_backward (ops.md 2) --------------------------------- */

/* one roi as spec 1 computes it, with its bounds' inputs */
typedef struct {
    int64_t b, gh, gw;
    double sx, sy, bin_h, bin_w, count;
    ref_roi_axes ax;
    ref_count_range cr;
} align_roi;

static align_roi align_roi_of(const ref_roi_align_params *p, const double *roi, double pre)
{
    align_roi r;
    const double s = p->spatial_scale, off = p->aligned ? 0.5 : 0.0;
    const double plus = p->end_plus_one ? 1.0 : 0.0; /* Ascend roi_end_mode 1: the end pixel counted in */
    r.b = batch_of(roi[0], p->B);
    r.sx = roi[1] * s - off;
    r.sy = roi[2] * s - off;
    const double ex = (roi[3] + plus) * s - off, ey = (roi[4] + plus) * s - off;
    const double rw = at_least_1(ex - r.sx, p->aligned), rh = at_least_1(ey - r.sy, p->aligned);
    r.bin_h = rh / (double)p->pooled_h;
    r.bin_w = rw / (double)p->pooled_w;
    r.gh = count_of(p->sampling_ratio, rh / (double)p->pooled_h);
    r.gw = count_of(p->sampling_ratio, rw / (double)p->pooled_w);
    r.count = ref_sample_count(r.gh, r.gw); /* max(gh gw, 1) */
    ref_roi_align_axes(p, roi, rh, rw, r.gh, r.gw, pre, &r.ax, &r.cr);
    return r;
}

/* sample (iy, ix) of bin (ph, pw) taken with gh x gw samples, and its position errors */
static void align_sample(const align_roi *r, int64_t ph, int64_t pw, int64_t iy, int64_t ix, int64_t gh, int64_t gw,
                         double pre, double yx[2], double d[2])
{
    yx[0] = r->sy + (double)ph * r->bin_h + ((double)iy + 0.5) * r->bin_h / (double)gh;
    yx[1] = r->sx + (double)pw * r->bin_w + ((double)ix + 0.5) * r->bin_w / (double)gw;
    d[0] = ref_sample_pos_err(r->ax.exact_y, gh, r->gh, pre, r->ax.mag_y, yx[0]);
    d[1] = ref_sample_pos_err(r->ax.exact_x, gw, r->gw, pre, r->ax.mag_x, yx[1]);
}

/* the sum over bin (ph, pw) of plane F with gh x gw samples */
static ref_bin_acc align_bin(const ref_roi_align_params *p, const align_roi *r, const double *F, int64_t ph,
                             int64_t pw, int64_t gh, int64_t gw, double pre)
{
    ref_bin_acc a = {0, 0, 0, 0, 0};
    double yx[2], d[2];
    for (int64_t iy = 0; iy < gh && gw > 0; iy++)
        for (int64_t ix = 0; ix < gw; ix++) {
            align_sample(r, ph, pw, iy, ix, gh, gw, pre, yx, d);
            sample_add(F, p->H, p->W, 1, yx[0], yx[1], d[0], d[1], &a);
        }
    return a;
}

void f64_roi_align_fwd__plain(const ref_roi_align_params *p, const double *input, const double *rois,
                              double *output, ref_bounds *bounds)
{
    const int64_t C = p->C, PH = p->pooled_h, PW = p->pooled_w;
    const double pre = bounds ? bounds->pos_rel_err : 0.0;
    for (int64_t k = 0; k < p->K; k++) {
        const align_roi r = align_roi_of(p, rois + 5 * k, pre);
        const ref_count_range *cr = &r.cr;
        const int other = bounds && r.b >= 0 && ref_counts_ambiguous(cr); /* rounding may pick other counts */
        for (int64_t c = 0; c < C; c++) {
            const double *F = r.b >= 0 ? input + (r.b * C + c) * p->H * p->W : NULL;
            for (int64_t ph = 0; ph < PH; ph++)
                for (int64_t pw = 0; pw < PW; pw++) {
                    ref_bin_acc a = {0, 0, 0, 0, 0}, alt[9];
                    double alt_count[9];
                    int n_alt = 0;
                    if (F) a = align_bin(p, &r, F, ph, pw, r.gh, r.gw, pre);
                    for (int64_t h = cr->gh_lo; other && ref_counts_enumerable(cr) && h <= cr->gh_hi; h++)
                        for (int64_t w = cr->gw_lo; w <= cr->gw_hi; w++) {
                            alt[n_alt] = align_bin(p, &r, F, ph, pw, h, w, pre);
                            alt_count[n_alt++] = ref_sample_count(h, w);
                        }
                    element(&a, r.count, alt, alt_count, n_alt, other && !ref_counts_enumerable(cr), output,
                            ((k * C + c) * PH + ph) * PW + pw, bounds);
                }
        }
    }
}

void f64_roi_align_bwd__plain(const ref_roi_align_params *p, const double *grad_output, const double *rois,
                              double *grad_input, ref_bounds *bounds)
{
    const int64_t C = p->C, H = p->H, W = p->W, PH = p->pooled_h, PW = p->pooled_w;
    const double pre = bounds ? bounds->pos_rel_err : 0.0;
    double yx[2], d[2];
    zero_all(grad_input, bounds, p->B * C * H * W);
    for (int64_t k = 0; k < p->K; k++) {
        const align_roi r = align_roi_of(p, rois + 5 * k, pre);
        const ref_count_range *cr = &r.cr;
        if (r.b < 0) continue; /* skipped: adds nothing */
        for (int64_t c = 0; c < C; c++) {
            const ref_plane_out o = plane_of(grad_input, bounds, (r.b * C + c) * H * W, 1, W);
            for (int64_t ph = 0; ph < PH; ph++)
                for (int64_t pw = 0; pw < PW; pw++) {
                    const double go = grad_output[((k * C + c) * PH + ph) * PW + pw];
                    for (int64_t iy = 0; iy < r.gh && r.gw > 0; iy++)
                        for (int64_t ix = 0; ix < r.gw; ix++) {
                            align_sample(&r, ph, pw, iy, ix, r.gh, r.gw, pre, yx, d);
                            sample_scatter(&o, H, W, yx[0], yx[1], d[0], d[1], r.count, 0, go);
                        }
                    if (!bounds || !ref_counts_ambiguous(cr)) continue;
                    /* rounding may pick other counts: too many, any gradient; else each widens the pixels */
                    for (int64_t q = 0; !ref_counts_enumerable(cr) && o.ambig && q < H * W; q++) o.ambig[q] = INFINITY;
                    for (int64_t h = cr->gh_lo; ref_counts_enumerable(cr) && h <= cr->gh_hi; h++)
                        for (int64_t w = cr->gw_lo; w <= cr->gw_hi; w++)
                            for (int64_t iy = 0; iy < h && w > 0; iy++)
                                for (int64_t ix = 0; ix < w; ix++) {
                                    align_sample(&r, ph, pw, iy, ix, h, w, pre, yx, d);
                                    sample_scatter(&o, H, W, yx[0], yx[1], d[0], d[1], ref_sample_count(h, w), 1, go);
                                }
                }
        }
    }
}

/* ---- roi_align_rotated (ops.md 3) and roi_align_rotated_grad (ops.md 4) ------------------------ */

/* one roi as spec 3 computes it, with its bounds' inputs */
typedef struct {
    int64_t b, gh, gw;
    double Cx, Cy, Hr, Wr, bin_h, bin_w, cos_t, sin_t, count;
    ref_roi_axes ax;
    ref_count_range cr;
} rotated_roi;

/* roi k (batch, cx, cy, w, h, angle): rois [K, 6], or [6, K] in data_format NHWC */
static rotated_roi rotated_roi_of(const ref_roi_align_rotated_params *p, const double *rois, int64_t k, double pre)
{
    double roi[6];
    for (int f = 0; f < 6; f++) roi[f] = p->nhwc ? rois[f * p->K + k] : rois[6 * k + f];
    rotated_roi r;
    const double s = p->spatial_scale, off = p->aligned ? 0.5 : 0.0;
    r.b = batch_of(roi[0], p->B);
    r.Cx = roi[1] * s - off; /* only the centre shifts, not width and height */
    r.Cy = roi[2] * s - off;
    r.Wr = at_least_1(roi[3] * s, p->aligned);
    r.Hr = at_least_1(roi[4] * s, p->aligned);
    const double theta = p->clockwise ? -roi[5] : roi[5];
    r.cos_t = cos(theta);
    r.sin_t = sin(theta);
    r.bin_h = r.Hr / (double)p->pooled_h;
    r.bin_w = r.Wr / (double)p->pooled_w;
    r.gh = count_of(p->sampling_ratio, r.Hr / (double)p->pooled_h);
    r.gw = count_of(p->sampling_ratio, r.Wr / (double)p->pooled_w);
    r.count = ref_sample_count(r.gh, r.gw);
    ref_roi_rotated_axes(p, roi, r.Hr, r.Wr, r.gh, r.gw, pre, &r.ax, &r.cr);
    return r;
}

static void rotated_sample(const rotated_roi *r, int64_t ph, int64_t pw, int64_t iy, int64_t ix, int64_t gh,
                           int64_t gw, double pre, double yx[2], double d[2])
{
    const double yy = -r->Hr / 2 + (double)ph * r->bin_h + ((double)iy + 0.5) * r->bin_h / (double)gh;
    const double xx = -r->Wr / 2 + (double)pw * r->bin_w + ((double)ix + 0.5) * r->bin_w / (double)gw;
    yx[0] = yy * r->cos_t - xx * r->sin_t + r->Cy;
    yx[1] = yy * r->sin_t + xx * r->cos_t + r->Cx;
    d[0] = ref_sample_pos_err(r->ax.exact_y, gh, r->gh, pre, r->ax.mag_y, yx[0]);
    d[1] = ref_sample_pos_err(r->ax.exact_x, gw, r->gw, pre, r->ax.mag_x, yx[1]);
}

static ref_bin_acc rotated_bin(const ref_roi_align_rotated_params *p, const rotated_roi *r, const double *F,
                               int64_t cs, int64_t ph, int64_t pw, int64_t gh, int64_t gw, double pre)
{
    ref_bin_acc a = {0, 0, 0, 0, 0};
    double yx[2], d[2];
    for (int64_t iy = 0; iy < gh && gw > 0; iy++)
        for (int64_t ix = 0; ix < gw; ix++) {
            rotated_sample(r, ph, pw, iy, ix, gh, gw, pre, yx, d);
            sample_add(F, p->H, p->W, cs, yx[0], yx[1], d[0], d[1], &a);
        }
    return a;
}

/* features: plane (b, c) starts at the returned offset, pixel stride *cs; per-roi element (k, c, ph, pw) */
static int64_t rotated_plane(const ref_roi_align_rotated_params *p, int64_t b, int64_t c, int64_t *cs)
{
    *cs = p->nhwc ? p->C : 1;
    return p->nhwc ? b * p->H * p->W * p->C + c : (b * p->C + c) * p->H * p->W;
}

static int64_t rotated_elem(const ref_roi_align_rotated_params *p, int64_t k, int64_t c, int64_t ph, int64_t pw)
{
    const int64_t PH = p->pooled_h, PW = p->pooled_w;
    return p->nhwc ? ((k * PH + ph) * PW + pw) * p->C + c : ((k * p->C + c) * PH + ph) * PW + pw;
}

void f64_roi_align_rotated_fwd__plain(const ref_roi_align_rotated_params *p, const double *x, const double *rois,
                                      double *y, ref_bounds *bounds)
{
    const double pre = bounds ? bounds->pos_rel_err : 0.0;
    int64_t cs = 1;
    for (int64_t k = 0; k < p->K; k++) {
        const rotated_roi r = rotated_roi_of(p, rois, k, pre);
        const ref_count_range *cr = &r.cr;
        const int other = bounds && r.b >= 0 && ref_counts_ambiguous(cr); /* rounding may pick other counts */
        for (int64_t c = 0; c < p->C; c++) {
            const double *F = r.b >= 0 ? x + rotated_plane(p, r.b, c, &cs) : NULL;
            for (int64_t ph = 0; ph < p->pooled_h; ph++)
                for (int64_t pw = 0; pw < p->pooled_w; pw++) {
                    ref_bin_acc a = {0, 0, 0, 0, 0}, alt[9];
                    double alt_count[9];
                    int n_alt = 0;
                    if (F) a = rotated_bin(p, &r, F, cs, ph, pw, r.gh, r.gw, pre);
                    for (int64_t h = cr->gh_lo; other && ref_counts_enumerable(cr) && h <= cr->gh_hi; h++)
                        for (int64_t w = cr->gw_lo; w <= cr->gw_hi; w++) {
                            alt[n_alt] = rotated_bin(p, &r, F, cs, ph, pw, h, w, pre);
                            alt_count[n_alt++] = ref_sample_count(h, w);
                        }
                    element(&a, r.count, alt, alt_count, n_alt, other && !ref_counts_enumerable(cr), y,
                            rotated_elem(p, k, c, ph, pw), bounds);
                }
        }
    }
}

void f64_roi_align_rotated_bwd__plain(const ref_roi_align_rotated_params *p, const double *x_grad,
                                      const double *rois, double *y_grad, ref_bounds *bounds)
{
    const int64_t H = p->H, W = p->W;
    const double pre = bounds ? bounds->pos_rel_err : 0.0;
    double yx[2], d[2];
    int64_t cs = 1;
    zero_all(y_grad, bounds, p->B * p->C * H * W);
    for (int64_t k = 0; k < p->K; k++) {
        const rotated_roi r = rotated_roi_of(p, rois, k, pre);
        const ref_count_range *cr = &r.cr;
        if (r.b < 0) continue; /* skipped: adds nothing */
        for (int64_t c = 0; c < p->C; c++) {
            const int64_t at = rotated_plane(p, r.b, c, &cs);
            const ref_plane_out o = plane_of(y_grad, bounds, at, cs, W);
            for (int64_t ph = 0; ph < p->pooled_h; ph++)
                for (int64_t pw = 0; pw < p->pooled_w; pw++) {
                    const double go = x_grad[rotated_elem(p, k, c, ph, pw)];
                    for (int64_t iy = 0; iy < r.gh && r.gw > 0; iy++)
                        for (int64_t ix = 0; ix < r.gw; ix++) {
                            rotated_sample(&r, ph, pw, iy, ix, r.gh, r.gw, pre, yx, d);
                            sample_scatter(&o, H, W, yx[0], yx[1], d[0], d[1], r.count, 0, go);
                        }
                    if (!bounds || !ref_counts_ambiguous(cr)) continue;
                    /* rounding may pick other counts: too many, any gradient; else each widens the pixels */
                    for (int64_t q = 0; !ref_counts_enumerable(cr) && o.ambig && q < H * W; q++) o.ambig[q * cs] = INFINITY;
                    for (int64_t h = cr->gh_lo; ref_counts_enumerable(cr) && h <= cr->gh_hi; h++)
                        for (int64_t w = cr->gw_lo; w <= cr->gw_hi; w++)
                            for (int64_t iy = 0; iy < h && w > 0; iy++)
                                for (int64_t ix = 0; ix < w; ix++) {
                                    rotated_sample(&r, ph, pw, iy, ix, h, w, pre, yx, d);
                                    sample_scatter(&o, H, W, yx[0], yx[1], d[0], d[1], ref_sample_count(h, w), 1, go);
                                }
                }
        }
    }
}
