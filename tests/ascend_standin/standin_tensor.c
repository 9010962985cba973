/* HOST STAND-IN (not CANN): a device tensor's values as doubles and back, at the dtypes the
 * contracts list (aclDataType values: hicann/runtime acl_base_rt.h:142-157). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "standin.h"

int64_t si_numel(int rank, const int64_t *dims)
{
    int64_t n = 1;
    for (int d = 0; d < rank; d++) n *= dims[d];
    return n;
}

size_t si_itemsize(aclDataType dt)
{
    switch (dt) {
    case ACL_FLOAT: return 4;
    case ACL_FLOAT16: case ACL_BF16: return 2;
    case ACL_DOUBLE: return 8;
    default: return 0;
    }
}

static double half_to_double(uint16_t h)
{
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return h & 0x8000 ? -v : v;
}

/* round to nearest even through float: double -> float is exact enough for the contract's
   rounding of a double golden (the half/bf16 rounding is the one that matters) */
static uint16_t double_to_half(double d)
{
    float f = (float)d;
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
    if (isnan(f)) return sign | 0x7e00;
    float a = fabsf(f);
    if (a >= 65520.0f) return sign | 0x7c00;
    if (a < 6.103515625e-05f) return sign | (uint16_t)lrintf(a * 16777216.0f);   /* subnormal: units of 2^-24 */
    int e;
    float m = frexpf(a, &e);   /* a = m * 2^e, m in [0.5, 1) */
    long q = lrintf(m * 2048.0f);   /* 11 significant bits */
    if (q == 2048) { q = 1024; e++; }
    if (e + 14 >= 31) return sign | 0x7c00;
    return sign | (uint16_t)((e + 14) << 10) | (uint16_t)(q - 1024);
}

static double bf16_to_double(uint16_t b)
{
    uint32_t x = (uint32_t)b << 16;
    float f;
    memcpy(&f, &x, 4);
    return f;
}

static uint16_t double_to_bf16(double d)
{
    float f = (float)d;
    uint32_t x;
    memcpy(&x, &f, 4);
    if (isnan(f)) return (uint16_t)((x >> 16) | 0x40);
    return (uint16_t)((x + 0x7fff + ((x >> 16) & 1)) >> 16);
}

double *si_load(const aclTensor *t)
{
    int64_t n = si_numel(t->rank, t->dims);
    double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
    for (int64_t k = 0; v && k < n; k++) {
        switch (t->dt) {
        case ACL_FLOAT: v[k] = ((const float *)t->data)[k]; break;
        case ACL_DOUBLE: v[k] = ((const double *)t->data)[k]; break;
        case ACL_FLOAT16: v[k] = half_to_double(((const uint16_t *)t->data)[k]); break;
        default: v[k] = bf16_to_double(((const uint16_t *)t->data)[k]); break;
        }
    }
    return v;
}

void si_store(const aclTensor *t, const double *v)
{
    int64_t n = si_numel(t->rank, t->dims);
    for (int64_t k = 0; k < n; k++) {
        switch (t->dt) {
        case ACL_FLOAT: ((float *)t->data)[k] = (float)v[k]; break;
        case ACL_DOUBLE: ((double *)t->data)[k] = v[k]; break;
        case ACL_FLOAT16: ((uint16_t *)t->data)[k] = double_to_half(v[k]); break;
        default: ((uint16_t *)t->data)[k] = double_to_bf16(v[k]); break;
        }
    }
}

/* present, of a dtype the stand-in reads, in device memory */
int si_check_tensor(const aclTensor *t, const char *what)
{
    if (!t) return si_fail(ACLNN_ERR_PARAM_NULLPTR, "%s is NULL", what);
    size_t item = si_itemsize(t->dt);
    if (!item) return si_fail(ACLNN_ERR_PARAM_INVALID, "%s: dtype %d unsupported", what, (int)t->dt);
    size_t bytes = (size_t)si_numel(t->rank, t->dims) * item;
    if (bytes && !si_on_device(t->data, bytes))
        return si_fail(ACLNN_ERR_PARAM_INVALID, "%s: data is not in device memory (aclrtMalloc)", what);
    return ACLNN_SUCCESS;
}

int si_dims_are(const aclTensor *t, const char *what, int rank, const int64_t *want)
{
    int same = t->rank == rank;
    for (int d = 0; same && d < rank; d++) same = t->dims[d] == want[d];
    if (same) return ACLNN_SUCCESS;
    char a[128] = "", b[128] = "";
    for (int d = 0; d < t->rank; d++) snprintf(a + strlen(a), sizeof a - strlen(a), "%s%lld", d ? "," : "", (long long)t->dims[d]);
    for (int d = 0; d < rank; d++) snprintf(b + strlen(b), sizeof b - strlen(b), "%s%lld", d ? "," : "", (long long)want[d]);
    return si_fail(ACLNN_ERR_PARAM_INVALID, "%s has shape [%s], the contract needs [%s]", what, a, b);
}

int si_tensor_of(const aclTensorDesc *d, const aclDataBuffer *b, aclTensor *t, const char *what)
{
    if (!d || !b) return si_fail(ACL_ERROR_INVALID_PARAM, "%s: no descriptor or buffer", what);
    *t = (aclTensor){d->rank, {0}, d->dt, d->format, b->data};
    memcpy(t->dims, d->dims, sizeof t->dims);
    size_t need = (size_t)si_numel(t->rank, t->dims) * si_itemsize(t->dt);
    if (b->size < need) return si_fail(ACL_ERROR_INVALID_PARAM, "%s: buffer of %zu bytes, the descriptor needs %zu", what, b->size, need);
    return si_check_tensor(t, what) ? ACL_ERROR_INVALID_PARAM : ACL_SUCCESS;
}
