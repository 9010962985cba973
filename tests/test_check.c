/* conform check: outputs computed by another implementation (torchvision, float32 and float16)
 * are accepted, and rejected once perturbed by a few times their derived bound. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "compare.h"
#include "npy.h"
#include "suite.h"

static char dir[64];

static void setup(void)
{
    cr_redirect_stdout();
    cr_redirect_stderr();
    snprintf(dir, sizeof dir, "/tmp/conform-check-XXXXXX");
    cr_assert(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

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
    ref_roi_align_params p = {2, 3, 16, 16, 10, 3, 4, 0.25, 2, 1};
    *n = tensor_numel(out);
    double *ref = calloc((size_t)*n, 8), *b[4];
    for (int k = 0; k < 4; k++) b[k] = calloc((size_t)*n, 8);
    ref_bounds bounds = {16 * CONFORM_U_F32, b[0], b[1], b[2], b[3]};
    f64_roi_align_fwd__ref(&p, x.data, r.data, ref, &bounds);
    static const tol_model tm = {6, "", 16, ""};
    tol_inputs t = {CONFORM_U_F32, &tm, b[0], b[1], b[2], b[3]};
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
