/* conform hunt over grid_sampler_2d and its backward: dims, shapes, droppable axes (hunt.h). */
#include "hunt.h"

static const hunt_dim grid_dims[] = {
    {"N", 1, 2, 3}, {"C", 1, 3, 19}, {"H", 1, 6, 40}, {"W", 1, 6, 40}, {"HO", 1, 3, 12}, {"WO", 1, 3, 12},
};
enum { D_N, D_C, D_H, D_W, D_HO, D_WO };

static int fwd_shapes(const int64_t *d, cJSON *c)
{
    hunt_set_shape(c, "input", 4, (int64_t[]){d[D_N], d[D_C], d[D_H], d[D_W]});
    hunt_set_shape(c, "grid", 4, (int64_t[]){d[D_N], d[D_HO], d[D_WO], 2});
    return 0;
}

static int bwd_shapes(const int64_t *d, cJSON *c)
{
    hunt_set_shape(c, "grad_output", 4, (int64_t[]){d[D_N], d[D_C], d[D_HO], d[D_WO]});
    return fwd_shapes(d, c);
}

static int fwd_axes(const cJSON *c, hunt_axis *ax)
{
    ax[0] = (hunt_axis){"grid rows", 1, {{"grid", 1}}, NULL, -1};
    ax[1] = (hunt_axis){"grid columns", 1, {{"grid", 2}}, NULL, -1};
    ax[2] = (hunt_axis){"batches", 2, {{"input", 0}, {"grid", 0}}, NULL, -1};
    ax[3] = (hunt_axis){"channels", 1, {{"input", 1}}, NULL, -1};
    ax[4] = (hunt_axis){"rows", 1, {{"input", 2}}, NULL, -1};
    ax[5] = (hunt_axis){"columns", 1, {{"input", 3}}, NULL, -1};
    return 6;
}

static int bwd_axes(const cJSON *c, hunt_axis *ax)
{
    ax[0] = (hunt_axis){"grid rows", 2, {{"grid", 1}, {"grad_output", 2}}, NULL, -1};
    ax[1] = (hunt_axis){"grid columns", 2, {{"grid", 2}, {"grad_output", 3}}, NULL, -1};
    ax[2] = (hunt_axis){"batches", 3, {{"input", 0}, {"grid", 0}, {"grad_output", 0}}, NULL, -1};
    ax[3] = (hunt_axis){"channels", 2, {{"input", 1}, {"grad_output", 1}}, NULL, -1};
    ax[4] = (hunt_axis){"rows", 1, {{"input", 2}}, NULL, -1};
    ax[5] = (hunt_axis){"columns", 1, {{"input", 3}}, NULL, -1};
    return 6;
}

const hunt_desc hunt_grid_sampler = {grid_dims, CONFORM_LEN(grid_dims), fwd_shapes, fwd_axes};
const hunt_desc hunt_grid_sampler_bwd = {grid_dims, CONFORM_LEN(grid_dims), bwd_shapes, bwd_axes};
