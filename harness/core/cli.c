#include "cli.h"
#include "fill.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <omp.h>

#include "npy.h"

int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("conform: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return EXIT_USAGE;
}

int parse_int_arg(const char *opt, const char *v, long long lo, long long hi, long long *out)
{
    char *end;
    errno = 0;
    long long x = v ? strtoll(v, &end, 10) : 0;
    if (!v || errno || end == v || *end || x < lo || x > hi) {
        usage_error("%s takes an integer in [%lld, %lld], got '%s'", opt, lo, hi, v ? v : "");
        return -1;
    }
    *out = x;
    return 0;
}

int parse_isa_arg(const char *v, conform_exec *ex)
{
    if (!v || conform_isa_parse(v, &ex->isa)) {
        usage_error("--isa takes auto, scalar, avx2 or avx512, got '%s'", v ? v : "");
        return -1;
    }
    return 0;
}

int parse_threads_arg(const char *v, conform_exec *ex)
{
    long long t;
    if (parse_int_arg("--threads", v, 1, 1024, &t)) return -1;
    ex->threads = (int)t;
    return 0;
}

int resolve_isa(conform_exec *ex)
{
    if (ex->isa == CONFORM_ISA_AUTO) ex->isa = conform_isa_best();
    if (ex->threads <= 0) ex->threads = omp_get_max_threads();
    if (!conform_isa_available(ex->isa))
        return usage_error("--isa %s: this CPU does not have it (best here: %s)", conform_isa_name(ex->isa),
                           conform_isa_name(conform_isa_best()));
    return 0;
}

int problem_args_take(problem_args *a, int argc, char **argv, int *i)
{
    const char *opt = argv[*i];
    const char **slot = NULL;
    int *count = NULL, cap = 0;
    if (!strcmp(opt, "--attr")) { slot = a->attr; count = &a->n_attr; cap = 64; }
    else if (!strcmp(opt, "--input")) { slot = a->input; count = &a->n_input; cap = 16; }
    else if (!strcmp(opt, "--shape")) { slot = a->shape; count = &a->n_shape; cap = 16; }
    else if (!strcmp(opt, "--max-memory")) {
        long long mib;
        if (parse_int_arg("--max-memory", *i + 1 < argc ? argv[*i + 1] : NULL, 1, 1LL << 30, &mib)) return -1;
        conform_memory_budget = (double)mib * 1048576.0;
        (*i)++;
        return 1;
    } else if (!strcmp(opt, "--max-samples")) {
        long long n;
        if (parse_int_arg("--max-samples", *i + 1 < argc ? argv[*i + 1] : NULL, 1, 1LL << 50, &n)) return -1;
        conform_sample_budget = (double)n;
        (*i)++;
        return 1;
    } else if (!strcmp(opt, "--gen")) {
        if (*i + 1 >= argc) { usage_error("--gen takes a JSON object, got nothing"); return -1; }
        a->gen = argv[++(*i)];
        return 1;
    } else if (!strcmp(opt, "--seed")) {
        long long s;
        if (parse_int_arg("--seed", *i + 1 < argc ? argv[*i + 1] : NULL, 0, 4294967295LL, &s)) return -1;
        a->seed = (unsigned long)s;
        (*i)++;
        return 1;
    } else return 0;
    if (*i + 1 >= argc || !strchr(argv[*i + 1], '=')) {
        usage_error("%s takes NAME=VALUE, got '%s'", opt, *i + 1 < argc ? argv[*i + 1] : "");
        return -1;
    }
    if (*count >= cap) {
        usage_error("too many %s arguments", opt);
        return -1;
    }
    slot[(*count)++] = argv[++(*i)];
    return 1;
}

static int split(const char *arg, char *name, size_t nlen, const char **value)
{
    const char *eq = strchr(arg, '=');
    size_t n = (size_t)(eq - arg);
    if (n == 0 || n >= nlen) return -1;
    memcpy(name, arg, n);
    name[n] = '\0';
    *value = eq + 1;
    return 0;
}

/* the value of the first --attr name=... before the i-th */
static const char *first_value(const problem_args *a, int i, const char *name)
{
    size_t n = strlen(name);
    for (int j = 0; j < i; j++)
        if (!strncmp(a->attr[j], name, n) && a->attr[j][n] == '=') return a->attr[j] + n + 1;
    return "?";
}

int problem_from_args(const op_desc *op, const problem_args *a, problem_t *p)
{
    char err[CONFORM_ERR_LEN], name[128];
    const char *value;
    problem_init(p, op);
    for (int i = 0; i < a->n_attr; i++) {
        if (split(a->attr[i], name, sizeof name, &value)) return usage_error("--attr %s: expected NAME=VALUE", a->attr[i]);
        /* as an input given twice: the second value must not silently replace the first */
        int k = op_attr_index(op, name);
        if (k >= 0 && p->attr_set[k] == 1)
            return usage_error("%s: attribute %s given twice (--attr %s, after %s=%s)", op->name, name, a->attr[i], name,
                               first_value(a, i, name));
        if (problem_set_attr_text(p, name, value, err, sizeof err)) return usage_error("%s", err);
    }
    if (problem_finish_attrs(p, err, sizeof err)) return usage_error("%s", err);
    int given[CONFORM_MAX_TENSORS] = {0};
    for (int i = 0; i < a->n_input; i++) {
        if (split(a->input[i], name, sizeof name, &value)) return usage_error("--input %s: expected NAME=FILE.npy", a->input[i]);
        int k = op_input_index(op, name);
        if (k < 0) return usage_error("%s: unknown input '%s'", op->name, name);
        if (given[k]) return usage_error("%s: input %s given twice", op->name, name);
        tensor_free(&p->in[k]);
        if (npy_read_ex(value, &p->in[k], a->wide16, err, sizeof err))
            return usage_error("--input %s: %s", a->input[i], npy_strip_path(err, value));
        given[k] = 1;
    }
    for (int i = 0; i < a->n_shape; i++) {
        if (split(a->shape[i], name, sizeof name, &value)) return usage_error("--shape %s: expected NAME=d0,d1,...", a->shape[i]);
        int k = op_input_index(op, name);
        if (k < 0) return usage_error("%s: unknown input '%s'", op->name, name);
        if (given[k]) return usage_error("%s: input %s given twice", op->name, name);
        shape_t s = {0, {0}};
        char buf[256], *rest = buf;
        snprintf(buf, sizeof buf, "%s", value);
        /* every dim said (strtok would read "1,,8" as 1,8): an empty one is refused as one */
        for (char *t = strsep(&rest, ","); t; t = strsep(&rest, ",")) {
            long long d;
            if (s.rank >= CONFORM_MAX_RANK)
                return usage_error("--shape %s: at most %d dims", a->shape[i], CONFORM_MAX_RANK);
            if (parse_int_arg("--shape", t, 0, CONFORM_MAX_NUMEL, &d)) return EXIT_USAGE;
            s.dims[s.rank++] = d;
        }
        if (shape_numel(&s) < 0) return usage_error("--shape %s: too large", a->shape[i]);
        p->in[k].shape = s;
        given[k] = 2;
    }
    for (int k = 0; k < op->n_inputs; k++)
        if (!given[k]) return usage_error("%s: input %s is missing (--input %s=FILE.npy or --shape %s=dims)", op->name,
                                          op->inputs[k].name, op->inputs[k].name, op->inputs[k].name);
    /* shapes are known: generate what was not read from a file */
    if (op->validate(p, err, sizeof err)) return usage_error("%s", err);
    if (problem_check_budget(p, err, sizeof err)) return usage_error("%s", err);
    gsl_rng *rng = conform_rng(a->seed);
    tensor_t keep[CONFORM_MAX_TENSORS];
    for (int k = 0; k < op->n_inputs; k++) {
        keep[k] = p->in[k];
        if (given[k] == 2) tensor_alloc(&p->in[k], &p->in[k].shape);
    }
    /* the op's generator fills every input; inputs read from files are put back afterwards */
    tensor_t scratch[CONFORM_MAX_TENSORS];
    for (int k = 0; k < op->n_inputs; k++) {
        scratch[k] = p->in[k];
        if (given[k] == 1) { tensor_alloc(&scratch[k], &keep[k].shape); p->in[k] = scratch[k]; }
    }
    cJSON *gen = a->gen ? cJSON_Parse(a->gen) : NULL;
    if (a->gen && !cJSON_IsObject(gen)) {
        cJSON_Delete(gen);
        gsl_rng_free(rng);
        return usage_error("--gen: not a JSON object: %s", a->gen);
    }
    int rc = problem_fill(p, gen, rng, err, sizeof err);
    cJSON_Delete(gen);
    gsl_rng_free(rng);
    for (int k = 0; k < op->n_inputs; k++)
        if (given[k] == 1) { tensor_free(&p->in[k]); p->in[k] = keep[k]; }
    if (rc) return usage_error("%s", err);
    if (op->validate(p, err, sizeof err)) return usage_error("%s", err);
    return 0;
}
