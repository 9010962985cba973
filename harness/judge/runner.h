/* Running one case on both paths and judging it; its JSON for the report. */
#ifndef CONFORM_RUNNER_H
#define CONFORM_RUNNER_H

#include "compare.h"
#include "impl.h"
#include "standards.h"
#include "status.h"
#include "suite.h"

/* A case's status: status.h */
typedef struct {
    char name[64];
    shape_t shape;
    int skipped;
    const dtype_desc *dt; /* the dtype its tolerance was derived for */
    compare_result cmp;
    int guard_ok;
    int64_t guard_offset; /* element offset of the first guard write (negative: before the buffer) */
    /* where the errors sit, for failing outputs: the tensor seen as [rows, cols] (leading dims x
       last two dims), folded into at most HEAT x HEAT cells holding the largest err/tol */
    int heat_rows, heat_cols;
    float *heat;
    int has_expect;
    double expect_max_abs_err;
    int expect_ok;
    /* the named precision standards, judged beside the derived bound (standards_run.c) */
    int has_standards;
    int bench_is_self; /* commercial-ratio's benchmark is the implementation under test itself */
    std_result standards[N_STANDARDS];
} output_result;

typedef struct {
    case_status status;
    char message[CONFORM_ERR_LEN];
    uint64_t seed;
    int n_out;
    output_result out[CONFORM_MAX_TENSORS];
    double time_ref_s, time_opt_s;
} case_result;

#define HEAT 32

typedef struct {
    conform_exec ex;
    const impl_t *impl;
    exec_policy policy;
} run_env;

void run_case(const case_t *c, uint64_t seed, const run_env *env, case_result *r);
void case_result_free(case_result *r);
/* out->heat from the err/tol of every element (a failing output's heat map) */
void case_heat_map(output_result *out, const double *ref, const double *got, const tol_inputs *t);
/* The report object of a case. repro: the one command line that reruns it. */
cJSON *case_result_json(const case_t *c, const case_result *r, const char *repro);
/* Guarded buffers of n elements of a dtype: sentinel bands on both sides, interior poisoned with
 * the dtype's NaN so an element the kernel never writes shows up as a mismatch. Shared memory,
 * so a kernel in a child process writes where the harness reads. */
void *guarded_alloc(int64_t n, const dtype_desc *dt);
int guarded_check(const void *buf, int64_t n, const dtype_desc *dt, int64_t *bad_offset); /* 1 intact */
void guarded_free(void *buf);
double now_seconds(void);

#endif
