/* HOST STAND-IN for aclnn/aclnn_base.h (acl_meta.h), NOT the vendor header. Signatures from
 * hicann/opbase include/nnopbase/aclnn/acl_meta.h. Implemented by tests/ascend_standin/standin_rt.c. */
#ifndef CONFORM_STANDIN_ACLNN_BASE_H
#define CONFORM_STANDIN_ACLNN_BASE_H

#include <stdbool.h>
#include <stdint.h>

#include "acl/acl.h"

typedef int32_t aclnnStatus;
/* the aclnn common error codes (CANN aclnn API docs, "common return codes") */
#define ACLNN_SUCCESS 0
#define ACLNN_ERR_PARAM_NULLPTR 161001
#define ACLNN_ERR_PARAM_INVALID 161002

typedef struct aclTensor aclTensor;
typedef struct aclIntArray aclIntArray;
typedef struct aclBoolArray aclBoolArray;
typedef struct aclOpExecutor aclOpExecutor;

/* the 5th argument is the element offset (a format there is a known bug pattern) */
aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType, const int64_t *stride,
                           int64_t offset, aclFormat format, const int64_t *storageDims, uint64_t storageDimsNum,
                           void *tensorData);
aclIntArray *aclCreateIntArray(const int64_t *value, uint64_t size);
aclBoolArray *aclCreateBoolArray(const bool *value, uint64_t size);
aclnnStatus aclDestroyTensor(const aclTensor *tensor);
aclnnStatus aclDestroyIntArray(const aclIntArray *array);
aclnnStatus aclDestroyBoolArray(const aclBoolArray *array);
#endif
