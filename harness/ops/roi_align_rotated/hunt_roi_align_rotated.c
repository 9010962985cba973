/* conform hunt over roi_align_rotated and its grad: dims, shapes in either layout, axes (hunt.h). */
#include <string.h>

#include "hunt.h"

static const hunt_dim rot_dims[] = {
    {"B", 1, 2, 3}, {"C", 1, 3, 19}, {"H", 1, 6, 40}, {"W", 1, 6, 40}, {"K", 0, 4, 48}, {"PH", 1, 3, 9}, {"PW", 1, 3, 9},
};
enum { D_B, D_C, D_H, D_W, D_K, D_PH, D_PW };

/* NHWC: the feature maps [B, H, W, C] and the rois [6, n] (the Ascend kernel's layout) */
static int nhwc(const cJSON *c)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c, "attrs"), "data_format");
    return cJSON_IsString(f) && !strcmp(f->valuestring, "NHWC");
}

static void plane_shape(const int64_t *d, int cl, int64_t n, int64_t h, int64_t w, int64_t *s)
{
    s[0] = n;
    s[1] = cl ? h : d[D_C];
    s[2] = cl ? w : h;
    s[3] = cl ? d[D_C] : w;
}

static int fwd_shapes(const int64_t *d, cJSON *c)
{
    int64_t x[4], cl = nhwc(c);
    plane_shape(d, (int)cl, d[D_B], d[D_H], d[D_W], x);
    hunt_set_shape(c, "x", 4, x);
    hunt_set_shape(c, "rois", 2, cl ? (int64_t[]){6, d[D_K]} : (int64_t[]){d[D_K], 6});
    hunt_set_attr_int(c, "pooled_h", d[D_PH]);
    hunt_set_attr_int(c, "pooled_w", d[D_PW]);
    return 0;
}

static int grad_shapes(const int64_t *d, cJSON *c)
{
    int64_t g[4], y[4], cl = nhwc(c);
    plane_shape(d, (int)cl, d[D_K], d[D_PH], d[D_PW], g);
    plane_shape(d, (int)cl, d[D_B], d[D_H], d[D_W], y);
    hunt_set_shape(c, "x_grad", 4, g);
    hunt_set_shape(c, "rois", 2, cl ? (int64_t[]){6, d[D_K]} : (int64_t[]){d[D_K], 6});
    hunt_set_attr_list(c, "y_grad_shape", 4, y);
    hunt_set_attr_int(c, "pooled_h", d[D_PH]);
    hunt_set_attr_int(c, "pooled_w", d[D_PW]);
    return 0;
}

static int fwd_axes(const cJSON *c, hunt_axis *ax)
{
    const int cl = nhwc(c);
    ax[0] = (hunt_axis){"rois", 1, {{"rois", cl ? 1 : 0}}, NULL, -1};
    ax[1] = (hunt_axis){"channels", 1, {{"x", cl ? 3 : 1}}, NULL, -1};
    ax[2] = (hunt_axis){"batches", 1, {{"x", 0}}, NULL, -1};
    ax[3] = (hunt_axis){"rows", 1, {{"x", cl ? 1 : 2}}, NULL, -1};
    ax[4] = (hunt_axis){"columns", 1, {{"x", cl ? 2 : 3}}, NULL, -1};
    return 5;
}

static int grad_axes(const cJSON *c, hunt_axis *ax)
{
    const int cl = nhwc(c);
    ax[0] = (hunt_axis){"rois", 2, {{"x_grad", 0}, {"rois", cl ? 1 : 0}}, NULL, -1};
    ax[1] = (hunt_axis){"channels", 1, {{"x_grad", cl ? 3 : 1}}, "y_grad_shape", cl ? 3 : 1};
    ax[2] = (hunt_axis){"batches", 0, {{0}}, "y_grad_shape", 0};
    ax[3] = (hunt_axis){"rows", 0, {{0}}, "y_grad_shape", cl ? 1 : 2};
    ax[4] = (hunt_axis){"columns", 0, {{0}}, "y_grad_shape", cl ? 2 : 3};
    ax[5] = (hunt_axis){"pooled rows", 1, {{"x_grad", cl ? 1 : 2}}, "pooled_h", -1};
    ax[6] = (hunt_axis){"pooled columns", 1, {{"x_grad", cl ? 2 : 3}}, "pooled_w", -1};
    return 7;
}

const hunt_desc hunt_roi_align_rotated = {rot_dims, CONFORM_LEN(rot_dims), fwd_shapes, fwd_axes};
const hunt_desc hunt_roi_align_rotated_grad = {rot_dims, CONFORM_LEN(rot_dims), grad_shapes, grad_axes};
