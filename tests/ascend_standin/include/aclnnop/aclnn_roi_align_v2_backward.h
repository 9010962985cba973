/* HOST STAND-IN for aclnnop/aclnn_roi_align_v2_backward.h (CANN), NOT the vendor header. Signature from hicann/ops-cv objdetect/roi_align_grad/op_api/aclnn_roi_align_v2_backward.h.
 * Implemented by tests/ascend_standin/standin_aclnn.c over conform's reference. */
#ifndef CONFORM_STANDIN_ACLNN_ROI_ALIGN_V2_BACKWARD_H
#define CONFORM_STANDIN_ACLNN_ROI_ALIGN_V2_BACKWARD_H

#include "aclnn/aclnn_base.h"

aclnnStatus aclnnRoiAlignV2BackwardGetWorkspaceSize(const aclTensor *gradOutput, const aclTensor *boxes,
                                                    const aclIntArray *inputShape, int64_t pooledHeight, int64_t pooledWidth,
                                                    float spatialScale, int64_t samplingRatio, bool aligned,
                                                    aclTensor *gradInput, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnRoiAlignV2Backward(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);
#endif
