/* The op table: adding an op is one line here plus its op_<family>.c file. */
#include <string.h>

#include "op.h"

extern const op_desc op_roi_align, op_roi_align_v2_backward;
extern const op_desc op_roi_align_rotated, op_roi_align_rotated_grad;
extern const op_desc op_deformable_offsets, op_deformable_offsets_grad;
extern const op_desc op_grid_sampler_2d, op_grid_sampler_2d_backward;

const op_desc *const conform_ops[] = {
    &op_roi_align,
    &op_roi_align_v2_backward,
    &op_roi_align_rotated,
    &op_roi_align_rotated_grad,
    &op_deformable_offsets,
    &op_deformable_offsets_grad,
    &op_grid_sampler_2d,
    &op_grid_sampler_2d_backward,
    NULL,
};

const op_desc *op_find(const char *name)
{
    for (int i = 0; conform_ops[i]; i++)
        if (!strcmp(conform_ops[i]->name, name)) return conform_ops[i];
    return NULL;
}
