/* Proofs of the grid_sampler_2d and grid_sampler_2d_backward references (see verify.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fill.h"
#include "verify.h"

extern const op_desc op_grid_sampler_2d, op_grid_sampler_2d_backward;

/* exact relations: the weights are exactly 0 and 1, or the same sums in a mirrored order */
#define RELATION_LIMIT 1e-12
/* the adjoint identity compares two sums of the same products taken in different orders */
#define ADJOINT_LIMIT 1e-12


static const char *const interp_name[3] = {"0", "1", "2"};

/* A forward problem of op with the given modes and shapes, inputs filled at random. */
static int fwd_problem(const op_desc *op, int im, int pm, int ac, int64_t N, int64_t C, int64_t H, int64_t W,
                       int64_t Ho, int64_t Wo, unsigned long seed, problem_t *p, proof_result *r)
{
    char a[3][48];
    snprintf(a[0], 48, "interpolation_mode=%s", interp_name[im]);
    snprintf(a[1], 48, "padding_mode=%d", pm);
    snprintf(a[2], 48, "align_corners=%s", ac ? "true" : "false");
    const char *attrs[] = {a[0], a[1], a[2], NULL};
    shape_t s[2] = {shape4(N, C, H, W), shape4(N, Ho, Wo, 2)};
    return proof_problem(op, attrs, s, "{\"grid\": {\"lo\": -1.3, \"hi\": 1.3}}", seed, p, r);
}

/* the grid value whose unnormalized coordinate is the pixel centre k */
static double centre(int64_t k, int64_t S, int ac)
{
    if (ac) return S > 1 ? 2.0 * (double)k / (double)(S - 1) - 1.0 : 0.0;
    return (2.0 * (double)k + 1.0) / (double)S - 1.0;
}

/* ---- grid_sampler_2d ---------------------------------------------------------------------------- */

/* A grid on the pixel centres (a random permutation of them) copies the pixels, in every mode. */
static int identity_grid(const op_desc *op, proof_result *r)
{
    r->limit = RELATION_LIMIT; /* the centre's grid value carries a double rounding */
    int rc = 0;
    for (int im = 0; im < 3 && rc == 0; im++)
        for (int pm = 0; pm < 3 && rc == 0; pm++)
            for (int ac = 0; ac <= 1 && rc == 0; ac++) {
                const int64_t N = 2, C = 3, H = 7, W = 8, Ho = 5, Wo = 6;
                problem_t p;
                if (fwd_problem(op, im, pm, ac, N, C, H, W, Ho, Wo, 40 + (unsigned long)(im * 6 + pm * 2 + ac), &p, r))
                    return -1;
                gsl_rng *rng = conform_rng(7);
                int64_t *py = malloc(sizeof(int64_t) * (size_t)(N * Ho * Wo)), *px = malloc(sizeof(int64_t) * (size_t)(N * Ho * Wo));
                for (int64_t q = 0; q < N * Ho * Wo; q++) {
                    px[q] = (int64_t)gsl_rng_uniform_int(rng, (unsigned long)W);
                    py[q] = (int64_t)gsl_rng_uniform_int(rng, (unsigned long)H);
                    p.in[1].data[2 * q] = centre(px[q], W, ac);
                    p.in[1].data[2 * q + 1] = centre(py[q], H, ac);
                }
                double *y[1] = {0};
                rc = proof_reference(op, &p, y);
                for (int64_t n = 0; n < N && rc == 0; n++)
                    for (int64_t c = 0; c < C; c++)
                        for (int64_t q = 0; q < Ho * Wo; q++) {
                            int64_t qq = n * Ho * Wo + q;
                            double want = p.in[0].data[((n * C + c) * H + py[qq]) * W + px[qq]];
                            proof_note(r, fabs(y[0][(n * C + c) * Ho * Wo + q] - want));
                        }
                proof_free_outputs(y, 1);
                free(px);
                free(py);
                gsl_rng_free(rng);
                problem_free(&p);
            }
    return rc ? rc : proof_verdict(r, "samples on pixel centres, |output - pixel| (all 18 modes)");
}

/* Mirroring the grid's x (x -> -x) samples the mirrored image: exact for every mode (the
 * unnormalize, padding and weights are symmetric about the centre), except nearest ties. */
static int mirror(const op_desc *op, proof_result *r)
{
    r->limit = RELATION_LIMIT;
    int rc = 0;
    for (int im = 0; im < 3 && rc == 0; im++)
        for (int pm = 0; pm < 3 && rc == 0; pm++)
            for (int ac = 0; ac <= 1 && rc == 0; ac++) {
                const int64_t N = 1, C = 2, H = 6, W = 9, Ho = 4, Wo = 5;
                problem_t p;
                if (fwd_problem(op, im, pm, ac, N, C, H, W, Ho, Wo, 60 + (unsigned long)(im * 6 + pm * 2 + ac), &p, r))
                    return -1;
                double *y[1] = {0}, *ym[1] = {0};
                rc = proof_reference(op, &p, y);
                int64_t nx = tensor_numel(&p.in[0]), ng = tensor_numel(&p.in[1]);
                double *x = malloc(sizeof(double) * (size_t)nx), *g = malloc(sizeof(double) * (size_t)ng);
                memcpy(x, p.in[0].data, sizeof(double) * (size_t)nx);
                memcpy(g, p.in[1].data, sizeof(double) * (size_t)ng);
                for (int64_t row = 0; row < N * C * H; row++)
                    for (int64_t j = 0; j < W; j++) p.in[0].data[row * W + j] = x[row * W + W - 1 - j];
                for (int64_t q = 0; q < ng; q += 2) p.in[1].data[q] = -g[q];
                if (!rc) rc = proof_reference(op, &p, ym);
                if (!rc) proof_note(r, rel_diff(ym[0], y[0], shape_numel(&p.out_shape[0])));
                proof_free_outputs(y, 1);
                proof_free_outputs(ym, 1);
                free(x);
                free(g);
                problem_free(&p);
            }
    return rc ? rc : proof_verdict(r, "mirrored problems (all 18 modes)");
}

/* grid_sampler_2d is linear in the input: F(a x + b z) = a F(x) + b F(z). */
static int linearity(const op_desc *op, proof_result *r)
{
    r->limit = RELATION_LIMIT;
    int rc = 0;
    for (int im = 0; im < 3 && rc == 0; im++) {
        problem_t p;
        if (fwd_problem(op, im, im, im & 1, 2, 2, 5, 7, 4, 3, 80 + (unsigned long)im, &p, r)) return -1;
        gsl_rng *rng = conform_rng(81);
        rc = proof_linearity_random(op, &p, rng, r);
        gsl_rng_free(rng);
        problem_free(&p);
    }
    return rc ? rc : proof_verdict(r, "linear combinations");
}

const proof_desc grid_sampler_proofs[] = {
    {"metamorphic", "a grid on pixel centres copies those pixels (every mode, both align_corners)", identity_grid},
    {"metamorphic", "mirroring grid x and the image's columns leaves the output unchanged", mirror},
    {"metamorphic", "linear in the input", linearity},
    {"golden", "PyTorch 1.13 grid_sample (float64), every mode", proof_golden},
    {NULL, NULL, NULL},
};

/* ---- grid_sampler_2d_backward ---------------------------------------------------------------------- */

/* The forward (from the table) and the backward under proof on the same random inputs. */
/* distance of v to the nearest multiple of 1/2 */
static double dist_half(double v) { return fabs(v * 2 - rint(v * 2)) / 2; }

static int make_pair(const op_desc *bwd, int im, int pm, int ac, unsigned long seed, int smooth, proof_pair *pr,
                     proof_result *r)
{
    const int64_t N = 2, C = 3, H = 6, W = 7, Ho = 4, Wo = 5;
    memset(pr, 0, sizeof *pr);
    if (fwd_problem(&op_grid_sampler_2d, im, pm, ac, N, C, H, W, Ho, Wo, seed, &pr->fwd, r)) return -1;
    if (smooth) { /* move every coordinate away from integers and half-integers (cells, folds, clips, ties) */
        for (int64_t q = 0; q < N * Ho * Wo * 2; q++) {
            int64_t S = q % 2 ? H : W;
            double *c = &pr->fwd.in[1].data[q];
            for (int k = 0; k < 100; k++) {
                double i = ac ? (*c + 1) / 2 * (double)(S - 1) : ((*c + 1) * (double)S - 1) / 2;
                if (dist_half(i) > 0.06) break;
                *c = round_f32(*c + 0.037);
            }
        }
    }
    char a[4][48];
    snprintf(a[0], 48, "interpolation_mode=%s", interp_name[im]);
    snprintf(a[1], 48, "padding_mode=%d", pm);
    snprintf(a[2], 48, "align_corners=%s", ac ? "true" : "false");
    const char *ba[] = {a[0], a[1], a[2], NULL};
    shape_t bs[3] = {shape4(N, C, Ho, Wo), shape4(N, C, H, W), shape4(N, Ho, Wo, 2)};
    return proof_pair_finish(pr, bwd, ba, bs, seed + 1, 0, 1, 2, r); /* the same input and grid */
}

/* pair i of the 18 modes (interpolation, padding, align_corners in turn); smooth or not */
static int mode_pair(const op_desc *bwd, size_t i, unsigned long seed, proof_pair *pr, proof_result *r)
{
    return make_pair(bwd, (int)(i / 6), (int)(i / 2 % 3), (int)(i % 2), seed, 0, pr, r);
}
static int smooth_pair(const op_desc *bwd, size_t i, unsigned long seed, proof_pair *pr, proof_result *r)
{
    return make_pair(bwd, (int)(i / 6), (int)(i / 2 % 3), (int)(i % 2), seed, 1, pr, r);
}

static int adjoint(const op_desc *op, proof_result *r)
{
    r->limit = ADJOINT_LIMIT;
    return proof_adjoint_pairs(op, mode_pair, 18, 100,
                               "random problems (18 modes), |<g,Fx> - <input_grad(g),x>| / sum of |products|", r);
}

static int finite_difference(const op_desc *op, proof_result *r)
{
    /* the loss is piecewise polynomial (degree <= 3) in one grid value; with every coordinate
       0.06 px from a piece boundary and h = 1e-3 (<= 0.004 px here), GSL's central 5-point rule is
       exact but for rounding (~1e-16 |loss| / h) and h^4 f^(5) = 0; every grid element, over a
       scale of at least 1e-3 (nearest's grid_grad is 0 everywhere) */
    r->limit = 1e-8;
    const proof_fd_plan plan = {&op_grid_sampler_2d, 1, 1, 1e-3, 1e-3, 0,
                                "grid elements (18 modes), max(|fd - grid_grad|, GSL error estimate) / gradient scale"};
    return proof_fd_pairs(op, smooth_pair, 18, 200, &plan, r);
}

/* output_mask selects outputs without changing them: (1,0) and (0,1) give the (1,1) values. */
static int mask_independence(const op_desc *op, proof_result *r)
{
    r->limit = 0;
    int rc = 0;
    for (int im = 0; im < 3 && rc == 0; im++) {
        proof_pair pr;
        if (make_pair(op, im, 2 - im, im & 1, 300 + (unsigned long)im, 0, &pr, r)) { proof_pair_free(&pr); return -1; }
        for (int m = 0; m < 2 && rc == 0; m++) {
            problem_t q = pr.bwd;
            char text[8];
            snprintf(text, sizeof text, "%d,%d", m == 0, m == 1);
            char err[CONFORM_ERR_LEN];
            if (problem_set_attr_text(&q, "output_mask", text, err, sizeof err)) { rc = -1; break; }
            double *o[2] = {0, 0};
            rc = proof_reference(op, &q, o);
            if (!rc) proof_note(r, rel_diff(o[m], pr.gx[m], shape_numel(&pr.bwd.out_shape[m])));
            proof_free_outputs(o, 2);
        }
        proof_pair_free(&pr);
    }
    return rc ? rc : proof_verdict(r, "masked outputs against the unmasked ones");
}

const proof_desc grid_sampler_bwd_proofs[] = {
    {"adjoint", "<g, grid_sampler_2d(x)> = <input_grad(g), x> (every mode)", adjoint},
    {"finite difference", "central differences of <g, grid_sampler_2d(x, grid)> in grid equal grid_grad", finite_difference},
    {"metamorphic", "output_mask selects outputs without changing their values", mask_independence},
    {"golden", "PyTorch 1.13 grid_sample autograd (float64), every mode", proof_golden},
    {NULL, NULL, NULL},
};
