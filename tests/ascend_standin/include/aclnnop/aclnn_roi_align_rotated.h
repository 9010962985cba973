/* HOST STAND-IN for aclnnop/aclnn_roi_align_rotated.h (CANN), NOT the vendor header. Signature from the auto-generated aclnn of hicann/ops-cv objdetect/roi_align_rotated (its example before commit 1809a439, test_aclnn_roi_align_rotated.cpp:128; types from the OpDef: Int -> int64_t, Float -> float).
 * Implemented by tests/ascend_standin/standin_aclnn.c over conform's reference. */
#ifndef CONFORM_STANDIN_ACLNN_ROI_ALIGN_ROTATED_H
#define CONFORM_STANDIN_ACLNN_ROI_ALIGN_ROTATED_H

#include "aclnn/aclnn_base.h"

aclnnStatus aclnnRoiAlignRotatedGetWorkspaceSize(const aclTensor *x, const aclTensor *rois, int64_t pooledH, int64_t pooledW,
                                                float spatialScale, int64_t samplingRatio, bool aligned, bool clockwise,
                                                aclTensor *y, uint64_t *workspaceSize, aclOpExecutor **executor);
aclnnStatus aclnnRoiAlignRotated(void *workspace, uint64_t workspaceSize, aclOpExecutor *executor, aclrtStream stream);
#endif
