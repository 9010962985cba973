/* Shapes and tensors of the harness. Inputs are held in double; generated values are exactly
 * representable in float32, so both paths see the same numbers. */
#ifndef CONFORM_TENSOR_H
#define CONFORM_TENSOR_H

#include <stddef.h>
#include <stdint.h>

#define CONFORM_MAX_RANK 8
/* Refuse tensors above this many elements (shape products are overflow-checked against it). */
#define CONFORM_MAX_NUMEL ((int64_t)1 << 34)

typedef struct {
    int rank;
    int64_t dims[CONFORM_MAX_RANK];
} shape_t;

typedef struct {
    shape_t shape;
    double *data; /* numel doubles; may be NULL when numel == 0 */
    int big;      /* data is tensor_alloc's (a big buffer, bigbuf.h), not the caller's malloc */
} tensor_t;

/* Number of elements; -1 when a dim is negative or the product exceeds CONFORM_MAX_NUMEL. */
int64_t shape_numel(const shape_t *s);
int shape_equal(const shape_t *a, const shape_t *b);
shape_t shape_make(int rank, const int64_t *dims);
shape_t shape4(int64_t a, int64_t b, int64_t c, int64_t d);
shape_t shape2(int64_t a, int64_t b);
/* "[2,3,4]" into buf; returns buf */
const char *shape_str(const shape_t *s, char *buf, size_t len);
/* The coordinates of a flat (row-major) index into shape s, as "[k,c,h,w]" */
const char *index_str(const shape_t *s, int64_t flat, char *buf, size_t len);

/* Allocates zeroed storage for s (calloc); 0 ok, -1 on a bad shape or no memory. */
int tensor_alloc(tensor_t *t, const shape_t *s);
void tensor_free(tensor_t *t);
int64_t tensor_numel(const tensor_t *t);

#endif
