/* The hunt's helpers: attributes of a case object, inputs written out as exact data, the
 * identity of a case, found suites written and combined. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fill.h"
#include "hunt_core.h"
#include "report.h"

static cJSON *attrs_of(cJSON *c)
{
    cJSON *a = cJSON_GetObjectItemCaseSensitive(c, "attrs");
    return a ? a : cJSON_AddObjectToObject(c, "attrs");
}

int64_t hunt_attr_int(const cJSON *c, const char *name, int idx, int64_t def)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(c, "attrs"), name);
    if (!v) return def;
    if (idx < 0) return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : cJSON_IsTrue(v) ? 1 : def;
    if (cJSON_IsArray(v)) {
        const cJSON *e = cJSON_GetArrayItem(v, idx);
        return cJSON_IsNumber(e) ? (int64_t)e->valuedouble : def;
    }
    if (!cJSON_IsString(v)) return def;
    const char *s = v->valuestring; /* "1,2,3,4", as the command line takes a list */
    for (int i = 0; i < idx && s; i++) s = strchr(s, ',') ? strchr(s, ',') + 1 : NULL;
    return s ? strtoll(s, NULL, 10) : def;
}

static cJSON *int_array(int n, const int64_t *v)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber((double)v[i]));
    return a;
}

void hunt_set_shape(cJSON *c, const char *input, int n, const int64_t *dims)
{
    cJSON *s = cJSON_GetObjectItemCaseSensitive(c, "shapes");
    if (!s) s = cJSON_AddObjectToObject(c, "shapes");
    cJSON_DeleteItemFromObjectCaseSensitive(s, input);
    cJSON_AddItemToObject(s, input, int_array(n, dims));
}

void hunt_set_attr_int(cJSON *c, const char *name, int64_t v)
{
    cJSON *a = attrs_of(c);
    cJSON_DeleteItemFromObjectCaseSensitive(a, name);
    cJSON_AddNumberToObject(a, name, (double)v);
}

void hunt_set_attr_list(cJSON *c, const char *name, int n, const int64_t *v)
{
    cJSON *a = attrs_of(c);
    cJSON_DeleteItemFromObjectCaseSensitive(a, name);
    cJSON_AddItemToObject(a, name, int_array(n, v));
}

cJSON *hunt_data_json(const double *v, int64_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (int64_t i = 0; i < n; i++)
        cJSON_AddItemToArray(a, isnan(v[i]) ? cJSON_CreateString("nan")
                                : isinf(v[i]) ? cJSON_CreateString(v[i] > 0 ? "inf" : "-inf")
                                              : cJSON_CreateNumber(v[i]));
    return a;
}

double *hunt_data_read(const cJSON *data, int64_t *n)
{
    if (!cJSON_IsArray(data)) return NULL;
    *n = cJSON_GetArraySize(data);
    double *v = malloc((size_t)(*n ? *n : 1) * sizeof *v);
    char err[CONFORM_ERR_LEN];
    if (v && fill_from_json(v, *n, data, "data", err, sizeof err)) {
        free(v);
        return NULL;
    }
    return v;
}

cJSON *hunt_materialize(const op_desc *op, const cJSON *spec, uint64_t seed, char *err, size_t errlen)
{
    case_t c = {.op = op, .spec = spec, .suite_path = "hunt"};
    snprintf(c.id, sizeof c.id, "hunt/materialize");
    problem_t p;
    if (case_build(&c, seed, &p, err, errlen)) {
        problem_free(&p);
        return NULL;
    }
    cJSON *out = cJSON_Duplicate(spec, 1);
    cJSON_DeleteItemFromObjectCaseSensitive(out, "gen");
    cJSON *gen = cJSON_AddObjectToObject(out, "gen");
    for (int i = 0; i < op->n_inputs; i++) {
        cJSON *g = cJSON_AddObjectToObject(gen, op->inputs[i].name);
        cJSON_AddItemToObject(g, "data", hunt_data_json(p.in[i].data, tensor_numel(&p.in[i])));
    }
    problem_free(&p);
    return out;
}

uint64_t hunt_hash(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    return h;
}

static int by_name(const void *a, const void *b)
{
    return strcmp((*(cJSON *const *)a)->string, (*(cJSON *const *)b)->string);
}

/* obj's members sorted by name, recursively: two cases equal but for the order of keys are one */
static void sort_keys(cJSON *obj)
{
    cJSON *e;
    cJSON_ArrayForEach(e, obj) sort_keys(e);
    int n = cJSON_GetArraySize(obj);
    if (!cJSON_IsObject(obj) || n < 2) return;
    cJSON **m = malloc((size_t)n * sizeof *m);
    if (!m) return;
    for (int i = 0; i < n; i++) m[i] = cJSON_DetachItemViaPointer(obj, obj->child);
    qsort(m, (size_t)n, sizeof *m, by_name);
    for (int i = 0; i < n; i++) cJSON_AddItemToArray(obj, m[i]); /* keeps each member's name */
    free(m);
}

char *hunt_key(const cJSON *c)
{
    cJSON *k = cJSON_Duplicate(c, 1);
    cJSON_DeleteItemFromObjectCaseSensitive(k, "name");
    cJSON_DeleteItemFromObjectCaseSensitive(k, "found");
    sort_keys(k);
    char *s = cJSON_PrintUnformatted(k);
    cJSON_Delete(k);
    return s;
}

int hunt_add_found(cJSON *found, cJSON *c)
{
    char *key = hunt_key(c);
    const cJSON *e;
    int dup = 0;
    cJSON_ArrayForEach(e, found) {
        char *k2 = hunt_key(e);
        dup |= !strcmp(key, k2);
        free(k2);
    }
    if (!dup) {
        char name[96];
        const cJSON *op = cJSON_GetObjectItemCaseSensitive(c, "op");
        snprintf(name, sizeof name, "%s_%016llx", cJSON_IsString(op) ? op->valuestring : "case",
                 (unsigned long long)hunt_hash(key));
        cJSON_DeleteItemFromObjectCaseSensitive(c, "name");
        cJSON_AddStringToObject(c, "name", name);
        cJSON_AddItemToArray(found, c);
    }
    free(key);
    return !dup;
}

int hunt_write_found(const cJSON *found, const cJSON *waived, uint64_t seed, const char *path)
{
    cJSON *s = cJSON_CreateObject();
    cJSON_AddStringToObject(s, "suite", "hunt");
    cJSON_AddNumberToObject(s, "seed", (double)seed);
    cJSON_AddItemToObject(s, "cases", cJSON_Duplicate(found, 1));
    /* beside the suite's cases, so that run replays only the findings: each with its "waiver" */
    if (cJSON_GetArraySize(waived)) cJSON_AddItemToObject(s, "waived", cJSON_Duplicate(waived, 1));
    char err[CONFORM_ERR_LEN];
    int rc = write_json_atomic(path, s, err, sizeof err);
    cJSON_Delete(s);
    if (rc) fprintf(stderr, "conform: hunt: %s\n", err);
    return rc;
}

int hunt_combine(const char *const *paths, int n, const char *out)
{
    cJSON *found = cJSON_CreateArray();
    int total = 0, rc = EXIT_OK;
    for (int i = 0; i < n && rc == EXIT_OK; i++) {
        char err[CONFORM_ERR_LEN];
        cJSON *root = read_json_file(paths[i], err, sizeof err), *c;
        const cJSON *cases = cJSON_GetObjectItemCaseSensitive(root, "cases");
        if (!root || !cJSON_IsArray(cases)) {
            rc = usage_error("hunt --combine: %s: %s", paths[i], root ? "expected a suite {\"cases\": [...]}" : err);
            cJSON_Delete(root);
            break;
        }
        cJSON_ArrayForEach(c, cases) {
            total++;
            cJSON *d = cJSON_Duplicate(c, 1);
            if (!hunt_add_found(found, d)) cJSON_Delete(d);
        }
        cJSON_Delete(root);
    }
    if (rc == EXIT_OK && hunt_write_found(found, NULL, 1, out)) rc = EXIT_USAGE;
    if (rc == EXIT_OK)
        fprintf(stderr, "hunt: %d cases from %d files, %d distinct, written to %s\n", total, n, cJSON_GetArraySize(found), out);
    cJSON_Delete(found);
    return rc;
}
