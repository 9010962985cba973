/* conform check: outputs computed by another implementation (torchvision, float32 and float16)
 * are accepted, and rejected once perturbed by a few times their derived bound. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scratch.h"
#include "test_files.h"
#include "cli.h"
#include "compare.h"
#include "judge.h"
#include "npy.h"
#include "suite.h"
#include "op.h"

static char dir[64];

static void setup(void) { scratch_make_quiet(dir, sizeof dir, "check"); }

static void teardown(void) { scratch_remove(dir); }

#define V "cases/check/roi_align/"

static int check_fwd(const char *actual, const char *dtype)
{
    char a[256];
    snprintf(a, sizeof a, "output=%s", actual);
    const char *argv[] = {"conform", "check", "roi_align", "--attr", "pooled_h=3", "--attr", "pooled_w=4", "--attr",
                          "spatial_scale=0.25", "--attr", "sampling_ratio=2", "--input", "input=" V "input.npy", "--input",
                          "rois=" V "rois.npy", "--actual", a, "--dtype", dtype};
    return cmd_check(19, (char **)argv);
}

Test(check, accepts_torchvision_float32_and_float16_outputs, .init = setup, .fini = teardown)
{
    cr_assert_eq(check_fwd(V "output.npy", "float32"), EXIT_OK);
    cr_assert_eq(check_fwd(V "output_f16.npy", "float16"), EXIT_OK);
    /* float16 data is refused unless the dtype says so */
    cr_assert_eq(check_fwd(V "output_f16.npy", "float32"), EXIT_USAGE);
    const char *bwd[] = {"conform", "check", "roi_align_v2_backward", "--attr", "pooled_height=3", "--attr", "pooled_width=4",
                         "--attr", "spatial_scale=0.25", "--attr", "sampling_ratio=2", "--attr", "input_shape=2,3,16,16",
                         "--input", "grad_output=" V "grad_output.npy", "--input", "boxes=" V "rois.npy", "--actual",
                         "grad_input=" V "grad_input.npy"};
    cr_assert_eq(cmd_check(19, (char **)bwd), EXIT_OK);
}

/* the derived float32 tolerance of every output element of the torchvision problem */
static double *tolerances(int64_t *n, tensor_t *out)
{
    char err[256];
    tensor_t x, r;
    cr_assert_eq(npy_read(V "input.npy", &x, err, sizeof err), 0);
    cr_assert_eq(npy_read(V "rois.npy", &r, err, sizeof err), 0);
    cr_assert_eq(npy_read(V "output.npy", out, err, sizeof err), 0);
    ref_roi_align_params p = {2, 3, 16, 16, 10, 3, 4, 0.25, 2, 1, 0};
    *n = tensor_numel(out);
    double *ref = calloc((size_t)*n, 8), *b[4];
    for (int k = 0; k < 4; k++) b[k] = calloc((size_t)*n, 8);
    ref_bounds bounds = {16 * CONFORM_U_F32, b[0], b[1], b[2], b[3]};
    f64_roi_align_fwd__ref(&p, x.data, r.data, ref, &bounds);
    static const tol_model tm = {6, "", 16, ""};
    tol_inputs t = {DTYPE_FLOAT32, &tm, b[0], b[1], b[2], b[3]};
    double *tol = calloc((size_t)*n, 8);
    for (int64_t i = 0; i < *n; i++) {
        double amb;
        tol[i] = compare_tolerance(&t, i, &amb);
    }
    for (int k = 0; k < 4; k++) free(b[k]);
    free(ref);
    tensor_free(&x);
    tensor_free(&r);
    return tol;
}

Test(check, rejects_outputs_perturbed_by_a_few_times_the_bound, .init = setup, .fini = teardown)
{
    int64_t n;
    tensor_t out;
    double *tol = tolerances(&n, &out);
    char path[128], err[256];
    snprintf(path, sizeof path, "%s/perturbed.npy", dir);
    int tried = 0;
    for (int64_t i = 0; i < n && tried < 5; i += n / 5 + 1) {
        if (tol[i] <= 0) continue;
        float *f = malloc(sizeof(float) * (size_t)n);
        for (int64_t k = 0; k < n; k++) f[k] = (float)out.data[k];
        f[i] = (float)(out.data[i] + 4 * tol[i]); /* four times its bound, in either direction */
        if (tried % 2) f[i] = (float)(out.data[i] - 4 * tol[i]);
        cr_assert_eq(npy_write_f32(path, &out.shape, f, err, sizeof err), 0);
        cr_assert_eq(check_fwd(path, "float32"), EXIT_FAIL, "element %lld moved by 4 tol = %g", (long long)i, 4 * tol[i]);
        free(f);
        tried++;
    }
    cr_assert_eq(tried, 5);
    tensor_free(&out);
    free(tol);
}

/* ---- grid_sample from PyTorch, forward and backward ----------------------------------------- */

#define G "cases/check/grid_sampler/"
static const char *grid_attrs[] = {"--attr", "interpolation_mode=0", "--attr", "padding_mode=0", "--attr",
                                   "align_corners=false"};

/* the derived float32 tolerance of every element of output o of op on the given problem */
static double *derived_tolerances(const char *opname, int n_args, const char **args, int o, int64_t *n)
{
    const op_desc *op = op_find(opname);
    problem_args a;
    memset(&a, 0, sizeof a);
    for (int i = 0; i < n_args; i += 2) {
        if (!strcmp(args[i], "--attr")) a.attr[a.n_attr++] = args[i + 1];
        else a.input[a.n_input++] = args[i + 1];
    }
    problem_t p;
    cr_assert_eq(problem_from_args(op, &a, &p), 0);
    judge_ref j; /* the reference and bounds check computes (judge.h) */
    cr_assert_eq(judge_reference(&p, DTYPE_FLOAT32, &j), 0);
    *n = j.n[o];
    tol_inputs t = judge_tol(&j, o);
    double *tol = calloc((size_t)*n + 1, 8);
    for (int64_t i = 0; i < *n; i++) {
        double amb;
        tol[i] = compare_tolerance(&t, i, &amb) + amb;
    }
    judge_ref_free(&j);
    problem_free(&p);
    return tol;
}

/* check with one actual file replaced */
static int check_grid(int backward, const char *which, const char *path)
{
    const char *argv[32];
    int n = 0;
    char act[2][256];
    argv[n++] = "conform";
    argv[n++] = "check";
    argv[n++] = backward ? "grid_sampler_2d_backward" : "grid_sampler_2d";
    for (int i = 0; i < 6; i++) argv[n++] = grid_attrs[i];
    if (backward) { argv[n++] = "--input"; argv[n++] = "grad_output=" G "grad_output.npy"; }
    argv[n++] = "--input"; argv[n++] = "input=" G "input.npy";
    argv[n++] = "--input"; argv[n++] = "grid=" G "grid.npy";
    const char *outs[2] = {backward ? "input_grad" : "output", "grid_grad"};
    for (int k = 0; k < (backward ? 2 : 1); k++) {
        if (which && !strcmp(which, outs[k])) snprintf(act[k], sizeof act[k], "%s=%s", outs[k], path);
        else snprintf(act[k], sizeof act[k], "%s=" G "%s.npy", outs[k], outs[k]);
        argv[n++] = "--actual";
        argv[n++] = act[k];
    }
    return cmd_check(n, (char **)argv);
}

Test(check, accepts_pytorch_grid_sample_and_its_backward, .init = setup, .fini = teardown)
{
    cr_assert_eq(check_grid(0, NULL, NULL), EXIT_OK);
    cr_assert_eq(check_grid(1, NULL, NULL), EXIT_OK);
}

Test(check, rejects_grid_sample_outputs_perturbed_by_a_few_times_the_bound, .init = setup, .fini = teardown)
{
    const char *fwd_args[] = {"--attr", "interpolation_mode=0", "--attr", "padding_mode=0", "--attr", "align_corners=false",
                              "--input", "input=" G "input.npy", "--input", "grid=" G "grid.npy"};
    const char *bwd_args[] = {"--attr", "interpolation_mode=0", "--attr", "padding_mode=0", "--attr", "align_corners=false",
                              "--input", "grad_output=" G "grad_output.npy", "--input", "input=" G "input.npy", "--input",
                              "grid=" G "grid.npy"};
    struct { int backward, o; const char *name; } outs[] = {{0, 0, "output"}, {1, 0, "input_grad"}, {1, 1, "grid_grad"}};
    for (int k = 0; k < 3; k++) {
        int64_t n;
        double *tol = outs[k].backward ? derived_tolerances("grid_sampler_2d_backward", 12, bwd_args, outs[k].o, &n)
                                       : derived_tolerances("grid_sampler_2d", 10, fwd_args, 0, &n);
        char src[256], dst[256], err[256];
        snprintf(src, sizeof src, G "%s.npy", outs[k].name);
        snprintf(dst, sizeof dst, "%s/%s.npy", dir, outs[k].name);
        tensor_t t;
        cr_assert_eq(npy_read(src, &t, err, sizeof err), 0);
        int tried = 0;
        for (int64_t i = 0; i < n && tried < 3; i += n / 3 + 1) {
            if (!(tol[i] > 0)) continue;
            float *f = malloc(sizeof(float) * (size_t)n);
            for (int64_t q = 0; q < n; q++) f[q] = (float)t.data[q];
            f[i] = (float)(t.data[i] + (tried % 2 ? -4 : 4) * tol[i]);
            cr_assert_eq(npy_write_f32(dst, &t.shape, f, err, sizeof err), 0);
            cr_assert_eq(check_grid(outs[k].backward, outs[k].name, dst), EXIT_FAIL, "%s[%lld] moved by 4 tol", outs[k].name,
                         (long long)i);
            free(f);
            tried++;
        }
        cr_assert_gt(tried, 0);
        tensor_free(&t);
        free(tol);
    }
}

/* check judges as run does (judge.h): a NaN where the reference is finite is named a non-finite
   mismatch, not an element beyond tolerance, and the report carries run's message */
Test(check, names_a_nonfinite_mismatch_as_run_does, .init = setup, .fini = teardown)
{
    char err[256], path[128], rep[128], a[256];
    tensor_t out;
    cr_assert_eq(npy_read(V "output.npy", &out, err, sizeof err), 0);
    int64_t n = tensor_numel(&out);
    float *f = malloc(sizeof(float) * (size_t)n);
    for (int64_t k = 0; k < n; k++) f[k] = (float)out.data[k];
    f[n / 2] = NAN;
    snprintf(path, sizeof path, "%s/nan.npy", dir);
    snprintf(rep, sizeof rep, "%s/rep", dir);
    snprintf(a, sizeof a, "output=%s", path);
    cr_assert_eq(npy_write_f32(path, &out.shape, f, err, sizeof err), 0);
    const char *argv[] = {"conform", "check", "roi_align", "--attr", "pooled_h=3", "--attr", "pooled_w=4", "--attr",
                          "spatial_scale=0.25", "--attr", "sampling_ratio=2", "--input", "input=" V "input.npy", "--input",
                          "rois=" V "rois.npy", "--actual", a, "--report-dir", rep};
    cr_assert_eq(cmd_check(19, (char **)argv), EXIT_FAIL);
    cJSON *r = test_report(dir, "rep");
    const char *msg = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(r, "cases"), 0), "message"));
    cr_assert(msg && strstr(msg, "output: 1 elements NaN/Inf on one side only (first at ["), "message: %s", msg ? msg : "(none)");
    /* the header says what ran: no kernel of ours (not the dtype as an ISA), the golden's threads */
    cr_assert_str_eq(cJSON_GetStringValue(cJSON_GetObjectItem(r, "isa")), "none (outputs given)");
    cr_assert_geq(cJSON_GetNumberValue(cJSON_GetObjectItem(r, "threads")), 1);
    cJSON_Delete(r);
    free(f);
    tensor_free(&out);
}

/* an --actual for an output that output_mask does not compute would be read and never judged: a
   wrong file there must not sit under a "passed" */
Test(check, an_actual_for_an_output_not_computed_is_refused, .init = setup, .fini = teardown)
{
    const char *argv[] = {"conform", "check", "grid_sampler_2d_backward", "--attr", "output_mask=false,true",
                          "--input", "grad_output=" G "grad_output.npy", "--input", "input=" G "input.npy", "--input",
                          "grid=" G "grid.npy", "--actual", "input_grad=" G "input_grad.npy", "--actual",
                          "grid_grad=" G "grid_grad.npy"};
    cr_assert_eq(cmd_check(15, (char **)argv), EXIT_USAGE);
    /* without it, the computed output alone is judged */
    argv[12] = argv[14];
    cr_assert_eq(cmd_check(13, (char **)argv), EXIT_OK);
}
