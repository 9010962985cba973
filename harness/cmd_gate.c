/* conform gate: the current report against a baseline. A regression is a case that passed and
 * no longer does, a case that disappeared, or an error metric (max ULP, max error in units of
 * the bound) that grew by more than GATE_GROWTH while above GATE_FLOOR of the bound. Verdicts
 * are deterministic for a seed, so no re-measurement is needed for accuracy metrics. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "report.h"

/* growth factor allowed for an error metric: an ISA or summation-order change moves errors by
 * small factors; a real bug moves them by orders of magnitude */
#define GATE_GROWTH 4.0
/* errors below this fraction of the bound are noise-level rounding and never a regression */
#define GATE_FLOOR 0.05

static double metric(const cJSON *c, const char *key)
{
    double worst = 0;
    const cJSON *o, *outs = cJSON_GetObjectItemCaseSensitive(c, "outputs");
    cJSON_ArrayForEach(o, outs) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
        if (cJSON_IsNumber(v) && v->valuedouble > worst) worst = v->valuedouble;
        if (cJSON_IsString(v)) worst = INFINITY;
    }
    return worst;
}

static const char *status(const cJSON *c)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(c, "status");
    return cJSON_IsString(s) ? s->valuestring : "?";
}

static const cJSON *find_case(const cJSON *cases, const char *id)
{
    const cJSON *c;
    cJSON_ArrayForEach(c, cases) {
        const cJSON *i = cJSON_GetObjectItemCaseSensitive(c, "id");
        if (cJSON_IsString(i) && !strcmp(i->valuestring, id)) return c;
    }
    return NULL;
}

static int check_report(const cJSON *r, const char *path)
{
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(r, "schema");
    if (!cJSON_IsString(schema) || strcmp(schema->valuestring, CONFORM_REPORT_SCHEMA) ||
        !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(r, "cases")))
        return usage_error("gate: %s is not a conform report (schema \"%s\")", path, CONFORM_REPORT_SCHEMA);
    return 0;
}

int cmd_gate(int argc, char **argv)
{
    const char *base_path = NULL, *cur_path = NULL;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--baseline") && i + 1 < argc) base_path = argv[++i];
        else if (!strcmp(argv[i], "--current") && i + 1 < argc) cur_path = argv[++i];
        else return usage_error("gate: unknown option '%s' (usage: gate --baseline FILE --current FILE)", argv[i]);
    }
    if (!base_path || !cur_path) return usage_error("gate: --baseline FILE and --current FILE are required");
    char err[CONFORM_ERR_LEN];
    cJSON *base = read_json_file(base_path, err, sizeof err);
    if (!base) return usage_error("gate: %s", err);
    cJSON *cur = read_json_file(cur_path, err, sizeof err);
    if (!cur) { cJSON_Delete(base); return usage_error("gate: %s", err); }
    int rc = check_report(base, base_path);
    if (!rc) rc = check_report(cur, cur_path);
    if (rc) { cJSON_Delete(base); cJSON_Delete(cur); return rc; }

    const cJSON *bc = cJSON_GetObjectItemCaseSensitive(base, "cases"), *cc = cJSON_GetObjectItemCaseSensitive(cur, "cases");
    int regressions = 0, compared = 0, added = 0;
    printf("%-60s %-10s %-10s %s\n", "case", "baseline", "current", "why");
    const cJSON *b;
    cJSON_ArrayForEach(b, bc) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(b, "id");
        if (!cJSON_IsString(id)) continue;
        const cJSON *c = find_case(cc, id->valuestring);
        compared++;
        char why[256] = "";
        if (!c) snprintf(why, sizeof why, "case disappeared");
        else if (!strcmp(status(b), "passed") && strcmp(status(c), "passed"))
            snprintf(why, sizeof why, "passed before, now %s", status(c));
        else {
            const char *keys[] = {"max_err_over_tol", "max_ulp"};
            for (int k = 0; k < 2 && !why[0]; k++) {
                double mb = metric(b, keys[k]), mc = metric(c, keys[k]);
                double floor_ = k == 0 ? GATE_FLOOR : 0.0;
                int grew = mc > GATE_GROWTH * mb && (k == 0 ? mc > floor_ : metric(c, keys[0]) > GATE_FLOOR);
                if (grew) snprintf(why, sizeof why, "%s grew %.3g -> %.3g (allowed x%.0f)", keys[k], mb, mc, GATE_GROWTH);
            }
        }
        if (why[0]) {
            regressions++;
            printf("%-60s %-10s %-10s %s\n", id->valuestring, status(b), c ? status(c) : "-", why);
        }
    }
    const cJSON *c;
    cJSON_ArrayForEach(c, cc) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(c, "id");
        if (cJSON_IsString(id) && !find_case(bc, id->valuestring)) added++;
    }
    printf("gate: %d baseline cases compared, %d new, %d regressions\n", compared, added, regressions);
    cJSON_Delete(base);
    cJSON_Delete(cur);
    return regressions ? EXIT_FAIL : EXIT_OK;
}
