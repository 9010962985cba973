/* grid_sampler_2d and grid_sampler_2d_backward: hand-checked vectors, the optimized path on every
 * ISA at 1 and 2 threads against the reference with derived tolerances, thread-count
 * independence, validation, bounds at the discontinuities, and every proof kind catching a
 * deliberately broken reference. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_check.h"
#include "compare.h"
#include "judge.h"
#include "opt_internal.h"
#include "verify.h"



/* ---- hand-checked vectors ------------------------------------------------------------------ */

static const double img[4] = {1, 2, 3, 4};

static ref_grid_sampler_params small(int im, int pm, int ac, int64_t Ho, int64_t Wo)
{
    ref_grid_sampler_params p = {1, 1, 2, 2, Ho, Wo, im, pm, ac, {1, 1}};
    return p;
}

Test(grid_sampler_published, centre_and_corners)
{
    double y[4];
    const double centre[2] = {0, 0}, corners[8] = {-1, -1, 1, -1, -1, 1, 1, 1};
    for (int ac = 0; ac <= 1; ac++) {
        ref_grid_sampler_params p = small(0, 0, ac, 1, 1);
        f64_grid_sampler_2d_fwd__ref(&p, img, centre, y, NULL);
        cr_assert(fabs(y[0] - 2.5) <= 1e-15, "centre, ac %d: %.17g", ac, y[0]);
    }
    ref_grid_sampler_params p = small(0, 0, 1, 2, 2);
    f64_grid_sampler_2d_fwd__ref(&p, img, corners, y, NULL);
    for (int i = 0; i < 4; i++) cr_assert(fabs(y[i] - img[i]) <= 1e-15, "corner %d: %.17g", i, y[i]);
    /* align_corners false: (-1,-1) is the outer corner, i = -0.5: a quarter of pixel (0,0) with
       zeros padding, the pixel itself with border */
    p = small(0, 0, 0, 1, 1);
    f64_grid_sampler_2d_fwd__ref(&p, img, corners, y, NULL);
    cr_assert(fabs(y[0] - 0.25) <= 1e-15, "%.17g", y[0]);
    p = small(0, 1, 0, 1, 1);
    f64_grid_sampler_2d_fwd__ref(&p, img, corners, y, NULL);
    cr_assert(fabs(y[0] - 1) <= 1e-15, "%.17g", y[0]);
}

Test(grid_sampler_published, nearest_rounds_half_to_even)
{
    /* align_corners true on 2 pixels: x = 0 is i = 0.5 -> 0; on 4 pixels x = 0 is i = 1.5 -> 2 */
    double y[1];
    const double g[2] = {0, 1};
    ref_grid_sampler_params p = small(1, 0, 1, 1, 1);
    f64_grid_sampler_2d_fwd__ref(&p, img, g, y, NULL);
    cr_assert_eq(y[0], 3.0);
    const double row[4] = {10, 11, 12, 13};
    ref_grid_sampler_params q = {1, 1, 1, 4, 1, 1, 1, 0, 1, {1, 1}};
    f64_grid_sampler_2d_fwd__ref(&q, row, g, y, NULL);
    cr_assert_eq(y[0], 12.0);
}

Test(grid_sampler_published, backward_at_the_centre)
{
    double gi[4], gg[2];
    const double go[1] = {1}, g[2] = {0, 0};
    ref_grid_sampler_params p = small(0, 0, 1, 1, 1);
    f64_grid_sampler_2d_bwd__ref(&p, go, img, g, gi, gg, NULL);
    for (int i = 0; i < 4; i++) cr_assert(fabs(gi[i] - 0.25) <= 1e-15);
    cr_assert(fabs(gg[0] - 0.5) <= 1e-15 && fabs(gg[1] - 1.0) <= 1e-15, "%g %g", gg[0], gg[1]);
}

Test(grid_sampler_published, border_gradient_is_zero_on_border_pixel_centres)
{
    /* PyTorch issue 23925: at i = 0 and i = S-1 the border clip's derivative is taken as 0 */
    double gi[4], gg[2];
    const double go[1] = {1}, g[2] = {-1, 1};
    ref_grid_sampler_params p = small(0, 1, 1, 1, 1);
    f64_grid_sampler_2d_bwd__ref(&p, go, img, g, gi, gg, NULL);
    cr_assert_eq(gg[0], 0.0);
    cr_assert_eq(gg[1], 0.0);
    cr_assert(fabs(gi[2] - 1) <= 1e-15, "pixel (1, 0) gets everything: %g", gi[2]);
}

Test(grid_sampler_published, nearest_has_no_grid_gradient_even_at_a_nan_pixel)
{
    /* spec 7.4: grid_grad is 0 for nearest; a sum of zero slopes times a NaN pixel would be NaN
       (found by judging PyTorch's CPU backward, which gives 0) */
    const double nan_img[4] = {NAN, NAN, NAN, NAN}, go[1] = {1}, g[2] = {0.1, -0.2};
    double gi[4], gg[2];
    ref_grid_sampler_params p = small(1, 0, 0, 1, 1);
    f64_grid_sampler_2d_bwd__ref(&p, go, nan_img, g, gi, gg, NULL);
    cr_assert(gg[0] == 0.0 && gg[1] == 0.0, "%g %g", gg[0], gg[1]);
    const float fgo[1] = {1}, fimg[4] = {NAN, NAN, NAN, NAN}, fg[2] = {0.1f, -0.2f};
    const f32_grid_sampler_params fp = {1, 1, 2, 2, 1, 1, 1, 0, 0, {1, 1}};
    for (int isa = CONFORM_ISA_SCALAR; isa < CONFORM_ISA_COUNT; isa++) {
        if (!conform_isa_available((conform_isa)isa)) continue;
        float fgi[4], fgg[2];
        conform_exec ex = {(conform_isa)isa, 1};
        cr_assert_eq(f32_grid_sampler_2d_bwd(&fp, fgo, fimg, fg, fgi, fgg, &ex), 0);
        cr_assert(fgg[0] == 0.0f && fgg[1] == 0.0f, "isa %d: %g %g", isa, fgg[0], fgg[1]);
    }
}

Test(grid_sampler_published, nonfinite_coordinates_sample_nothing)
{
    double y[1], gi[4], gg[2];
    const double go[1] = {1};
    const double bad[3][2] = {{NAN, 0}, {0, INFINITY}, {-INFINITY, NAN}};
    for (int im = 0; im < 3; im++)
        for (int k = 0; k < 3; k++) {
            ref_grid_sampler_params p = small(im, 0, 0, 1, 1);
            f64_grid_sampler_2d_fwd__ref(&p, img, bad[k], y, NULL);
            cr_assert_eq(y[0], 0.0, "mode %d case %d", im, k);
            f64_grid_sampler_2d_bwd__ref(&p, go, img, bad[k], gi, gg, NULL);
            cr_assert(gg[0] == 0.0 && gg[1] == 0.0 && gi[0] == 0.0 && gi[3] == 0.0, "mode %d case %d", im, k);
        }
}

/* ---- the optimized path on every ISA ------------------------------------------------------- */

typedef struct {
    problem_t p;
    judge_ref ref;
    float *in[3];
} harness_case;

static void build(const op_desc *op, int im, int pm, int ac, int64_t C, int64_t H, int64_t W, unsigned long seed,
                  harness_case *h)
{
    char a[3][48];
    snprintf(a[0], 48, "interpolation_mode=%d", im);
    snprintf(a[1], 48, "padding_mode=%d", pm);
    snprintf(a[2], 48, "align_corners=%s", ac ? "true" : "false");
    const char *attrs[] = {a[0], a[1], a[2], NULL};
    const int64_t N = 2, Ho = 5, Wo = 6;
    shape_t fs[2] = {shape4(N, C, H, W), shape4(N, Ho, Wo, 2)};
    shape_t bs[3] = {shape4(N, C, Ho, Wo), shape4(N, C, H, W), shape4(N, Ho, Wo, 2)};
    proof_result r;
    memset(h, 0, sizeof *h);
    int rc = proof_problem(op, attrs, op->n_inputs == 2 ? fs : bs,
                           "{\"grid\": {\"lo\": -2, \"hi\": 2, \"special_frac\": 0.2, \"nan_frac\": 0.02}}", seed, &h->p, &r);
    cr_assert_eq(rc, 0, "%s", r.detail);
    cr_assert_eq(judge_reference(&h->p, DTYPE_FLOAT32, &h->ref), 0);
    for (int i = 0; i < op->n_inputs; i++) {
        int64_t n = tensor_numel(&h->p.in[i]);
        h->in[i] = malloc(sizeof(float) * (size_t)(n + 1));
        for (int64_t j = 0; j < n; j++) h->in[i][j] = (float)h->p.in[i].data[j];
    }
}

static void release(harness_case *h)
{
    judge_ref_free(&h->ref);
    for (int i = 0; i < 3; i++) free(h->in[i]);
    problem_free(&h->p);
}

static void run_and_check(const op_desc *op, harness_case *h, conform_isa isa, const char *what)
{
    float *got[2][2] = {{0}};
    for (int t = 0; t < 2; t++) {
        for (int o = 0; o < op->n_outputs; o++) {
            int64_t n = shape_numel(&h->p.out_shape[o]);
            got[t][o] = malloc(sizeof(float) * (size_t)(n + 1));
            for (int64_t i = 0; i < n; i++) got[t][o][i] = NAN;
        }
        conform_exec ex = {isa, t + 1};
        cr_assert_eq(op->optimized(&h->p, (const float **)h->in, got[t], &ex), CONFORM_OK);
        for (int o = 0; o < op->n_outputs; o++) {
            /* judged as run judges it (judge.h) */
            int64_t n = h->ref.n[o];
            double *g = malloc(sizeof(double) * (size_t)(n + 1));
            for (int64_t i = 0; i < n; i++) g[i] = got[t][o][i];
            output_result out;
            memset(&out, 0, sizeof out);
            judge_output_init(&h->p, &h->ref, o, &out);
            char msg[400];
            int failed = judge_output(&h->ref, o, g, &out, msg, sizeof msg);
            cr_assert(!failed, "%s %s threads %d: %s", what, conform_isa_name(isa), t + 1, msg);
            free(out.heat);
            free(g);
        }
    }
    for (int o = 0; o < op->n_outputs; o++) {
        int64_t n = shape_numel(&h->p.out_shape[o]);
        cr_assert(!memcmp(got[0][o], got[1][o], sizeof(float) * (size_t)n), "%s %s: %s differs between 1 and 2 threads",
                  what, conform_isa_name(isa), op->outputs[o].name);
        free(got[0][o]);
        free(got[1][o]);
    }
}

Test(grid_sampler_optimized, every_isa_mode_and_thread_count_matches_the_reference)
{
    const int64_t channels[] = {1, 17, 40};
    int tested = 0;
    for (int isa = CONFORM_ISA_SCALAR; isa < CONFORM_ISA_COUNT; isa++) {
        if (!conform_isa_available((conform_isa)isa)) continue;
        tested++;
        for (int im = 0; im < 3; im++)
            for (int pm = 0; pm < 3; pm++)
                for (int ac = 0; ac <= 1; ac++)
                    for (int ci = 0; ci < 3; ci++) {
                        /* 16 channels per unit: C = 40 runs as three chunks, the grid gradient's
                           partial sums are added across them */
                        conform_opt_grid_sampler_chunk = ci == 2 ? 16 : 0;
                        const op_desc *ops[2] = {op_find("grid_sampler_2d"), op_find("grid_sampler_2d_backward")};
                        for (int k = 0; k < 2; k++) {
                            harness_case h;
                            char what[96];
                            snprintf(what, sizeof what, "%s mode %d pad %d ac %d C %lld", ops[k]->name, im, pm, ac,
                                     (long long)channels[ci]);
                            build(ops[k], im, pm, ac, channels[ci], 7, 9, 1000 + (unsigned long)(im * 100 + pm * 10 + ac * 3 + ci), &h);
                            run_and_check(ops[k], &h, (conform_isa)isa, what);
                            release(&h);
                        }
                    }
    }
    conform_opt_grid_sampler_chunk = 0;
    cr_assert(tested >= 1);
}

/* Every ISA's transposes against their definition: the plain one (16-row groups with whole-line
 * stores on AVX-512, the 8-row and scalar remainders, both walking orders) and the one the
 * backward writes its input_grad rows out with, which also clears what it read. Destinations on
 * and off 64-byte lines, row strides that are and are not multiples of 16 floats. */
static void check_transpose(const conform_ukernels *kn, int zero, const size_t shape[4], size_t off, const char *what)
{
    const size_t rows = shape[0], cols = shape[1], ss = shape[2], ds = shape[3];
    const size_t dst_bytes = (sizeof(float) * (cols * ds + 64) + 63) / 64 * 64; /* a multiple of the alignment */
    float *src = malloc(sizeof(float) * rows * ss), *dst0 = aligned_alloc(64, dst_bytes);
    cr_assert(src && dst0);
    float *dst = dst0 + off; /* off a line: the plain-store paths */
    for (size_t i = 0; i < rows * ss; i++) src[i] = (float)(i % 997) + 0.5f;
    for (size_t i = 0; i < cols * ds + 64 - off; i++) dst[i] = -1.0f;
    if (zero) kn->transpose_stream_zero(rows, cols, src, ss, dst, ds);
    else kn->transpose(rows, cols, src, ss, dst, ds);
    for (size_t j = 0; j < cols; j++)
        for (size_t i = 0; i < ds; i++) {
            const float want = i < rows ? (float)((i * ss + j) % 997) + 0.5f : -1.0f;
            cr_assert_eq(dst[j * ds + i], want, "%s off %zu: dst[%zu][%zu] = %g", what, off, j, i, dst[j * ds + i]);
        }
    for (size_t i = 0; i < rows; i++)
        for (size_t j = 0; j < ss; j++) {
            const float want = zero && j < cols ? 0.0f : (float)((i * ss + j) % 997) + 0.5f;
            cr_assert_eq(src[i * ss + j], want, "%s: src[%zu][%zu] = %g", what, i, j, src[i * ss + j]);
        }
    free(src);
    free(dst0);
}

Test(grid_sampler_optimized, transposes_match_their_definition_on_every_isa)
{
    /* rows, cols, src_stride, dst_stride */
    const size_t shapes[][4] = {{64, 1000, 1000, 64}, {40, 37, 37, 48}, {17, 63, 63, 32}, {49, 24, 64, 49},
                                {24, 49, 49, 64},     {5, 9, 9, 16},    {33, 128, 200, 40}, {512, 64, 64, 16384},
                                {40, 19, 24, 48},     {33, 5, 16, 64}};
    int tested = 0;
    for (int isa = CONFORM_ISA_SCALAR; isa < CONFORM_ISA_COUNT; isa++) {
        if (!conform_isa_available((conform_isa)isa)) continue;
        tested++;
        const conform_ukernels *kn = conform_ukernels_for((conform_isa)isa);
        for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++)
            for (int zero = 0; zero <= 1; zero++)
                for (size_t off = 0; off <= 5; off += 5) {
                    char what[64];
                    snprintf(what, sizeof what, "isa %d %s shape %zu", isa, zero ? "transpose_stream_zero" : "transpose", si);
                    check_transpose(kn, zero, shapes[si], off, what);
                }
    }
    cr_assert(tested >= 1);
}

Test(grid_sampler_optimized, output_mask_leaves_unwanted_outputs_alone)
{
    const float go[4] = {1, 1, 1, 1}, x[4] = {1, 2, 3, 4}, g[2] = {0.1f, -0.2f};
    float gi[4] = {7, 7, 7, 7}, gg[2] = {7, 7};
    f32_grid_sampler_params p = {1, 1, 2, 2, 1, 1, 0, 0, 0, {0, 1}};
    cr_assert_eq(f32_grid_sampler_2d_bwd(&p, go, x, g, gi, gg, NULL), CONFORM_OK);
    cr_assert(gi[0] == 7 && gi[3] == 7, "input_grad was written");
    cr_assert(gg[0] != 7 && gg[1] != 7);
    p.output_mask[0] = 1;
    p.output_mask[1] = 0;
    gg[0] = gg[1] = 7;
    cr_assert_eq(f32_grid_sampler_2d_bwd(&p, go, x, g, gi, gg, NULL), CONFORM_OK);
    cr_assert(gg[0] == 7 && gg[1] == 7, "grid_grad was written");
    cr_assert(fabsf(gi[0] + gi[1] + gi[2] + gi[3] - 1) < 1e-6f);
    /* NULL for an unwanted output is fine */
    cr_assert_eq(f32_grid_sampler_2d_bwd(&p, go, x, g, gi, NULL, NULL), CONFORM_OK);
}

/* ---- validation ------------------------------------------------------------------------------ */

static void refused(const op_desc *op, const char *const *attrs, const shape_t *shapes, const char *want)
{
    problem_t p;
    proof_result r;
    memset(&r, 0, sizeof r);
    cr_assert_neq(proof_problem(op, attrs, shapes, NULL, 1, &p, &r), 0, "accepted, wanted '%s'", want);
    cr_assert(strstr(r.detail, want), "got '%s', wanted '%s'", r.detail, want);
}

Test(grid_sampler_validate, every_error_rule_names_its_cause)
{
    const char *none[] = {NULL};
    const char *bad_im[] = {"interpolation_mode=3", NULL}, *bad_pm[] = {"padding_mode=-1", NULL};
    const char *bad_mask[] = {"output_mask=1", NULL}, *bad_mask2[] = {"output_mask=1,2", NULL};
    shape_t ok_f[2] = {shape4(1, 2, 4, 4), shape4(1, 3, 3, 2)};
    shape_t f[2];
    int64_t r3[3] = {1, 2, 4};
    f[0] = shape_make(3, r3); f[1] = ok_f[1];
    refused(op_find("grid_sampler_2d"), none, f, "input [1,2,4]: must have rank 4");
    f[0] = ok_f[0]; f[1] = shape4(1, 3, 3, 3);
    refused(op_find("grid_sampler_2d"), none, f, "grid [1,3,3,3]: last dim must be 2");
    f[1] = shape4(2, 3, 3, 2);
    refused(op_find("grid_sampler_2d"), none, f, "N = 2 must equal input's N = 1");
    f[0] = shape4(1, 2, 0, 4); f[1] = ok_f[1];
    refused(op_find("grid_sampler_2d"), none, f, "H and W must be > 0");
    refused(op_find("grid_sampler_2d"), bad_im, ok_f, "interpolation_mode 3: must be 0 (bilinear), 1 (nearest) or 2 (bicubic)");
    refused(op_find("grid_sampler_2d"), bad_pm, ok_f, "padding_mode -1: must be 0 (zeros), 1 (border) or 2 (reflection)");

    shape_t ok_b[3] = {shape4(1, 2, 3, 3), shape4(1, 2, 4, 4), shape4(1, 3, 3, 2)}, b[3];
    memcpy(b, ok_b, sizeof b);
    b[0] = shape4(1, 5, 3, 3);
    refused(op_find("grid_sampler_2d_backward"), none, b, "grad_output [1,5,3,3]: C = 5 must equal input's C = 2");
    b[0] = shape4(2, 2, 3, 3);
    refused(op_find("grid_sampler_2d_backward"), none, b, "grad_output [2,2,3,3]: N = 2 must equal input's N = 1");
    b[0] = ok_b[0]; b[2] = shape4(1, 3, 4, 2);
    refused(op_find("grid_sampler_2d_backward"), none, b, "grid [1,3,4,2]: dims 1, 2 must equal grad_output [1,2,3,3] dims 2, 3");
    refused(op_find("grid_sampler_2d_backward"), bad_mask, ok_b, "output_mask has 1 entries: must have 2");
    refused(op_find("grid_sampler_2d_backward"), bad_mask2, ok_b, "output_mask[1] = 2: must be 0 or 1");
}

Test(grid_sampler_validate, masked_outputs_are_marked_skipped_and_empties_are_valid)
{
    const char *attrs[] = {"output_mask=0,1", NULL};
    shape_t b[3] = {shape4(0, 2, 3, 3), shape4(0, 2, 4, 4), shape4(0, 3, 3, 2)};
    problem_t p;
    proof_result r;
    cr_assert_eq(proof_problem(op_find("grid_sampler_2d_backward"), attrs, b, NULL, 1, &p, &r), 0, "%s", r.detail);
    cr_assert(p.out_skipped[0] && !p.out_skipped[1]);
    problem_free(&p);
}

/* ---- bounds at the discontinuities ----------------------------------------------------------- */

Test(grid_sampler_bounds, a_nearest_near_tie_is_ambiguous_and_covers_the_other_pixel)
{
    double y[1];
    /* x = 2^-24 (align_corners, 2 pixels): i = 0.5 + 2^-25, pixel 1 (value 2); float32 rounds g + 1
       to 1, i to the tie 0.5 and rint to pixel 0 (value 1): a real ambiguity */
    const double g[2] = {0x1p-24, 1};
    ref_grid_sampler_params p = small(1, 0, 1, 1, 1);
    ref_bounds b = bounds_alloc(8 * CONFORM_U_F32, 1);
    f64_grid_sampler_2d_fwd__ref(&p, img, g, y, &b);
    cr_assert_eq(y[0], 4.0);
    cr_assert(b.ambig[0] >= 1.0, "flipping the tie changes the value by 1: ambig %g", b.ambig[0]);
    const double g2[2] = {-0.2, 1};
    f64_grid_sampler_2d_fwd__ref(&p, img, g2, y, &b);
    cr_assert_eq(b.ambig[0], 0.0);
    bounds_free(&b);
}

Test(grid_sampler_bounds, an_exact_nearest_tie_is_not_ambiguous)
{
    double y[1];
    const double g[2] = {0, 1}; /* i = 0.5 exactly in every float32 form: rint picks pixel 0 */
    for (int pm = 0; pm < 2; pm++) {
        ref_grid_sampler_params p = small(1, pm, 1, 1, 1);
        ref_bounds b = bounds_alloc(8 * CONFORM_U_F32, 1);
        f64_grid_sampler_2d_fwd__ref(&p, img, g, y, &b);
        cr_assert_eq(y[0], 3.0, "half to even: column 0 of row 1");
        cr_assert_eq(b.ambig[0], 0.0, "padding %d: an exact tie has one rounding, half to even", pm);
        cr_assert_eq(b.pos_err[0], 0.0);
        bounds_free(&b);
    }
    /* reflection stays boxed (its fold count rounds a quotient in float32) */
    ref_grid_sampler_params p = small(1, 2, 1, 1, 1);
    ref_bounds b = bounds_alloc(8 * CONFORM_U_F32, 1);
    f64_grid_sampler_2d_fwd__ref(&p, img, g, y, &b);
    cr_assert(b.ambig[0] >= 1.0, "reflection: ambig %g", b.ambig[0]);
    bounds_free(&b);
}

Test(grid_sampler_bounds, bilinear_grid_gradient_at_a_cell_edge_is_ambiguous_but_the_value_is_not)
{
    double gi[6], gg[2];
    /* 2 x 3 pixels, align_corners: x = 2^-30 is i = 1 + 2^-30, which float32 rounds onto the cell
       edge i = 1 (at x = 0 exactly every form gives i = 1 and the spec's cell only: no ambiguity);
       y = 0 is i = 0.5 */
    const double go[1] = {1}, edge[2] = {0x1p-30, 0}, exact[2] = {0, 0};
    const double row[6] = {1, 5, 2, 3, 0, 4};
    ref_grid_sampler_params p = {1, 1, 2, 3, 1, 1, 0, 0, 1, {1, 1}};
    ref_bounds b[2] = {bounds_alloc(8 * CONFORM_U_F32, 6), bounds_alloc(8 * CONFORM_U_F32, 2)};
    f64_grid_sampler_2d_bwd__ref(&p, go, row, edge, gi, gg, b);
    cr_assert(b[1].ambig[0] > 0, "the x gradient switches cells at i = 1");
    for (int i = 0; i < 6; i++) cr_assert_eq(b[0].ambig[i], 0.0, "input_grad is continuous there");
    f64_grid_sampler_2d_bwd__ref(&p, go, row, exact, gi, gg, b);
    cr_assert_eq(b[1].ambig[0], 0.0, "an exact i = 1 is in the cell floor(1) = 1 in every float32 form");
    double y[1];
    ref_bounds bf = bounds_alloc(8 * CONFORM_U_F32, 1);
    f64_grid_sampler_2d_fwd__ref(&p, row, edge, y, &bf);
    cr_assert_eq(bf.ambig[0], 0.0, "the bilinear value is continuous across cells");
    bounds_free(&b[0]);
    bounds_free(&b[1]);
    bounds_free(&bf);
}

/* ---- each proof kind catches a broken reference ------------------------------------------------ */

static int violated(const op_desc *op, const char *kind)
{
    int ran;
    return verify_kind(op, kind, &ran);
}

Test(grid_sampler_verify, the_real_references_pass_every_proof)
{
    const op_desc *ops[] = {op_find("grid_sampler_2d"), op_find("grid_sampler_2d_backward")};
    for (int o = 0; o < 2; o++)
        for (int k = 0; k < PROOF_KINDS; k++) cr_assert_eq(violated(ops[o], proof_kinds[k]), 0, "%s %s", ops[o]->name, proof_kinds[k]);
}

/* forward sampling half a pixel off: the align_corners=false grid read as if it were true */
static void fwd_half_pixel(const problem_t *p, double **out, ref_bounds *b)
{
    problem_t q = *p;
    int ia = op_attr_index(p->op, "align_corners");
    q.attr[ia].i = !p->attr[ia].i;
    op_find("grid_sampler_2d")->reference(&q, out, b);
}

Test(grid_sampler_verify, metamorphic_and_golden_catch_a_half_pixel_shift)
{
    op_desc broken = *op_find("grid_sampler_2d");
    broken.reference = fwd_half_pixel;
    cr_assert_gt(violated(&broken, "metamorphic"), 0);
    cr_assert_gt(violated(&broken, "golden"), 0);
}

/* A self-contained bilinear-only backward (other modes: the real one) with one corner of
 * input_grad dropped, or the sign of the x gradient flipped. */
static int breakage;

static void bwd_broken(const problem_t *p, double **out, ref_bounds *bounds)
{
    op_find("grid_sampler_2d_backward")->reference(p, out, bounds);
    const shape_t *x = &p->in[1].shape, *gs = &p->in[2].shape;
    int64_t N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3], P = gs->dims[1] * gs->dims[2];
    if (problem_int(p, "interpolation_mode") != 0) return;
    int ac = (int)problem_int(p, "align_corners");
    for (int64_t n = 0; n < N; n++)
        for (int64_t q = 0; q < P; q++) {
            const double *g = p->in[2].data + (n * P + q) * 2;
            if (breakage == 1) { out[1][(n * P + q) * 2] = -out[1][(n * P + q) * 2]; continue; }
            if (problem_int(p, "padding_mode") != 0) continue;
            double ix = ac ? (g[0] + 1) / 2 * (W - 1) : ((g[0] + 1) * W - 1) / 2;
            double iy = ac ? (g[1] + 1) / 2 * (H - 1) : ((g[1] + 1) * H - 1) / 2;
            if (!isfinite(ix) || !isfinite(iy)) continue;
            int64_t x1 = (int64_t)floor(ix) + 1, y1 = (int64_t)floor(iy) + 1;
            if (x1 < 0 || x1 >= W || y1 < 0 || y1 >= H) continue;
            double w = (ix - floor(ix)) * (iy - floor(iy));
            for (int64_t c = 0; c < C; c++) /* take the (y1, x1) corner back out */
                out[0][((n * C + c) * H + y1) * W + x1] -= w * p->in[0].data[((n * C + c) * P) + q];
        }
}

Test(grid_sampler_verify, adjoint_and_golden_catch_a_dropped_corner)
{
    op_desc broken = *op_find("grid_sampler_2d_backward");
    broken.reference = bwd_broken;
    breakage = 0;
    cr_assert_gt(violated(&broken, "adjoint"), 0);
    cr_assert_gt(violated(&broken, "golden"), 0);
}

Test(grid_sampler_verify, finite_difference_and_golden_catch_a_wrong_sign_in_the_x_gradient)
{
    op_desc broken = *op_find("grid_sampler_2d_backward");
    broken.reference = bwd_broken;
    breakage = 1;
    cr_assert_gt(violated(&broken, "finite difference"), 0);
    cr_assert_gt(violated(&broken, "golden"), 0);
}

Test(grid_sampler_bounds, an_exact_clip_point_has_one_legal_grid_gradient)
{
    double gi[6], gg[2];
    /* 2 x 3 pixels, align_corners: x = -1 is i = 0 and x = 1 is i = 2 = S-1 in every float32 form
       of spec 7.1, so border and reflection clip there in every kernel: d = 0 (spec 7.3) is the
       only legal x gradient (a kernel with i < 0 for i <= 0 takes d = 1 and must fail) */
    const double go[1] = {1}, row[6] = {1, 5, 2, 3, 0, 4};
    for (int pm = 1; pm <= 2; pm++)
        for (int side = -1; side <= 1; side += 2) {
            ref_grid_sampler_params p = {1, 1, 2, 3, 1, 1, 0, pm, 1, {1, 1}};
            const double g[2] = {side, 0};
            ref_bounds b[2] = {bounds_alloc(8 * CONFORM_U_F32, 6), bounds_alloc(8 * CONFORM_U_F32, 2)};
            f64_grid_sampler_2d_bwd__ref(&p, go, row, g, gi, gg, b);
            cr_assert_eq(gg[0], 0.0, "padding %d, x = %d: d = 0 at the clip point", pm, side);
            cr_assert_eq(b[1].ambig[0], 0.0, "padding %d, x = %d: no float32 form reaches the other branch", pm, side);
            cr_assert_eq(b[1].pos_err[0], 0.0, "padding %d, x = %d", pm, side);
            /* just inside, where float32 may round onto the clip point either way: both legal */
            const double near[2] = {side * (1 - 0x1p-22), 0};
            f64_grid_sampler_2d_bwd__ref(&p, go, row, near, gi, gg, b);
            cr_assert(b[1].ambig[0] > 0, "padding %d, x = %d (1 - 2^-22): ambig %g", pm, side, b[1].ambig[0]);
            bounds_free(&b[0]);
            bounds_free(&b[1]);
        }
}
