/* HOST STAND-IN for the Ascend ACL / aclnn entry points devices/ascend/conform_ascend.c calls: NOT
 * CANN, no NPU. It implements each documented kernel contract (layouts, attribute meanings and
 * defaults, dtypes, error codes) over conform's double-precision reference, so that the plugin's
 * marshalling is tested on the host: a tensor in the wrong layout, a swapped attribute or rois
 * not transposed give a wrong answer or an error, as they would on the device. Each contract names
 * its source. What only an Ascend run can confirm is listed in docs/ascend.md. */
#ifndef CONFORM_ASCEND_STANDIN_H
#define CONFORM_ASCEND_STANDIN_H

#include <stdio.h>

#include "acl/acl.h"
#include "acl/acl_op_compiler.h"
#include "aclnn/aclnn_base.h"

#define SI_MAX_RANK 8

struct aclTensor {
    int rank;
    int64_t dims[SI_MAX_RANK];
    aclDataType dt;
    aclFormat format;
    void *data;
};
struct aclIntArray { uint64_t n; int64_t v[SI_MAX_RANK]; };
struct aclBoolArray { uint64_t n; bool v[SI_MAX_RANK]; };
struct aclTensorDesc { aclDataType dt; int rank; int64_t dims[SI_MAX_RANK]; aclFormat format; };
struct aclDataBuffer { void *data; size_t size; };

typedef struct {
    char name[32];
    enum { SI_INT, SI_FLOAT, SI_BOOL, SI_STRING, SI_LIST } kind;
    int64_t i;
    double f;
    char s[16];
    int n;
    int64_t list[SI_MAX_RANK];
} si_attr;
struct aclopAttr { int n; si_attr a[16]; };

/* the second stage of a two-stage aclnn call: the contract, checked in the first, computed here */
struct aclOpExecutor {
    aclnnStatus (*run)(aclOpExecutor *e);
    aclTensor t[5];     /* copies of the tensors (the caller may destroy its own after the run) */
    int64_t i[6];
    double f;
    bool b[4];
    aclIntArray shape;
};

/* a complaint on stderr, the way the CANN logs name the failed check; returns code */
int si_fail(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int64_t si_numel(int rank, const int64_t *dims);
/* 1 when [p, p + bytes) lies inside one aclrtMalloc block */
int si_on_device(const void *p, size_t bytes);
size_t si_itemsize(aclDataType dt);
/* the tensor's values as doubles (malloc'd), and doubles rounded to its dtype into it */
double *si_load(const aclTensor *t);
void si_store(const aclTensor *t, const double *v);
/* a tensor over a descriptor and a buffer (aclop), checked to lie in device memory */
int si_tensor_of(const aclTensorDesc *d, const aclDataBuffer *b, aclTensor *t, const char *what);
int si_check_tensor(const aclTensor *t, const char *what);
int si_dims_are(const aclTensor *t, const char *what, int rank, const int64_t *want);
aclOpExecutor *si_executor(aclnnStatus (*run)(aclOpExecutor *e));
const si_attr *si_attr_get(const aclopAttr *a, const char *name);



/* the rotated kernels' contract and computation, shared by the aclnn and the graph-op entries */
int si_rotated_contract(const aclTensor *feat, const aclTensor *rois, const aclTensor *per_roi, int64_t ph, int64_t pw,
                        const int64_t *bhwc, const char *name);
aclnnStatus si_rotated_compute(int grad, const aclTensor *in, const aclTensor *rois, const aclTensor *out,
                               const int64_t *ints, double scale, const bool *flags);
#endif
