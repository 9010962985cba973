/* The named standards applied to a case's outputs, with the benchmark commercial-ratio needs. */
#ifndef CONFORM_STANDARDS_RUN_H
#define CONFORM_STANDARDS_RUN_H

#include <stdio.h>

#include "runner.h"

/* Our optimized float32 path on the same float32 inputs, in-process, each output rounded to dt
 * (what a kernel computing in dt must round to at least). bench[o] is malloc'd (NULL when skipped).
 * 0 ok, else the kernel's error code (bench freed and NULL). */
int standards_benchmark(const problem_t *p, const float **in, conform_dtype dt, const conform_exec *ex, double **bench);
/* Evaluates every standard on each computed output of r: ref the golden, actual the values under
 * test (per output; where actual is NULL or actual[o] is, actual_f32[o]: float32 values as the
 * implementation wrote them); bench NULL or per output (NULL: no benchmark for that output), unused
 * when bench_is_self (the benchmark is then the values under test). */
void standards_attach(const problem_t *p, double *const *ref, double *const *actual, float *const *actual_f32,
                      double *const *bench, int bench_is_self, case_result *r);
/* The hook run_case calls once the outputs are compared (actual: the outputs decoded to double, or
 * for float32 actual_f32, the outputs as written): the benchmark is the implementation under test
 * itself when that is our optimized path, else our optimized path run here on the same inputs. */
void standards_for_case(const problem_t *p, double *const *ref, double *const *actual, float *const *actual_f32,
                        const run_env *env, case_result *r);
/* conform check: the benchmark from the problem's inputs (as float32), then standards_attach. */
void standards_for_inputs(const problem_t *p, double *const *ref, double *const *actual, conform_dtype dt, case_result *r);
/* The printed table: one row per output, one column per standard. */
void standards_print(const case_result *r, FILE *f);
/* "standards": {name: result} of one output. */
cJSON *standards_json(const output_result *out);

#endif
