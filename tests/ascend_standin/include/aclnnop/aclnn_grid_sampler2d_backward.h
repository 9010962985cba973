/* HOST STAND-IN for aclnnop/aclnn_grid_sampler2d_backward.h (CANN), NOT the vendor header. Signature from hicann/ops-cv image/grid_sampler2_d_grad/op_host/op_api/aclnn_grid_sampler2d_backward.h.
 * Implemented by tests/ascend_standin/standin_aclnn.c over conform's reference. */
#ifndef CONFORM_STANDIN_ACLNN_GRID_SAMPLER2D_BACKWARD_H
#define CONFORM_STANDIN_ACLNN_GRID_SAMPLER2D_BACKWARD_H

#include "aclnn/aclnn_base.h"

aclnnStatus aclnnGridSampler2DBackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *input,
                                                      const aclTensor *grid, int64_t interpolationMode, int64_t paddingMode,
                                                      bool alignCorners, const aclBoolArray *outputMask, aclTensor *inputGrad,
                                                      aclTensor *gridGrad, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnGridSampler2DBackward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);
#endif
