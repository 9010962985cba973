/* HOST STAND-IN for aclnnop/aclnn_grid_sampler2d.h (CANN), NOT the vendor header. Signature from hicann/ops-cv image/grid_sample/op_api/aclnn_grid_sampler2d.h.
 * Implemented by tests/ascend_standin/standin_aclnn.c over conform's reference. */
#ifndef CONFORM_STANDIN_ACLNN_GRID_SAMPLER2D_H
#define CONFORM_STANDIN_ACLNN_GRID_SAMPLER2D_H

#include "aclnn/aclnn_base.h"

aclnnStatus aclnnGridSampler2DGetWorkspaceSize(const aclTensor *input, const aclTensor *grid, int64_t interpolationMode,
                                              int64_t paddingMode, bool alignCorners, aclTensor *out, uint64_t *workspaceSize,
                                              aclOpExecutor **executor);
aclnnStatus aclnnGridSampler2D(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);
#endif
