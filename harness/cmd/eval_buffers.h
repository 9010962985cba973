/* What eval and bench share: one problem's buffers on both paths and the --impl choice. */
#ifndef CONFORM_EVAL_BUFFERS_H
#define CONFORM_EVAL_BUFFERS_H

#include "cli.h"
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

/* What eval and bench both take: the op (argv[2]), the problem's options, --threads and --isa. */
typedef struct {
    const op_desc *op;
    problem_args a;
    conform_exec ex;
} eval_args;
/* an option of the command's own at argv[*i] (value v): 1 taken (*i advanced past its value),
   0 not one of its options, -1 refused after a message */
typedef int (*eval_option)(void *ctx, const char *o, const char *v, int *i);
/* argv parsed into e (own options through take; the problem's seed unless --seed: seed); EXIT_OK or
   EXIT_USAGE after a message */
int eval_parse(int argc, char **argv, const char *cmd, const char *usage, int seed, eval_args *e, eval_option take,
               void *ctx);
/* the ISA resolved, the reference's threads set, the problem built; EXIT_OK or a usage exit */
int eval_problem(eval_args *e, problem_t *p);

#endif
