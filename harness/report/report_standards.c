/* The named standards in a report: per-op counts, the gate (--gate-on), and their Markdown and
 * HTML sections. Everything is read back from the cases' "standards" objects, so a merged report
 * gets the same numbers as one run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "standards.h"
#include "report_buf.h"
#include "status.h"

static const cJSON *item(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }
static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = item(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* 1 passed, 0 failed, -1 not judged (no computed output, or the standard not defined for the dtype) */
static int case_passes(const cJSON *c, const char *name)
{
    int judged = 0, ok = 1;
    const cJSON *o;
    cJSON_ArrayForEach(o, item(c, "outputs")) {
        const cJSON *s = item(item(o, "standards"), name);
        if (!s || !cJSON_IsTrue(item(s, "defined"))) continue;
        judged = 1;
        ok &= cJSON_IsTrue(item(s, "passed"));
    }
    return judged ? ok : -1;
}

/* the lowest commercial level over a case's outputs, or NULL */
static const char *case_level(const cJSON *c)
{
    static const char *const order[] = {"none", "L0", "L1", "L2"};
    int worst = 4;
    const cJSON *o;
    cJSON_ArrayForEach(o, item(c, "outputs")) {
        const char *l = str(item(item(o, "standards"), "commercial-ratio"), "level");
        for (int k = 0; k < 4; k++) if (!strcmp(l, order[k]) && k < worst) worst = k;
    }
    return worst < 4 ? order[worst] : NULL;
}

void report_case_standards_failed(const cJSON *c, char *buf, size_t len)
{
    buf[0] = 0;
    int judged = 0;
    for (int k = 0; k < N_STANDARDS; k++) {
        int p = case_passes(c, conform_standards[k].name);
        judged |= p >= 0;
        if (p == 0) snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? ", " : "", conform_standards[k].name);
    }
    if (!buf[0]) snprintf(buf, len, "%s", judged ? "none" : "not judged");
}

int report_gated(const cJSON *report) { return cJSON_IsArray(item(report, "gated_on")); }

/* Gating replaces only the comparison against the derived bound: a crash, an error, a timeout, a
 * missing output, a write outside an output or a reference off its expected values still fails. */
static const char *gate_status(const cJSON *c, const cJSON *names)
{
    case_status st = status_parse(str(c, "status"));
    if (st != CASE_PASSED && st != CASE_FAILED && st != CASE_WAIVED) return status_name(st);
    const char *derived = st == CASE_WAIVED ? str(c, "waived_status") : status_name(st);
    int judged = 0, failed = 0;
    const cJSON *o, *n;
    cJSON_ArrayForEach(o, item(c, "outputs"))
        if (cJSON_IsFalse(item(o, "guard_intact")) || cJSON_IsFalse(item(item(o, "expected_values"), "reference_matches"))) failed = 1;
    cJSON_ArrayForEach(n, names) {
        int p = case_passes(c, n->valuestring);
        judged |= p >= 0;
        failed |= p == 0;
    }
    const char *verdict = judged || failed ? (failed ? "failed" : "passed") : derived;
    return st == CASE_WAIVED && !strcmp(verdict, "failed") ? "waived" : verdict;
}

void report_apply_gate(cJSON *report, int mask)
{
    if (!mask) return;
    cJSON *names = cJSON_CreateArray();
    for (int s = 0; s < N_STANDARDS; s++)
        if (mask & (1 << s)) cJSON_AddItemToArray(names, cJSON_CreateString(conform_standards[s].name));
    cJSON_DeleteItemFromObject(report, "gated_on");
    cJSON_AddItemToObject(report, "gated_on", names);
    cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(report, "cases")) {
        cJSON_DeleteItemFromObject(c, "gate_status");
        cJSON_DeleteItemFromObject(c, "gate_message");
        cJSON_AddStringToObject(c, "gate_status", gate_status(c, names));
        char failing[256] = "";
        const cJSON *n;
        cJSON_ArrayForEach(n, names)
            if (case_passes(c, n->valuestring) == 0)
                snprintf(failing + strlen(failing), sizeof failing - strlen(failing), "%s%s", failing[0] ? ", " : "", n->valuestring);
        if (failing[0]) {
            char m[400];
            snprintf(m, sizeof m, "fails the gated standard%s %s (docs/standards.md)", strchr(failing, ',') ? "s" : "", failing);
            cJSON_AddStringToObject(c, "gate_message", m);
        }
    }
}

static void count(cJSON *o, const char *key, double add)
{
    cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!v) cJSON_AddNumberToObject(o, key, add);
    else cJSON_SetNumberValue(v, v->valuedouble + add);
}

static cJSON *standards_counts(cJSON *parent)
{
    cJSON *s = cJSON_GetObjectItemCaseSensitive(parent, "standards");
    if (s) return s;
    s = cJSON_AddObjectToObject(parent, "standards");
    for (int k = 0; k < N_STANDARDS; k++) {
        cJSON *e = cJSON_AddObjectToObject(s, conform_standards[k].name);
        cJSON_AddNumberToObject(e, "judged", 0);
        cJSON_AddNumberToObject(e, "passed", 0);
    }
    return s;
}

void report_standards_summarize(cJSON *report)
{
    if (!item(report, "gated_on")) cJSON_AddStringToObject(report, "gated_on", "derived");
    cJSON *summary = cJSON_GetObjectItemCaseSensitive(report, "summary"), *ops = cJSON_GetObjectItemCaseSensitive(report, "ops");
    cJSON *all = standards_counts(summary);
    double gate_failed = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, item(report, "cases")) {
        cJSON *op = cJSON_GetObjectItemCaseSensitive(ops, str(c, "op"));
        cJSON *per_op = op ? standards_counts(op) : NULL;
        for (int k = 0; k < N_STANDARDS; k++) {
            int p = case_passes(c, conform_standards[k].name);
            if (p < 0) continue;
            count(cJSON_GetObjectItemCaseSensitive(all, conform_standards[k].name), "judged", 1);
            count(cJSON_GetObjectItemCaseSensitive(all, conform_standards[k].name), "passed", p);
            if (!per_op) continue;
            count(cJSON_GetObjectItemCaseSensitive(per_op, conform_standards[k].name), "judged", 1);
            count(cJSON_GetObjectItemCaseSensitive(per_op, conform_standards[k].name), "passed", p);
        }
        const char *level = case_level(c);
        if (level && per_op) {
            cJSON *levels = cJSON_GetObjectItemCaseSensitive(per_op, "commercial_levels");
            if (!levels) levels = cJSON_AddObjectToObject(per_op, "commercial_levels");
            count(levels, level, 1);
        }
        const char *g = str(c, "gate_status");
        int bad = status_known(g) && status_fails(status_parse(g));
        gate_failed += bad;
        if (op && report_gated(report)) count(op, "gate_failed", bad);
    }
    if (report_gated(report)) cJSON_AddNumberToObject(summary, "gate_failed", gate_failed);
}

/* ---- Markdown and HTML sections -------------------------------------------------------------- */

static double numv(const cJSON *o, const char *k)
{
    const cJSON *v = item(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

static const char *gated_text(const cJSON *report, char *buf, size_t len)
{
    if (!report_gated(report)) return "the derived bound";
    buf[0] = 0;
    const cJSON *n;
    cJSON_ArrayForEach(n, item(report, "gated_on"))
        snprintf(buf + strlen(buf), len - strlen(buf), "%s%s", buf[0] ? ", " : "", n->valuestring);
    return buf;
}

/* one row per op: the derived verdict, then each standard's cases passed / judged */
static void table(buf_t *t, const cJSON *report, int html)
{
    const char *row0 = html ? "<tr><th>" : "| ", *sep = html ? "</th><th>" : " | ", *end = html ? "</th></tr>\n" : " |\n";
    put(t, "%sop%sderived bound", row0, sep);
    for (int k = 0; k < N_STANDARDS; k++) put(t, "%s%s", sep, conform_standards[k].name);
    put(t, "%scommercial levels%s", sep, end);
    if (!html) {
        put(t, "|---|---:|");
        for (int k = 0; k < N_STANDARDS; k++) put(t, "---:|");
        put(t, "---|\n");
    }
    const cJSON *o;
    const char *d0 = html ? "<tr><td>" : "| ", *dsep = html ? "</td><td>" : " | ", *dend = html ? "</td></tr>\n" : " |\n";
    cJSON_ArrayForEach(o, item(report, "ops")) {
        const cJSON *s = item(o, "standards");
        put(t, "%s%s%s%.0f/%.0f", d0, o->string, dsep, numv(o, "passed"), numv(o, "total"));
        for (int k = 0; k < N_STANDARDS; k++) {
            const cJSON *e = item(s, conform_standards[k].name);
            if (numv(e, "judged") > 0) put(t, "%s%.0f/%.0f", dsep, numv(e, "passed"), numv(e, "judged"));
            else put(t, "%sn/a", dsep);
        }
        put(t, "%s", dsep);
        const cJSON *l;
        int first = 1;
        cJSON_ArrayForEach(l, item(s, "commercial_levels")) {
            put(t, "%s%s: %.0f", first ? "" : ", ", l->string, l->valuedouble);
            first = 0;
        }
        put(t, "%s", dend);
    }
}

/* cases where the derived verdict and a standard disagree, with the standards that differ; their number */
static int disagreements(buf_t *t, const cJSON *report, int html, int limit)
{
    int n = 0, more = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, item(report, "cases")) {
        case_status st = status_parse(str(c, "status"));
        int derived_ok = st == CASE_PASSED;
        if (!derived_ok && st != CASE_FAILED && st != CASE_WAIVED) continue;
        char differ[256] = "";
        for (int k = 0; k < N_STANDARDS; k++) {
            int p = case_passes(c, conform_standards[k].name);
            if (p >= 0 && p != derived_ok)
                snprintf(differ + strlen(differ), sizeof differ - strlen(differ), "%s%s", differ[0] ? ", " : "", conform_standards[k].name);
        }
        if (!differ[0]) continue;
        if (n++ >= limit) { more++; continue; }
        if (n == 1)
            put(t, html ? "<table><tr><th>case</th><th>derived bound</th><th>standards that say otherwise</th></tr>\n"
                        : "| case | derived bound | standards that say otherwise |\n|---|---|---|\n");
        if (html) {
            put(t, "<tr><td><code>");
            put_esc(t, str(c, "id")); /* ids come from suite files */
            put(t, "</code></td><td>%s</td><td>%s</td></tr>\n", derived_ok ? "passed" : "failed", differ);
        } else
            put(t, "| `%s` | %s | %s |\n", str(c, "id"), derived_ok ? "passed" : "failed", differ);
    }
    if (html && n) put(t, "</table>\n");
    if (more) put(t, html ? "<p>... and %d more (see report.json)</p>\n" : "\n... and %d more (see report.json)\n", more);
    return n;
}

/* the standards' section: what gates the verdict, then one row per standard */
static char *standards_section(const cJSON *report, int html)
{
    buf_t t = {0};
    char gated[256];
    put(&t, html ? "<h2>Named precision standards</h2>\n<p>Cases passing each standard, of those it judged, beside the derived "
                   "bound (docs/standards.md). The verdict and exit code are gated on <b>%s</b>.</p>\n<table>"
                 : "\n## Named precision standards\n\nCases passing each standard, of those it judged, beside the derived bound "
                   "(docs/standards.md). The verdict and exit code are gated on **%s**.\n\n",
        gated_text(report, gated, sizeof gated));
    table(&t, report, html);
    if (html) put(&t, "</table>\n");
    return t.s;
}

char *report_standards_markdown(const cJSON *report) { return standards_section(report, 0); }
char *report_standards_html(const cJSON *report) { return standards_section(report, 1); }

/* The cases where a named standard and the derived bound disagree: information, not failures, so
 * under a heading of their own, collapsed, after the failures. */
char *report_disagreements(const cJSON *report, int html)
{
    buf_t rows = {0}, t = {0};
    int n = disagreements(&rows, report, html, html ? 100 : 30);
    if (html)
        put(&t, "<details class=\"disagree\"><summary><h2>Where a named standard and the derived bound disagree (%d "
                "cases)</h2></summary>\n%s%s</details>\n",
            n, rows.s ? rows.s : "", n ? "" : "<p>None: every standard agrees with the derived verdict.</p>\n");
    else
        put(&t, "\n<details><summary>Where a named standard and the derived bound disagree (%d cases)</summary>\n\n%s%s\n"
                "</details>\n",
            n, rows.s ? rows.s : "", n ? "" : "None: every standard agrees with the derived verdict.\n");
    free(rows.s);
    return t.s;
}
