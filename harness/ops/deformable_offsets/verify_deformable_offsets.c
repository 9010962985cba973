/* Proofs of the deformable_offsets and deformable_offsets_grad references (see verify.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fill.h"
#include "verify.h"

extern const op_desc op_deformable_offsets, op_deformable_offsets_grad;

/* linear relations hold to a few double roundings of the output scale */
#define RELATION_LIMIT 1e-12
/* the adjoint identity compares two sums of the same products taken in different orders */
#define ADJOINT_LIMIT 1e-12


/* A geometry exercising every attribute: kh != kw, strides, dilations, asymmetric pads, groups. */
typedef struct {
    int64_t N, H, W, C, kh, kw, sh, sw, dh, dw, pt, pb, pl, pr, dg;
} geo;

static const geo geos[] = {
    {2, 7, 6, 4, 3, 2, 2, 1, 1, 2, 1, 0, 2, 1, 2},
    {1, 5, 8, 3, 2, 3, 1, 2, 2, 1, 0, 2, 1, 0, 1},
    {1, 6, 6, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 3},
};
#define N_GEOS (sizeof geos / sizeof geos[0])

static int64_t out_h(const geo *g) { return (g->H + g->pt + g->pb - (g->dh * (g->kh - 1) + 1)) / g->sh + 1; }
static int64_t out_w(const geo *g) { return (g->W + g->pl + g->pr - (g->dw * (g->kw - 1) + 1)) / g->sw + 1; }

/* attribute texts of g (NHWC, or NCHW with the same strides and dilations in NCHW positions) */
typedef struct { char a[6][64]; const char *list[7]; } attr_texts;

static void attrs_of(const geo *g, int nchw, attr_texts *t)
{
    snprintf(t->a[0], 64, "ksize=%lld,%lld", (long long)g->kh, (long long)g->kw);
    if (nchw) {
        snprintf(t->a[1], 64, "strides=1,1,%lld,%lld", (long long)g->sh, (long long)g->sw);
        snprintf(t->a[2], 64, "dilations=1,1,%lld,%lld", (long long)g->dh, (long long)g->dw);
    } else {
        snprintf(t->a[1], 64, "strides=1,%lld,%lld,1", (long long)g->sh, (long long)g->sw);
        snprintf(t->a[2], 64, "dilations=1,%lld,%lld,1", (long long)g->dh, (long long)g->dw);
    }
    snprintf(t->a[3], 64, "pads=%lld,%lld,%lld,%lld", (long long)g->pt, (long long)g->pb, (long long)g->pl, (long long)g->pr);
    snprintf(t->a[4], 64, "deformable_groups=%lld", (long long)g->dg);
    snprintf(t->a[5], 64, "data_format=%s", nchw ? "NCHW" : "NHWC");
    for (int i = 0; i < 6; i++) t->list[i] = t->a[i];
    t->list[6] = NULL;
}

/* A forward problem of g (through the table's forward op, or `op` when given) */
static int fwd_problem(const op_desc *op, const geo *g, int nchw, const char *gen, unsigned long seed, problem_t *p,
                       proof_result *r)
{
    attr_texts t;
    attrs_of(g, nchw, &t);
    const int64_t Ho = out_h(g), Wo = out_w(g);
    shape_t shapes[2] = {shape4(g->N, g->H, g->W, g->C), shape4(g->N, Ho, Wo, 3 * g->dg * g->kh * g->kw)};
    return proof_problem(op, t.list, shapes, gen, seed, p, r);
}

/* ---- deformable_offsets --------------------------------------------------------------------- */

/* Integer offsets put every sample on a pixel: y = mask * x at (py, px) (0 outside), exactly.
 * Zero offsets with mask 1 are plain patch extraction (im2col). Checks the channel order. */
static int integer_offsets(const op_desc *op, proof_result *r)
{
    r->limit = 0;
    int rc = 0;
    for (size_t gi = 0; gi < N_GEOS && rc == 0; gi++)
        for (int variant = 0; variant < 2 && rc == 0; variant++) {
            const geo *g = &geos[gi];
            const char *gen = variant ? "{\"offsets\": {\"spread\": 2.4, \"integer_frac\": 1, \"mask_lo\": -1}}"
                                      : "{\"offsets\": {\"spread\": 0, \"mask_lo\": 1, \"mask_hi\": 1}}";
            problem_t p;
            if (fwd_problem(op, g, 0, gen, 30 + gi, &p, r)) return -1;
            double *y[1] = {0};
            rc = proof_reference(op, &p, y);
            const int64_t Ho = out_h(g), Wo = out_w(g), K = g->kh * g->kw, dgK = g->dg * K, cpg = g->C / g->dg;
            const double *x = p.in[0].data, *off = p.in[1].data;
            double worst = 0;
            for (int64_t n = 0; n < g->N && rc == 0; n++)
                for (int64_t ho = 0; ho < Ho; ho++)
                    for (int64_t wo = 0; wo < Wo; wo++)
                        for (int64_t c = 0; c < g->C; c++)
                            for (int64_t i = 0; i < g->kh; i++)
                                for (int64_t j = 0; j < g->kw; j++) {
                                    const int64_t k = (c / cpg) * K + i * g->kw + j;
                                    const double *o = off + ((n * Ho + ho) * Wo + wo) * 3 * dgK;
                                    const int64_t h = ho * g->sh - g->pt + i * g->dh + (int64_t)o[dgK + k];
                                    const int64_t w = wo * g->sw - g->pl + j * g->dw + (int64_t)o[k];
                                    double v = h >= 0 && h < g->H && w >= 0 && w < g->W
                                                   ? x[((n * g->H + h) * g->W + w) * g->C + c] : 0.0;
                                    double want = o[2 * dgK + k] * v;
                                    double got = y[0][((n * Ho * g->kh + ho * g->kh + i) * Wo * g->kw + wo * g->kw + j) * g->C + c];
                                    worst = fmax(worst, fabs(got - want));
                                }
            if (!rc) proof_note(r, worst);
            proof_free_outputs(y, 1);
            problem_free(&p);
        }
    return rc ? rc : proof_verdict(r, "problems with zero or integer offsets (max |y - mask * pixel|)");
}

/* deformable_offsets is linear in x: F(a x + b z) = a F(x) + b F(z). */
static int linearity(const op_desc *op, proof_result *r)
{
    r->limit = RELATION_LIMIT;
    int rc = 0;
    gsl_rng *rng = conform_rng(4);
    for (size_t gi = 0; gi < N_GEOS && rc == 0; gi++) {
        problem_t p;
        if (fwd_problem(op, &geos[gi], 0, "{\"offsets\": {\"spread\": 3}}", 40 + gi, &p, r)) { gsl_rng_free(rng); return -1; }
        rc = proof_linearity_random(op, &p, rng, r);
        problem_free(&p);
    }
    gsl_rng_free(rng);
    return rc ? rc : proof_verdict(r, "linear combinations");
}

/* data_format only says where strides and dilations sit: NCHW attributes give the NHWC result. */
static int data_format(const op_desc *op, proof_result *r)
{
    r->limit = 0;
    int rc = 0;
    for (size_t gi = 0; gi < N_GEOS && rc == 0; gi++) {
        problem_t a, b;
        if (fwd_problem(op, &geos[gi], 0, NULL, 50 + gi, &a, r)) return -1;
        if (fwd_problem(op, &geos[gi], 1, NULL, 50 + gi, &b, r)) { problem_free(&a); return -1; }
        double *ya[1] = {0}, *yb[1] = {0};
        rc = proof_reference(op, &a, ya);
        if (!rc) rc = proof_reference(op, &b, yb);
        if (!rc) proof_note(r, rel_diff(yb[0], ya[0], shape_numel(&a.out_shape[0])));
        proof_free_outputs(ya, 1);
        proof_free_outputs(yb, 1);
        problem_free(&a);
        problem_free(&b);
    }
    return rc ? rc : proof_verdict(r, "NCHW vs NHWC attribute layouts");
}

const proof_desc deformable_offsets_proofs[] = {
    {"metamorphic", "zero offsets with mask 1 are patch extraction; integer offsets give mask * pixel", integer_offsets},
    {"metamorphic", "linear in x", linearity},
    {"metamorphic", "data_format NCHW with permuted strides/dilations equals NHWC", data_format},
    {"golden", "torchvision 0.14 deform_conv2d with a one-hot weight", proof_golden},
    {NULL, NULL, NULL},
};

/* ---- deformable_offsets_grad --------------------------------------------------------------- */

/* The forward (from the table) and the backward under proof on the same x and offsets, with
 * positions kept at least `margin` away from every integer (so finite differences of step
 * < margin stay inside one cell and one side of the window test). */
static void keep_off_integers(proof_pair *pr, const geo *g, double margin)
{
    const int64_t Ho = out_h(g), Wo = out_w(g), K = g->kh * g->kw, dgK = g->dg * K;
    double *off = pr->fwd.in[1].data;
    for (int64_t n = 0; n < g->N; n++)
        for (int64_t ho = 0; ho < Ho; ho++)
            for (int64_t wo = 0; wo < Wo; wo++)
                for (int64_t k = 0; k < dgK; k++) {
                    const int64_t i = (k % K) / g->kw, j = (k % K) % g->kw;
                    double *o = off + ((n * Ho + ho) * Wo + wo) * 3 * dgK;
                    const double base[2] = {(double)(wo * g->sw - g->pl + j * g->dw), (double)(ho * g->sh - g->pt + i * g->dh)};
                    for (int t = 0; t < 2; t++) {
                        double v = base[t] + o[t * dgK + k];
                        if (fabs(v - nearbyint(v)) < margin) o[t * dgK + k] = round_f32(o[t * dgK + k] + 2.5 * margin);
                    }
                }
}

static int make_pair(const op_desc *bwd, size_t gi, unsigned long seed, double margin, proof_pair *pr, proof_result *r)
{
    const geo *g = &geos[gi];
    memset(pr, 0, sizeof *pr);
    if (fwd_problem(&op_deformable_offsets, g, 0, "{\"offsets\": {\"spread\": 2.5, \"mask_lo\": -1}}", seed, &pr->fwd, r))
        return -1;
    if (margin > 0) keep_off_integers(pr, g, margin);
    attr_texts t;
    attrs_of(g, 0, &t);
    const int64_t Ho = out_h(g), Wo = out_w(g);
    shape_t shapes[3] = {shape4(g->N, Ho * g->kh, Wo * g->kw, g->C), pr->fwd.in[0].shape, pr->fwd.in[1].shape};
    return proof_pair_finish(pr, bwd, t.list, shapes, seed + 1, 0, 1, 2, r); /* the same x and offsets */
}

static int any_pair(const op_desc *bwd, size_t i, unsigned long seed, proof_pair *pr, proof_result *r)
{
    return make_pair(bwd, i, seed, 0, pr, r);
}

static int adjoint(const op_desc *op, proof_result *r)
{
    r->limit = ADJOINT_LIMIT;
    return proof_adjoint_pairs(op, any_pair, N_GEOS, 60, "random problems, |<g,F(x)> - <grad_x,x>| / sum of |products|",
                               r);
}

/* Central differences of L against grad_x (t 0) or grad_offsets (t 1). Offsets are probed at
 * positions 0.05 or more from every integer with h = 1e-3: L is linear in each offset there (in
 * one cell, on one side of the window lines), so the difference is exact but for rounding. */
static int fd_run(const op_desc *op, int t, proof_result *r)
{
    r->limit = 1e-9;
    for (size_t i = 0; i < N_GEOS; i++) {
        proof_pair pr;
        if (make_pair(op, i, 70 + i, 0.05, &pr, r)) { proof_pair_free(&pr); return -1; }
        const int64_t n = tensor_numel(&pr.fwd.in[t]);
        const double scale = proof_pair_grad_scale(&pr, t);
        int64_t checked[3] = {0, 0, 0};
        const int64_t dgK = geos[i].dg * geos[i].kh * geos[i].kw;
        for (int64_t e = 0; e < n; e++) {
            proof_note(r, proof_pair_fd_error(&op_deformable_offsets, &pr, t, e, 1e-3) / fmax(scale, 1e-300));
            if (t == 1) checked[(e % (3 * dgK)) / dgK]++;
        }
        if (t == 1 && (!checked[0] || !checked[1] || !checked[2])) {
            snprintf(r->detail, sizeof r->detail, "the probe missed a channel kind (x %lld, y %lld, mask %lld)",
                     (long long)checked[0], (long long)checked[1], (long long)checked[2]);
            proof_pair_free(&pr);
            return -1;
        }
        proof_pair_free(&pr);
    }
    return proof_verdict(r, t == 0 ? "elements of grad_x, max(|fd - grad|, GSL error) / gradient scale"
                             : "elements of grad_offsets (x, y and mask channels), max(|fd - grad|, GSL error) / scale");
}

static int fd_x(const op_desc *op, proof_result *r) { return fd_run(op, 0, r); }
static int fd_offsets(const op_desc *op, proof_result *r) { return fd_run(op, 1, r); }

/* The mask gradient of a sample is <grad, the unmasked sample>: the forward with that mask
 * set to 1, restricted to the sample's outputs. */
static int mask_gradient(const op_desc *op, proof_result *r)
{
    r->limit = RELATION_LIMIT;
    for (size_t gi = 0; gi < N_GEOS; gi++) {
        proof_pair pr;
        if (make_pair(op, gi, 80 + gi, 0, &pr, r)) { proof_pair_free(&pr); return -1; }
        const geo *g = &geos[gi];
        const int64_t Ho = out_h(g), Wo = out_w(g), K = g->kh * g->kw, dgK = g->dg * K, cpg = g->C / g->dg;
        double *off = pr.fwd.in[1].data, scale = 0, worst = 0;
        for (int64_t k = 0; k < tensor_numel(&pr.fwd.in[1]); k++) scale = fmax(scale, fabs(pr.gx[1][k]));
        /* all masks 1: y1 is every sample unmasked */
        for (int64_t q = 0; q < g->N * Ho * Wo; q++)
            for (int64_t k = 0; k < dgK; k++) off[q * 3 * dgK + 2 * dgK + k] = 1.0;
        double *y1[1] = {0};
        if (proof_reference(&op_deformable_offsets, &pr.fwd, y1)) { proof_pair_free(&pr); return -1; }
        const double *G = pr.bwd.in[0].data;
        for (int64_t n = 0; n < g->N; n++)
            for (int64_t ho = 0; ho < Ho; ho++)
                for (int64_t wo = 0; wo < Wo; wo++)
                    for (int64_t k = 0; k < dgK; k++) {
                        const int64_t gg = k / K, i = (k % K) / g->kw, j = (k % K) % g->kw;
                        double want = 0;
                        for (int64_t c = gg * cpg; c < (gg + 1) * cpg; c++) {
                            int64_t e = ((n * Ho * g->kh + ho * g->kh + i) * Wo * g->kw + wo * g->kw + j) * g->C + c;
                            want += G[e] * y1[0][e];
                        }
                        double got = pr.gx[1][((n * Ho + ho) * Wo + wo) * 3 * dgK + 2 * dgK + k];
                        worst = fmax(worst, fabs(got - want));
                    }
        proof_note(r, worst / fmax(scale, 1e-300));
        proof_free_outputs(y1, 1);
        proof_pair_free(&pr);
    }
    return proof_verdict(r, "problems, max |mask gradient - <grad, unmasked sample>| / scale");
}

const proof_desc deformable_offsets_grad_proofs[] = {
    {"adjoint", "<g, deformable_offsets(x)> = <grad_x, x>", adjoint},
    {"finite difference", "central differences of <g, deformable_offsets(x)> in x equal grad_x", fd_x},
    {"finite difference", "central differences in the x, y and mask offsets equal grad_offsets", fd_offsets},
    {"metamorphic", "the mask gradient is <grad, the unmasked sample>", mask_gradient},
    {"golden", "torchvision 0.14 deform_conv2d autograd with a one-hot weight", proof_golden},
    {NULL, NULL, NULL},
};
