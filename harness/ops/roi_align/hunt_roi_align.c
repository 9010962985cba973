/* conform hunt over roi_align and roi_align_v2_backward: dims, shapes, droppable axes (hunt.h). */
#include "hunt.h"

/* small planes and few rois most of the time; sometimes K large, C not a multiple of a SIMD
   width, H far from W, and K = 0 (an empty output) */
static const hunt_dim roi_dims[] = {
    {"B", 1, 2, 3}, {"C", 1, 3, 19}, {"H", 1, 6, 40}, {"W", 1, 6, 40}, {"K", 0, 4, 48}, {"PH", 1, 3, 9}, {"PW", 1, 3, 9},
};
enum { D_B, D_C, D_H, D_W, D_K, D_PH, D_PW };

static int fwd_shapes(const int64_t *d, cJSON *c)
{
    hunt_set_shape(c, "input", 4, (int64_t[]){d[D_B], d[D_C], d[D_H], d[D_W]});
    hunt_set_shape(c, "rois", 2, (int64_t[]){d[D_K], 5});
    hunt_set_attr_int(c, "pooled_h", d[D_PH]);
    hunt_set_attr_int(c, "pooled_w", d[D_PW]);
    return 0;
}

static int fwd_axes(const cJSON *c, hunt_axis *ax)
{
    ax[0] = (hunt_axis){"rois", 1, {{"rois", 0}}, NULL, -1};
    ax[1] = (hunt_axis){"channels", 1, {{"input", 1}}, NULL, -1};
    ax[2] = (hunt_axis){"batches", 1, {{"input", 0}}, NULL, -1};
    ax[3] = (hunt_axis){"rows", 1, {{"input", 2}}, NULL, -1};
    ax[4] = (hunt_axis){"columns", 1, {{"input", 3}}, NULL, -1};
    return 5;
}

static int bwd_shapes(const int64_t *d, cJSON *c)
{
    hunt_set_shape(c, "grad_output", 4, (int64_t[]){d[D_K], d[D_C], d[D_PH], d[D_PW]});
    hunt_set_shape(c, "boxes", 2, (int64_t[]){d[D_K], 5});
    hunt_set_attr_list(c, "input_shape", 4, (int64_t[]){d[D_B], d[D_C], d[D_H], d[D_W]});
    hunt_set_attr_int(c, "pooled_height", d[D_PH]);
    hunt_set_attr_int(c, "pooled_width", d[D_PW]);
    return 0;
}

static int bwd_axes(const cJSON *c, hunt_axis *ax)
{
    ax[0] = (hunt_axis){"rois", 2, {{"grad_output", 0}, {"boxes", 0}}, NULL, -1};
    ax[1] = (hunt_axis){"channels", 1, {{"grad_output", 1}}, "input_shape", 1};
    ax[2] = (hunt_axis){"batches", 0, {{0}}, "input_shape", 0};
    ax[3] = (hunt_axis){"rows", 0, {{0}}, "input_shape", 2};
    ax[4] = (hunt_axis){"columns", 0, {{0}}, "input_shape", 3};
    ax[5] = (hunt_axis){"pooled rows", 1, {{"grad_output", 2}}, "pooled_height", -1};
    ax[6] = (hunt_axis){"pooled columns", 1, {{"grad_output", 3}}, "pooled_width", -1};
    return 7;
}

const hunt_desc hunt_roi_align = {roi_dims, CONFORM_LEN(roi_dims), fwd_shapes, fwd_axes};
const hunt_desc hunt_roi_align_bwd = {roi_dims, CONFORM_LEN(roi_dims), bwd_shapes, bwd_axes};
