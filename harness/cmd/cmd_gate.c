/* conform gate: the current report against a baseline. A regression is a case that passed and
 * no longer does, a case that disappeared, or an error metric that grew by more than
 * GATE_GROWTH while above GATE_FLOOR of the bound (max error in units of the bound; max ULP when
 * the error against the bound also at least doubled). Verdicts are deterministic for a seed, so
 * no re-measurement is needed for accuracy metrics. A case no longer judged (not_implemented) after
 * a pass is a regression too: see lost_pass. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "help.h"
#include "report.h"
#include "status.h"

/* growth factor allowed for an error metric: an ISA or summation-order change moves errors by
 * small factors; a real bug moves them by orders of magnitude */
#define GATE_GROWTH 4.0
/* errors below this fraction of the bound are noise-level rounding and never a regression */
#define GATE_FLOOR 0.05
/* bench medians on this 2-core VM move by up to about 30% from run to run (measured): a time
   regression is a median 1.5x the baseline, confirmed by two re-measurements */
#define GATE_TIME_GROWTH 1.5
#define GATE_REMEASURE 2

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

/* Why a case that passed no longer does. Every other status is a regression, also those that do not
 * fail a run: waived fails under a waiver, and not_implemented is no longer judged: a gate must not
 * let coverage shrink in silence (an implementation that stopped running an op, a runner that lost
 * a library); --update accepts it when it is meant. */
static void lost_pass(const char *now, char *why, size_t n)
{
    const case_status s = status_parse(now);
    snprintf(why, n, "passed before, now %s%s", now,
             s == CASE_WAIVED ? ": it fails, under a waiver"
             : s == CASE_NOT_IMPLEMENTED || s == CASE_NOT_APPLICABLE ? ": no longer judged (coverage lost; --update accepts it)"
                                                                 : "");
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

static const char *schema_of(const cJSON *r)
{
    const cJSON *schema = cJSON_GetObjectItemCaseSensitive(r, "schema");
    if (!cJSON_IsString(schema)) return "";
    if (!strcmp(schema->valuestring, CONFORM_REPORT_SCHEMA) && cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(r, "cases")))
        return CONFORM_REPORT_SCHEMA;
    if (!strcmp(schema->valuestring, "conform-bench") && cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(r, "results")))
        return "conform-bench";
    return "";
}

static const char *field(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static double number(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* Runs a bench command again; the median of the line for (op, impl), or -1. */
static double remeasure(const cJSON *res)
{
    FILE *p = popen(field(res, "command"), "r");
    if (!p) return -1;
    char line[4096];
    double best = -1;
    while (fgets(line, sizeof line, p)) {
        cJSON *j = cJSON_Parse(line);
        if (j && !strcmp(field(j, "op"), field(res, "op")) && !strcmp(field(j, "impl"), field(res, "impl")))
            best = number(j, "median_s");
        cJSON_Delete(j);
    }
    pclose(p);
    return best;
}

static int gate_bench(const cJSON *base, const cJSON *cur)
{
    int regressions = 0, compared = 0;
    printf("%-28s %-10s %-7s %8s %12s %12s  %s\n", "op", "impl", "isa", "threads", "baseline ms", "current ms", "verdict");
    const cJSON *b, *c;
    cJSON_ArrayForEach(b, cJSON_GetObjectItemCaseSensitive(base, "results")) {
        const cJSON *match = NULL;
        cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(cur, "results"))
            if (!strcmp(field(b, "op"), field(c, "op")) && !strcmp(field(b, "impl"), field(c, "impl")) &&
                !strcmp(field(b, "isa"), field(c, "isa")) && number(b, "threads") == number(c, "threads"))
                match = c;
        compared++;
        const char *verdict = "ok";
        double mb = number(b, "median_s"), mc = match ? number(match, "median_s") : 0;
        if (!match) verdict = "REGRESSION: missing";
        else if (mc > GATE_TIME_GROWTH * mb) {
            /* slower: measured again before it is called a regression */
            for (int k = 0; k < GATE_REMEASURE && mc > GATE_TIME_GROWTH * mb; k++) {
                double again = remeasure(match);
                if (again > 0 && again < mc) mc = again;
            }
            verdict = mc > GATE_TIME_GROWTH * mb ? "REGRESSION: slower (confirmed)" : "ok (noise: faster when re-measured)";
        }
        regressions += !strncmp(verdict, "REGRESSION", 10);
        printf("%-28s %-10s %-7s %8.0f %12.3f %12.3f  %s\n", field(b, "op"), field(b, "impl"), field(b, "isa"),
               number(b, "threads"), mb * 1e3, mc * 1e3, verdict);
    }
    printf("gate: %d bench results compared, %d regressions (allowed growth x%.1f, %d re-measurements)\n", compared,
           regressions, GATE_TIME_GROWTH, GATE_REMEASURE);
    return regressions;
}

/* --update: the deliberate step that makes the current report the new baseline */
static int finish(int update, const char *base_path, const cJSON *cur, int regressions)
{
    if (!update) return regressions ? EXIT_FAIL : EXIT_OK;
    char err[CONFORM_ERR_LEN];
    if (write_json_atomic(base_path, cur, err, sizeof err)) return usage_error("gate: %s", err);
    printf("gate: baseline %s updated from the current report (%d regressions accepted)\n", base_path, regressions);
    return EXIT_OK;
}

/* Why a case's error grew past the gate, or why stays "". When the output's absolute error did not
 * grow, or elements the baseline excused as ambiguous are judged now, the growth of the error
 * against its bound came from the bound (a conform whose tolerance model is tighter), not from the
 * implementation: it still fails (the margin did shrink), and the line says which, so that
 * --update is taken knowingly. */
static void metric_regressed(const cJSON *b, const cJSON *c, char *why, size_t n)
{
    const char *keys[] = {"max_err_over_tol", "max_ulp"};
    const double rb = metric(b, keys[0]), rc = metric(c, keys[0]);
    for (int k = 0; k < 2 && !why[0]; k++) {
        const double mb = metric(b, keys[k]), mc = metric(c, keys[k]);
        /* ULPs (of each element's scale) still move with any change of summation order: ULP
           growth counts only with a real growth of the error against its bound */
        const int grew = k == 0 ? mc > GATE_GROWTH * mb && mc > GATE_FLOOR
                                : mc > GATE_GROWTH * mb && rc > 2.0 * rb && rc > GATE_FLOOR;
        if (grew) snprintf(why, n, "%s grew %.3g -> %.3g (allowed x%.0f)", keys[k], mb, mc, GATE_GROWTH);
    }
    if (!why[0]) return;
    const double ab = metric(b, "max_abs_err"), ac = metric(c, "max_abs_err");
    const double nb = metric(b, "n_ambiguous"), nc = metric(c, "n_ambiguous");
    const size_t used = strlen(why);
    if (ac <= ab)
        snprintf(why + used, n - used, "; max abs error %.3g -> %.3g: the bound tightened, not the output", ab, ac);
    else if (nc < nb)
        snprintf(why + used, n - used, "; ambiguous elements %.0f -> %.0f: judged now, excused before", nb, nc);
}

/* No baseline yet: --update makes the current report (or bench file) the first one; without it,
   the message says how */
static int first_baseline(int update, const char *base_path, const char *cur_path)
{
    if (!update)
        return usage_error("gate: no baseline at %s (the first one: conform gate --baseline %s --current %s --update)",
                           base_path, base_path, cur_path);
    char err[CONFORM_ERR_LEN];
    cJSON *cur = read_json_file(cur_path, err, sizeof err);
    if (!cur) return usage_error("gate: %s", err);
    const char *sc = schema_of(cur);
    int rc = EXIT_OK;
    if (strcmp(sc, CONFORM_REPORT_SCHEMA) && strcmp(sc, "conform-bench"))
        rc = usage_error("gate: %s is not a conform report or bench file", cur_path);
    else if (write_json_atomic(base_path, cur, err, sizeof err)) rc = usage_error("gate: %s", err);
    else printf("gate: no baseline at %s: created from %s (%d cases)\n", base_path, cur_path,
                cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(cur, "cases")));
    cJSON_Delete(cur);
    return rc;
}

int cmd_gate(int argc, char **argv)
{
    const char *base_path = NULL, *cur_path = NULL;
    int update = 0;
    if (cli_once("gate", argc, argv)) return EXIT_USAGE;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--baseline") && i + 1 < argc) base_path = argv[++i];
        else if (!strcmp(argv[i], "--current") && i + 1 < argc) cur_path = argv[++i];
        else if (!strcmp(argv[i], "--update")) update = 1;
        else return cli_unknown_option("gate", argv[i], i + 1 < argc ? argv[i + 1] : NULL);
    }
    if (!base_path || !cur_path) return usage_error("gate: --baseline FILE and --current FILE are required");
    char err[CONFORM_ERR_LEN];
    if (access(base_path, F_OK) && errno == ENOENT) return first_baseline(update, base_path, cur_path);
    cJSON *base = read_json_file(base_path, err, sizeof err);
    if (!base) return usage_error("gate: %s", err);
    cJSON *cur = read_json_file(cur_path, err, sizeof err);
    if (!cur) { cJSON_Delete(base); return usage_error("gate: %s", err); }
    const char *sb = schema_of(base), *sc = schema_of(cur);
    if (!*sb || strcmp(sb, sc)) {
        cJSON_Delete(base);
        cJSON_Delete(cur);
        return usage_error("gate: %s and %s must both be conform reports or both conform bench files", base_path, cur_path);
    }
    if (!strcmp(sb, "conform-bench")) {
        int reg = gate_bench(base, cur);
        int rc = finish(update, base_path, cur, reg);
        cJSON_Delete(base);
        cJSON_Delete(cur);
        return rc;
    }

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
            lost_pass(status(c), why, sizeof why);
        else
            metric_regressed(b, c, why, sizeof why);
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
    int rc = finish(update, base_path, cur, regressions);
    cJSON_Delete(base);
    cJSON_Delete(cur);
    return rc;
}
