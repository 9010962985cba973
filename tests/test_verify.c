/* Each kind of proof must catch a deliberately broken reference, and pass the real one. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "verify.h"


Test(verify, the_real_references_pass_every_proof)
{
    const op_desc *ops[] = {op_find("roi_align"), op_find("roi_align_v2_backward")};
    for (int o = 0; o < 2; o++)
        for (int k = 0; k < PROOF_KINDS; k++) {
            int ran;
            cr_assert_eq(verify_kind(ops[o], proof_kinds[k], &ran), 0, "%s %s", ops[o]->name, proof_kinds[k]);
        }
}

/* ---- broken forward: samples half a pixel off ------------------------------------------- */

static void fwd_half_pixel_off(const problem_t *p, double **out, ref_bounds *b)
{
    problem_t q = *p;
    tensor_t rois = p->in[1];
    int64_t n = tensor_numel(&rois);
    double s = problem_float(p, "spatial_scale");
    q.in[1].data = malloc(sizeof(double) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) q.in[1].data[i] = rois.data[i] + (i % 5 ? 0.5 / s : 0.0);
    op_find("roi_align")->reference(&q, out, b);
    free(q.in[1].data);
}

Test(verify, metamorphic_and_golden_catch_an_off_by_half_pixel_forward)
{
    op_desc broken = *op_find("roi_align");
    broken.reference = fwd_half_pixel_off;
    int ran;
    cr_assert_gt(verify_kind(&broken, "metamorphic", &ran), 0);
    cr_assert_gt(verify_kind(&broken, "golden", &ran), 0);
}

/* ---- broken backward: one corner dropped -------------------------------------------------- */

/* A self-contained backward that forgets the (y1, x1) corner of every sample. */
static void bwd_dropped_corner(const problem_t *p, double **out, ref_bounds *bounds)
{
    const attr_value *is = problem_attr(p, "input_shape");
    int64_t B = is->list[0], C = is->list[1], H = is->list[2], W = is->list[3];
    int64_t PH = problem_int(p, "pooled_height"), PW = problem_int(p, "pooled_width");
    int64_t sr = problem_int(p, "sampling_ratio"), K = p->in[1].shape.dims[0];
    int aligned = (int)problem_int(p, "aligned");
    double s = problem_float(p, "spatial_scale"), off = aligned ? 0.5 : 0;
    memset(out[0], 0, sizeof(double) * (size_t)(B * C * H * W));
    for (int64_t k = 0; k < K; k++) {
        const double *r = p->in[1].data + 5 * k;
        int64_t b = (int64_t)floor(r[0]);
        if (b < 0 || b >= B) continue;
        double sx = r[1] * s - off, sy = r[2] * s - off, rw = r[3] * s - off - sx, rh = r[4] * s - off - sy;
        if (!aligned) { rw = fmax(rw, 1); rh = fmax(rh, 1); }
        int64_t gh = sr > 0 ? sr : (int64_t)ceil(rh / PH), gw = sr > 0 ? sr : (int64_t)ceil(rw / PW);
        double count = fmax((double)(gh * gw), 1);
        for (int64_t c = 0; c < C; c++)
            for (int64_t ph = 0; ph < PH; ph++)
                for (int64_t pw = 0; pw < PW; pw++) {
                    double g = p->in[0].data[((k * C + c) * PH + ph) * PW + pw];
                    for (int64_t iy = 0; iy < gh; iy++)
                        for (int64_t ix = 0; ix < gw; ix++) {
                            ref_bilinear rb;
                            double y = sy + ph * rh / PH + (iy + 0.5) * rh / PH / gh;
                            double x = sx + pw * rw / PW + (ix + 0.5) * rw / PW / gw;
                            if (!ref_bilinear_rule(H, W, y, x, &rb)) continue;
                            for (int i = 0; i < 2; i++)
                                for (int j = 0; j < 2; j++)
                                    if (i + j < 2)
                                        out[0][((b * C + c) * H + rb.y[i]) * W + rb.x[j]] += g * rb.wy[i] * rb.wx[j] / count;
                        }
                }
    }
    (void)bounds;
}

Test(verify, adjoint_finite_difference_and_golden_catch_a_dropped_corner)
{
    op_desc broken = *op_find("roi_align_v2_backward");
    broken.reference = bwd_dropped_corner;
    int ran;
    cr_assert_gt(verify_kind(&broken, "adjoint", &ran), 0);
    cr_assert_gt(verify_kind(&broken, "finite difference", &ran), 0);
    cr_assert_gt(verify_kind(&broken, "golden", &ran), 0);
}

/* ---- broken backward: pooled_height and pooled_width swapped (torch_npu's own bug) -------- */

static void bwd_swapped_pooled(const problem_t *p, double **out, ref_bounds *b)
{
    problem_t q = *p;
    int ih = op_attr_index(p->op, "pooled_height"), iw = op_attr_index(p->op, "pooled_width");
    q.attr[ih] = p->attr[iw];
    q.attr[iw] = p->attr[ih];
    op_find("roi_align_v2_backward")->reference(&q, out, b);
}

Test(verify, adjoint_and_finite_difference_catch_swapped_pooled_sizes)
{
    op_desc broken = *op_find("roi_align_v2_backward");
    broken.reference = bwd_swapped_pooled;
    int ran;
    cr_assert_gt(verify_kind(&broken, "adjoint", &ran), 0);
    cr_assert_gt(verify_kind(&broken, "finite difference", &ran), 0);
}

/* ---- broken forward: a systematic relative bias of 1e-9 ------------------------------------ */

static void fwd_scaled(const problem_t *p, double **out, ref_bounds *b)
{
    op_find("roi_align")->reference(p, out, b);
    int64_t n = shape_numel(&p->out_shape[0]);
    for (int64_t i = 0; i < n; i++) out[0][i] *= 1.0 + 1e-9; /* a tiny systematic bias */
}

Test(verify, golden_catches_even_a_tiny_bias)
{
    op_desc broken = *op_find("roi_align");
    broken.reference = fwd_scaled;
    int ran;
    cr_assert_gt(verify_kind(&broken, "golden", &ran), 0);
    cr_assert_gt(ran, 0);
}
