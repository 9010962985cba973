/* conform hunt over deformable_offsets and its grad: dims, shapes, droppable axes (hunt.h). The
   output plane Ho x Wo follows from H, W and the attributes, so rows and columns shrink through
   the dims only; batches and channels drop index by index. */
#include <string.h>

#include "hunt.h"

static const hunt_dim deform_dims[] = {
    {"N", 1, 2, 3}, {"H", 1, 5, 24}, {"W", 1, 5, 24}, {"CG", 1, 3, 9}, {"KH", 1, 3, 5}, {"KW", 1, 3, 5},
};
enum { D_N, D_H, D_W, D_CG, D_KH, D_KW };

/* the output size of spec 5 from the attributes (defaults where c has none); 0 when none fits */
static int out_size(const int64_t *d, const cJSON *c, int64_t *ho, int64_t *wo)
{
    const cJSON *f = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c, "attrs"), "data_format");
    const int nchw = cJSON_IsString(f) && !strcmp(f->valuestring, "NCHW"), ih = nchw ? 2 : 1, iw = nchw ? 3 : 2;
    int64_t sh = hunt_attr_int(c, "strides", ih, 1), sw = hunt_attr_int(c, "strides", iw, 1);
    int64_t dh = hunt_attr_int(c, "dilations", ih, 1), dw = hunt_attr_int(c, "dilations", iw, 1);
    int64_t nh = d[D_H] + hunt_attr_int(c, "pads", 0, 0) + hunt_attr_int(c, "pads", 1, 0) - (dh * (d[D_KH] - 1) + 1);
    int64_t nw = d[D_W] + hunt_attr_int(c, "pads", 2, 0) + hunt_attr_int(c, "pads", 3, 0) - (dw * (d[D_KW] - 1) + 1);
    if (nh < 0 || nw < 0 || sh < 1 || sw < 1) return 0;
    *ho = nh / sh + 1;
    *wo = nw / sw + 1;
    return 1;
}

static int fwd_shapes(const int64_t *d, cJSON *c)
{
    int64_t ho, wo, dg = hunt_attr_int(c, "deformable_groups", -1, 1);
    if (dg < 1 || !out_size(d, c, &ho, &wo)) return -1;
    hunt_set_shape(c, "x", 4, (int64_t[]){d[D_N], d[D_H], d[D_W], dg * d[D_CG]});
    hunt_set_shape(c, "offsets", 4, (int64_t[]){d[D_N], ho, wo, 3 * dg * d[D_KH] * d[D_KW]});
    hunt_set_attr_list(c, "ksize", 2, (int64_t[]){d[D_KH], d[D_KW]});
    return 0;
}

static int grad_shapes(const int64_t *d, cJSON *c)
{
    int64_t ho, wo, dg = hunt_attr_int(c, "deformable_groups", -1, 1);
    if (fwd_shapes(d, c) || !out_size(d, c, &ho, &wo)) return -1;
    hunt_set_shape(c, "grad", 4, (int64_t[]){d[D_N], ho * d[D_KH], wo * d[D_KW], dg * d[D_CG]});
    return 0;
}

static int fwd_axes(const cJSON *c, hunt_axis *ax)
{
    ax[0] = (hunt_axis){"batches", 2, {{"x", 0}, {"offsets", 0}}, NULL, -1};
    ax[1] = (hunt_axis){"channels", 1, {{"x", 3}}, NULL, -1};
    return 2;
}

static int grad_axes(const cJSON *c, hunt_axis *ax)
{
    ax[0] = (hunt_axis){"batches", 3, {{"x", 0}, {"offsets", 0}, {"grad", 0}}, NULL, -1};
    ax[1] = (hunt_axis){"channels", 2, {{"x", 3}, {"grad", 3}}, NULL, -1};
    return 2;
}

const hunt_desc hunt_deformable_offsets = {deform_dims, CONFORM_LEN(deform_dims), fwd_shapes, fwd_axes};
const hunt_desc hunt_deformable_offsets_grad = {deform_dims, CONFORM_LEN(deform_dims), grad_shapes, grad_axes};
