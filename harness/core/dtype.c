#include "dtype.h"

#include <math.h>
#include <string.h>

/* Buffers are handed to plugins in native byte order and written to .npy/.bin files as they are:
 * both are little-endian only on a little-endian host, the only kind conform builds for. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "conform writes native buffers as little-endian files: a big-endian host needs byte swaps in dtype.c"
#endif

/* u = 2^-p for a format with p significand bits (round to nearest): 24, 11, 8, 53.
 * eta: a rounding near underflow is off by up to half the smallest subnormal rather than by u
 * relative (fl(x) = x(1+d) + e, |e| <= eta; Higham, Accuracy and Stability, 2.1): 2^-149/2,
 * 2^-24/2, 2^-133/2; float64's 2^-1075 is not a double, so its bound is rounded up to 2^-1074.
 * It matters for float16, whose smallest subnormal (6e-8) is far above the small gradients the
 * suites produce; for float32 it is a rounding of nothing. */
static const dtype_desc dtypes[] = {
    {CONFORM_DTYPE_FLOAT32, "float32", "<f4", 4, 0x1p-24, 0x1p-150},
    {CONFORM_DTYPE_FLOAT16, "float16", "<f2", 2, 0x1p-11, 0x1p-25},
    {CONFORM_DTYPE_BFLOAT16, "bfloat16", "<u2", 2, 0x1p-8, 0x1p-134},
    {CONFORM_DTYPE_FLOAT64, "float64", "<f8", 8, 0x1p-53, 0x1p-1074},
};
#define N_DTYPES (int)(sizeof dtypes / sizeof dtypes[0])

const dtype_desc *dtype_find(const char *name)
{
    for (int i = 0; name && i < N_DTYPES; i++)
        if (!strcmp(dtypes[i].name, name)) return &dtypes[i];
    return NULL;
}

const dtype_desc *dtype_get(conform_dtype id)
{
    for (int i = 0; i < N_DTYPES; i++)
        if (dtypes[i].id == id) return &dtypes[i];
    return &dtypes[0];
}

const char *dtype_names(void) { return "float32, float16, bfloat16 or float64"; }

/* Rounds to a binary format with `digits` significand bits (hidden bit included), smallest
 * normal exponent emin and largest finite value max_finite. Scaling by a power of two is exact
 * in double for every value these formats hold, so rint does the one rounding (ties to even). */
static double round_format(double x, int digits, int emin, double max_finite)
{
    if (!isfinite(x) || x == 0) return x;
    int e = ilogb(x);
    if (e < emin) e = emin; /* subnormal: the quantum stops shrinking */
    double q = ldexp(1.0, e - (digits - 1));
    double r = rint(x / q) * q;
    if (fabs(r) > max_finite) return copysign(INFINITY, x);
    return r;
}

double dtype_round(conform_dtype id, double x)
{
    switch (id) {
    case CONFORM_DTYPE_FLOAT16: return round_format(x, 11, -14, 65504.0);
    case CONFORM_DTYPE_BFLOAT16: return round_format(x, 8, -126, 0x1.fep127);
    case CONFORM_DTYPE_FLOAT64: return x;
    default: return (double)(float)x;
    }
}

void dtype_round_array(conform_dtype id, double *a, int64_t n)
{
    if (id == CONFORM_DTYPE_FLOAT64) return;
    if (id == CONFORM_DTYPE_FLOAT32) { /* dtype_round's float32 case, in a loop of its own: the common one */
        for (int64_t i = 0; i < n; i++) a[i] = (double)(float)a[i];
        return;
    }
    for (int64_t i = 0; i < n; i++) a[i] = dtype_round(id, a[i]);
}

static uint16_t half_bits(double x)
{
    double r = dtype_round(CONFORM_DTYPE_FLOAT16, x);
    uint16_t sign = signbit(r) ? 0x8000 : 0;
    if (isnan(r)) return 0x7e00;
    if (isinf(r)) return sign | 0x7c00;
    r = fabs(r);
    if (r == 0) return sign;
    int e = ilogb(r);
    if (e < -14) return sign | (uint16_t)(r * 16777216.0); /* subnormal: multiples of 2^-24 */
    return sign | (uint16_t)((e + 15) << 10) | (uint16_t)(ldexp(r, 10 - e) - 1024.0);
}

static uint16_t bf16_bits(double x)
{
    float f = (float)dtype_round(CONFORM_DTYPE_BFLOAT16, x); /* exact: bfloat16 values are floats */
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if (isnan(f)) return 0x7fc0;
    return (uint16_t)(u >> 16);
}

double dtype_half_value(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    double v = e == 0 ? ldexp((double)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp((double)(m | 0x400), e - 25);
    return h >> 15 ? -v : v;
}

double dtype_bf16_value(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return (double)f;
}

/* one loop per dtype: the choice is made once, not per element */
void dtype_encode(conform_dtype id, const double *src, void *dst, int64_t n)
{
    unsigned char *d = dst;
    if (id == CONFORM_DTYPE_FLOAT64) memcpy(d, src, (size_t)n * 8);
    else if (id == CONFORM_DTYPE_FLOAT32)
        for (int64_t i = 0; i < n; i++) {
            float f = (float)src[i];
            memcpy(d + 4 * i, &f, 4);
        }
    else
        for (int64_t i = 0; i < n; i++) {
            uint16_t b = id == CONFORM_DTYPE_FLOAT16 ? half_bits(src[i]) : bf16_bits(src[i]);
            memcpy(d + 2 * i, &b, 2);
        }
}

void dtype_decode(conform_dtype id, const void *src, double *dst, int64_t n)
{
    const unsigned char *s = src;
    for (int64_t i = 0; i < n; i++) {
        if (id == CONFORM_DTYPE_FLOAT64) memcpy(&dst[i], s + 8 * i, 8);
        else if (id == CONFORM_DTYPE_FLOAT32) {
            float f;
            memcpy(&f, s + 4 * i, 4);
            dst[i] = (double)f;
        } else {
            uint16_t b;
            memcpy(&b, s + 2 * i, 2);
            dst[i] = id == CONFORM_DTYPE_FLOAT16 ? dtype_half_value(b) : dtype_bf16_value(b);
        }
    }
}

void dtype_nan(conform_dtype id, void *dst)
{
    double nan = NAN;
    dtype_encode(id, &nan, dst, 1);
}

/* little-endian, itemsize bytes */
static const unsigned char poison_f32[4] = {0xad, 0xde, 0xc0, 0x7f}, poison_f64[8] = {0xad, 0xde, 0xad, 0xde, 0, 0, 0xf8, 0x7f},
                           poison_f16[2] = {0x5d, 0x7e}, poison_bf16[2] = {0xdd, 0x7f};

static const unsigned char *poison_of(conform_dtype id)
{
    switch (id) {
    case CONFORM_DTYPE_FLOAT64: return poison_f64;
    case CONFORM_DTYPE_FLOAT16: return poison_f16;
    case CONFORM_DTYPE_BFLOAT16: return poison_bf16;
    default: return poison_f32;
    }
}

void dtype_poison(conform_dtype id, void *dst) { memcpy(dst, poison_of(id), (size_t)dtype_get(id)->itemsize); }

int64_t dtype_count_poison(conform_dtype id, const void *src, int64_t n, int64_t *first)
{
    const unsigned char *p = poison_of(id), *s = src;
    const size_t size = (size_t)dtype_get(id)->itemsize;
    int64_t count = 0;
    *first = -1;
    uint64_t want = 0, v = 0;
    memcpy(&want, p, size);
    for (int64_t i = 0; i < n; i++) { /* constant-size copies per width: no memcmp call an element */
        if (size == 4) { uint32_t w; memcpy(&w, s + 4 * i, 4); v = w; }
        else if (size == 2) { uint16_t w; memcpy(&w, s + 2 * i, 2); v = w; }
        else memcpy(&v, s + 8 * i, 8);
        if (v == want && !count++) *first = i;
    }
    return count;
}

const dtype_desc *dtype_from_bin_name(const char *path)
{
    size_t n = strlen(path);
    if (n < 4 || strcmp(path + n - 4, ".bin")) return NULL;
    for (int i = 0; i < N_DTYPES; i++) {
        size_t k = strlen(dtypes[i].name);
        if (n >= k + 5 && path[n - k - 5] == '_' && !strncmp(path + n - k - 4, dtypes[i].name, k)) return &dtypes[i];
    }
    return NULL;
}

uint64_t fnv1a64(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
    return h;
}
