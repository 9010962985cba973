/* NumPy .npy files: version 1.0/2.0/3.0 headers, little-endian float32 ('<f4') or float64 ('<f8'),
 * C order. Anything else is refused with a message that says what was found and what is accepted. */
#ifndef CONFORM_NPY_H
#define CONFORM_NPY_H

#include <stdio.h>

#include "dtype.h"
#include "tensor.h"

#define CONFORM_NPY_ERR 512

/* Reads into t (data converted to double, allocated with tensor_alloc). 0 ok; -1 with err set
 * (the message names the file). On failure t holds nothing to free. */
int npy_read(const char *path, tensor_t *t, char *err, size_t errlen);
/* npy_read, also taking 16-bit data when wide16 is set: NPY_F16 accepts float16 ('<f2');
 * NPY_BF16_AS_U2 also reads '<u2' arrays as the bit patterns of bfloat16 (NumPy has no
 * bfloat16: `x.view(np.uint16)` of a bfloat16 tensor's bits is the documented convention). */
#define NPY_F16 1
#define NPY_BF16_AS_U2 2
int npy_read_ex(const char *path, tensor_t *t, int wide16, char *err, size_t errlen);
double npy_half_to_double(uint16_t h);
double npy_bf16_to_double(uint16_t b);

/* Reads a file that must hold exactly dtype dt (its npy_descr), with a message naming the file,
 * the dtype expected and the one found. For a `dir:` directory's files: Fortran order (what
 * np.save writes for a transposed array) is read in C order too. */
int npy_read_dtype(const char *path, tensor_t *t, const dtype_desc *dt, char *err, size_t errlen);
/* A headerless C-order file (the .bin of msOpST, TTK and the CANN samples) of shape s at dtype dt;
 * a size other than numel * itemsize is refused with both byte counts. */
int npy_read_raw(const char *path, const shape_t *s, const dtype_desc *dt, tensor_t *t, char *err, size_t errlen);

/* Writes atomically (temporary file in the same folder, then rename). 0 ok; -1 with err set. */
int npy_write_f64(const char *path, const shape_t *s, const double *data, char *err, size_t errlen);
/* values rounded to dt and stored as its npy_descr (bfloat16 as '<u2' bits) */
int npy_write_dtype(const char *path, const shape_t *s, const dtype_desc *dt, const double *data, char *err, size_t errlen);
int npy_write_f32(const char *path, const shape_t *s, const float *data, char *err, size_t errlen);

/* A reader's message without its leading "PATH: " (for callers that name the argument instead) */
const char *npy_strip_path(const char *err, const char *path);

/* Opens a regular file for reading without ever blocking in open (a FIFO, a socket, a device or a
 * directory is refused, the message naming the path and what it is). NULL with err set. */
FILE *fopen_regular(const char *path, char *err, size_t errlen);
/* What a stat mode is, for messages: "a FIFO (named pipe)", "a socket", "a directory", ... */
const char *file_kind(unsigned mode);
/* The largest .npy file that holds numel items of itemsize bytes: the data and the longest
 * prefix and header the reader accepts (a bigger file is refused before it is read). */
int64_t npy_max_bytes(int64_t numel, int itemsize);

/* FNV-1a 64 of a file's bytes (dtype.h: detects edited or stale files, not tampering) */
int file_fnv1a64(const char *path, uint64_t *hash, char *err, size_t errlen);

#endif
