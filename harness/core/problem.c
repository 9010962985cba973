/* Attributes of a problem: parsing from the command line and from suites, defaults. */
#include "op.h"
#include "fill.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int op_attr_index(const op_desc *op, const char *name)
{
    for (int i = 0; i < op->n_attrs; i++)
        if (!strcmp(op->attrs[i].name, name)) return i;
    return -1;
}

int op_input_index(const op_desc *op, const char *name)
{
    for (int i = 0; i < op->n_inputs; i++)
        if (!strcmp(op->inputs[i].name, name)) return i;
    return -1;
}

int problem_init(problem_t *p, const op_desc *op)
{
    memset(p, 0, sizeof *p);
    p->op = op;
    for (int i = 0; i < op->n_attrs; i++) p->attr[i].kind = op->attrs[i].kind;
    return 0;
}

int problem_fill(problem_t *p, const cJSON *gen, gsl_rng *rng, char *err, size_t errlen)
{
    for (int i = 0; i < p->op->n_inputs; i++) {
        const char *name = p->op->inputs[i].name;
        const cJSON *spec = cJSON_GetObjectItemCaseSensitive(gen, name);
        const input_gen *g = &p->op->gen;
        if (g->input && !strcmp(g->input, name) ? g->fill(p, i, spec, rng, err, errlen)
                                                 : fill_values(&p->in[i], spec, rng, name, err, errlen))
            return -1;
    }
    return 0;
}

int problem_set_output(problem_t *p, int i, int rank, const int64_t *dims, char *err, size_t errlen)
{
    p->out_shape[i] = shape_make(rank, dims);
    if (shape_numel(&p->out_shape[i]) >= 0) return 0;
    char buf[160];
    snprintf(err, errlen, "%s: output %s %s: more than 2^34 elements (the harness's limit)", p->op->name,
             p->op->outputs[i].name, shape_str(&p->out_shape[i], buf, sizeof buf));
    return -1;
}

void problem_free(problem_t *p)
{
    for (int i = 0; i < CONFORM_MAX_TENSORS; i++) tensor_free(&p->in[i]);
}

static int parse_int(const char *s, int64_t *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    if (errno || end == s || *end) return -1;
    *v = x;
    return 0;
}

static const char *kind_name(attr_kind k)
{
    static const char *const names[] = {[ATTR_INT] = "an integer", [ATTR_FLOAT] = "a number",
                                        [ATTR_BOOL] = "true or false", [ATTR_STRING] = "a string",
                                        [ATTR_INT_LIST] = "a comma list of integers"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "?";
}

static int unknown_attr(const problem_t *p, const char *name, char *err, size_t errlen)
{
    size_t used = (size_t)snprintf(err, errlen, "%s: unknown attribute '%s' (attributes:", p->op->name, name);
    for (int i = 0; i < p->op->n_attrs && used < errlen; i++)
        used += (size_t)snprintf(err + used, errlen - used, " %s", p->op->attrs[i].name);
    if (used < errlen) snprintf(err + used, errlen - used, ")");
    return -1;
}

int problem_set_attr_text(problem_t *p, const char *name, const char *text, char *err, size_t errlen)
{
    int i = op_attr_index(p->op, name);
    if (i < 0) return unknown_attr(p, name, err, errlen);
    attr_value v;
    memset(&v, 0, sizeof v);
    v.kind = p->op->attrs[i].kind;
    int bad = 0;
    switch (v.kind) {
    case ATTR_INT: bad = parse_int(text, &v.i); break;
    case ATTR_FLOAT: {
        char *end;
        errno = 0;
        v.f = strtod(text, &end);
        bad = errno == ERANGE || end == text || *end;
        break;
    }
    case ATTR_BOOL:
        if (!strcmp(text, "true") || !strcmp(text, "1")) v.i = 1;
        else if (!strcmp(text, "false") || !strcmp(text, "0")) v.i = 0;
        else bad = 1;
        break;
    case ATTR_STRING:
        bad = strlen(text) >= sizeof v.s;
        if (!bad) strcpy(v.s, text);
        break;
    case ATTR_INT_LIST: {
        char buf[512];
        if (strlen(text) >= sizeof buf) { bad = 1; break; }
        strcpy(buf, text);
        char *save = NULL;
        for (char *tok = strtok_r(buf, ",", &save); tok && !bad; tok = strtok_r(NULL, ",", &save)) {
            /* a list of flags (output_mask: "2 bools" in the spec) takes true/false as 1/0 */
            if (v.n >= CONFORM_MAX_LIST) bad = 1;
            else if (!strcmp(tok, "true") || !strcmp(tok, "false")) v.list[v.n++] = tok[0] == 't';
            else bad = parse_int(tok, &v.list[v.n++]);
        }
        break;
    }
    }
    if (bad) {
        snprintf(err, errlen, "%s: attribute %s = '%s' is not %s", p->op->name, name, text, kind_name(v.kind));
        return -1;
    }
    p->attr[i] = v;
    p->attr_set[i] = 1;
    return 0;
}

int problem_set_attr_json(problem_t *p, const char *name, const cJSON *j, char *err, size_t errlen)
{
    int i = op_attr_index(p->op, name);
    if (i < 0) return unknown_attr(p, name, err, errlen);
    char text[512];
    attr_kind k = p->op->attrs[i].kind;
    if (cJSON_IsBool(j)) snprintf(text, sizeof text, "%s", cJSON_IsTrue(j) ? "true" : "false");
    else if (cJSON_IsNumber(j)) {
        double d = j->valuedouble;
        if (k == ATTR_INT || k == ATTR_BOOL || k == ATTR_INT_LIST) {
            if (d != floor(d) || fabs(d) > 9e15) {
                snprintf(err, errlen, "%s: attribute %s = %.17g is not %s", p->op->name, name, d, kind_name(k));
                return -1;
            }
            snprintf(text, sizeof text, "%lld", (long long)d);
        } else snprintf(text, sizeof text, "%.17g", d);
    } else if (cJSON_IsString(j)) snprintf(text, sizeof text, "%s", j->valuestring);
    else if (cJSON_IsArray(j)) {
        size_t used = 0;
        text[0] = '\0';
        const cJSON *e;
        cJSON_ArrayForEach(e, j) {
            if (cJSON_IsBool(e)) { /* flags, as output_mask's "2 bools" */
                if (used < sizeof text)
                    used += (size_t)snprintf(text + used, sizeof text - used, used ? ",%d" : "%d", cJSON_IsTrue(e) ? 1 : 0);
                continue;
            }
            if (!cJSON_IsNumber(e) || e->valuedouble != floor(e->valuedouble) || fabs(e->valuedouble) > 9e15) {
                snprintf(err, errlen, "%s: attribute %s: list entries must be integers or booleans", p->op->name, name);
                return -1;
            }
            if (used < sizeof text)
                used += (size_t)snprintf(text + used, sizeof text - used, used ? ",%lld" : "%lld",
                                         (long long)e->valuedouble);
        }
        if (k != ATTR_INT_LIST) {
            snprintf(err, errlen, "%s: attribute %s is %s, got a list", p->op->name, name, kind_name(k));
            return -1;
        }
    } else {
        snprintf(err, errlen, "%s: attribute %s has a JSON type it cannot take (expected %s)", p->op->name, name,
                 kind_name(k));
        return -1;
    }
    return problem_set_attr_text(p, name, text, err, errlen);
}

int problem_finish_attrs(problem_t *p, char *err, size_t errlen)
{
    for (int i = 0; i < p->op->n_attrs; i++) {
        if (p->attr_set[i]) continue;
        const attr_spec *a = &p->op->attrs[i];
        if (!a->def) {
            snprintf(err, errlen, "%s: attribute %s is required (%s)", p->op->name, a->name, a->doc);
            return -1;
        }
        if (problem_set_attr_text(p, a->name, a->def, err, errlen)) return -1;
        p->attr_set[i] = 2; /* from its default: validation may tell it from a given value */
    }
    return 0;
}

const attr_value *problem_attr(const problem_t *p, const char *name)
{
    int i = op_attr_index(p->op, name);
    return i < 0 ? NULL : &p->attr[i];
}

int64_t problem_int(const problem_t *p, const char *name)
{
    const attr_value *v = problem_attr(p, name);
    return v ? v->i : 0;
}

double problem_float(const problem_t *p, const char *name)
{
    const attr_value *v = problem_attr(p, name);
    return v ? v->f : 0.0;
}

const char *attr_text(const attr_value *v, char *buf, size_t len)
{
    switch (v->kind) {
    case ATTR_INT: snprintf(buf, len, "%lld", (long long)v->i); break;
    case ATTR_FLOAT: snprintf(buf, len, "%.17g", v->f); break;
    case ATTR_BOOL: snprintf(buf, len, "%s", v->i ? "true" : "false"); break;
    case ATTR_STRING: snprintf(buf, len, "%s", v->s); break;
    case ATTR_INT_LIST: {
        size_t used = 0;
        buf[0] = '\0';
        for (int i = 0; i < v->n && used < len; i++)
            used += (size_t)snprintf(buf + used, len - used, i ? ",%lld" : "%lld", (long long)v->list[i]);
        break;
    }
    }
    return buf;
}

static double physical_half(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && size > 0 ? 0.5 * (double)pages * (double)size : 4.0 * (1 << 30);
}

double conform_memory_budget = 0; /* 0: not set yet, half the physical memory */

double problem_bytes(const problem_t *p)
{
    double bytes = 0;
    for (int i = 0; i < p->op->n_inputs; i++) bytes += 12.0 * (double)shape_numel(&p->in[i].shape);
    /* reference, four bounds, the float result; with a range entry its lo, hi and mag too */
    const double per_out = p->op->range ? 68.0 : 44.0;
    for (int o = 0; o < p->op->n_outputs; o++) bytes += per_out * (double)shape_numel(&p->out_shape[o]);
    return bytes;
}

double memory_budget(void) { return conform_memory_budget > 0 ? conform_memory_budget : physical_half(); }

int problem_check_budget(const problem_t *p, char *err, size_t errlen)
{
    double budget = memory_budget();
    double need = problem_bytes(p);
    if (need <= budget) return 0;
    snprintf(err, errlen, "%s: the case needs %.0f MiB, over the memory budget of %.0f MiB (--max-memory MiB)",
             p->op->name, need / 1048576.0, budget / 1048576.0);
    return -1;
}

/* 2^28 sample evaluations: a few seconds of the double reference */
double conform_sample_budget = 268435456.0;

int problem_check_samples(const char *op, double samples, char *err, size_t errlen)
{
    if (!(samples > conform_sample_budget)) return 0;
    snprintf(err, errlen, "%s: the rois need %.3g sample evaluations in all, over the budget of %.3g (--max-samples); "
             "use a sampling_ratio > 0 or smaller rois", op, samples, conform_sample_budget);
    return -1;
}
