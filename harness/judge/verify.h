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
/* --golden-dir DIR (default: cases/golden of the data directory, datadir.h): 0, or EXIT_USAGE after
   a message when DIR is not a folder (a path that is not there would otherwise fail the golden
   proofs: a verdict on a typo) */
int verify_set_golden_dir(const char *dir);

/* Runs every proof of op; prints a line per proof unless quiet; returns the number violated
 * (a proof that could not run counts as violated) and appends results to out (may be NULL). */
int verify_op(const op_desc *op, int quiet, cJSON *out);
/* Runs only the proofs of one kind of op (e.g. a deliberately broken copy, in the tests):
 * returns how many were violated, *ran how many there were. */
int verify_kind(const op_desc *op, const char *kind, int *ran);

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
/* Bookkeeping of a proof: one more check of discrepancy d (NaN counts as infinite), and the
 * verdict (0 held, 1 violated) with a detail line "<checks> <what>, worst .. (limit ..)". */
void proof_note(proof_result *r, double d);
int proof_verdict(proof_result *r, const char *what);

/* |<g, y> - <gx, x>| over the sum of |products|: the adjoint identity's discrepancy */
double adjoint_gap(const double *g, const double *y, int64_t ny, const double *gx, const double *x, int64_t nx);

/* L(v) = <g, output 0 of fwd on p with element e of input `input` set to v>: the loss whose
 * derivative a backward gives; proof_central_difference is GSL's gsl_deriv_central of it at the
 * element's current value with step h (its error estimate in *abserr). */
typedef struct {
    const op_desc *fwd;
    problem_t *p;
    int input;
    int64_t e;
    const double *g;
    int64_t ng;
} proof_loss;
double proof_central_difference(proof_loss *L, double h, double *abserr);

/* Linearity in input 0: rel_diff(F(a x + b z), a F(x) + b F(z)) of output 0, a = 1.5,
 * b = -0.75, for the caller's x and z (as many as input 0 has), noted in r; input 0 is left at
 * a x + b z. 0, or -1 when a reference run fails. */
int proof_linearity(const op_desc *op, problem_t *p, const double *x, const double *z, proof_result *r);
/* The same for x and z drawn from rng uniform in [-1, 1], x[i] and z[i] in turn. */
int proof_linearity_random(const op_desc *op, problem_t *p, gsl_rng *rng, proof_result *r);

/* n values uniform in [-1, 1] (float32) from rng, in order (malloc'd, free them) */
double *proof_random_values(int64_t n, gsl_rng *rng);

/* One run of op on given data: attributes ("name=value", NULL-terminated), input shapes, and
 * one array per input (as many values as its shape). */
typedef struct {
    const char *const *attrs;
    const shape_t *shapes;
    const double *const *data;
} proof_run_spec;
/* Output 0 of op for the run s (freshly allocated in y[0]) and its element count. */
int proof_run(const op_desc *op, const proof_run_spec *s, double **y, int64_t *ny, proof_result *r);
/* A relation between two runs: notes rel_diff(output 0 of b, output 0 of a). 0 or -1. */
int proof_same_output(const op_desc *op, const proof_run_spec *a, const proof_run_spec *b, proof_result *r);

/* A forward problem and its backward on the same inputs (the backward's input 0 is g), with
 * their reference outputs: y the forward's, gx the backward's (a second one may stay NULL).
 * proof_pair_free releases all of it, whatever was made. */
typedef struct {
    problem_t fwd, bwd;
    double *y[1], *gx[2];
} proof_pair;
void proof_pair_free(proof_pair *pr);
/* The backward half of a pair whose forward (pr->fwd) the caller made: the backward problem of bwd
 * from attrs and shapes (seed), its inputs to.. to+n-1 set to the forward's from.. from+n-1 (input 0
 * stays the drawn g), then both references. 0, or -1 (the pair is freed by proof_pair_free). */
int proof_pair_finish(proof_pair *pr, const op_desc *bwd, const char *const *attrs, const shape_t *shapes,
                      unsigned long seed, int from, int to, int n, proof_result *r);
/* adjoint_gap of <g, y> against <gx[0], forward input 0> */
double proof_pair_adjoint_gap(const proof_pair *pr);
/* max |gx[t]| over forward input t: the scale a finite difference is judged against */
double proof_pair_grad_scale(const proof_pair *pr, int t);
/* max(|central difference of <g, fwd output 0> in element e of forward input t - gx[t][e]|,
 * GSL's error estimate), step h */
double proof_pair_fd_error(const op_desc *fwd, proof_pair *pr, int t, int64_t e, double h);

/* Pair i of a backward's proofs, made with the given seed (see proof_pair). */
typedef int (*proof_pair_maker)(const op_desc *bwd, size_t i, unsigned long seed, proof_pair *pr, proof_result *r);
/* The adjoint identity on pairs 0..n-1 (seeds seed0 + i), each noted; the verdict says what. */
int proof_adjoint_pairs(const op_desc *bwd, proof_pair_maker make, size_t n, unsigned long seed0, const char *what,
                        proof_result *r);
/* Finite differences on pairs 0..n-1 (seeds seed0 + i): every stride-th element of forward
 * input `input`, proof_pair_fd_error with step h over max(gradient scale, scale_floor); with
 * need_gradient, a pair whose gradient is zero everywhere is a violation (it proves nothing). */
typedef struct {
    const op_desc *fwd;
    int input;
    int64_t stride;
    double h, scale_floor;
    int need_gradient;
    const char *what;
} proof_fd_plan;
int proof_fd_pairs(const op_desc *bwd, proof_pair_maker make, size_t n, unsigned long seed0, const proof_fd_plan *plan,
                   proof_result *r);

/* The generic golden proof: every case for this op with "expect" in the files of cases/golden. */
int proof_golden(const op_desc *op, proof_result *r);

#endif
