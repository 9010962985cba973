/* conform verify: every reference proven by checks that do not trust it.
 *   adjoint            <g, F(x)> = <F^T(g), x> for the inputs the forward is linear in
 *   finite difference  gradients against GSL's central differences of the forward, in double
 *   metamorphic        relations that hold exactly or to rounding (identity windows, translation,
 *                      half-pixel alignment, linearity, layouts, ...)
 *   golden             vectors from independent implementations (PyTorch, torchvision, mmcv,
 *                      published documentation), the JSON files of cases/golden, matched to 1e-12 */
#ifndef CONFORM_VERIFY_H
#define CONFORM_VERIFY_H

#include "op.h"

#define PROOF_KINDS 4
extern const char *const proof_kinds[PROOF_KINDS];
extern const char *verify_golden_dir; /* default "cases/golden" */

/* Runs every proof of op; prints a line per proof unless quiet; returns the number violated
 * (a proof that could not run counts as violated) and appends results to out (may be NULL). */
int verify_op(const op_desc *op, int quiet, cJSON *out);

/* ---- helpers for the proof files ---------------------------------------------------------- */

/* A problem of op from "name=value" attribute texts (NULL-terminated), input shapes, a "gen"
 * JSON text (may be NULL) and a seed; validated and filled. 0 ok, -1 with r->detail set. */
int proof_problem(const op_desc *op, const char *const *attrs, const shape_t *shapes, const char *gen,
                  unsigned long seed, problem_t *p, proof_result *r);
/* Reference outputs of p through op->reference (the op under proof), each freshly allocated. */
int proof_reference(const op_desc *op, const problem_t *p, double **out);
void proof_free_outputs(double **out, int n);
/* max |a - b| / max(max |b|, tiny) over n: error relative to the tensor's scale */
double rel_diff(const double *a, const double *b, int64_t n);
/* The generic golden proof: every case for this op with "expect" in the files of cases/golden. */
int proof_golden(const op_desc *op, proof_result *r);

#endif
