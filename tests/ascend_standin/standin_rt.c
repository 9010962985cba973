/* HOST STAND-IN (not CANN): the ACL runtime (device memory as registered host blocks, a stream
 * that is always synchronous), tensor descriptors, attributes and aclnn tensors. Signatures:
 * hicann/runtime include/external/acl/acl_rt.h, acl_base_rt.h; hicann/opbase acl_meta.h. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "standin.h"

int si_fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "ascend stand-in: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return code;
}

/* ---- device memory: blocks from aclrtMalloc, so a host pointer handed to a kernel is caught -- */
#define SI_MAX_BLOCKS 256
static struct { char *p; size_t n; } blocks[SI_MAX_BLOCKS];
static int initialised, device_set = -1;

aclError aclInit(const char *configPath) { initialised = 1; return ACL_SUCCESS; }
aclError aclFinalize(void) { initialised = 0; return ACL_SUCCESS; }
aclError aclrtSetDevice(int32_t deviceId)
{
    if (!initialised) return si_fail(ACL_ERROR_INVALID_PARAM, "aclrtSetDevice before aclInit");
    device_set = deviceId;
    return ACL_SUCCESS;
}
aclError aclrtResetDevice(int32_t deviceId) { device_set = -1; return ACL_SUCCESS; }
aclError aclrtCreateStream(aclrtStream *stream)
{
    static int token;
    if (device_set < 0) return si_fail(ACL_ERROR_INVALID_PARAM, "aclrtCreateStream before aclrtSetDevice");
    *stream = &token;
    return ACL_SUCCESS;
}
aclError aclrtDestroyStream(aclrtStream stream) { return ACL_SUCCESS; }
aclError aclrtSynchronizeStream(aclrtStream stream) { return ACL_SUCCESS; }

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
    for (int k = 0; k < SI_MAX_BLOCKS; k++)
        if (!blocks[k].p) {
            blocks[k].p = malloc(size ? size : 1);
            blocks[k].n = size;
            *devPtr = blocks[k].p;
            return blocks[k].p ? ACL_SUCCESS : si_fail(ACL_ERROR_INVALID_PARAM, "aclrtMalloc: out of memory");
        }
    return si_fail(ACL_ERROR_INVALID_PARAM, "aclrtMalloc: too many blocks");
}

aclError aclrtFree(void *devPtr)
{
    for (int k = 0; k < SI_MAX_BLOCKS; k++)
        if (blocks[k].p && blocks[k].p == devPtr) {
            free(blocks[k].p);
            blocks[k].p = NULL;
            return ACL_SUCCESS;
        }
    return si_fail(ACL_ERROR_INVALID_PARAM, "aclrtFree: %p is no device block", devPtr);
}

int si_on_device(const void *p, size_t bytes)
{
    for (int k = 0; k < SI_MAX_BLOCKS; k++)
        if (blocks[k].p && (const char *)p >= blocks[k].p && (const char *)p + bytes <= blocks[k].p + blocks[k].n) return 1;
    return 0;
}

aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind)
{
    int to_dev = kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
    int from_dev = kind == ACL_MEMCPY_DEVICE_TO_HOST || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
    if (count > destMax) return si_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemcpy: count %zu > destMax %zu", count, destMax);
    if (to_dev != si_on_device(dst, count) || from_dev != si_on_device(src, count))
        return si_fail(ACL_ERROR_INVALID_PARAM, "aclrtMemcpy: kind %d does not match where dst and src live", (int)kind);
    if (count) memcpy(dst, src, count);
    return ACL_SUCCESS;
}

/* ---- descriptors, buffers, attributes ---------------------------------------------------------- */

aclDataBuffer *aclCreateDataBuffer(void *data, size_t size)
{
    aclDataBuffer *b = malloc(sizeof *b);
    if (b) *b = (aclDataBuffer){data, size};
    return b;
}
aclError aclDestroyDataBuffer(const aclDataBuffer *dataBuffer) { free((void *)dataBuffer); return ACL_SUCCESS; }

aclTensorDesc *aclCreateTensorDesc(aclDataType dataType, int numDims, const int64_t *dims, aclFormat format)
{
    if (numDims < 0 || numDims > SI_MAX_RANK) return NULL;
    aclTensorDesc *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    *d = (aclTensorDesc){dataType, numDims, {0}, format};
    if (numDims) memcpy(d->dims, dims, sizeof(int64_t) * (size_t)numDims);
    return d;
}
void aclDestroyTensorDesc(const aclTensorDesc *desc) { free((void *)desc); }

aclopAttr *aclopCreateAttr(void) { return calloc(1, sizeof(aclopAttr)); }
void aclopDestroyAttr(const aclopAttr *attr) { free((void *)attr); }

static si_attr *attr_slot(aclopAttr *a, const char *name)
{
    for (int k = 0; k < a->n; k++)
        if (!strcmp(a->a[k].name, name)) return &a->a[k];
    if (a->n == 16 || strlen(name) >= sizeof a->a[0].name) return NULL;
    si_attr *s = &a->a[a->n++];
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", name);
    return s;
}

const si_attr *si_attr_get(const aclopAttr *a, const char *name)
{
    for (int k = 0; a && k < a->n; k++)
        if (!strcmp(a->a[k].name, name)) return &a->a[k];
    return NULL;
}

#define SET_ATTR(fn, T, KIND, FIELD)                                                                              \
    aclError fn(aclopAttr *attr, const char *attrName, T attrValue)                                              \
    {                                                                                                             \
        si_attr *s = attr_slot(attr, attrName);                                                                   \
        if (!s) return si_fail(ACL_ERROR_INVALID_PARAM, "%s: no room for %s", #fn, attrName);                   \
        s->kind = KIND;                                                                                           \
        s->FIELD = attrValue;                                                                                     \
        return ACL_SUCCESS;                                                                                       \
    }
SET_ATTR(aclopSetAttrBool, uint8_t, SI_BOOL, i)
SET_ATTR(aclopSetAttrInt, int64_t, SI_INT, i)
SET_ATTR(aclopSetAttrFloat, float, SI_FLOAT, f)

aclError aclopSetAttrString(aclopAttr *attr, const char *attrName, const char *attrValue)
{
    si_attr *s = attr_slot(attr, attrName);
    if (!s || strlen(attrValue) >= sizeof s->s) return si_fail(ACL_ERROR_INVALID_PARAM, "aclopSetAttrString %s", attrName);
    s->kind = SI_STRING;
    snprintf(s->s, sizeof s->s, "%s", attrValue);
    return ACL_SUCCESS;
}

aclError aclopSetAttrListInt(aclopAttr *attr, const char *attrName, int numValues, const int64_t *values)
{
    si_attr *s = attr_slot(attr, attrName);
    if (!s || numValues < 0 || numValues > SI_MAX_RANK) return si_fail(ACL_ERROR_INVALID_PARAM, "aclopSetAttrListInt %s", attrName);
    s->kind = SI_LIST;
    s->n = numValues;
    if (numValues) memcpy(s->list, values, sizeof(int64_t) * (size_t)numValues);
    return ACL_SUCCESS;
}

/* ---- aclnn tensors and arrays (acl_meta.h) ----------------------------------------------------- */

aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType, const int64_t *stride,
                           int64_t offset, aclFormat format, const int64_t *storageDims, uint64_t storageDimsNum,
                           void *tensorData)
{
    if (viewDimsNum > SI_MAX_RANK || offset != 0) {   /* the plugin sends whole, C-order tensors only */
        si_fail(0, "aclCreateTensor: rank %llu, offset %lld (expected <= 8 and 0)", (unsigned long long)viewDimsNum, (long long)offset);
        return NULL;
    }
    int64_t want = 1;
    for (int d = (int)viewDimsNum - 1; d >= 0; d--) {   /* C-order strides: the only layout the contracts read */
        if (stride && viewDims[d] > 1 && stride[d] != want) {
            si_fail(0, "aclCreateTensor: stride[%d] = %lld, C order needs %lld", d, (long long)stride[d], (long long)want);
            return NULL;
        }
        want *= viewDims[d];
    }
    if (storageDimsNum != viewDimsNum || (viewDimsNum && memcmp(storageDims, viewDims, sizeof(int64_t) * viewDimsNum))) {
        si_fail(0, "aclCreateTensor: storage dims differ from the view dims");
        return NULL;
    }
    aclTensor *t = calloc(1, sizeof *t);
    if (!t) return NULL;
    t->rank = (int)viewDimsNum;
    if (viewDimsNum) memcpy(t->dims, viewDims, sizeof(int64_t) * viewDimsNum);
    t->dt = dataType;
    t->format = format;
    t->data = tensorData;
    return t;
}

#define CREATE_ARRAY(fn, A, T)                                                                                     \
    A *fn(const T *value, uint64_t size)                                                                          \
    {                                                                                                             \
        A *a = size <= SI_MAX_RANK ? calloc(1, sizeof *a) : NULL;                                                 \
        if (!a) return NULL;                                                                                      \
        a->n = size;                                                                                              \
        if (size) memcpy(a->v, value, sizeof(T) * size);                                                          \
        return a;                                                                                                 \
    }
CREATE_ARRAY(aclCreateIntArray, aclIntArray, int64_t)
CREATE_ARRAY(aclCreateBoolArray, aclBoolArray, bool)

aclnnStatus aclDestroyTensor(const aclTensor *tensor) { free((void *)tensor); return ACLNN_SUCCESS; }
aclnnStatus aclDestroyIntArray(const aclIntArray *array) { free((void *)array); return ACLNN_SUCCESS; }
aclnnStatus aclDestroyBoolArray(const aclBoolArray *array) { free((void *)array); return ACLNN_SUCCESS; }

aclOpExecutor *si_executor(aclnnStatus (*run)(aclOpExecutor *e))
{
    aclOpExecutor *e = calloc(1, sizeof *e);
    if (e) e->run = run;
    return e;
}
