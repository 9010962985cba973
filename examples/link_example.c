/* An out-of-tree program using the installed conform libraries, built with pkg-config:
 *     cc link_example.c $(pkg-config --cflags --libs conform-ref conform-opt) -o link_example
 * It computes the torch_npu ROIAlign document example with the golden and the fast kernels. */
#include <math.h>
#include <stdio.h>

#include <conform_opt.h>
#include <conform_ref.h>

int main(void)
{
    double x[36], rois[5] = {0, -2, -2, 22, 22}, y[9];
    float xf[36], rf[5] = {0, -2, -2, 22, 22}, yf[9];
    for (int i = 0; i < 36; i++) xf[i] = (float)(x[i] = i + 1);
    ref_roi_align_params p = {1, 1, 6, 6, 1, 3, 3, 0.25, 2, 0, 0};
    f32_roi_align_params q = {1, 1, 6, 6, 1, 3, 3, 0.25f, 2, 0, 0};
    conform_exec ex = {CONFORM_ISA_AUTO, 1};
    f64_roi_align_fwd__ref(&p, x, rois, y, NULL);
    if (f32_roi_align_fwd(&q, xf, rf, yf, &ex) != CONFORM_OK) return 1;
    const double want[9] = {4.5, 6.5, 8.5, 16.5, 18.5, 20.5, 28.5, 30.5, 32.5};
    for (int i = 0; i < 9; i++)
        if (fabs(y[i] - want[i]) > 1e-12 || fabs(yf[i] - want[i]) > 1e-5) {
            printf("link_example: element %d: reference %g, optimized %g, want %g\n", i, y[i], yf[i], want[i]);
            return 1;
        }
    printf("link_example: reference and optimized (%s) give the documented output\n", conform_isa_name(conform_isa_best()));
    return 0;
}
