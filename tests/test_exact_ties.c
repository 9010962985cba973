/* Exact positions. Nearest's ties (reference/grid_sampler.c, exact_in_f32): where the reference
 * gives a nearest sample no ambiguity, every float32 evaluation form of spec 7.1 picks the
 * reference's pixel, and the exact ties of small dyadic grid values are found as such (ties of
 * every plane size 2..40, both conventions, moved by 0 and by +-2^-j). RoIAlign's sample positions
 * (reference/roi_align.c, axis_exact): where the reference gives them no box, every float32 form
 * of spec 1 computes them exactly. Each form: plain, reordered, reciprocals, FMA. */
#include <criterion/criterion.h>
#include <math.h>

#include "ref_check.h"
#include "compare.h"


#define N_FORMS 5

/* the unnormalized coordinate in float32, each operation rounded (volatile: no contraction), in
 * the forms implementations use: PyTorch's and ours first, then reorderings and FMAs */
static void forms_f32(float g, int64_t S, int ac, float out[N_FORMS])
{
    const float s = (float)S, s1 = (float)(S - 1);
    volatile float a, b, c;
    if (ac) {
        a = g + 1.0f; b = a * 0.5f; out[0] = b * s1;           /* (g+1)/2*(S-1) */
        a = g * s1; b = a * 0.5f; out[1] = b + s1 * 0.5f;      /* g(S-1)/2 + (S-1)/2 */
        out[2] = fmaf(g, s1 * 0.5f, s1 * 0.5f);                 /* the same with FMA */
        a = g + 1.0f; b = a * s1; out[3] = b * 0.5f;           /* ((g+1)(S-1))/2 */
        a = g + 1.0f; out[4] = fmaf(a, s1, 0.0f) * 0.5f;
        return;
    }
    a = g + 1.0f; b = a * s; c = b - 1.0f; out[0] = c / 2.0f;  /* ((g+1)S - 1)/2 */
    a = g * s; b = a * 0.5f; out[1] = b + s1 * 0.5f;           /* gS/2 + (S-1)/2 */
    out[2] = fmaf(g, s * 0.5f, s1 * 0.5f);                      /* the same with FMA */
    a = g + 1.0f; out[3] = fmaf(a, s, -1.0f) * 0.5f;            /* FMA of PyTorch's form */
    a = g * (s * 0.5f); out[4] = a + (s * 0.5f - 0.5f);         /* g (S/2) + (S/2 - 1/2) */
}

/* the grid value of pixel coordinate i (spec 7.1 inverted), in double */
static double grid_of(double i, int64_t S, int ac) { return ac ? 2.0 * i / (double)(S - 1) - 1.0 : (2.0 * i + 1.0) / (double)S - 1.0; }

Test(exact_ties, an_unflagged_nearest_sample_is_the_pixel_of_every_float32_form)
{
    const double pre = op_find("grid_sampler_2d")->tol[0].k_pos * CONFORM_U_F32;
    ref_bounds b = bounds_alloc(pre, 1);
    double row[40];
    for (int k = 0; k < 40; k++) row[k] = k + 1; /* distinct: a different pixel is a different value */
    int exact_ties = 0, flagged = 0, checked = 0;
    for (int ac = 0; ac <= 1; ac++)
        for (int64_t S = 2; S <= 40; S++)
            for (int64_t k = -1; k < S; k++)
                for (int j = 7; j <= 31; j++)
                    for (int sgn = -1; sgn <= 1; sgn++) {
                        if (sgn == 0 && j > 7) continue; /* the tie itself once */
                        const float g = (float)(grid_of((double)k + 0.5, S, ac) + sgn * ldexp(1.0, -j));
                        const double grid[2] = {g, 0}; /* H = 1: y is 0 in both conventions */
                        ref_grid_sampler_params p = {1, 1, 1, S, 1, 1, 1, 0, ac, {1, 1}};
                        double y;
                        f64_grid_sampler_2d_fwd__ref(&p, row, grid, &y, &b);
                        if (b.ambig[0] > 0) { flagged++; continue; }
                        if (sgn == 0) exact_ties++;
                        float f[N_FORMS];
                        forms_f32(g, S, ac, f);
                        for (int m = 0; m < N_FORMS; m++) {
                            const float r = nearbyintf(f[m]); /* half to even, spec 7.4 */
                            const double v = r >= 0 && r < (float)S ? row[(int64_t)r] : 0;
                            cr_assert_eq(v, y, "ac %d, S %lld, g %a: form %d gives i %a (value %g), the reference %g "
                                         "with no ambiguity", ac, (long long)S, (double)g, m, (double)f[m], v, y);
                        }
                        checked++;
                    }
    bounds_free(&b);
    cr_assert_gt(exact_ties, 50, "exact ties are found as such: %d", exact_ties);
    cr_assert_gt(flagged, 0, "ties of many-bit grid values stay ambiguous");
    cr_assert_gt(checked, 10000, "%d", checked);
}

/* a tie of half to even: the reference picks the even pixel and flags nothing, so the other
   rounding (half away from zero) fails the element */
Test(exact_ties, half_away_from_zero_fails_an_exact_tie)
{
    const double row[4] = {1, 2, 3, 4}, grid[2] = {0, 0}; /* W = 4, align_corners false: i = 1.5 */
    ref_grid_sampler_params p = {1, 1, 1, 4, 1, 1, 1, 0, 0, {1, 1}};
    ref_bounds b = bounds_alloc(op_find("grid_sampler_2d")->tol[0].k_pos * CONFORM_U_F32, 1);
    double y;
    f64_grid_sampler_2d_fwd__ref(&p, row, grid, &y, &b);
    cr_assert_eq(y, 3.0, "half to even: pixel 2 (roundf agrees on 1.5)");
    cr_assert_eq(b.ambig[0], 0.0);
    const double grid2[2] = {0.25, 0}; /* i = 2.5: rint 2 (value 3), round 3 (value 4) */
    f64_grid_sampler_2d_fwd__ref(&p, row, grid2, &y, &b);
    cr_assert_eq(y, 3.0);
    cr_assert_eq(b.ambig[0], 0.0, "the tie at 2.5 is exact: no ambiguity hides roundf's pixel 3");
    tol_inputs t = {DTYPE_FLOAT32, &op_find("grid_sampler_2d")->tol[0], b.abs_sum, b.n_terms, b.pos_err, b.ambig};
    compare_result r;
    const float bad = 4.0f;
    compare_f32(&y, &bad, 1, &t, &r);
    cr_assert_eq(r.n_over, 1, "half away from zero picks pixel 3 and fails");
    bounds_free(&b);
}

/* ---- roi_align: positions the reference leaves unboxed are exact in every float32 form -------- */


/* the sample position of bin p, sample i (g per bin) along one axis, in float32 forms: torchvision's
   start + p bin + (i + 0.5) bin / g, the bin through reciprocals, and an FMA form */
static void roi_forms_f32(float c1, float c2, float s, float off, float plus, int clamp, int64_t pooled,
                          int64_t g, int64_t p, int64_t i, float out[3])
{
    volatile float start = c1 * s - off, end = (c2 + plus) * s - off, ext = end - start;
    if (clamp && ext < 1.0f) ext = 1.0f;
    volatile float bin = ext / (float)pooled, a = (float)p * bin, b = ((float)i + 0.5f) * bin, c = b / (float)g;
    volatile float t = start + a;
    out[0] = t + c;
    volatile float bin2 = ext * (1.0f / (float)pooled), f = ((float)p + ((float)i + 0.5f) * (1.0f / (float)g));
    out[1] = start + f * bin2;
    out[2] = fmaf(((float)i + 0.5f) / (float)g, bin, fmaf((float)p, bin, start));
}

Test(exact_ties, an_unboxed_roi_sample_position_is_exact_in_every_float32_form)
{
    const double scales[3] = {0.25, 1.0, 0.3}; /* 0.3: never exact */
    double x[64], y[16];
    for (int k = 0; k < 64; k++) x[k] = (double)((k * 7) % 11); /* a slope everywhere: pos_err > 0 when boxed */
    int exact = 0, boxed = 0;
    ref_bounds b = bounds_alloc(op_find("roi_align")->tol[0].k_pos * CONFORM_U_F32, 16);
    for (int si = 0; si < 3; si++)
        for (int mode = 0; mode < 3; mode++) /* aligned false, end + 1, aligned true */
            for (int64_t pooled = 1; pooled <= 4; pooled++)
                for (int64_t sr = 1; sr <= 3; sr++)
                    for (int c = 0; c < 40; c++) {
                        const float s = (float)scales[si], c1 = (float)(-2.0 + 0.375 * c), c2 = c1 + (float)(0.25 * (c % 9) + 0.5);
                        const double roi[5] = {0, c1, c1, c2, c2};
                        ref_roi_align_params p = {1, 1, 8, 8, 1, pooled, pooled, s, sr, mode == 2, mode == 1};
                        f64_roi_align_fwd__ref(&p, x, roi, y, &b);
                        if (b.pos_err[0] > 0) { boxed++; continue; } /* bin 0: the axis is boxed */
                        if (b.abs_sum[0] == 0) continue; /* nothing sampled: no slope to show a box */
                        const float off = mode == 2 ? 0.5f : 0.0f, plus = mode == 1 ? 1.0f : 0.0f;
                        const double sd = s, start = c1 * sd - off, end = (c2 + plus) * sd - off;
                        double ext = end - start;
                        if (mode != 2 && ext < 1) ext = 1;
                        /* every sample of bin 0 in a corner rule A clamps to one pixel: its value
                           cannot move, so no position term shows whether it is boxed */
                        const double first = start + 0.5 * (ext / (double)pooled) / (double)sr;
                        const double last = start + ((double)sr - 0.5) * (ext / (double)pooled) / (double)sr;
                        if (last <= 0 || first >= 7) continue;
                        exact++;
                        for (int64_t bp = 0; bp < pooled; bp++)
                            for (int64_t i = 0; i < sr; i++) {
                                const double want = start + (double)bp * (ext / (double)pooled) + ((double)i + 0.5) * (ext / (double)pooled) / (double)sr;
                                float f[3];
                                roi_forms_f32(c1, c2, s, off, plus, mode != 2, pooled, sr, bp, i, f);
                                for (int m = 0; m < 3; m++)
                                    cr_assert_eq((double)f[m], want, "roi %g..%g, s %g, mode %d, pooled %lld, sr %lld, "
                                                 "bin %lld, sample %lld: form %d gives %a, exactly %a", c1, c2, s, mode,
                                                 (long long)pooled, (long long)sr, (long long)bp, (long long)i, m,
                                                 (double)f[m], want);
                            }
                    }
    bounds_free(&b);
    cr_assert_gt(exact, 100, "short dyadic rois with power-of-two counts are found exact: %d", exact);
    cr_assert_gt(boxed, 100, "the others stay boxed: %d", boxed);
}

/* ---- roi_align_rotated at angle +-0: the same evidence, both layouts, both senses, fwd and grad --- */

/* sample (ph, pw, iy, ix) of a square roi (centre cx, cy, size w) in float32 forms: mmcv's and
   detectron2's order, (start + p bin) + ((i + 0.5) bin) / g then (yy cos - xx sin) + cy; the same
   with FMA contraction; reciprocals and the centre added first */
static void rot_forms_f32(float cx, float cy, float w, float s, int aligned, float theta, int64_t pooled, int64_t g,
                          const int64_t pi[4], float y[3], float x[3])
{
    volatile float ctr = cy * s - (aligned ? 0.5f : 0.0f), ctrx = cx * s - (aligned ? 0.5f : 0.0f), ext = w * s;
    if (!aligned && ext < 1.0f) ext = 1.0f;
    volatile float cs = cosf(theta), sn = sinf(theta), start = -ext / 2.0f, bin = ext / (float)pooled;
    volatile float a = start + (float)pi[0] * bin, b = ((float)pi[2] + 0.5f) * bin / (float)g;
    volatile float yy = a + b;
    a = start + (float)pi[1] * bin, b = ((float)pi[3] + 0.5f) * bin / (float)g;
    volatile float xx = a + b, t1 = yy * cs, t2 = xx * sn, t3 = yy * sn, t4 = xx * cs;
    y[0] = (t1 - t2) + ctr;
    x[0] = (t3 + t4) + ctrx;
    volatile float fy = fmaf(((float)pi[2] + 0.5f) / (float)g, bin, fmaf((float)pi[0], bin, start));
    volatile float fx = fmaf(((float)pi[3] + 0.5f) / (float)g, bin, fmaf((float)pi[1], bin, start));
    y[1] = fmaf(fy, cs, -(fx * sn)) + ctr;
    x[1] = fmaf(fy, sn, fx * cs) + ctrx;
    volatile float r = 1.0f / (float)g, bin2 = ext * (1.0f / (float)pooled);
    volatile float ry = start + ((float)pi[0] + ((float)pi[2] + 0.5f) * r) * bin2;
    volatile float rx = start + ((float)pi[1] + ((float)pi[3] + 0.5f) * r) * bin2;
    y[2] = (ctr + ry * cs) - rx * sn;
    x[2] = (ctrx + ry * sn) + rx * cs;
}

/* does the reference box any sample of this problem (a position term or an ambiguity anywhere)? */
static int rot_boxed(const ref_roi_align_rotated_params *p, const double *x, const double *roi, int grad)
{
    const int64_t n = grad ? p->H * p->W : p->pooled_h * p->pooled_w;
    double out[96], in[16];
    ref_bounds b = bounds_alloc(op_find("roi_align_rotated")->tol[0].k_pos * CONFORM_U_F32, n);
    for (int k = 0; k < 16; k++) in[k] = 1.0;
    if (grad)
        f64_roi_align_rotated_bwd__ref(p, in, roi, out, &b);
    else
        f64_roi_align_rotated_fwd__ref(p, x, roi, out, &b);
    int boxed = 0;
    for (int64_t e = 0; e < n; e++) boxed |= b.pos_err[e] > 0 || b.ambig[e] > 0;
    bounds_free(&b);
    return boxed;
}

Test(exact_ties, an_unboxed_rotated_sample_position_at_angle_zero_is_exact_in_every_float32_form)
{
    const double scales[3] = {0.25, 1.0, 0.3};
    double x[64];
    for (int k = 0; k < 64; k++) x[k] = (double)((k * 7) % 11); /* 8 x 8, a slope everywhere */
    int exact = 0, boxed = 0, on_line[4] = {0, 0, 0, 0}; /* y = -1, y = H, x = -1, x = W */
    for (int si = 0; si < 3; si++)
        for (int aligned = 0; aligned < 2; aligned++)
            for (int64_t pooled = 1; pooled <= 4; pooled++)
                for (int64_t sr = 1; sr <= 3; sr++)
                    for (int c = 0; c < 120; c++) {
                        /* x's centre also 4 pixels left or right, so that a sample on one line has the other
                           coordinate inside, away from rule A's clamped corners */
                        const float s = (float)scales[si], c1 = (float)(-2.0 + 0.375 * (c / 3)), w = (float)(0.25 * (c / 3 % 9) + 0.5);
                        const float c2 = c1 + 4.0f * (float)(c % 3 - 1);
                        /* one verdict per direction in both layouts, both senses, both signs; the
                           forward shows a box only through a slope its samples reach, the grad through
                           its weights: a forward box is a grad box */
                        int verdict[2] = {-1, -1};
                        for (int v = 0; v < 16; v++) {
                            const double roi[6] = {0, c2, c1, w, w, (v & 1) ? -0.0 : 0.0};
                            ref_roi_align_rotated_params p = {1, 1, 8, 8, 1, pooled, pooled, s, sr, aligned, (v >> 1) & 1, (v >> 2) & 1};
                            const int grad = (v >> 3) & 1, bx = rot_boxed(&p, x, roi, grad);
                            cr_assert(verdict[grad] < 0 || bx == verdict[grad], "roi c %g w %g s %g: boxed in one variant "
                                      "of %s, not in another (%d)", c1, w, s, grad ? "the grad" : "the forward", v);
                            verdict[grad] = bx;
                        }
                        cr_assert(!verdict[0] || verdict[1], "roi c %g w %g s %g: boxed forward, not in the grad", c1, w, s);
                        if (verdict[1]) { boxed++; continue; }
                        const double sd = s, ctr = c1 * sd - (aligned ? 0.5 : 0.0), ctrx = c2 * sd - (aligned ? 0.5 : 0.0);
                        double ext = w * sd;
                        if (!aligned && ext < 1) ext = 1;
                        const double bin = ext / (double)pooled;
                        /* samples all beyond the window read nothing, and rule A clamps both axes of
                           samples all at or below 0 or at or above the last pixel: no term shows
                           whether those are boxed */
                        const double half = ext / 2 - 0.5 * bin / (double)sr;
                        const double ly = ctr - half, hy = ctr + half, lx = ctrx - half, hx = ctrx + half;
                        if (ly > 8 || hy < -1 || lx > 8 || hx < -1) continue;
                        if ((hy <= 0 || ly >= 7) && (hx <= 0 || lx >= 7)) continue;
                        exact++;
                        for (int v = 0; v < 4; v++) { /* theta = +-angle: +0 or -0 */
                            const float theta = (v & 1) ? -0.0f : 0.0f;
                            for (int64_t q = 0; q < pooled * pooled * sr * sr; q++) {
                                const int64_t pi[4] = {q / (pooled * sr * sr), q / (sr * sr) % pooled, q / sr % sr, q % sr};
                                const double wy = ctr - ext / 2 + (double)pi[0] * bin + ((double)pi[2] + 0.5) * bin / (double)sr;
                                const double wx = ctrx - ext / 2 + (double)pi[1] * bin + ((double)pi[3] + 0.5) * bin / (double)sr;
                                float fy[3], fx[3];
                                rot_forms_f32(c2, c1, w, s, aligned, theta, pooled, sr, pi, fy, fx);
                                for (int m = 0; m < 3; m++)
                                    cr_assert(fy[m] == wy && fx[m] == wx, "roi c %g, %g w %g s %g aligned %d pooled %lld sr %lld, "
                                              "sample %lld: form %d gives (%a, %a), exactly (%a, %a)", c2, c1, w, s, aligned,
                                              (long long)pooled, (long long)sr, (long long)q, m, fy[m], fx[m], wy, wx);
                                on_line[0] += wy == -1.0;
                                on_line[1] += wy == 8.0;
                                on_line[2] += wx == -1.0;
                                on_line[3] += wx == 8.0;
                            }
                        }
                    }
    cr_assert_gt(exact, 100, "short dyadic rois with power-of-two counts are found exact: %d", exact);
    cr_assert_gt(boxed, 100, "the others stay boxed: %d", boxed);
    cr_log_info("rotated at angle 0: %d rois exact, %d boxed; exact samples on y = -1, H, x = -1, W: %d %d %d %d",
                exact, boxed, on_line[0], on_line[1], on_line[2], on_line[3]);
    for (int l = 0; l < 4; l++)
        cr_assert_gt(on_line[l], 0, "unboxed samples exactly on window line %d (y = -1, y = H, x = -1, x = W)", l);
}
