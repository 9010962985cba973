/* The precisions an implementation under test computes in: float32, float16, bfloat16, float64.
 * The harness holds every value in double; a dtype says how values are rounded, stored (npy
 * descr, raw bytes) and which unit roundoff its tolerances use. */
#ifndef CONFORM_DTYPE_H
#define CONFORM_DTYPE_H

#include <stddef.h>
#include <stdint.h>

#include "conform_plugin.h"

typedef struct {
    conform_dtype id;
    const char *name;      /* "float32", ... as --dtype takes it */
    const char *npy_descr; /* '<f4', '<f2', '<u2' (bfloat16 bits: NumPy has no bfloat16), '<f8' */
    int itemsize;
    double u;              /* unit roundoff of round-to-nearest in this format */
    double eta;            /* absolute error bound of one rounding in the subnormal range */
} dtype_desc;

/* NULL when name is not a dtype */
const dtype_desc *dtype_find(const char *name);
const dtype_desc *dtype_get(conform_dtype id);
/* float32: the optimized path's precision, an ABI-1 plugin's, and the one of sample positions */
#define DTYPE_FLOAT32 (dtype_get(CONFORM_DTYPE_FLOAT32))
/* "float32, float16, bfloat16 or float64", for messages */
const char *dtype_names(void);

/* x rounded to the nearest value of the format (ties to even; overflow to infinity; NaN stays). */
double dtype_round(conform_dtype id, double x);
/* the value of float16 bits and of bfloat16 bits (the top half of a float32) */
double dtype_half_value(uint16_t h);
double dtype_bf16_value(uint16_t b);
/* every element of a rounded in place */
void dtype_round_array(conform_dtype id, double *a, int64_t n);
/* n values (each already representable, else rounded) stored little-endian at dst. */
void dtype_encode(conform_dtype id, const double *src, void *dst, int64_t n);
void dtype_decode(conform_dtype id, const void *src, double *dst, int64_t n);
/* the bit pattern of a quiet NaN of the format, itemsize bytes */
void dtype_nan(conform_dtype id, void *dst);
/* The poison output buffers are filled with: a quiet NaN whose payload no reference, input or IEEE
 * operation of conform's gives (float32 0x7fc0dead, float64 0x7ff80000deaddead, float16 0x7e5d,
 * bfloat16 0x7fdd; the default NaNs are 0x7fc00000 / 0xffc00000 and their like, and a float32 NaN
 * narrowed to 16 bits keeps only its top payload bits), so an element still holding it was never
 * written, even where the reference is NaN. A kernel that accumulates into it (x86 keeps the
 * payload of a NaN operand) has not written it either. */
void dtype_poison(conform_dtype id, void *dst);
/* how many of the n elements at src are the poison, and the first (-1: none) */
int64_t dtype_count_poison(conform_dtype id, const void *src, int64_t n, int64_t *first);

/* The dtype a raw file's name gives by a suffix before ".bin" (out_float16.bin), else NULL. */
const dtype_desc *dtype_from_bin_name(const char *path);

/* 64-bit FNV-1a (non-cryptographic: detects edited or stale files, not tampering). FNV1A64_INIT is
   not the published offset basis (14695981039346656037): a digit short, kept because every export's
   input_hashes and the golden fingerprints use it (docs/cli.md says so for other tools). */
uint64_t fnv1a64(uint64_t h, const void *data, size_t n);
#define FNV1A64_INIT 1469598103934665603ULL

#endif
