/* What eval and bench share: one problem's buffers on both paths and the --impl choice. */
#ifndef CONFORM_EVAL_BUFFERS_H
#define CONFORM_EVAL_BUFFERS_H

#include "op.h"

/* the reference's outputs in double, the optimized path's in float32, its inputs in float32 */
typedef struct {
    double *ref[CONFORM_MAX_TENSORS];
    float *opt[CONFORM_MAX_TENSORS];
    float *fin[CONFORM_MAX_TENSORS];
} buffers;

/* every output zeroed and the inputs as float32, 64-byte aligned; -1 when memory runs out */
int buffers_alloc(const problem_t *p, buffers *b);
void buffers_free(buffers *b);
/* the reference (reference != 0) or the optimized path on b; a CONFORM_* status */
int run_impl(const problem_t *p, int reference, buffers *b, const conform_exec *ex);
/* --impl reference|optimized|both: 1, 2 or 3 in *impl; -1 for anything else */
int parse_impl(const char *v, int *impl);

#endif
