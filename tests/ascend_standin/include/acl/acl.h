/* HOST STAND-IN for the Ascend ACL runtime header acl/acl.h (CANN), NOT the vendor header: only
 * the declarations devices/ascend/conform_ascend.c uses, written from the public signatures
 * (hicann/runtime include/external/acl/acl_base.h and acl_rt.h; acl_op.h for the attributes).
 * Implemented by tests/ascend_standin/standin_rt.c over conform's reference. */
#ifndef CONFORM_STANDIN_ACL_H
#define CONFORM_STANDIN_ACL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CONFORM_ASCEND_STANDIN 1 /* what the plugin reports in its version string */

typedef void *aclrtStream;   /* acl_base_rt.h:46 */
typedef int aclError;        /* acl_base_rt.h:55 */
#define ACL_SUCCESS 0
#define ACL_ERROR_INVALID_PARAM 100000

typedef enum { /* acl_base_rt.h:142-157 */
    ACL_DT_UNDEFINED = -1,
    ACL_FLOAT = 0,
    ACL_FLOAT16 = 1,
    ACL_INT32 = 3,
    ACL_INT64 = 9,
    ACL_DOUBLE = 11,
    ACL_BOOL = 12,
    ACL_BF16 = 27
} aclDataType;

typedef enum { /* acl_base_rt.h:173-175 */
    ACL_FORMAT_UNDEFINED = -1,
    ACL_FORMAT_NCHW = 0,
    ACL_FORMAT_NHWC = 1,
    ACL_FORMAT_ND = 2,
    ACL_FORMAT_NC1HWC0 = 3
} aclFormat;

typedef enum { ACL_MEM_MALLOC_HUGE_FIRST = 0, ACL_MEM_MALLOC_HUGE_ONLY = 1, ACL_MEM_MALLOC_NORMAL_ONLY = 2 } aclrtMemMallocPolicy;
typedef enum {
    ACL_MEMCPY_HOST_TO_HOST = 0,
    ACL_MEMCPY_HOST_TO_DEVICE = 1,
    ACL_MEMCPY_DEVICE_TO_HOST = 2,
    ACL_MEMCPY_DEVICE_TO_DEVICE = 3
} aclrtMemcpyKind;

typedef struct aclDataBuffer aclDataBuffer;
typedef struct aclTensorDesc aclTensorDesc;
typedef struct aclopAttr aclopAttr;

aclError aclInit(const char *configPath);
aclError aclFinalize(void);
aclError aclrtSetDevice(int32_t deviceId);
aclError aclrtResetDevice(int32_t deviceId);
aclError aclrtCreateStream(aclrtStream *stream);
aclError aclrtDestroyStream(aclrtStream stream);
aclError aclrtSynchronizeStream(aclrtStream stream);
aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy);
aclError aclrtFree(void *devPtr);
aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind);

aclDataBuffer *aclCreateDataBuffer(void *data, size_t size);
aclError aclDestroyDataBuffer(const aclDataBuffer *dataBuffer);
aclTensorDesc *aclCreateTensorDesc(aclDataType dataType, int numDims, const int64_t *dims, aclFormat format);
void aclDestroyTensorDesc(const aclTensorDesc *desc);

aclopAttr *aclopCreateAttr(void);
void aclopDestroyAttr(const aclopAttr *attr);
aclError aclopSetAttrBool(aclopAttr *attr, const char *attrName, uint8_t attrValue);
aclError aclopSetAttrInt(aclopAttr *attr, const char *attrName, int64_t attrValue);
aclError aclopSetAttrFloat(aclopAttr *attr, const char *attrName, float attrValue);
aclError aclopSetAttrString(aclopAttr *attr, const char *attrName, const char *attrValue);
aclError aclopSetAttrListInt(aclopAttr *attr, const char *attrName, int numValues, const int64_t *values);

#ifdef __cplusplus
}
#endif
#endif
