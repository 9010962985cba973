/* HOST STAND-IN for aclnnop/aclnn_roi_align_v2.h (CANN), NOT the vendor header. Signature from hicann/ops-cv objdetect/roi_align/op_host/op_api/aclnn_roi_align_v2.h.
 * Implemented by tests/ascend_standin/standin_aclnn.c over conform's reference. */
#ifndef CONFORM_STANDIN_ACLNN_ROI_ALIGN_V2_H
#define CONFORM_STANDIN_ACLNN_ROI_ALIGN_V2_H

#include "aclnn/aclnn_base.h"

aclnnStatus aclnnRoiAlignV2GetWorkspaceSize(const aclTensor *self, const aclTensor *boxes, int64_t pooledHeight,
                                            int64_t pooledWidth, float spatialScale, int64_t samplingRatio, bool aligned,
                                            aclTensor *out, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnRoiAlignV2(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);
#endif
