/* deformable_offsets (spec 5) and deformable_offsets_grad (spec 6): problem description, input
 * filling, reference and optimized calls, tolerance model. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fill.h"
#include "op.h"
#include "plain/conform_plain.h"

extern const proof_desc deformable_offsets_proofs[], deformable_offsets_grad_proofs[];
extern const hunt_desc hunt_deformable_offsets, hunt_deformable_offsets_grad; /* hunt_<family>.c */

/* ---- tolerance model (every output of both ops) ----------------------------------------- */

/* the derivation of both constants: docs/ops/deformable_offsets.md, "Tolerance model" */
#define DEFORMABLE_TOL {\
    /* 2 in the corner weight, 1 the mask, 1 weight*value, 1 the gradient product, 1 spare */\
    .k_val = 6,\
    .k_val_why = "per term: 2 roundings in the corner weight, 1 for the mask, 1 in weight*value, 1 in the "\
                 "gradient product, 1 spare; plus 1 per term summed (docs/ops/deformable_offsets.md)",\
    /* the integer base is exact in float32: one rounding when the offset is added */\
    .k_pos = 1,\
    .k_pos_why = "one float32 rounding of the position, the exact integer base plus the offset "\
                 "(docs/ops/deformable_offsets.md)"}

static const tol_model deformable_tol[2] = {DEFORMABLE_TOL, DEFORMABLE_TOL}; /* the forward reads the first */

/* ---- attributes shared by both ops -------------------------------------------------------- */

#define HARNESS_LIMIT (1 << 20) /* attribute values beyond this are refused (overflow safety) */

static const attr_spec deformable_attrs[] = {
    {"ksize", ATTR_INT_LIST, NULL, "[kh, kw], each >= 1"},
    {"strides", ATTR_INT_LIST, "1,1,1,1", "4 ints >= 1, read through data_format (the N and C entries must be 1)"},
    {"dilations", ATTR_INT_LIST, "1,1,1,1", "4 ints >= 1, read through data_format (the N and C entries must be 1)"},
    {"pads", ATTR_INT_LIST, "0,0,0,0", "[top, bottom, left, right], each >= 0"},
    {"data_format", ATTR_STRING, "NHWC", "\"NHWC\" or \"NCHW\": which entries of strides/dilations are H and W "
                                         "(tensors are NHWC either way)"},
    {"deformable_groups", ATTR_INT, "1", ">= 1, divides C"},
    {"modulated", ATTR_BOOL, "true", "must be true (DeformableConv2D v2)"},
};
enum { DA_KSIZE, DA_STRIDES, DA_DILATIONS, DA_PADS, DA_FORMAT, DA_DG, DA_MODULATED };

static const char *list_str(const attr_value *v, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "[");
    for (int i = 0; i < v->n && used < len; i++) used += (size_t)snprintf(buf + used, len - used, i ? ",%lld" : "%lld", (long long)v->list[i]);
    if (used < len) snprintf(buf + used, len - used, "]");
    return buf;
}

/* strides or dilations: 4 entries >= 1, the N and C entries of data_format equal to 1 */
static int check_nhwc_list(const char *op, const char *name, const attr_value *v, int nchw, char *err, size_t errlen)
{
    char b[128];
    if (v->n != 4) FAIL("%s: %s %s: must have 4 entries", op, name, list_str(v, b, sizeof b));
    for (int i = 0; i < 4; i++)
        if (v->list[i] < 1 || v->list[i] > HARNESS_LIMIT)
            FAIL("%s: %s %s: entry %d must be in [1, %d]", op, name, list_str(v, b, sizeof b), i, HARNESS_LIMIT);
    const int a = 0, c = nchw ? 1 : 3;
    if (v->list[a] != 1 || v->list[c] != 1)
        FAIL("%s: %s %s: entries %d and %d (N and C) must be 1 with data_format \"%s\"", op, name,
             list_str(v, b, sizeof b), a, c, nchw ? "NCHW" : "NHWC");
    return 0;
}

/* The geometry of spec 5 from the attributes and x's shape (attributes already checked). */
static void geometry(const problem_t *p, int x_index, ref_deformable_params *r)
{
    const shape_t *x = &p->in[x_index].shape;
    const int nchw = !strcmp(p->attr[DA_FORMAT].s, "NCHW");
    const int ih = nchw ? 2 : 1, iw = nchw ? 3 : 2;
    memset(r, 0, sizeof *r);
    r->N = x->dims[0]; r->H = x->dims[1]; r->W = x->dims[2]; r->C = x->dims[3];
    r->kh = p->attr[DA_KSIZE].list[0]; r->kw = p->attr[DA_KSIZE].list[1];
    r->sh = p->attr[DA_STRIDES].list[ih]; r->sw = p->attr[DA_STRIDES].list[iw];
    r->dh = p->attr[DA_DILATIONS].list[ih]; r->dw = p->attr[DA_DILATIONS].list[iw];
    r->pt = p->attr[DA_PADS].list[0]; r->pb = p->attr[DA_PADS].list[1];
    r->pl = p->attr[DA_PADS].list[2]; r->pr = p->attr[DA_PADS].list[3];
    r->dg = p->attr[DA_DG].i;
    /* the truncating division of spec 5; the numerator is >= 0 once validated */
    r->Ho = (r->H + r->pt + r->pb - (r->dh * (r->kh - 1) + 1)) / r->sh + 1;
    r->Wo = (r->W + r->pl + r->pr - (r->dw * (r->kw - 1) + 1)) / r->sw + 1;
}

/* Every rule of spec 5 on the attributes, x and offsets; fills r. */
static int check_common(const problem_t *p, int x_index, int off_index, ref_deformable_params *r, char *err,
                        size_t errlen)
{
    const char *op = p->op->name;
    char b[128];
    const char *fmt = p->attr[DA_FORMAT].s;
    if (strcmp(fmt, "NHWC") && strcmp(fmt, "NCHW")) FAIL("%s: data_format \"%s\": must be \"NHWC\" or \"NCHW\"", op, fmt);
    const int nchw = !strcmp(fmt, "NCHW");
    const attr_value *ks = &p->attr[DA_KSIZE], *pads = &p->attr[DA_PADS];
    if (ks->n != 2) FAIL("%s: ksize %s: must have 2 entries [kh, kw]", op, list_str(ks, b, sizeof b));
    for (int i = 0; i < 2; i++)
        if (ks->list[i] < 1 || ks->list[i] > 1024)
            FAIL("%s: ksize %s: entry %d must be in [1, 1024]", op, list_str(ks, b, sizeof b), i);
    if (check_nhwc_list(op, "strides", &p->attr[DA_STRIDES], nchw, err, errlen)) return -1;
    if (check_nhwc_list(op, "dilations", &p->attr[DA_DILATIONS], nchw, err, errlen)) return -1;
    if (pads->n != 4) FAIL("%s: pads %s: must have 4 entries [top, bottom, left, right]", op, list_str(pads, b, sizeof b));
    for (int i = 0; i < 4; i++)
        if (pads->list[i] < 0 || pads->list[i] > HARNESS_LIMIT)
            FAIL("%s: pads %s: entry %d must be in [0, %d]", op, list_str(pads, b, sizeof b), i, HARNESS_LIMIT);
    const int64_t dg = p->attr[DA_DG].i;
    if (dg < 1 || dg > HARNESS_LIMIT) FAIL("%s: deformable_groups %lld: must be >= 1", op, (long long)dg);
    if (!p->attr[DA_MODULATED].i) FAIL("%s: modulated false: only true (DeformableConv2D v2) is supported", op);
    const shape_t *x = &p->in[x_index].shape, *off = &p->in[off_index].shape;
    if (x->rank != 4) FAIL("%s: x %s: must have rank 4 [N,H,W,C]", op, shape_str(x, b, sizeof b));
    if (off->rank != 4) FAIL("%s: offsets %s: must have rank 4 [N,Ho,Wo,3*dg*kh*kw]", op, shape_str(off, b, sizeof b));
    if (x->dims[3] % dg)
        FAIL("%s: x %s: channels %lld must be a multiple of deformable_groups %lld", op, shape_str(x, b, sizeof b),
             (long long)x->dims[3], (long long)dg);
    ref_deformable_params g;
    const int ih = nchw ? 2 : 1, iw = nchw ? 3 : 2;
    const int64_t dh = p->attr[DA_DILATIONS].list[ih], dw = p->attr[DA_DILATIONS].list[iw];
    const int64_t keh = dh * (ks->list[0] - 1) + 1, kew = dw * (ks->list[1] - 1) + 1;
    if (x->dims[1] + pads->list[0] + pads->list[1] < keh)
        FAIL("%s: x %s: padded height %lld + %lld + %lld is smaller than the dilated kernel height %lld", op,
             shape_str(x, b, sizeof b), (long long)x->dims[1], (long long)pads->list[0], (long long)pads->list[1],
             (long long)keh);
    if (x->dims[2] + pads->list[2] + pads->list[3] < kew)
        FAIL("%s: x %s: padded width %lld + %lld + %lld is smaller than the dilated kernel width %lld", op,
             shape_str(x, b, sizeof b), (long long)x->dims[2], (long long)pads->list[2], (long long)pads->list[3],
             (long long)kew);
    geometry(p, x_index, &g);
    if (off->dims[0] != x->dims[0])
        FAIL("%s: offsets %s: batch %lld must equal x's %lld", op, shape_str(off, b, sizeof b), (long long)off->dims[0],
             (long long)x->dims[0]);
    if (off->dims[1] != g.Ho || off->dims[2] != g.Wo)
        FAIL("%s: offsets %s: dims 1, 2 must be the output size Ho x Wo = %lld x %lld", op,
             shape_str(off, b, sizeof b), (long long)g.Ho, (long long)g.Wo);
    if (off->dims[3] != 3 * dg * g.kh * g.kw)
        FAIL("%s: offsets %s: dim 3 must be 3*deformable_groups*kh*kw = %lld", op, shape_str(off, b, sizeof b),
             (long long)(3 * dg * g.kh * g.kw));
    *r = g;
    return 0;
}

/* ---- the offsets generator ---------------------------------------------------------------- */

/* Fills offsets [N, Ho, Wo, 3*dg*K]. Knobs (all optional):
 *   spread (2): x/y offsets uniform in [-spread, spread];  mask_lo, mask_hi (0, 1): masks uniform
 *   integer_frac: x/y offsets rounded to integers (positions exactly on cell lines)
 *   edge_frac: samples put exactly on a window line (py = -1 or H, or px = -1 or W)
 *   near_integer_frac: x/y offsets of at most 1e-7 (positions within float32 rounding of the
 *     integer base: the float32 floor may take the other branch, the offset gradients are ambiguous)
 *   nan_frac: samples with a NaN x or y offset;  inf_frac: with an infinite one
 * {"data": ...} or {"dist": ...} fill the tensor as any other. */
static int fill_offsets(tensor_t *t, const cJSON *g, gsl_rng *rng, const ref_deformable_params *r, char *err,
                        size_t errlen)
{
    if (g && (cJSON_GetObjectItemCaseSensitive(g, "data") || cJSON_GetObjectItemCaseSensitive(g, "dist")))
        return fill_values(t, g, rng, "offsets", err, errlen);
    if (t->shape.rank != 4 || !t->data) return 0;
    const int64_t K = r->kh * r->kw, dgK = r->dg * K;
    if (t->shape.dims[3] != 3 * dgK || t->shape.dims[1] != r->Ho || t->shape.dims[2] != r->Wo) return 0;
    const double spread = json_number(g, "spread", 2.0), mlo = json_number(g, "mask_lo", 0.0),
                 mhi = json_number(g, "mask_hi", 1.0), intf = json_number(g, "integer_frac", 0.0),
                 edge = json_number(g, "edge_frac", 0.0), nanf = json_number(g, "nan_frac", 0.0),
                 inff = json_number(g, "inf_frac", 0.0), neari = json_number(g, "near_integer_frac", 0.0);
    for (int64_t n = 0; n < t->shape.dims[0]; n++)
        for (int64_t ho = 0; ho < r->Ho; ho++)
            for (int64_t wo = 0; wo < r->Wo; wo++) {
                double *o = t->data + ((n * r->Ho + ho) * r->Wo + wo) * 3 * dgK;
                for (int64_t k = 0; k < dgK; k++) {
                    const int64_t i = (k % K) / r->kw, j = (k % K) % r->kw;
                    const double bx = (double)(wo * r->sw - r->pl + j * r->dw), by = (double)(ho * r->sh - r->pt + i * r->dh);
                    double ox = fill_uniform(rng, -spread, spread), oy = fill_uniform(rng, -spread, spread);
                    if (fill_pick(rng, intf)) { ox = nearbyint(ox); oy = nearbyint(oy); }
                    if (fill_pick(rng, neari)) { ox = fill_uniform(rng, -1e-7, 1e-7); oy = fill_uniform(rng, -1e-7, 1e-7); }
                    if (fill_pick(rng, edge)) {
                        const unsigned long which = gsl_rng_uniform_int(rng, 4);
                        if (which == 0) oy = -1.0 - by;
                        else if (which == 1) oy = (double)r->H - by;
                        else if (which == 2) ox = -1.0 - bx;
                        else ox = (double)r->W - bx;
                    }
                    if (fill_pick(rng, nanf)) { if (gsl_rng_uniform(rng) < 0.5) ox = NAN; else oy = NAN; }
                    if (fill_pick(rng, inff)) { if (gsl_rng_uniform(rng) < 0.5) ox = -INFINITY; else oy = INFINITY; }
                    o[k] = ox;
                    o[dgK + k] = oy;
                    o[2 * dgK + k] = fill_uniform(rng, mlo, mhi);
                }
            }
    return 0;
}

/* ---- both ops ------------------------------------------------------------------------------ */

/* The backward's inputs are the forward's behind grad: x at 0 or 1, offsets right after it. */
/* by name, not address: tests judge copies of a descriptor with a broken reference */
static int backward(const problem_t *p) { return !strcmp(p->op->name, "deformable_offsets_grad"); }

static int gen_offsets(problem_t *p, int index, const cJSON *spec, gsl_rng *rng, char *err, size_t errlen)
{
    ref_deformable_params r;
    char e2[CONFORM_ERR_LEN];
    if (check_common(p, index - 1, index, &r, e2, sizeof e2)) return 0; /* validation names the problem */
    return fill_offsets(&p->in[index], spec, rng, &r, err, errlen);
}

static void reference(const problem_t *p, double **out, ref_bounds *bounds)
{
    ref_deformable_params r;
    geometry(p, backward(p), &r);
    const double *a = p->in[0].data, *b = p->in[1].data;
    if (!backward(p)) f64_deformable_offsets_fwd__ref(&r, a, b, out[0], bounds);
    else f64_deformable_offsets_bwd__ref(&r, a, b, p->in[2].data, out[0], out[1], bounds ? &bounds[0] : NULL,
                                         bounds ? &bounds[1] : NULL);
}

/* the plain golden (reference/plain/deformable_offsets.c), called as reference is */
static void plain(const problem_t *p, double **out, ref_bounds *bounds)
{
    ref_deformable_params r;
    geometry(p, backward(p), &r);
    const double *a = p->in[0].data, *b = p->in[1].data;
    if (!backward(p)) f64_deformable_offsets_fwd__plain(&r, a, b, out[0], bounds);
    else f64_deformable_offsets_bwd__plain(&r, a, b, p->in[2].data, out[0], out[1], bounds ? &bounds[0] : NULL,
                                           bounds ? &bounds[1] : NULL);
}

/* the forward's reachable range (conform_range.h): the mask times its taps' range */
static int range(const problem_t *p, int o, ref_range *rg)
{
    ref_deformable_params r;
    if (backward(p) || o != 0) return -1;
    geometry(p, 0, &r);
    f64_deformable_offsets_fwd__range(&r, p->in[0].data, p->in[1].data, rg);
    return 0;
}

static int optimized(const problem_t *p, const float **in, float **out, const conform_exec *ex)
{
    ref_deformable_params r;
    geometry(p, backward(p), &r);
    const f32_deformable_params f = {
        .N = r.N, .H = r.H, .W = r.W, .C = r.C, .kh = r.kh, .kw = r.kw, .sh = r.sh, .sw = r.sw, .dh = r.dh,
        .dw = r.dw, .pt = r.pt, .pb = r.pb, .pl = r.pl, .pr = r.pr, .dg = r.dg, .Ho = r.Ho, .Wo = r.Wo,
    };
    if (!backward(p)) return f32_deformable_offsets_fwd(&f, in[0], in[1], out[0], ex);
    return f32_deformable_offsets_bwd(&f, in[0], in[1], in[2], out[0], out[1], ex);
}

/* what both ops share: the offsets generator, the kernels and the tolerance model of every output */
#define DEFORMABLE_FAMILY .gen = {"offsets", gen_offsets}, .reference = reference, .plain = plain, .optimized = optimized, \
                          .tol = deformable_tol

/* ---- deformable_offsets -------------------------------------------------------------------- */

enum { DF_X, DF_OFFSETS };

static const tensor_spec deformable_inputs[] = {
    {"x", "[N, H, W, C] feature map (NHWC)"},
    {"offsets", "[N, Ho, Wo, 3*dg*kh*kw]: x offsets, y offsets, masks; each group-major, kernel row-major"},
};
static const tensor_spec deformable_outputs[] = {{"y", "[N, Ho*kh, Wo*kw, C], element (n, ho*kh+i, wo*kw+j, c)"}};

static int deformable_validate(problem_t *p, char *err, size_t errlen)
{
    ref_deformable_params r;
    if (check_common(p, DF_X, DF_OFFSETS, &r, err, errlen)) return -1;
    const int64_t d[4] = {r.N, r.Ho * r.kh, r.Wo * r.kw, r.C};
    return problem_set_output(p, 0, 4, d, err, errlen);
}

const op_desc op_deformable_offsets = {
    .name = "deformable_offsets",
    .range = range,
    .summary = "DeformableOffsets: modulated deformable sampling of kernel patches (NHWC)",
    .spec = "ops.md sections 0, 5",
    OP_TENSORS(deformable_inputs, deformable_outputs),
    OP_ATTRS(deformable_attrs),
    .validate = deformable_validate, .proofs = deformable_offsets_proofs, .hunt = &hunt_deformable_offsets,
    DEFORMABLE_FAMILY,
};

/* ---- deformable_offsets_grad ----------------------------------------------------------------- */

enum { DG_GRAD, DG_X, DG_OFFSETS };

static const tensor_spec deformable_grad_inputs[] = {
    {"grad", "[N, Ho*kh, Wo*kw, C] gradient of y"},
    {"x", "[N, H, W, C] feature map (NHWC)"},
    {"offsets", "[N, Ho, Wo, 3*dg*kh*kw]: x offsets, y offsets, masks"},
};
static const tensor_spec deformable_grad_outputs[] = {
    {"grad_x", "[N, H, W, C]"},
    {"grad_offsets", "[N, Ho, Wo, 3*dg*kh*kw]"},
};

static int deformable_grad_validate(problem_t *p, char *err, size_t errlen)
{
    ref_deformable_params r;
    char b[128];
    if (check_common(p, DG_X, DG_OFFSETS, &r, err, errlen)) return -1;
    const shape_t *g = &p->in[DG_GRAD].shape;
    if (g->rank != 4 || g->dims[0] != r.N || g->dims[1] != r.Ho * r.kh || g->dims[2] != r.Wo * r.kw || g->dims[3] != r.C)
        FAIL("%s: grad %s: must have shape [N,Ho*kh,Wo*kw,C] = [%lld,%lld,%lld,%lld]", p->op->name,
             shape_str(g, b, sizeof b), (long long)r.N, (long long)(r.Ho * r.kh), (long long)(r.Wo * r.kw),
             (long long)r.C);
    p->out_shape[0] = p->in[DG_X].shape;
    p->out_shape[1] = p->in[DG_OFFSETS].shape;
    return 0;
}

const op_desc op_deformable_offsets_grad = {
    .name = "deformable_offsets_grad",
    .summary = "DeformableOffsetsGrad: gradients of deformable_offsets for x and offsets (NHWC)",
    .spec = "ops.md sections 0, 5, 6",
    OP_TENSORS(deformable_grad_inputs, deformable_grad_outputs),
    OP_ATTRS(deformable_attrs),
    .validate = deformable_grad_validate, .proofs = deformable_offsets_grad_proofs, .hunt = &hunt_deformable_offsets_grad,
    DEFORMABLE_FAMILY,
};
