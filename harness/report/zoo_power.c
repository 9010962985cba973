/* The committed power table of the zoo (tools/zoo.py --write-docs), attached to a run's report. */
#include <stdio.h>
#include <string.h>

#include "datadir.h"
#include "report.h"
#include "zoo_power.h"

static double number(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* the power table itself: per bug its op, whether the suite caught it, by how many cases and the
 * first of them (the descriptions stay in docs/zoo.md) */
static cJSON *bug_rows(const cJSON *bugs)
{
    static const char *const keys[] = {"id", "op", "caught", "cases_failed", "first_case"};
    cJSON *rows = cJSON_CreateArray();
    const cJSON *b;
    cJSON_ArrayForEach(b, bugs) {
        cJSON *r = cJSON_CreateObject();
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            const cJSON *v = cJSON_GetObjectItemCaseSensitive(b, keys[k]);
            if (v) cJSON_AddItemToObject(r, keys[k], cJSON_Duplicate(v, 1));
        }
        cJSON_AddItemToArray(rows, r);
    }
    return rows;
}

/* the generated zoo's counts (tools/zoo_mutants.py: "mutants" of a measurement, absent in
 * tables written before it): a copy of its per-op and total counts, and its clause of the
 * sentence; NULL when absent or without the counts */
static const char *const MUTANT_KEYS[] = {"generated", "killed", "equivalent", "within_rounding", "unexplained",
                                          "did_not_compile"};
enum { N_MUTANT_KEYS = sizeof MUTANT_KEYS / sizeof MUTANT_KEYS[0] };

static cJSON *mutant_counts(const cJSON *m, char *clause, size_t len)
{
    const cJSON *total = cJSON_GetObjectItemCaseSensitive(m, "total");
    double n[N_MUTANT_KEYS];
    for (int k = 0; k < N_MUTANT_KEYS; k++)
        if ((n[k] = number(total, MUTANT_KEYS[k])) < 0) return NULL;
    snprintf(clause, len,
             "; of %.0f generated mutants of the zoo's kernels it kills %.0f, %.0f survive as equivalent, %.0f within "
             "rounding, %.0f unexplained, %.0f do not compile",
             n[0], n[1], n[2], n[3], n[4], n[5]);
    cJSON *out = cJSON_CreateObject();
    cJSON_AddItemToObject(out, "total", cJSON_Duplicate(total, 1));
    const cJSON *per_op = cJSON_GetObjectItemCaseSensitive(m, "per_op");
    if (cJSON_IsObject(per_op)) cJSON_AddItemToObject(out, "per_op", cJSON_Duplicate(per_op, 1));
    return out;
}

/* the entry of one suite: the counts, whether they were measured on this version of the suite
 * (same number of cases), and the sentence the reports print */
static cJSON *power_entry(const cJSON *m, const suite_t *s, const char *power_path)
{
    double caught = number(m, "caught"), total = number(m, "total"), measured = number(m, "cases");
    if (caught < 0 || total < 0 || measured < 0) return NULL;
    int hidden = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(m, "hidden"));
    int current = (int)measured == s->n_cases;
    char sentence[1024], when[200], mutants_clause[320] = "";
    cJSON *mutants = mutant_counts(cJSON_GetObjectItemCaseSensitive(m, "mutants"), mutants_clause, sizeof mutants_clause);
    if (current) snprintf(when, sizeof when, "measured on its %d cases", s->n_cases);
    else
        snprintf(when, sizeof when, "measured on an earlier version of it with %.0f cases, it has %d now: make zoo-docs",
                 measured, s->n_cases);
    snprintf(sentence, sizeof sentence,
             "the %s suite catches %.0f of %.0f known bug classes of the zoo (%d hidden by an ambiguity term; %s%s; "
             "docs/zoo.md)", s->name, caught, total, hidden, when, mutants_clause);
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "suite", s->name);
    cJSON_AddNumberToObject(e, "caught", caught);
    cJSON_AddNumberToObject(e, "total", total);
    cJSON_AddItemToObject(e, "hidden", cJSON_Duplicate(cJSON_GetObjectItemCaseSensitive(m, "hidden"), 1));
    cJSON_AddNumberToObject(e, "measured_cases", measured);
    cJSON_AddNumberToObject(e, "suite_cases", s->n_cases);
    cJSON_AddBoolToObject(e, "current", current);
    cJSON_AddStringToObject(e, "source", power_path);
    cJSON_AddStringToObject(e, "summary", sentence);
    cJSON_AddItemToObject(e, "bugs", bug_rows(cJSON_GetObjectItemCaseSensitive(m, "bugs")));
    if (mutants) cJSON_AddItemToObject(e, "mutants", mutants);
    return e;
}

static const cJSON *measurement_of(const cJSON *root, const char *suite)
{
    const cJSON *m;
    if (cJSON_IsObject(root)) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(root, "suite");
        return cJSON_IsString(name) && !strcmp(name->valuestring, suite) ? root : NULL;
    }
    cJSON_ArrayForEach(m, root) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(m, "suite");
        if (cJSON_IsString(name) && !strcmp(name->valuestring, suite)) return m;
    }
    return NULL;
}

void zoo_power_attach(cJSON *report, const suite_t *suites, int n_suites, const char *power_path)
{
    char err[512];
    char where[4096];
    cJSON *root = read_json_file(conform_suite_path(power_path, where, sizeof where), err, sizeof err);
    if (!root) return; /* no measurement here (e.g. run outside the source tree): nothing to say */
    cJSON *list = cJSON_CreateArray();
    for (int i = 0; i < n_suites; i++) {
        const cJSON *m = measurement_of(root, suites[i].name);
        cJSON *e = m ? power_entry(m, &suites[i], power_path) : NULL;
        if (e) cJSON_AddItemToArray(list, e);
    }
    cJSON_Delete(root);
    if (cJSON_GetArraySize(list)) cJSON_AddItemToObject(report, "suite_power", list);
    else cJSON_Delete(list);
}
