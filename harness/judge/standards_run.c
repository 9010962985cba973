#include "standards_run.h"

#include <stdlib.h>
#include <string.h>

int standards_benchmark(const problem_t *p, const float **in, conform_dtype dt, const conform_exec *ex, double **bench)
{
    const op_desc *op = p->op;
    float *out[CONFORM_MAX_TENSORS] = {0};
    int rc = 0;
    for (int o = 0; o < op->n_outputs; o++) {
        bench[o] = NULL;
        if (p->out_skipped[o]) continue;
        int64_t n = shape_numel(&p->out_shape[o]);
        out[o] = malloc((size_t)(n ? n : 1) * sizeof(float));
        bench[o] = malloc((size_t)(n ? n : 1) * sizeof(double));
        if (!out[o] || !bench[o]) rc = CONFORM_E_NOMEM;
    }
    if (!rc) rc = op->optimized(p, in, out, ex);
    for (int o = 0; o < op->n_outputs; o++) {
        if (!rc && bench[o]) {
            int64_t n = shape_numel(&p->out_shape[o]);
            for (int64_t i = 0; i < n; i++) bench[o][i] = dtype_round(dt, out[o][i]);
        }
        if (rc) {
            free(bench[o]);
            bench[o] = NULL;
        }
        free(out[o]);
    }
    return rc;
}

void standards_attach(const problem_t *p, double *const *ref, double *const *actual, float *const *actual_f32,
                      double *const *bench, int bench_is_self, case_result *r)
{
    for (int o = 0; o < p->op->n_outputs; o++) {
        output_result *out = &r->out[o];
        const double *a = actual ? actual[o] : NULL;
        const float *a32 = a || !actual_f32 ? NULL : actual_f32[o];
        if (out->skipped || (!a && !a32)) continue;
        std_input in = {ref[o], a, bench_is_self ? a : bench ? bench[o] : NULL, shape_numel(&p->out_shape[o]),
                        out->dt ? out->dt->id : CONFORM_DTYPE_FLOAT32, a32, bench_is_self ? a32 : NULL, 0};
        standards_evaluate_all(&in, out->standards);
        out->has_standards = 1;
        out->bench_is_self = bench_is_self;
    }
}

/* Our optimized path on the problem's inputs as float32 (exact for every dtype but float64, whose
 * benchmark is a float32 computation anyway). bench stays NULL where it could not run. */
static void benchmark_from_problem(const problem_t *p, conform_dtype dt, const conform_exec *ex, double **bench)
{
    const op_desc *op = p->op;
    float *in[CONFORM_MAX_TENSORS] = {0};
    int ok = 1;
    for (int i = 0; i < op->n_inputs; i++) {
        int64_t n = tensor_numel(&p->in[i]);
        in[i] = malloc((size_t)(n ? n : 1) * sizeof(float));
        ok &= in[i] != NULL;
        for (int64_t j = 0; in[i] && j < n; j++) in[i][j] = (float)p->in[i].data[j];
    }
    if (ok) standards_benchmark(p, (const float **)in, dt, ex, bench); /* on failure bench stays NULL: not judged */
    for (int i = 0; i < CONFORM_MAX_TENSORS; i++) free(in[i]);
}

void standards_for_case(const problem_t *p, double *const *ref, double *const *actual, float *const *actual_f32,
                        const run_env *env, case_result *r)
{
    double *bench[CONFORM_MAX_TENSORS] = {0};
    conform_dtype dt = env->impl->dtype->id; /* one per run */
    int self = env->impl->kind == &impl_kind_optimized;
    /* one thread: an OpenMP team started in this process would deadlock the children the run
       forks later (libgomp's pool does not survive fork) */
    const conform_exec one = {env->ex.isa, 1};
    if (!self) benchmark_from_problem(p, dt, &one, bench);
    standards_attach(p, ref, actual, actual_f32, self ? NULL : bench, self, r);
    for (int o = 0; o < CONFORM_MAX_TENSORS; o++) free(bench[o]);
}

void standards_for_inputs(const problem_t *p, double *const *ref, double *const *actual, conform_dtype dt, case_result *r)
{
    double *bench[CONFORM_MAX_TENSORS] = {0};
    conform_exec ex = {conform_isa_best(), 0};
    benchmark_from_problem(p, dt, &ex, bench);
    standards_attach(p, ref, actual, NULL, bench, 0, r);
    for (int o = 0; o < CONFORM_MAX_TENSORS; o++) free(bench[o]);
}

void standards_print(const case_result *r, FILE *f)
{
    fprintf(f, "%-20s", "named standard");
    for (int o = 0; o < r->n_out; o++) if (r->out[o].has_standards) fprintf(f, " %14s", r->out[o].name);
    fprintf(f, "\n");
    for (int s = 0; s < N_STANDARDS; s++) {
        fprintf(f, "%-20s", conform_standards[s].name);
        for (int o = 0; o < r->n_out; o++) {
            const output_result *out = &r->out[o];
            if (!out->has_standards) continue;
            const std_result *res = &out->standards[s];
            char cell[32];
            snprintf(cell, sizeof cell, "%s%s%s", !res->defined ? "n/a" : res->passed ? "pass" : "FAIL", res->level ? " " : "",
                     res->level ? res->level : "");
            fprintf(f, " %14s", cell);
        }
        fprintf(f, "\n");
    }
}

cJSON *standards_json(const output_result *out)
{
    cJSON *j = cJSON_CreateObject();
    for (int s = 0; s < N_STANDARDS; s++) {
        cJSON *e = std_result_json(&out->standards[s]);
        if (!strcmp(conform_standards[s].name, "commercial-ratio"))
            cJSON_AddStringToObject(e, "benchmark", out->bench_is_self ? "itself: the implementation under test is our optimized "
                                                                         "float32 path (each ratio x/(x+1e-7) <= 1)"
                                                                       : "our optimized float32 path, same inputs, rounded to the output dtype");
        cJSON_AddItemToObject(j, conform_standards[s].name, e);
    }
    return j;
}
