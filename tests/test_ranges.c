/* The reachable range beside the tolerance (conform_range.h, judge_range_interval): per op and
 * mode, the reference itself lies in its range (it is a legal evaluation), and every element that
 * can be moved just outside its range while staying within tol + ambig of the reference is moved
 * so, at huge coordinates and at ordinary ones: the judge fails each of them by the range alone
 * (n_out_of_range, nothing beyond tolerance). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "judge.h"
#include "verify.h"

extern const op_desc op_grid_sampler_2d, op_roi_align, op_roi_align_rotated, op_deformable_offsets;

typedef struct {
    int64_t judged, moved;
} tally;

/* got[i] moved just past the nearer end of its range that tol + ambig still reaches; 1 when moved */
static int move_out(const tol_inputs *t, int64_t i, double ref, double lo, double hi, int prefer_up, double *got)
{
    double ambig, w = compare_tolerance(t, i, &ambig);
    w += ambig;
    double room_up = ref + w - hi, room_down = lo - (ref - w);
    for (int k = 0; k < 2; k++) {
        int up = (k == 0) == (prefer_up != 0);
        double c = up ? hi + 0.5 * room_up : lo - 0.5 * room_down;
        if ((up ? room_up : room_down) > 0 && (up ? c > hi : c < lo) && fabs(c - ref) <= w) {
            *got = c;
            return 1;
        }
    }
    return 0;
}

static void probe(const op_desc *op, const char *const *attrs, const shape_t *shapes, const char *gen,
                  unsigned long seed, tally *tl, const char *what)
{
    problem_t p;
    proof_result r;
    judge_ref j;
    cr_assert_eq(proof_problem(op, attrs, shapes, gen, seed, &p, &r), 0, "%s: %s", what, r.detail);
    cr_assert_eq(judge_reference(&p, DTYPE_FLOAT32, &j), 0, "%s", what);
    const int64_t n = j.n[0];
    const double *ref = j.ref[0];
    double *got = malloc(sizeof(double) * (size_t)(n + 1));
    tol_inputs t = judge_tol(&j, 0);
    int64_t moved = 0;
    for (int64_t i = 0; i < n; i++) {
        double lo, hi;
        got[i] = ref[i];
        cr_assert(judge_range_interval(&j, 0, i, &lo, &hi), "%s: no range", what);
        if (!isfinite(ref[i])) continue;
        /* the reference is one legal evaluation: its own value lies in its range */
        cr_assert(ref[i] >= lo && ref[i] <= hi, "%s element %lld: ref %.9g outside its range [%.9g, %.9g]", what,
                  (long long)i, ref[i], lo, hi);
        moved += move_out(&t, i, ref[i], lo, hi, (int)(i & 1), &got[i]);
    }
    output_result out;
    char msg[512];
    memset(&out, 0, sizeof out);
    judge_output_init(&p, &j, 0, &out);
    int failed = judge_output(&j, 0, got, &out, msg, sizeof msg);
    cr_assert_eq(out.cmp.n_over, 0, "%s: moved elements beyond tolerance: %s", what, msg);
    cr_assert_eq(out.n_out_of_range, moved, "%s: %lld of %lld moved elements fail by the range", what,
                 (long long)out.n_out_of_range, (long long)moved);
    cr_assert_eq(failed, moved > 0, "%s: verdict %d with %lld moved (%s)", what, failed, (long long)moved, msg);
    tl->judged += n;
    tl->moved += moved;
    free(out.heat);
    free(got);
    judge_ref_free(&j);
    problem_free(&p);
}

static void report(const char *op, const tally *huge, const tally *plain)
{
    cr_log_info("%s: huge coordinates %lld of %lld elements moved out of range, ordinary %lld of %lld", op,
                (long long)huge->moved, (long long)huge->judged, (long long)plain->moved, (long long)plain->judged);
    cr_assert(huge->moved + plain->moved >= 100000, "%s: only %lld elements moved", op,
              (long long)(huge->moved + plain->moved));
    cr_assert(huge->moved > 0 && plain->moved > 0, "%s: huge %lld, ordinary %lld moved", op, (long long)huge->moved,
              (long long)plain->moved);
}

Test(ranges, grid_sampler_every_mode_at_huge_and_ordinary_coordinates)
{
    tally huge = {0}, plain = {0};
    const int64_t C = 6, S = 40;
    const shape_t shapes[2] = {shape4(1, C, S, S), shape4(1, S, S, 2)};
    for (int im = 0; im < 3; im++)
        for (int pm = 0; pm < 3; pm++)
            for (int ac = 0; ac < 2; ac++) {
                char a[3][48], what[96];
                snprintf(a[0], 48, "interpolation_mode=%d", im);
                snprintf(a[1], 48, "padding_mode=%d", pm);
                snprintf(a[2], 48, "align_corners=%s", ac ? "true" : "false");
                const char *attrs[] = {a[0], a[1], a[2], NULL};
                snprintf(what, sizeof what, "grid mode %d pad %d ac %d", im, pm, ac);
                /* 1e2 .. 1e9 pixels and around 2^24, a quarter special points (the suite's huge cases) */
                probe(&op_grid_sampler_2d, attrs, shapes,
                      "{\"grid\": {\"dist\": \"log_uniform\", \"lo\": 25, \"hi\": 2.5e8, \"special_frac\": 0.25},"
                      " \"input\": {\"dist\": \"uniform\", \"lo\": 1, \"hi\": 20}}", 11, &huge, what);
                probe(&op_grid_sampler_2d, attrs, shapes,
                      "{\"grid\": {\"dist\": \"log_uniform\", \"lo\": 5e5, \"hi\": 4.2e6, \"special_frac\": 0.25},"
                      " \"input\": {\"dist\": \"uniform\", \"lo\": -3, \"hi\": 5}}", 12, &huge, what);
                /* pixel centres, a hair off: a local extreme of the plane is its own range's end there */
                probe(&op_grid_sampler_2d, attrs, shapes,
                      "{\"grid\": {\"base\": \"identity\", \"lo\": -1e-9, \"hi\": 1e-9},"
                      " \"input\": {\"dist\": \"uniform\", \"lo\": -1, \"hi\": 1}}", 13, &plain, what);
            }
    report("grid_sampler_2d", &huge, &plain);
}

/* K rois of 3x3 pixels whose samples (aligned, one per bin of 1 pixel, pooled 3: not a power of two,
   so the positions carry a rounding box) sit on pixel centres of a 16x16 plane; rotated: centre
   and size, angle 0; field-major for NHWC */
static char *centre_rois(int64_t K, int rotated, int field_major, unsigned seed)
{
    const int len = rotated ? 6 : 5;
    double *v = malloc(sizeof(double) * (size_t)(K * len));
    for (int64_t k = 0; k < K; k++) {
        double b = (double)(k % 2), x = (double)(1 + rand_r(&seed) % 12), y = (double)(1 + rand_r(&seed) % 12);
        double q5[5] = {b, x, y, x + 3, y + 3}, q6[6] = {b, x + 1.5, y + 1.5, 3, 3, 0};
        for (int f = 0; f < len; f++) v[field_major ? f * K + k : k * len + f] = rotated ? q6[f] : q5[f];
    }
    size_t cap = (size_t)(K * len) * 24 + 64, used = 0;
    char *s = malloc(cap);
    used += (size_t)snprintf(s + used, cap - used, "[");
    for (int64_t i = 0; i < K * len; i++) used += (size_t)snprintf(s + used, cap - used, "%s%.17g", i ? "," : "", v[i]);
    snprintf(s + used, cap - used, "]");
    free(v);
    return s;
}

static char *gen_with_rois(const char *name, const char *rois, const char *values)
{
    size_t cap = strlen(rois) + 256;
    char *g = malloc(cap);
    snprintf(g, cap, "{\"%s\": {\"data\": %s}, %s}", name, rois, values);
    return g;
}

static const char *const huge_rois[] = {
    "{\"rois\": {\"huge_frac\": 0.5, \"huge\": [1e2, 1e9]}, \"%s\": {\"dist\": \"uniform\", \"lo\": 1, \"hi\": 20}}",
    "{\"rois\": {\"huge_frac\": 0.5, \"huge\": [8388608, 33554432]}, \"%s\": {\"dist\": \"uniform\", \"lo\": 1, \"hi\": 20}}",
};

Test(ranges, roi_align_bins_at_huge_and_ordinary_coordinates)
{
    tally huge = {0}, plain = {0};
    const int64_t K = 400, C = 8;
    for (int aligned = 0; aligned < 2; aligned++)
        for (int sr = 1; sr <= 2; sr++) {
            char a[3][48], what[64], gen[256];
            snprintf(a[0], 48, "aligned=%s", aligned ? "true" : "false");
            snprintf(a[1], 48, "sampling_ratio=%d", sr);
            /* at 2^-20 the huge image coordinates land on the plane (the suite's huge cases) */
            const char *attrs[] = {"pooled_h=2", "pooled_w=2", a[0], a[1], "spatial_scale=9.5367431640625e-07", NULL};
            const shape_t shapes[2] = {shape4(2, C, 16, 16), {2, {K, 5}}};
            for (int h = 0; h < 4; h++) {
                snprintf(what, sizeof what, "roi_align huge %d aligned %d sr %d", h, aligned, sr);
                snprintf(gen, sizeof gen, huge_rois[h % 2], "input");
                attrs[4] = h < 2 ? "spatial_scale=9.5367431640625e-07" : "spatial_scale=1";
                probe(&op_roi_align, attrs, shapes, gen, 21 + (unsigned long)h, &huge, what);
            }
        }
    char *rois = centre_rois(K * 16, 0, 0, 5);
    char *gen = gen_with_rois("rois", rois, "\"input\": {\"dist\": \"uniform\", \"lo\": -1, \"hi\": 1}");
    const char *attrs[] = {"pooled_h=3", "pooled_w=3", "aligned=true", "sampling_ratio=1", NULL};
    const shape_t shapes[2] = {shape4(2, C, 16, 16), {2, {K * 16, 5}}};
    probe(&op_roi_align, attrs, shapes, gen, 23, &plain, "roi_align at pixel centres");
    free(gen);
    free(rois);
    report("roi_align", &huge, &plain);
}

Test(ranges, roi_align_rotated_bins_at_huge_and_ordinary_coordinates)
{
    tally huge = {0}, plain = {0};
    const int64_t K = 400, C = 8;
    for (int nhwc = 0; nhwc < 2; nhwc++) {
        const char *fmt = nhwc ? "data_format=NHWC" : "data_format=NCHW";
        const shape_t x = nhwc ? shape4(2, 16, 16, C) : shape4(2, C, 16, 16);
        for (int sr = 1; sr <= 2; sr++) {
            char a[48], what[64], gen[256];
            snprintf(a, 48, "sampling_ratio=%d", sr);
            const char *attrs[] = {"pooled_h=2", "pooled_w=2", a, fmt, NULL, NULL};
            const shape_t shapes[2] = {x, nhwc ? (shape_t){2, {6, K}} : (shape_t){2, {K, 6}}};
            for (int h = 0; h < 4; h++) {
                snprintf(what, sizeof what, "rotated huge %d nhwc %d sr %d", h, nhwc, sr);
                snprintf(gen, sizeof gen, huge_rois[h % 2], "x");
                attrs[4] = h < 2 ? "spatial_scale=9.5367431640625e-07" : "spatial_scale=1";
                probe(&op_roi_align_rotated, attrs, shapes, gen, 31 + (unsigned long)h, &huge, what);
            }
        }
        char *rois = centre_rois(K * 8, 1, nhwc, 7);
        char *gen = gen_with_rois("rois", rois, "\"x\": {\"dist\": \"uniform\", \"lo\": -1, \"hi\": 1}");
        const char *attrs[] = {"pooled_h=3", "pooled_w=3", "aligned=true", "sampling_ratio=1", fmt, NULL};
        const shape_t shapes[2] = {x, nhwc ? (shape_t){2, {6, K * 8}} : (shape_t){2, {K * 8, 6}}};
        probe(&op_roi_align_rotated, attrs, shapes, gen, 33, &plain, "rotated at pixel centres");
        free(gen);
        free(rois);
    }
    report("roi_align_rotated", &huge, &plain);
}

Test(ranges, deformable_samples_at_huge_and_ordinary_offsets)
{
    tally huge = {0}, plain = {0};
    const int64_t C = 8, S = 24;
    const shape_t shapes[2] = {{4, {2, S, S, C}}, {4, {2, S, S, 27}}};
    const char *attrs[] = {"ksize=3,3", "pads=1,1,1,1", NULL};
    /* a position far off the plane samples only zero padding (0, no room to move it): the large
       positions are those of a plane 65536 wide, boxes of up to 2^-8 pixel */
    const shape_t wide[2] = {{4, {1, 2, 65536, 2}}, {4, {1, 2, 65536, 3}}};
    const char *one[] = {"ksize=1,1", NULL};
    for (unsigned long seed = 41; seed < 43; seed++)
        probe(&op_deformable_offsets, one, wide,
              "{\"offsets\": {\"near_integer_frac\": 1}, \"x\": {\"dist\": \"uniform\", \"lo\": 1, \"hi\": 20}}", seed,
              &huge, "deformable on a plane 65536 wide");
    /* offsets within 1e-7 of 0: samples a hair off pixel centres, masks in [0, 1] */
    for (unsigned long seed = 43; seed < 49; seed++)
        probe(&op_deformable_offsets, attrs, shapes,
              "{\"offsets\": {\"near_integer_frac\": 1}, \"x\": {\"dist\": \"uniform\", \"lo\": -1, \"hi\": 1}}",
              seed, &plain, "deformable near pixel centres");
    report("deformable_offsets", &huge, &plain);
}

/* ---- the default suite's huge-coordinate forward cases ------------------------------------------ */

#include "suite.h"

/* the smallest value of the input plane element e of a forward output samples (batch and channel:
   [N, C, ...] outputs of the grid sampler, [K, C, ...] of roi_align with the roi's batch) */
static double plane_min(const problem_t *p, int64_t e)
{
    const shape_t *os = &p->out_shape[0], *xs = &p->in[0].shape;
    const int64_t per_c = os->dims[2] * os->dims[3], c = e / per_c % os->dims[1], HW = xs->dims[2] * xs->dims[3];
    int64_t b = e / per_c / os->dims[1];
    if (!strcmp(p->op->name, "roi_align")) {
        double bf = floor(p->in[1].data[5 * b]);
        b = bf >= 0 && bf < (double)xs->dims[0] ? (int64_t)bf : -1;
    }
    if (b < 0) return NAN;
    const double *plane = p->in[0].data + (b * xs->dims[1] + c) * HW;
    double m = INFINITY;
    for (int64_t i = 0; i < HW; i++) m = fmin(m, plane[i]);
    return m;
}

/* Each element on its own set to its plane's minimum - 0.5 (the rest the golden), on the default
   suite's huge-coordinate forward cases (grid sampler with border or reflection padding, roi_align):
   planes of 1..20, where border and reflection keep every tap on the plane. An element whose range
   still reaches that value (a roi's empty sample counts 0) is skipped; every other one must fail.
   Without the range 97 of the 1302 moved elements passed, within their tol + ambig. */
Test(ranges, every_impossible_element_of_the_suites_huge_cases_fails)
{
    suite_t s;
    char err[512];
    cr_assert_eq(suite_load("cases/conformance.json", &s, err, sizeof err), 0, "%s", err);
    int64_t tried = 0, within_tol = 0, grid_reflect = 0;
    for (int k = 0; k < s.n_cases; k++) {
        const case_t *c = &s.cases[k];
        const int grid = !strncmp(c->id, "conformance/grid_fwd_huge_coords", 32);
        if (!grid && strncmp(c->id, "conformance/fwd_huge_rois", 25) && strncmp(c->id, "conformance/fwd_rois_2p24", 25))
            continue;
        problem_t p;
        judge_ref j;
        cr_assert_eq(case_build(c, case_seed(c, s.seed), &p, err, sizeof err), 0, "%s: %s", c->id, err);
        if (grid && p.attr[1].i == 0) { /* zeros padding: 0 is a legal value, below every plane */
            problem_free(&p);
            continue;
        }
        cr_assert_eq(judge_reference(&p, DTYPE_FLOAT32, &j), 0);
        const int64_t n = j.n[0];
        double *got = malloc(sizeof(double) * (size_t)n);
        tol_inputs t = judge_tol(&j, 0);
        for (int64_t e = 0; e < n; e++) {
            double lo, hi, m = plane_min(&p, e), v = m - 0.5, ambig;
            judge_range_interval(&j, 0, e, &lo, &hi);
            if (!isfinite(j.ref[0][e]) || !(v < lo)) continue; /* 0 (an empty sample) is legal for a roi */
            memcpy(got, j.ref[0], sizeof(double) * (size_t)n);
            got[e] = v;
            tried++;
            within_tol += fabs(v - j.ref[0][e]) <= compare_tolerance(&t, e, &ambig) + ambig;
            grid_reflect += grid && p.attr[1].i == 2 && p.attr[2].i == 0 && p.attr[0].i == 0;
            output_result out;
            char msg[512];
            memset(&out, 0, sizeof out);
            judge_output_init(&p, &j, 0, &out);
            cr_assert(judge_output(&j, 0, got, &out, msg, sizeof msg), "%s element %lld: %.9g (ref %.9g) passes", c->id,
                      (long long)e, v, j.ref[0][e]);
            free(out.heat);
        }
        free(got);
        judge_ref_free(&j);
        problem_free(&p);
    }
    suite_free(&s);
    cr_log_info("huge cases: %lld elements moved below their plane, %lld of them within tol + ambig, all failed "
                "(bilinear reflection without align_corners: %lld)", (long long)tried, (long long)within_tol,
                (long long)grid_reflect);
    cr_assert(tried >= 600 && within_tol > 0 && grid_reflect == 72, "tried %lld, within %lld, reflection %lld",
              (long long)tried, (long long)within_tol, (long long)grid_reflect);
}
