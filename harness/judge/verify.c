#include "verify.h"

#include <errno.h>
#include <glob.h>
#include <gsl/gsl_deriv.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "datadir.h"
#include "fill.h"
#include "suite.h"

const char *const proof_kinds[PROOF_KINDS] = {"adjoint", "finite difference", "metamorphic", "golden"};
/* --golden-dir, set once by verify_set_golden_dir before any proof runs: a setting of the process,
   as the data directory is, read by the golden proofs at the end of the proof_desc.run calls (a
   parameter would run through every op's proofs for one of four kinds); NULL: the data
   directory's cases/golden */
static const char *verify_golden_dir;

int verify_set_golden_dir(const char *dir)
{
    struct stat st;
    int there = dir && !stat(dir, &st);
    if (!there || !S_ISDIR(st.st_mode))
        return usage_error("--golden-dir takes a folder of golden vectors (as cases/golden), got '%s' (%s)", dir ? dir : "",
                           !dir ? "nothing" : there ? "not a folder" : strerror(errno));
    verify_golden_dir = dir;
    return 0;
}

static char golden_default[4096];
static const char *golden_dir(void)
{
    return verify_golden_dir ? verify_golden_dir : conform_data_file("cases/golden", golden_default, sizeof golden_default);
}

/* golden vectors are double computations of the same sums in another order: 1e-12 of the
   tensor's scale leaves room for that and for nothing else */
#define GOLDEN_LIMIT 1e-12

void proof_note(proof_result *r, double d)
{
    r->checks++;
    if (d > r->worst || isnan(d)) r->worst = isnan(d) ? INFINITY : d;
}

int proof_verdict(proof_result *r, const char *what)
{
    int ok = r->worst <= r->limit;
    snprintf(r->detail, sizeof r->detail, "%d %s, worst %.2g (limit %.0e)", r->checks, what, r->worst, r->limit);
    return ok ? 0 : 1;
}

double adjoint_gap(const double *g, const double *y, int64_t ny, const double *gx, const double *x, int64_t nx)
{
    double lhs = 0, rhs = 0, mag = 0;
    for (int64_t k = 0; k < ny; k++) { lhs += g[k] * y[k]; mag += fabs(g[k] * y[k]); }
    for (int64_t k = 0; k < nx; k++) { rhs += gx[k] * x[k]; mag += fabs(gx[k] * x[k]); }
    return mag > 0 ? fabs(lhs - rhs) / mag : INFINITY; /* a vacuous identity proves nothing */
}

static double loss_at(double v, void *params)
{
    proof_loss *L = params;
    double *slot = &L->p->in[L->input].data[L->e], keep = *slot, *y[CONFORM_MAX_TENSORS] = {0}, l = 0;
    *slot = v;
    if (proof_reference(L->fwd, L->p, y) == 0)
        for (int64_t k = 0; k < L->ng; k++) l += L->g[k] * y[0][k];
    else l = NAN;
    proof_free_outputs(y, L->fwd->n_outputs);
    *slot = keep;
    return l;
}

double proof_central_difference(proof_loss *L, double h, double *abserr)
{
    gsl_function f = {loss_at, L};
    double d;
    gsl_deriv_central(&f, L->p->in[L->input].data[L->e], h, &d, abserr);
    return d;
}

int proof_linearity(const op_desc *op, problem_t *p, const double *x, const double *z, proof_result *r)
{
    const int64_t n = tensor_numel(&p->in[0]), m = shape_numel(&p->out_shape[0]);
    double *y[3][1] = {{0}, {0}, {0}};
    const double a = 1.5, b = -0.75;
    int rc = 0;
    for (int t = 0; t < 3 && rc == 0; t++) {
        for (int64_t i = 0; i < n; i++) p->in[0].data[i] = t == 0 ? x[i] : t == 1 ? z[i] : a * x[i] + b * z[i];
        rc = proof_reference(op, p, y[t]);
    }
    if (!rc) {
        double *comb = malloc(sizeof(double) * (size_t)(m ? m : 1));
        for (int64_t i = 0; i < m; i++) comb[i] = a * y[0][0][i] + b * y[1][0][i];
        proof_note(r, rel_diff(y[2][0], comb, m));
        free(comb);
    }
    for (int t = 0; t < 3; t++) proof_free_outputs(y[t], 1);
    return rc;
}

int proof_linearity_random(const op_desc *op, problem_t *p, gsl_rng *rng, proof_result *r)
{
    const int64_t n = tensor_numel(&p->in[0]);
    double *x = malloc(sizeof(double) * (size_t)(n ? n : 1)), *z = malloc(sizeof(double) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) { x[i] = fill_uniform(rng, -1, 1); z[i] = fill_uniform(rng, -1, 1); }
    const int rc = proof_linearity(op, p, x, z, r);
    free(x);
    free(z);
    return rc;
}

double *proof_random_values(int64_t n, gsl_rng *rng)
{
    double *v = malloc(sizeof(double) * (size_t)(n ? n : 1));
    for (int64_t i = 0; i < n; i++) v[i] = fill_uniform(rng, -1, 1);
    return v;
}

int proof_run(const op_desc *op, const proof_run_spec *s, double **y, int64_t *ny, proof_result *r)
{
    problem_t p;
    if (proof_problem(op, s->attrs, s->shapes, NULL, 1, &p, r)) return -1;
    for (int i = 0; i < op->n_inputs; i++)
        memcpy(p.in[i].data, s->data[i], sizeof(double) * (size_t)shape_numel(&s->shapes[i]));
    int rc = proof_reference(op, &p, y);
    *ny = shape_numel(&p.out_shape[0]);
    problem_free(&p);
    return rc;
}

int proof_same_output(const op_desc *op, const proof_run_spec *a, const proof_run_spec *b, proof_result *r)
{
    double *ya[1] = {0}, *yb[1] = {0};
    int64_t na, nb;
    int rc = proof_run(op, a, ya, &na, r);
    if (!rc) rc = proof_run(op, b, yb, &nb, r);
    if (!rc) proof_note(r, rel_diff(yb[0], ya[0], na));
    proof_free_outputs(ya, 1);
    proof_free_outputs(yb, 1);
    return rc;
}

void proof_pair_free(proof_pair *pr)
{
    proof_free_outputs(pr->y, 1);
    proof_free_outputs(pr->gx, 2);
    problem_free(&pr->fwd);
    problem_free(&pr->bwd);
}

int proof_pair_finish(proof_pair *pr, const op_desc *bwd, const char *const *attrs, const shape_t *shapes,
                      unsigned long seed, int from, int to, int n, proof_result *r)
{
    if (proof_problem(bwd, attrs, shapes, NULL, seed, &pr->bwd, r)) return -1;
    for (int i = 0; i < n; i++)
        memcpy(pr->bwd.in[to + i].data, pr->fwd.in[from + i].data,
               sizeof(double) * (size_t)tensor_numel(&pr->fwd.in[from + i]));
    if (proof_reference(pr->fwd.op, &pr->fwd, pr->y) || proof_reference(bwd, &pr->bwd, pr->gx)) return -1;
    return 0;
}

double proof_pair_adjoint_gap(const proof_pair *pr)
{
    return adjoint_gap(pr->bwd.in[0].data, pr->y[0], tensor_numel(&pr->bwd.in[0]), pr->gx[0], pr->fwd.in[0].data,
                       tensor_numel(&pr->fwd.in[0]));
}

double proof_pair_grad_scale(const proof_pair *pr, int t)
{
    double scale = 0;
    for (int64_t k = 0; k < tensor_numel(&pr->fwd.in[t]); k++) scale = fmax(scale, fabs(pr->gx[t][k]));
    return scale;
}

double proof_pair_fd_error(const op_desc *fwd, proof_pair *pr, int t, int64_t e, double h)
{
    proof_loss L = {fwd, &pr->fwd, t, e, pr->bwd.in[0].data, tensor_numel(&pr->bwd.in[0])};
    double abserr, d = proof_central_difference(&L, h, &abserr);
    return fmax(fabs(d - pr->gx[t][e]), abserr);
}

int proof_adjoint_pairs(const op_desc *bwd, proof_pair_maker make, size_t n, unsigned long seed0, const char *what,
                        proof_result *r)
{
    for (size_t i = 0; i < n; i++) {
        proof_pair pr;
        if (make(bwd, i, seed0 + i, &pr, r)) { proof_pair_free(&pr); return -1; }
        proof_note(r, proof_pair_adjoint_gap(&pr));
        proof_pair_free(&pr);
    }
    return proof_verdict(r, what);
}

int proof_fd_pairs(const op_desc *bwd, proof_pair_maker make, size_t n, unsigned long seed0, const proof_fd_plan *plan,
                   proof_result *r)
{
    for (size_t i = 0; i < n; i++) {
        proof_pair pr;
        if (make(bwd, i, seed0 + i, &pr, r)) { proof_pair_free(&pr); return -1; }
        const int64_t nx = tensor_numel(&pr.fwd.in[plan->input]);
        const double scale = proof_pair_grad_scale(&pr, plan->input);
        for (int64_t e = 0; e < nx; e += plan->stride)
            proof_note(r, proof_pair_fd_error(plan->fwd, &pr, plan->input, e, plan->h) / fmax(scale, plan->scale_floor));
        if (plan->need_gradient && scale == 0) proof_note(r, INFINITY);
        proof_pair_free(&pr);
    }
    return proof_verdict(r, plan->what);
}

int proof_problem(const op_desc *op, const char *const *attrs, const shape_t *shapes, const char *gen,
                  unsigned long seed, problem_t *p, proof_result *r)
{
    char err[CONFORM_ERR_LEN];
    problem_init(p, op);
    for (int i = 0; attrs && attrs[i]; i++) {
        char name[64];
        const char *eq = strchr(attrs[i], '=');
        snprintf(name, sizeof name, "%.*s", (int)(eq - attrs[i]), attrs[i]);
        if (problem_set_attr_text(p, name, eq + 1, err, sizeof err)) goto fail;
    }
    if (problem_finish_attrs(p, err, sizeof err)) goto fail;
    for (int i = 0; i < op->n_inputs; i++) p->in[i].shape = shapes[i];
    if (op->validate(p, err, sizeof err)) goto fail;
    for (int i = 0; i < op->n_inputs; i++)
        if (tensor_alloc(&p->in[i], &shapes[i])) { snprintf(err, sizeof err, "out of memory"); goto fail; }
    cJSON *g = gen ? cJSON_Parse(gen) : NULL;
    gsl_rng *rng = conform_rng(seed);
    int rc = problem_fill(p, g, rng, err, sizeof err);
    gsl_rng_free(rng);
    cJSON_Delete(g);
    if (rc || op->validate(p, err, sizeof err)) goto fail;
    return 0;
fail:
    snprintf(r->detail, sizeof r->detail, "could not build a problem: %s", err);
    problem_free(p);
    return -1;
}

int proof_reference(const op_desc *op, const problem_t *p, double **out)
{
    for (int o = 0; o < op->n_outputs; o++) {
        int64_t n = shape_numel(&p->out_shape[o]);
        out[o] = calloc((size_t)(n ? n : 1), sizeof(double));
        if (!out[o]) { proof_free_outputs(out, o); return -1; }
    }
    op->reference(p, out, NULL);
    return 0;
}

void proof_free_outputs(double **out, int n)
{
    for (int o = 0; o < n; o++) { free(out[o]); out[o] = NULL; }
}

double rel_diff(const double *a, const double *b, int64_t n)
{
    double scale = 0, worst = 0;
    for (int64_t i = 0; i < n; i++) if (fabs(b[i]) > scale) scale = fabs(b[i]);
    if (scale == 0) scale = 1e-300;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs(a[i] - b[i]);
        if (isnan(a[i]) != isnan(b[i])) return INFINITY;
        if (!isnan(d) && d / scale > worst) worst = d / scale;
    }
    return worst;
}

static int golden_file(const op_desc *op, const char *path, proof_result *r, int *files)
{
    char err[CONFORM_ERR_LEN];
    suite_t s;
    if (suite_load(path, &s, err, sizeof err)) {
        if (strstr(err, "unknown op")) return 0; /* vectors of an op family not built yet */
        snprintf(r->detail, sizeof r->detail, "%s", err);
        return -1;
    }
    int rc = 0, used = 0;
    for (int c = 0; c < s.n_cases && rc == 0; c++) {
        const case_t *cs = &s.cases[c];
        const cJSON *expect = cJSON_GetObjectItemCaseSensitive(cs->spec, "expect");
        if (strcmp(cs->op->name, op->name) || !expect) continue;
        problem_t p;
        double *out[CONFORM_MAX_TENSORS] = {0};
        if (case_build(cs, 0, &p, err, sizeof err) || op->validate(&p, err, sizeof err) ||
            proof_reference(op, &p, out)) {
            snprintf(r->detail, sizeof r->detail, "%s: %s", cs->id, err);
            problem_free(&p);
            rc = -1;
            break;
        }
        for (int o = 0; o < op->n_outputs; o++) {
            const cJSON *data = cJSON_GetObjectItemCaseSensitive(expect, op->outputs[o].name);
            if (!data) continue;
            int64_t n = shape_numel(&p.out_shape[o]);
            double *want = malloc((size_t)(n ? n : 1) * sizeof *want);
            if (!want || fill_from_json(want, n, data, cs->id, err, sizeof err)) {
                snprintf(r->detail, sizeof r->detail, "%s", want ? err : "out of memory");
                free(want);
                rc = -1;
                break;
            }
            double d = rel_diff(out[o], want, n);
            r->checks++;
            used = 1;
            if (d > r->worst) r->worst = d;
            if (!(d <= GOLDEN_LIMIT)) {
                snprintf(r->detail, sizeof r->detail, "%s: %s differs from the golden by %.3g of its scale", cs->id,
                         op->outputs[o].name, d);
                rc = 1;
            }
            free(want);
        }
        proof_free_outputs(out, op->n_outputs);
        problem_free(&p);
    }
    *files += used;
    suite_free(&s);
    return rc;
}

int proof_golden(const op_desc *op, proof_result *r)
{
    char pattern[1100];
    snprintf(pattern, sizeof pattern, "%s/*.json", golden_dir());
    glob_t g;
    r->limit = GOLDEN_LIMIT;
    if (glob(pattern, 0, NULL, &g)) {
        snprintf(r->detail, sizeof r->detail, "no golden files in %s", golden_dir());
        return -1;
    }
    int rc = 0, files = 0;
    for (size_t i = 0; i < g.gl_pathc && rc == 0; i++) rc = golden_file(op, g.gl_pathv[i], r, &files);
    globfree(&g);
    if (rc == 0 && r->checks == 0) {
        snprintf(r->detail, sizeof r->detail, "no golden vectors for %s in %s", op->name, golden_dir());
        return -1;
    }
    if (rc == 0)
        snprintf(r->detail, sizeof r->detail, "%d vectors from %d files, worst %.2g of the output scale", r->checks, files,
                 r->worst);
    return rc;
}

int verify_kind(const op_desc *op, const char *kind, int *ran)
{
    int bad = 0;
    *ran = 0;
    for (int i = 0; op->proofs && op->proofs[i].kind; i++) {
        if (strcmp(op->proofs[i].kind, kind)) continue;
        proof_result r;
        memset(&r, 0, sizeof r);
        (*ran)++;
        bad += op->proofs[i].run(op, &r) != 0;
    }
    return bad;
}

int verify_op(const op_desc *op, int quiet, cJSON *out)
{
    int violated = 0, ran[PROOF_KINDS] = {0}, failed[PROOF_KINDS] = {0};
    for (int i = 0; op->proofs && op->proofs[i].kind; i++) {
        const proof_desc *pf = &op->proofs[i];
        proof_result r;
        memset(&r, 0, sizeof r);
        int rc = pf->run(op, &r);
        const char *status = rc == 0 ? "pass" : rc > 0 ? "FAIL" : "ERROR";
        violated += rc != 0;
        for (int k = 0; k < PROOF_KINDS; k++)
            if (!strcmp(pf->kind, proof_kinds[k])) { ran[k]++; failed[k] += rc != 0; }
        if (!quiet) printf("%-24s %-17s %-5s %s\n%-24s %-17s       %s\n", op->name, pf->kind, status, pf->what, "", "", r.detail);
        if (out) {
            cJSON *j = cJSON_CreateObject();
            cJSON_AddStringToObject(j, "op", op->name);
            cJSON_AddStringToObject(j, "kind", pf->kind);
            cJSON_AddStringToObject(j, "what", pf->what);
            cJSON_AddStringToObject(j, "status", rc == 0 ? "passed" : rc > 0 ? "failed" : "error");
            cJSON_AddNumberToObject(j, "checks", r.checks);
            cJSON_AddNumberToObject(j, "worst", isfinite(r.worst) ? r.worst : 1e308);
            cJSON_AddNumberToObject(j, "limit", r.limit);
            cJSON_AddStringToObject(j, "detail", r.detail);
            cJSON_AddItemToArray(out, j);
        }
    }
    if (!quiet) {
        printf("%-24s", op->name);
        for (int k = 0; k < PROOF_KINDS; k++)
            printf(" %s: %s;", proof_kinds[k], !ran[k] ? "n/a" : failed[k] ? "FAILED" : "passed");
        printf("\n\n");
    }
    return violated;
}
