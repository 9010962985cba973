/* HOST STAND-IN for aclnnop/aclnn_roi_align_rotated_grad.h (CANN), NOT the vendor header. Signature from the auto-generated aclnn of hicann/ops-cv objdetect/roi_align_rotated_grad (its example before commit 1809a439, test_aclnn_roi_align_rotated_grad.cpp:14, 107, 125, 134).
 * Implemented by tests/ascend_standin/standin_aclnn.c over conform's reference. */
#ifndef CONFORM_STANDIN_ACLNN_ROI_ALIGN_ROTATED_GRAD_H
#define CONFORM_STANDIN_ACLNN_ROI_ALIGN_ROTATED_GRAD_H

#include "aclnn/aclnn_base.h"

aclnnStatus aclnnRoiAlignRotatedGradGetWorkspaceSize(const aclTensor *xGrad, const aclTensor *rois,
                                                    const aclIntArray *yGradShape, int64_t pooledH, int64_t pooledW,
                                                    float spatialScale, int64_t samplingRatio, bool aligned, bool clockwise,
                                                    aclTensor *yGrad, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnRoiAlignRotatedGrad(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);
#endif
