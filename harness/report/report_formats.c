/* One report, four documents: report.json (the data), report.md (a CI step summary or pull
 * request comment), junit.xml (CI test views), report.html (one offline file with plots). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "dtype.h"
#include "op.h"
#include "report.h"
#include "report_buf.h"
#include "status.h"

/* ---- one table, written as Markdown or HTML ------------------------------------------------------ */

/* where a table goes and in which format */
typedef struct {
    buf_t *b;
    int html;
} doc_t;

/* the header row of n columns; align: per column 'l' or 'r' (Markdown's alignment row) */
static void t_head(doc_t d, const char *const *cols, const char *align, int n)
{
    put(d.b, d.html ? "<table><tr>" : "|");
    for (int i = 0; i < n; i++) put(d.b, d.html ? "<th>%s</th>" : " %s |", cols[i]);
    put(d.b, d.html ? "</tr>\n" : "\n|");
    for (int i = 0; i < n && !d.html; i++) put(d.b, align[i] == 'r' ? "---:|" : "---|");
    if (!d.html) put(d.b, "\n");
}
/* a row (cls: its HTML class, or NULL), its cells, its end; the table's end */
static void t_row(doc_t d, const char *cls)
{
    if (d.html) put(d.b, cls ? "<tr class=\"%s\">" : "<tr>", cls);
    else put(d.b, "|");
}
static void t_cell(doc_t d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void t_cell(doc_t d, const char *fmt, ...)
{
    char text[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    put(d.b, d.html ? "<td>%s</td>" : " %s |", text);
}
/* a cell of free text (escaped for the format) */
static void t_text(doc_t d, const char *t)
{
    put(d.b, d.html ? "<td>" : " ");
    if (d.html) put_esc(d.b, t);
    else put_md(d.b, t);
    put(d.b, d.html ? "</td>" : " |");
}
static void t_row_end(doc_t d) { put(d.b, d.html ? "</tr>\n" : "\n"); }
static void t_end(doc_t d) { if (d.html) put(d.b, "</table>\n"); }

/* ---- reading the report ---------------------------------------------------------------------- */

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (cJSON_IsNumber(v)) return v->valuedouble;
    if (cJSON_IsString(v)) return !strcmp(v->valuestring, "nan") ? NAN : !strcmp(v->valuestring, "-inf") ? -INFINITY : INFINITY;
    return 0;
}

static const cJSON *item(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

/* An op's worst err/tol as a table shows it: the aggregate keeps a non-finite one (a NaN or a wrong
   infinity in an output) as 1e308, a JSON number, and a reader sees "inf", as the case's own says */
static const char *ratio_text(double v, char *buf, size_t n)
{
    if (v >= 1e308) snprintf(buf, n, "inf");
    else snprintf(buf, n, "%.3g", v);
    return buf;
}

/* worst of a metric over a case's outputs */
static double case_metric(const cJSON *c, const char *k)
{
    double w = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, item(c, "outputs")) {
        double v = num(o, k);
        if (v > w || isnan(v)) w = isnan(v) ? INFINITY : v;
    }
    return w;
}

/* a summary's (or an op's) cases of one kind of status (status.h), from its per-status counts */
static double count_kind(const cJSON *counts, status_kind k)
{
    double n = 0;
    for (int i = 0; i < CASE_N_STATUS; i++) if (status_kind_of((case_status)i) == k) n += num(counts, status_name((case_status)i));
    return n;
}

static double count_failing(const cJSON *counts) { return count_kind(counts, STATUS_FAIL) + count_kind(counts, STATUS_ERROR); }

static case_status case_status_of(const cJSON *c) { return status_parse(str(c, "status")); }

/* 1 when an output of the case was compared with the reference (not a refused case, not missing) */
static int case_compared(const cJSON *c)
{
    const cJSON *o;
    cJSON_ArrayForEach(o, item(c, "outputs")) if (str(o, "name")[0] && item(o, "numel")) return 1;
    return 0;
}

/* 1 for a case the harness's validation judged alone (an expected refusal): the implementation
   never ran, so its pass is not the implementation's (reports before the flag: the message) */
static int case_validation(const cJSON *c)
{
    return cJSON_IsTrue(item(c, "validation")) || !strncmp(str(c, "message"), "refused as expected", 19);
}

/* a status as tables and banners spell it */
static const char *status_label(case_status s)
{
    return s == CASE_NOT_IMPLEMENTED ? "not implemented" : s == CASE_NOT_APPLICABLE ? "not applicable" : status_name(s);
}

/* "906 passed, 0 failed, 522 missing, 54 waived": passed and failed always, then every other status
 * that has cases, in report order, so no status is ever left out of a count */
static const char *counts_text(const cJSON *counts, char *buf, size_t len)
{
    snprintf(buf, len, "%.0f passed, %.0f failed", num(counts, "passed"), num(counts, "failed"));
    for (int i = 0; i < CASE_N_STATUS; i++)
        if (i != CASE_PASSED && i != CASE_FAILED && num(counts, status_name((case_status)i)) > 0)
            snprintf(buf + strlen(buf), len - strlen(buf), ", %.0f %s", num(counts, status_name((case_status)i)),
                     status_label((case_status)i));
    return buf;
}

/* a run whose every case was refused (not implemented, not applicable) judged no output: a PASS
 * would vouch for a kernel that never ran, so it fails on that (a runner that declares nothing
 * supported, a plugin that supports none of the suite's ops) */
static int nothing_judged(const cJSON *s)
{
    return num(s, "total") > 0 && num(s, "total") == num(s, "not_implemented") + num(s, "not_applicable");
}

/* what failed the run, "" when nothing did: every failing count, failed proofs, an interruption,
 * no case judged, or (gated) the cases failing the named standards */
static const char *failed_on_text(const cJSON *report, char *buf, size_t len)
{
    const cJSON *s = item(report, "summary");
    buf[0] = '\0';
#define ADD(...) snprintf(buf + strlen(buf), len - strlen(buf), __VA_ARGS__)
    if (report_gated(report)) {
        if (num(s, "gate_failed") > 0) ADD("%.0f cases failing the gated standards", num(s, "gate_failed"));
    } else
        for (int i = 0; i < CASE_N_STATUS; i++)
            if (status_fails((case_status)i) && num(s, status_name((case_status)i)) > 0)
                ADD("%s%.0f %s", buf[0] ? ", " : "", num(s, status_name((case_status)i)), status_label((case_status)i));
    if (num(s, "proofs_failed") > 0) ADD("%s%.0f failed proofs of the references", buf[0] ? ", " : "", num(s, "proofs_failed"));
    if (cJSON_IsTrue(item(report, "interrupted")))
        ADD("%san interruption (%.0f cases not run)", buf[0] ? ", " : "", num(report, "cases_not_run"));
    if (nothing_judged(s)) ADD("%sno case judged (every case was refused)", buf[0] ? ", " : "");
#undef ADD
    return buf;
}

/* an op's metrics mean something only when some of its outputs were compared: an op whose cases
 * are all missing, not implemented or crashed shows "n/a", never a perfect 0 */
static int op_judged(const cJSON *o) { return item(o, "compared") ? num(o, "compared") > 0 : num(o, "passed") + num(o, "failed") > 0; }

/* the per-op table: every status a column */
static void ops_table(buf_t *b, const cJSON *report, int html)
{
    const doc_t d = {b, html};
    /* passed: by the implementation; validated: refusals the harness judged without it */
    const char *cols[CASE_N_STATUS + 6] = {"op", "cases", status_label(CASE_PASSED), "validated"};
    char align[CASE_N_STATUS + 6] = "lr";
    for (int i = 1; i < CASE_N_STATUS; i++) cols[3 + i] = status_label((case_status)i);
    cols[CASE_N_STATUS + 3] = "ambiguous";
    cols[CASE_N_STATUS + 4] = "worst err/tol";
    cols[CASE_N_STATUS + 5] = "max ULP";
    memset(align + 2, 'r', CASE_N_STATUS + 4);
    t_head(d, cols, align, CASE_N_STATUS + 6);
    const cJSON *o;
    int any_na = 0, any_validated = 0;
    cJSON_ArrayForEach(o, item(report, "ops")) {
        int judged = op_judged(o);
        any_na |= !judged;
        any_validated |= num(o, "validation_passed") > 0;
        t_row(d, count_failing(o) > 0 ? "failed" : !judged ? "unjudged" : num(o, "waived") > 0 ? "waived" : "passed");
        t_cell(d, "%s", o->string);
        t_cell(d, "%.0f", num(o, "total"));
        t_cell(d, "%.0f", num(o, status_name(CASE_PASSED)) - num(o, "validation_passed"));
        t_cell(d, "%.0f", num(o, "validation_passed"));
        for (int i = 1; i < CASE_N_STATUS; i++) t_cell(d, "%.0f", num(o, status_name((case_status)i)));
        t_cell(d, "%.0f", num(o, "ambiguous_elements"));
        if (judged) {
            char r[32];
            t_cell(d, "%s", ratio_text(num(o, "max_err_over_tol"), r, sizeof r));
            t_cell(d, "%.3g", num(o, "max_ulp"));
        } else {
            t_cell(d, "n/a");
            t_cell(d, "n/a");
        }
        t_row_end(d);
    }
    t_end(d);
    put(b, html ? "<p>%s%s%s.</p>\n" : "\n%s%s%s.\n",
        any_validated ? "passed: cases the implementation ran and passed; validated: bad inputs the harness refused as "
                        "the spec says, without running the implementation (counted as passed in report.json). " : "",
        any_na ? "n/a: no output of the op was compared (every case missing, not implemented, crashed, ...). " : "",
        COMPARE_ULP_MEANING);
}

/* A column of a table of report objects: its header, its alignment ('l', 'r') and what a cell
 * shows: the field key as a string ('s'), a number ('g') or free text ('t', escaped); key NULL: the
 * row's op name */
typedef struct {
    const char *head;
    char align, kind;
    const char *key;
} column;

static void column_head(doc_t d, const column *cols, int n)
{
    const char *heads[8];
    char align[8];
    for (int i = 0; i < n; i++) {
        heads[i] = cols[i].head;
        align[i] = cols[i].align;
    }
    t_head(d, heads, align, n);
}

/* one row per object of rows (an HTML class from the field cls, when given) */
static void column_rows(doc_t d, const cJSON *rows, const column *cols, int n, const char *op, const char *cls)
{
    const cJSON *r;
    cJSON_ArrayForEach(r, rows) {
        t_row(d, cls ? str(r, cls) : NULL);
        for (int i = 0; i < n; i++) {
            const column *c = &cols[i];
            if (!c->key) t_cell(d, "%s", op);
            else if (c->kind == 'g') t_cell(d, "%g", num(r, c->key));
            else if (c->kind == 't') t_text(d, str(r, c->key));
            else t_cell(d, "%s", str(r, c->key));
        }
        t_row_end(d);
    }
}

/* the proofs of the references, one row each */
static void proofs_table(doc_t d, const cJSON *report)
{
    static const column cols[] = {{"op", 'l', 's', "op"}, {"kind", 'l', 's', "kind"}, {"relation", 'l', 't', "what"},
                                  {"status", 'l', 's', "status"}, {"measured", 'l', 't', "detail"}};
    column_head(d, cols, 5);
    column_rows(d, item(report, "proofs"), cols, 5, NULL, "status");
    t_end(d);
}

/* the tolerance model of every op the report holds, one row an output */
static void tolerances_table(doc_t d, const cJSON *report)
{
    static const column cols[] = {{"op", 'l', 's', NULL},           {"output", 'l', 's', "output"},
                                  {"k_val", 'r', 'g', "k_val"},     {"why", 'l', 't', "k_val_why"},
                                  {"k_pos", 'r', 'g', "k_pos"},     {"why", 'l', 't', "k_pos_why"}};
    column_head(d, cols, 6);
    const cJSON *tm;
    cJSON_ArrayForEach(tm, item(report, "tolerance_models"))
        if (cJSON_GetObjectItemCaseSensitive(item(report, "ops"), tm->string)) column_rows(d, tm, cols, 6, tm->string, NULL);
    t_end(d);
}

/* one paragraph per suite-power line */
static void suite_power(doc_t d, const cJSON *report)
{
    const cJSON *sp;
    cJSON_ArrayForEach(sp, item(report, "suite_power")) {
        put(d.b, d.html ? "<p>Suite power: " : "Suite power: ");
        if (d.html) put_esc(d.b, str(sp, "summary"));
        else put_md(d.b, str(sp, "summary"));
        put(d.b, d.html ? "</p>\n" : "\n\n");
    }
}

cJSON *report_new(const char *command, const char *isa, int threads)
{
    cJSON *r = cJSON_CreateObject();
    cJSON_AddStringToObject(r, "schema", CONFORM_REPORT_SCHEMA);
    cJSON_AddNumberToObject(r, "schema_version", CONFORM_REPORT_SCHEMA_VERSION);
    cJSON_AddStringToObject(r, "tool_version", CONFORM_VERSION);
    cJSON_AddStringToObject(r, "command", command);
    cJSON_AddStringToObject(r, "isa", isa);
    cJSON_AddNumberToObject(r, "threads", threads);
    cJSON_AddNumberToObject(r, "seed", 0);
    cJSON_AddArrayToObject(r, "suites");
    cJSON_AddObjectToObject(r, "summary");
    cJSON_AddObjectToObject(r, "ops");
    cJSON *tm = cJSON_AddObjectToObject(r, "tolerance_models");
    for (int i = 0; conform_ops[i]; i++) {
        const op_desc *op = conform_ops[i];
        cJSON *o = cJSON_AddArrayToObject(tm, op->name);
        for (int k = 0; k < op->n_outputs; k++) {
            cJSON *t = cJSON_CreateObject();
            cJSON_AddStringToObject(t, "output", op->outputs[k].name);
            cJSON_AddStringToObject(t, "formula", CONFORM_TOL_RULE);
            cJSON_AddNumberToObject(t, "u", CONFORM_U_F32);
            cJSON_AddNumberToObject(t, "eta", DTYPE_FLOAT32->eta);
            cJSON_AddNumberToObject(t, "k_val", op->tol[k].k_val);
            cJSON_AddStringToObject(t, "k_val_why", op->tol[k].k_val_why);
            cJSON_AddNumberToObject(t, "k_pos", op->tol[k].k_pos);
            cJSON_AddStringToObject(t, "k_pos_why", op->tol[k].k_pos_why);
            cJSON_AddItemToArray(o, t);
        }
    }
    cJSON *h = cJSON_AddObjectToObject(r, "histogram_edges");
    cJSON *re = cJSON_AddArrayToObject(h, "err_over_tol"), *ue = cJSON_AddArrayToObject(h, "ulp");
    for (int i = 0; i < COMPARE_HIST_BINS - 1; i++) {
        cJSON_AddItemToArray(re, cJSON_CreateNumber(compare_ratio_edges[i]));
        cJSON_AddItemToArray(ue, cJSON_CreateNumber(compare_ulp_edges[i]));
    }
    cJSON_AddArrayToObject(r, "proofs");
    cJSON_AddArrayToObject(r, "stale_waivers");
    cJSON_AddArrayToObject(r, "cases");
    return r;
}

/* the precision a report's run judged (reports before --dtype: float32) */
static const dtype_desc *report_dtype(const cJSON *report)
{
    const dtype_desc *dt = dtype_find(str(report, "dtype"));
    return dt ? dt : DTYPE_FLOAT32;
}

void report_set_dtype(cJSON *report, const char *dtype, double u)
{
    cJSON_DeleteItemFromObjectCaseSensitive(report, "dtype");
    cJSON_AddStringToObject(report, "dtype", dtype);
    cJSON *op, *model;
    cJSON_ArrayForEach(op, cJSON_GetObjectItemCaseSensitive(report, "tolerance_models"))
        cJSON_ArrayForEach(model, op) cJSON_SetNumberValue(cJSON_GetObjectItemCaseSensitive(model, "u"), u);
}

void report_summarize(cJSON *report)
{
    cJSON *summary = cJSON_CreateObject(), *ops = cJSON_CreateObject();
    double count[CASE_N_STATUS] = {0}, ambiguous = 0, total = 0, validation = 0, out_of_range = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, item(report, "cases")) {
        const char *op = str(c, "op");
        cJSON *o = cJSON_GetObjectItemCaseSensitive(ops, op);
        if (!o) {
            o = cJSON_AddObjectToObject(ops, op);
            cJSON_AddNumberToObject(o, "total", 0);
            for (int i = 0; i < CASE_N_STATUS; i++) cJSON_AddNumberToObject(o, status_name((case_status)i), 0);
            cJSON_AddNumberToObject(o, "ambiguous_elements", 0);
            cJSON_AddNumberToObject(o, "out_of_range_elements", 0);
            cJSON_AddNumberToObject(o, "max_err_over_tol", 0);
            cJSON_AddNumberToObject(o, "max_ulp", 0);
            cJSON_AddNumberToObject(o, "compared", 0); /* cases with an output compared: the metrics' base */
            cJSON_AddNumberToObject(o, "validation_passed", 0); /* of passed: refusals, no implementation ran */
        }
        case_status s = case_status_of(c);
        double amb = 0, oor = 0;
        const cJSON *out;
        cJSON_ArrayForEach(out, item(c, "outputs")) {
            amb += num(out, "n_ambiguous");
            oor += num(out, "n_out_of_range");
        }
        out_of_range += oor;
        cJSON_SetNumberValue(cJSON_GetObjectItem(o, "out_of_range_elements"), num(o, "out_of_range_elements") + oor);
        total++;
        count[s]++;
        ambiguous += amb;
        cJSON_SetNumberValue(cJSON_GetObjectItem(o, "total"), num(o, "total") + 1);
        cJSON_SetNumberValue(cJSON_GetObjectItem(o, status_name(s)), num(o, status_name(s)) + 1);
        cJSON_SetNumberValue(cJSON_GetObjectItem(o, "ambiguous_elements"), num(o, "ambiguous_elements") + amb);
        cJSON_SetNumberValue(cJSON_GetObjectItem(o, "compared"), num(o, "compared") + case_compared(c));
        if (s == CASE_PASSED && case_validation(c)) {
            validation++;
            cJSON_SetNumberValue(cJSON_GetObjectItem(o, "validation_passed"), num(o, "validation_passed") + 1);
        }
        /* a waived case is a known divergence: its numbers would drown the op's worst */
        if (s == CASE_WAIVED) continue;
        double ratio = case_metric(c, "max_err_over_tol"), ulp = case_metric(c, "max_ulp");
        if (!isfinite(ratio)) ratio = 1e308;
        if (ratio > num(o, "max_err_over_tol")) cJSON_SetNumberValue(cJSON_GetObjectItem(o, "max_err_over_tol"), ratio);
        if (ulp > num(o, "max_ulp")) cJSON_SetNumberValue(cJSON_GetObjectItem(o, "max_ulp"), ulp);
    }
    cJSON_AddNumberToObject(summary, "total", total);
    for (int i = 0; i < CASE_N_STATUS; i++) cJSON_AddNumberToObject(summary, status_name((case_status)i), count[i]);
    cJSON_AddNumberToObject(summary, "ambiguous_elements", ambiguous);
    cJSON_AddNumberToObject(summary, "validation_passed", validation);
    cJSON_AddNumberToObject(summary, "out_of_range_elements", out_of_range);
    int proofs = 0, proofs_failed = 0;
    const cJSON *p;
    cJSON_ArrayForEach(p, item(report, "proofs")) {
        proofs++;
        proofs_failed += strcmp(str(p, "status"), "passed") != 0;
    }
    cJSON_AddNumberToObject(summary, "proofs", proofs);
    cJSON_AddNumberToObject(summary, "proofs_failed", proofs_failed);
    cJSON_AddNumberToObject(summary, "stale_waivers", cJSON_GetArraySize(item(report, "stale_waivers")));
    cJSON_AddNumberToObject(summary, "duration_s", num(report, "duration_s"));
    cJSON_ReplaceItemInObject(report, "summary", summary);
    cJSON_ReplaceItemInObject(report, "ops", ops);
    report_standards_summarize(report);
}

int report_all_passed(const cJSON *report)
{
    const cJSON *s = item(report, "summary");
    if (cJSON_IsTrue(item(report, "interrupted")) || nothing_judged(s)) return 0;
    if (report_gated(report)) return num(s, "gate_failed") == 0 && num(s, "proofs_failed") == 0;
    return count_failing(s) == 0 && num(s, "proofs_failed") == 0;
}

/* the count of elements failed by the reachable range alone, one line for the text and markdown summaries */
static const char *range_line(const cJSON *s)
{
    static _Thread_local char line[160];
    snprintf(line, sizeof line, "%.0f elements within tolerance failed by the reachable range alone (a value no legal "
             "position can give)", num(s, "out_of_range_elements"));
    return line;
}

/* the terminal summary's status columns: short names, each column as wide as its name (7 at least) */
static const char *const summary_head[CASE_N_STATUS] = {"passed",  "failed",   "error",   "waived",  "crashed",
                                                         "timeout", "not impl", "missing", "not appl"};
static int summary_width(int i) { return strlen(summary_head[i]) > 7 ? (int)strlen(summary_head[i]) : 7; }

void report_print_summary(const cJSON *report, FILE *f)
{
    const cJSON *s = item(report, "summary"), *o;
    fprintf(f, "\n%-26s %6s", "op", "cases");
    for (int i = 0; i < CASE_N_STATUS; i++) fprintf(f, " %*s", summary_width(i), summary_head[i]);
    fprintf(f, " %9s %9s %13s %9s\n", "validated", "ambiguous", "worst err/tol", "max ulp");
    cJSON_ArrayForEach(o, item(report, "ops")) {
        fprintf(f, "%-26s %6.0f", o->string, num(o, "total"));
        for (int i = 0; i < CASE_N_STATUS; i++)
            fprintf(f, " %*.0f", summary_width(i), num(o, status_name((case_status)i)) - (i == CASE_PASSED ? num(o, "validation_passed") : 0));
        fprintf(f, " %9.0f", num(o, "validation_passed"));
        char r[32];
        if (op_judged(o))
            fprintf(f, " %9.0f %13s %9.3g\n", num(o, "ambiguous_elements"), ratio_text(num(o, "max_err_over_tol"), r, sizeof r),
                    num(o, "max_ulp"));
        else fprintf(f, " %9.0f %13s %9s\n", num(o, "ambiguous_elements"), "n/a", "n/a");
    }
    fprintf(f, "%-26s %6.0f", "total", num(s, "total"));
    for (int i = 0; i < CASE_N_STATUS; i++)
        fprintf(f, " %*.0f", summary_width(i), num(s, status_name((case_status)i)) - (i == CASE_PASSED ? num(s, "validation_passed") : 0));
    fprintf(f, " %9.0f %9.0f\n", num(s, "validation_passed"), num(s, "ambiguous_elements"));
    fprintf(f, "%s\n", range_line(s));
    fprintf(f, "%s; n/a: no output of the op was compared; validated: bad inputs refused as the spec says, without the "
               "implementation (not in passed)\n", COMPARE_ULP_MEANING);
    const cJSON *w;
    cJSON_ArrayForEach(w, item(report, "stale_waivers"))
        fprintf(f, "stale waiver: '%s' matches no failing case any more (%s)\n", str(w, "pattern"), str(w, "link"));
    report_runner_summary(report, f);
    fprintf(f, "isa %s, threads %.0f, %.1f s; proofs of the references: %.0f run, %.0f failed\n", str(report, "isa"),
            num(report, "threads"), num(s, "duration_s"), num(s, "proofs"), num(s, "proofs_failed"));
    if (report_gated(report)) {
        fprintf(f, "verdict gated on the named standards");
        const cJSON *n;
        cJSON_ArrayForEach(n, item(report, "gated_on")) fprintf(f, " %s", n->valuestring);
        fprintf(f, ": %.0f cases fail them (the derived bound's counts follow)\n", num(s, "gate_failed"));
    }
    cJSON_ArrayForEach(w, item(report, "suite_power")) fprintf(f, "suite power: %s\n", str(w, "summary"));
    char counts[256], why[256];
    if (failed_on_text(report, why, sizeof why)[0]) fprintf(f, "the run fails on: %s\n", why);
    fprintf(f, "%s\n", counts_text(s, counts, sizeof counts)); /* the last line: every status counted */
}

/* ---- failures first, one anchor per case ----------------------------------------------------- */

/* The order failures are read in: wrong answers, then no answer (crashed, timeout), then cases
 * that could not run, then outputs never written; -1 for a case that does not fail. */
static int fail_rank(case_status s)
{
    switch (s) {
    case CASE_FAILED: return 0;
    case CASE_CRASHED: return 1;
    case CASE_TIMEOUT: return 2;
    case CASE_ERROR: return 3;
    case CASE_MISSING: return 4;
    default: return status_fails(s) ? 3 : -1;
    }
}

static const case_status rank_status[] = {CASE_FAILED, CASE_CRASHED, CASE_TIMEOUT, CASE_ERROR, CASE_MISSING};
#define N_RANKS 5

/* Why an output is missing, for grouping: the reason the runner recorded, else that no file was
 * written (the paths differ case by case, the cause does not), else the message. */
static void missing_reason(const cJSON *c, char *buf, size_t len)
{
    const char *m = str(c, "message"), *tag = "(the runner skipped it: ", *r = strstr(m, tag);
    if (r) {
        r += strlen(tag);
        size_t n = strlen(r);
        snprintf(buf, len, "%.*s", (int)(n && r[n - 1] == ')' ? n - 1 : n), r);
    } else if (strstr(m, " not found")) snprintf(buf, len, "no output file written (and no reason recorded in runner.json)");
    else snprintf(buf, len, "%s", m);
}

/* a fragment link to a case's anchor: the id percent-encoded where a URL needs it ('#', '%', ' ', '"') */
static void put_href(buf_t *b, const char *id)
{
    put(b, "#");
    for (const char *p = id; *p; p++) {
        if (strchr("#%\" <>&'`", *p) || (unsigned char)*p < 0x21) put(b, "%%%02X", (unsigned char)*p);
        else put(b, "%c", *p);
    }
}

/* A waiver's reason and link; the link is a hyperlink only when it is a web address */
static void put_waiver(buf_t *b, const cJSON *w, int html)
{
    const char *link = str(w, "link");
    size_t scheme = strcspn(link, ":");
    int web = link[scheme] == ':' && link[scheme + 1] == '/' && link[scheme + 2] == '/' &&
              ((scheme == 5 && !memcmp(link, "https", 5)) || (scheme == 4 && !memcmp(link, "http", 4)));
    if (!html) {
        put_md(b, str(w, "reason"));
        put(b, " | ");
        if (web) put(b, "<%s>", link); /* an autolink; a link with '>' or a space is no URL */
        else put_md(b, link);
        return;
    }
    put(b, "<span class=\"waiver\">waived: ");
    put_esc(b, str(w, "reason"));
    put(b, " (");
    if (web) {
        put(b, "<a href=\"");
        put_esc(b, link);
        put(b, "\">");
    }
    put_esc(b, link);
    put(b, web ? "</a>)</span>" : ")</span>");
}

/* Missing cases grouped by reason: the reasons in order of first appearance with their counts,
   at most max (the last holds every further reason); the number of groups */
typedef struct {
    char reason[400];
    int n;
} reason_group;
#define MAX_REASONS 32

static int group_of(const reason_group *g, int n, const char *reason)
{
    for (int k = 0; k < n; k++)
        if (!strcmp(g[k].reason, reason)) return k;
    return n == MAX_REASONS ? MAX_REASONS - 1 : -1;
}

static int missing_groups(const cJSON *report, reason_group *g)
{
    int n = 0;
    char r[400];
    const cJSON *c;
    cJSON_ArrayForEach(c, item(report, "cases")) {
        if (case_status_of(c) != CASE_MISSING) continue;
        missing_reason(c, r, sizeof r);
        int k = group_of(g, n, r);
        if (k < 0) {
            k = n++;
            snprintf(g[k].reason, sizeof g[k].reason, "%s", k == MAX_REASONS - 1 ? "other reasons" : r);
            g[k].n = 0;
        }
        g[k].n++;
    }
    /* the largest groups first (stable; "other reasons" stays last) */
    int sorted = n == MAX_REASONS ? n - 1 : n;
    for (int i = 1; i < sorted; i++)
        for (int j = i; j > 0 && g[j].n > g[j - 1].n; j--) {
            reason_group t = g[j];
            g[j] = g[j - 1];
            g[j - 1] = t;
        }
    return n;
}

/* the group a missing case is in (the last one takes what the others do not) */
static int case_group(const cJSON *c, const reason_group *g, int n)
{
    char r[400];
    missing_reason(c, r, sizeof r);
    int k = group_of(g, n, r);
    return k < 0 ? n - 1 : k;
}

/* ---- Markdown -------------------------------------------------------------------------------- */

/* a Markdown row's case cell: an anchor named by the id (GitHub keeps it as user-content-ID and
   follows #ID to it), then the id as code */
static void md_case_cell(buf_t *b, const cJSON *c)
{
    put(b, "| <a id=\"");
    put_esc(b, str(c, "id"));
    put(b, "\"></a>`");
    put_code(b, str(c, "id"));
    put(b, "` | ");
}

/* the failing cases but missing ones, failures first (failed, crashed, timeout, error), at most
   limit rows */
static void md_failure_rows(buf_t *b, const cJSON *report, int limit)
{
    int n = 0, more = 0;
    const cJSON *c;
    for (int r = 0; r < N_RANKS - 1; r++)
        cJSON_ArrayForEach(c, item(report, "cases")) {
            if (fail_rank(case_status_of(c)) != r) continue;
            if (n++ >= limit) { more++; continue; }
            md_case_cell(b, c);
            put(b, "%s | ", str(c, "status"));
            put_md(b, str(c, "message"));
            put(b, " | `");
            put_code(b, str(c, "repro"));
            put(b, "` |\n");
        }
    if (more) put(b, "\n... and %d more (see report.html or report.json)\n", more);
}

/* missing outputs: one row per reason with its count and the first cases */
static void md_missing(buf_t *b, const cJSON *report)
{
    reason_group g[MAX_REASONS];
    int n = missing_groups(report, g);
    if (!n) return;
    put(b, "\n### Missing outputs, by reason\n\n| cases | reason | first of them |\n|---:|---|---|\n");
    for (int k = 0; k < n; k++) {
        put(b, "| %d | ", g[k].n);
        put_md(b, g[k].reason);
        put(b, " | ");
        int shown = 0;
        const cJSON *c;
        cJSON_ArrayForEach(c, item(report, "cases"))
            if (case_status_of(c) == CASE_MISSING && case_group(c, g, n) == k && shown++ < 3) {
                put(b, "%s`", shown > 1 ? ", " : "");
                put_code(b, str(c, "id"));
                put(b, "`");
            }
        put(b, "%s |\n", shown > 3 ? ", ..." : "");
    }
}

/* waived cases with the waiver's reason and link */
static void md_waived_rows(buf_t *b, const cJSON *report, int limit)
{
    int n = 0, more = 0;
    const cJSON *c;
    put(b, "\n## Waived\n\n| case | waived from | why | reason | link |\n|---|---|---|---|---|\n");
    cJSON_ArrayForEach(c, item(report, "cases")) {
        if (case_status_of(c) != CASE_WAIVED) continue;
        if (n++ >= limit) { more++; continue; }
        md_case_cell(b, c);
        put(b, "%s | ", str(c, "waived_status"));
        put_md(b, str(c, "message"));
        put(b, " | ");
        put_waiver(b, item(c, "waiver"), 0);
        put(b, " |\n");
    }
    if (more) put(b, "\n... and %d more (see report.html or report.json)\n", more);
}

/* report.md's first lines: the command, the verdict and what it rests on */
static void md_summary(buf_t *b, const cJSON *report)
{
    const cJSON *s = item(report, "summary");
    put(b, "# conform report\n\n`");
    put_code(b, str(report, "command"));
    put(b, "`  \nisa **%s**, threads %.0f, seed %.0f%s%s, %.1f s\n\n", str(report, "isa"), num(report, "threads"),
        num(report, "seed"), item(report, "shard") ? ", shard " : "", str(report, "shard"), num(s, "duration_s"));
    if (cJSON_IsTrue(item(report, "interrupted")))
        put(b, "**INTERRUPTED**: the run was stopped by a signal; %.0f cases were not run.\n\n", num(report, "cases_not_run"));
    char counts[256], why[256];
    put(b, "**%s: %.0f cases: %s**  \n", report_all_passed(report) ? "PASS" : "FAIL", num(s, "total"),
        counts_text(s, counts, sizeof counts));
    if (failed_on_text(report, why, sizeof why)[0]) put(b, "**The run fails on: %s.**  \n", why);
    put(b, "%.0f ambiguous elements; proofs of the references %.0f/%.0f  \n%s\n\n", num(s, "ambiguous_elements"),
        num(s, "proofs") - num(s, "proofs_failed"), num(s, "proofs"), range_line(s));
    suite_power((doc_t){b, 0}, report);
}

static void md_stale_waivers(buf_t *b, const cJSON *report)
{
    put(b, "\n## Stale waivers (they match no failure any more)\n\n| pattern | reason | link |\n|---|---|---|\n");
    const cJSON *w;
    cJSON_ArrayForEach(w, item(report, "stale_waivers")) {
        put(b, "| `");
        put_code(b, str(w, "pattern"));
        put(b, "` | ");
        put_md(b, str(w, "reason"));
        put(b, " | ");
        put_md(b, str(w, "link"));
        put(b, " |\n");
    }
}

char *report_markdown(const cJSON *report)
{
    buf_t b = {0};
    const doc_t d = {&b, 0};
    const cJSON *s = item(report, "summary");
    md_summary(&b, report);
    put_owned(&b, report_runner_markdown(report));
    put(&b, "\n## By op\n\n");
    ops_table(&b, report, 0);
    put(&b, "\n## Failures\n\n");
    if (count_failing(s) == 0) put(&b, "None.\n");
    else if (count_failing(s) > num(s, "missing")) {
        put(&b, "Wrong answers first, then crashed, timeout, error; missing outputs after, by reason.\n\n"
                "| case | status | why | repro |\n|---|---|---|---|\n");
        md_failure_rows(&b, report, 50);
    }
    md_missing(&b, report);
    put_owned(&b, report_standards_markdown(report));
    put_owned(&b, report_disagreements(report, 0));
    if (num(s, "waived") > 0) md_waived_rows(&b, report, 50);
    if (num(s, "stale_waivers") > 0) md_stale_waivers(&b, report);
    put(&b, "\n## Proofs of the references\n\n");
    proofs_table(d, report);
    const dtype_desc *dt = report_dtype(report);
    put(&b, "\n## Tolerances\n\nPer element: `%s`, `u = 2^%d` (%s), `eta = 2^%d`; %s (an element within rounding of a "
            "discontinuity).\n\n", CONFORM_TOL_FORMULA, ilogb(dt->u), dt->name, ilogb(dt->eta), CONFORM_TOL_AMBIG);
    tolerances_table(d, report);
    return b.s;
}

/* ---- JUnit XML ------------------------------------------------------------------------------- */

char *report_junit(const cJSON *report)
{
    buf_t b = {0};
    const cJSON *s = item(report, "summary"), *o, *c;
    char *props = report_runner_junit(report);
    put(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    put(&b, "<testsuites name=\"conform\" tests=\"%.0f\" failures=\"%.0f\" errors=\"%.0f\" skipped=\"%.0f\" time=\"%.3f\">\n",
        num(s, "total") + num(s, "proofs"),
        (report_gated(report) ? num(s, "gate_failed") : count_kind(s, STATUS_FAIL)) +
            num(s, "proofs_failed"),
        report_gated(report) ? 0 : count_kind(s, STATUS_ERROR), count_kind(s, STATUS_SKIP), num(s, "duration_s"));
    cJSON_ArrayForEach(o, item(report, "ops")) {
        put(&b, "  <testsuite name=\"%s\" tests=\"%.0f\" failures=\"%.0f\" errors=\"%.0f\" skipped=\"%.0f\">\n", o->string,
            num(o, "total"),
            report_gated(report) ? num(o, "gate_failed") : count_kind(o, STATUS_FAIL),
            report_gated(report) ? 0 : count_kind(o, STATUS_ERROR), count_kind(o, STATUS_SKIP));
        /* every status's count, and what ran, in every suite: <properties> belong to a testsuite */
        put(&b, "    <properties>\n");
        for (int i = 0; i < CASE_N_STATUS; i++)
            put(&b, "      <property name=\"status.%s\" value=\"%.0f\"/>\n", status_name((case_status)i), num(o, status_name((case_status)i)));
        put(&b, "%s    </properties>\n", props ? props : "");
        cJSON_ArrayForEach(c, item(report, "cases")) {
            if (strcmp(str(c, "op"), o->string)) continue;
            put(&b, "    <testcase classname=\"conform.%s\" name=\"", o->string);
            put_esc(&b, str(c, "id"));
            put(&b, "\" time=\"%.6f\"", num(c, "time_ref_s") + num(c, "time_opt_s"));
            /* gated on named standards: their verdict is the test's */
            case_status st = status_parse(item(c, "gate_status") ? str(c, "gate_status") : str(c, "status"));
            if (st == CASE_PASSED) { put(&b, "/>\n"); continue; }
            const char *msg = item(c, "gate_message") ? str(c, "gate_message") : str(c, "message");
            status_kind k = status_kind_of(st);
            int failure = k == STATUS_FAIL || (item(c, "gate_status") && k == STATUS_ERROR); /* a gate counts every failure alike */
            put(&b, ">\n      <%s message=\"", failure ? "failure" : k == STATUS_SKIP ? "skipped" : "error");
            if (st == CASE_NOT_IMPLEMENTED || st == CASE_NOT_APPLICABLE) {
                put_esc(&b, str(c, "message"));
                put(&b, "\"/>\n");
            } else if (st == CASE_WAIVED) {
                const cJSON *w = item(c, "waiver");
                put(&b, "waived: ");
                put_esc(&b, str(w, "reason"));
                put(&b, " (");
                put_esc(&b, str(w, "link"));
                put(&b, ")\"/>\n");
            } else {
                put_esc(&b, msg);
                put(&b, "\">");
                put_esc(&b, msg);
                put(&b, "\nrepro: ");
                put_esc(&b, str(c, "repro"));
                put(&b, "</%s>\n", failure ? "failure" : "error");
            }
            put(&b, "    </testcase>\n");
        }
        put(&b, "  </testsuite>\n");
    }
    put(&b, "  <testsuite name=\"proofs\" tests=\"%.0f\" failures=\"%.0f\">\n", num(s, "proofs"), num(s, "proofs_failed"));
    const cJSON *p;
    cJSON_ArrayForEach(p, item(report, "proofs")) {
        put(&b, "    <testcase classname=\"conform.proofs.%s\" name=\"%s: ", str(p, "op"), str(p, "kind"));
        put_esc(&b, str(p, "what"));
        put(&b, "\"");
        if (!strcmp(str(p, "status"), "passed")) { put(&b, "/>\n"); continue; }
        put(&b, ">\n      <failure message=\"");
        put_esc(&b, str(p, "detail"));
        put(&b, "\"/>\n    </testcase>\n");
    }
    put(&b, "  </testsuite>\n</testsuites>\n");
    free(props);
    return b.s;
}

/* ---- HTML -------------------------------------------------------------------------------------- */

static void svg_histogram(buf_t *b, const char *title, const double *counts, const char *const *labels, int n)
{
    double max = 0, total = 0;
    for (int i = 0; i < n; i++) { if (counts[i] > max) max = counts[i]; total += counts[i]; }
    const int W = 48, H = 110, TOP = 14; /* room above the tallest bar for its count */
    put(b, "<figure><figcaption>%s (%.0f elements; bar height: log count)</figcaption>"
           "<svg width=\"%d\" height=\"%d\" role=\"img\">", title, total, n * W + 10, H + TOP + 30);
    for (int i = 0; i < n; i++) {
        double h = counts[i] > 0 ? (log10(counts[i]) + 1) / (log10(max > 1 ? max : 1) + 1) * H : 0;
        const char *colour = i == n - 1 && strstr(title, "bound") ? "#c0392b" : "#2e86c1";
        put(b, "<rect x=\"%d\" y=\"%.1f\" width=\"%d\" height=\"%.1f\" fill=\"%s\"><title>%s: %.0f</title></rect>",
            5 + i * W, TOP + H - h, W - 4, h, colour, labels[i], counts[i]);
        put(b, "<text x=\"%d\" y=\"%d\" font-size=\"9\" text-anchor=\"middle\">%s</text>", 5 + i * W + W / 2 - 2,
            TOP + H + 14, labels[i]);
        if (counts[i] > 0)
            put(b, "<text x=\"%d\" y=\"%.1f\" font-size=\"9\" text-anchor=\"middle\">%.0f</text>", 5 + i * W + W / 2 - 2,
                TOP + H - 3 - h, counts[i]);
    }
    put(b, "</svg></figure>\n");
}

/* the coordinates over dims [d0, d1) of shape of a flat index over those dims, as "[i,j]" */
static void coords_text(const cJSON *shape, int d0, int d1, long long flat, char *buf, size_t len)
{
    long long idx[8] = {0};
    for (int d = d1 - 1; d >= d0 && d - d0 < 8; d--) {
        long long n = (long long)cJSON_GetArrayItem(shape, d)->valuedouble;
        idx[d - d0] = n > 0 ? flat % n : 0;
        flat = n > 0 ? flat / n : 0;
    }
    size_t at = 0;
    buf[0] = '\0';
    for (int d = d0; d < d1 && d - d0 < 8 && at < len; d++)
        at += (size_t)snprintf(buf + at, len - at, "%s%lld", d == d0 ? "[" : ",", idx[d - d0]);
    if (at < len) snprintf(buf + at, len - at, d1 > d0 ? "]" : "[]");
}

/* white at 0, blue deepening with log10(err/tol) from 1e-6 to 1, red beyond the bound */
static void heat_colour(double v, char *buf, size_t len)
{
    double t = v <= 0 ? 0 : fmin(1, fmax(0, (log10(v) + 6) / 6));
    if (v > 1) snprintf(buf, len, "rgb(200,40,40)");
    else snprintf(buf, len, "rgb(%d,%d,255)", (int)(255 - 180 * t), (int)(255 - 140 * t));
}

/* The heat map of one output: cells hold the largest err/tol of the elements folded into them;
 * rows are the leading dims, columns the last two; each axis is labelled with the coordinates of
 * its first, middle and last cell, and a colour scale follows. */
static void svg_heatmap(buf_t *b, const cJSON *h, const cJSON *out)
{
    int rows = (int)num(h, "rows"), cols = (int)num(h, "cols");
    const cJSON *cells = item(h, "max_err_over_tol"), *shape = item(out, "shape");
    int rank = cJSON_GetArraySize(shape), split = rank >= 2 ? rank - 2 : 0;
    if (rows <= 0 || cols <= 0 || cJSON_GetArraySize(cells) != rows * cols) return;
    long long nrows = 1, ncols = 1;
    for (int d = 0; d < rank; d++) *(d < split ? &nrows : &ncols) *= (long long)cJSON_GetArrayItem(shape, d)->valuedouble;
    int cw = cols > 16 ? 10 : 20, chh = rows > 16 ? 10 : 20, L = 90, T = 34, gw = cols * cw, gh = rows * chh;
    int width = L + (gw > 330 ? gw : 330) + 10, height = T + gh + 58;
    char lab[96], colour[32], dims[96] = "";
    for (int d = 0, at = 0; d < rank && at < (int)sizeof dims; d++)
        at += snprintf(dims + at, sizeof dims - (size_t)at, "%s%.0f%s", d ? "," : "[", cJSON_GetArrayItem(shape, d)->valuedouble,
                       d == rank - 1 ? "]" : "");
    put(b, "<figure><figcaption>where the errors sit in <b>%s</b> %s: each cell the largest err/tol of its elements"
           "</figcaption><svg class=\"heat\" width=\"%d\" height=\"%d\" font-size=\"10\">",
        str(out, "name"), dims, width, height);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++) {
            double v = cJSON_GetArrayItem(cells, r * cols + c)->valuedouble;
            heat_colour(v, colour, sizeof colour);
            put(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" stroke=\"#eee\" stroke-width=\".5\">"
                   "<title>%.3g</title></rect>", L + c * cw, T + r * chh, cw, chh, colour, v);
        }
    put(b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" stroke=\"#888\"/>", L, T, gw, gh);
    /* axes: the first, middle and last cell of each, by the coordinates of the first element in it */
    int rt[3] = {0, rows / 2, rows - 1}, ct[3] = {0, cols / 2, cols - 1};
    for (int k = 0; k < 3; k++) {
        if (k && rt[k] == rt[k - 1]) continue;
        coords_text(shape, 0, split, (rt[k] * nrows + rows - 1) / rows, lab, sizeof lab);
        put(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>", L - 4, T + rt[k] * chh + chh / 2 + 4, lab);
    }
    for (int k = 0; k < 3; k++) {
        if (k && ct[k] == ct[k - 1]) continue;
        coords_text(shape, split, rank, (ct[k] * ncols + cols - 1) / cols, lab, sizeof lab);
        put(b, "<text x=\"%d\" y=\"%d\" text-anchor=\"%s\">%s</text>", L + ct[k] * cw + cw / 2, T - 6,
            k == 0 ? "start" : k == 2 ? "end" : "middle", lab);
    }
    put(b, "<text x=\"%d\" y=\"12\">columns: dims %d-%d (last two)</text>", L, split, rank - 1);
    put(b, "<text x=\"2\" y=\"%d\">rows: dims 0-%d</text>", T - 6, split > 0 ? split - 1 : 0);
    /* the colour scale */
    static const double stops[] = {0, 1e-4, 1e-3, 1e-2, 0.1, 1, 2};
    static const char *const names[] = {"&lt;=1e-6", "1e-4", "1e-3", "0.01", "0.1", "1", "&gt;1"};
    int y = T + gh + 18;
    put(b, "<text x=\"%d\" y=\"%d\">err/tol:</text>", L - 84, y + 10);
    for (int k = 0; k < 7; k++) {
        heat_colour(stops[k], colour, sizeof colour);
        put(b, "<rect x=\"%d\" y=\"%d\" width=\"40\" height=\"12\" fill=\"%s\" stroke=\"#888\" stroke-width=\".5\"/>"
               "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>", L + k * 46, y, colour, L + k * 46 + 20, y + 26,
            names[k]);
    }
    put(b, "</svg></figure>\n");
}

/* heat maps report.html draws: the first failures' (each is tens of kB of SVG; all are in
   report.json), so a run with hundreds of failures stays a file a browser opens at once */
#define HTML_HEATMAPS 20

/* How a row shows its case: anchored (id = the case id) where the case is read (failures, waived,
 * or an op section for the rest), else linked to that anchor; with the repro, and a heat map
 * while *heat_left allows (each is tens of kB: a large failing run stays quick to open). */
typedef struct {
    int anchored, show_repro;
    int *heat_left;
} row_mode;

static void html_case_row(buf_t *b, const cJSON *c, row_mode m)
{
    const char *st = str(c, "status"), *id = str(c, "id");
    double amb = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, item(c, "outputs")) amb += num(o, "n_ambiguous");
    put(b, "<tr class=\"%s\"", st);
    if (m.anchored) {
        put(b, " id=\"");
        put_esc(b, id);
        put(b, "\"");
    }
    put(b, "><td><a href=\"");
    put_href(b, id);
    put(b, "\"><code>");
    put_esc(b, id);
    char named[256];
    report_case_standards_failed(c, named, sizeof named);
    char worst[32] = "n/a", ulp[32] = "n/a"; /* nothing compared: no number to show */
    if (case_compared(c)) {
        snprintf(worst, sizeof worst, "%.3g", case_metric(c, "max_err_over_tol"));
        snprintf(ulp, sizeof ulp, "%.3g", case_metric(c, "max_ulp"));
    }
    put(b, "</code></a></td><td class=\"st\">%s%s</td><td>%s</td><td>%s</td><td>%.0f</td><td>%s</td><td class=\"msg\">", st,
        case_validation(c) ? " (validated)" : "", worst, ulp, amb, named);
    put_esc(b, str(c, "message"));
    if (item(c, "waiver")) {
        put(b, "<br>");
        put_waiver(b, item(c, "waiver"), 1);
    }
    if (m.show_repro) {
        put(b, "<br><code>");
        put_esc(b, str(c, "repro"));
        put(b, "</code>");
        int drew = 0;
        cJSON_ArrayForEach(o, item(c, "outputs"))
            if (item(o, "heatmap") && m.heat_left && *m.heat_left > 0 && (drew = 1)) svg_heatmap(b, item(o, "heatmap"), o);
        if (drew) --*m.heat_left;
        else if (m.heat_left && *m.heat_left <= 0 && case_compared(c))
            put(b, "<br><small>heat map: in report.json (the first %d failures show theirs here)</small>", HTML_HEATMAPS);
    }
    put(b, "</td></tr>\n");
}

static void html_table_head(buf_t *b);

static void html_missing_groups(buf_t *b, const cJSON *report)
{
    reason_group g[MAX_REASONS];
    int n = missing_groups(report, g), total = 0;
    for (int k = 0; k < n; k++) total += g[k].n;
    if (!total) return;
    put(b, "<h3>missing (%d), by reason</h3>\n", total);
    for (int k = 0; k < n; k++) {
        put(b, "<details><summary><b>%d missing</b>: ", g[k].n);
        put_esc(b, g[k].reason);
        put(b, "</summary>\n");
        html_table_head(b);
        const cJSON *c;
        cJSON_ArrayForEach(c, item(report, "cases"))
            if (case_status_of(c) == CASE_MISSING && case_group(c, g, n) == k) html_case_row(b, c, (row_mode){1, 0, NULL});
        put(b, "</table></details>\n");
    }
}

static void html_table_head(buf_t *b)
{
    put(b, "<table><tr><th>case</th><th>status</th><th>worst err/tol</th><th>max ULP</th><th>ambiguous</th>"
           "<th>named standards failed</th><th>message</th></tr>\n");
}

/* The failing cases, failures first: failed, crashed, timeout, error (each its own table), then
 * missing, one collapsed group per reason with its count */
static void html_failures(buf_t *b, const cJSON *report)
{
    int heat_left = HTML_HEATMAPS;
    const cJSON *c;
    put(b, "<h2 id=\"failures\">Failures</h2>\n<p>In the order to read them: wrong answers first, then cases that "
           "crashed, timed out or could not run; missing outputs last, grouped by reason.</p>\n");
    for (int r = 0; r < N_RANKS - 1; r++) {
        int n = 0;
        cJSON_ArrayForEach(c, item(report, "cases")) n += fail_rank(case_status_of(c)) == r;
        if (!n) continue;
        put(b, "<h3>%s (%d)</h3>\n", status_label(rank_status[r]), n);
        html_table_head(b);
        cJSON_ArrayForEach(c, item(report, "cases"))
            if (fail_rank(case_status_of(c)) == r) html_case_row(b, c, (row_mode){1, 1, &heat_left});
        put(b, "</table>\n");
    }
    html_missing_groups(b, report);
}

/* waived cases: each with its reason and link, and the status it was waived from */
static void html_waived(buf_t *b, const cJSON *report)
{
    put(b, "<h2 id=\"waived\">Waived</h2>\n<p>Known divergences a waiver names; each with its reason and link.</p>\n");
    html_table_head(b);
    const cJSON *c;
    cJSON_ArrayForEach(c, item(report, "cases"))
        if (case_status_of(c) == CASE_WAIVED) html_case_row(b, c, (row_mode){1, 1, NULL});
    put(b, "</table>\n");
}

/* one op's cases: anchored here unless the Failures or Waived section holds them (linked then) */
static void html_case_table(buf_t *b, const cJSON *report, const char *op)
{
    html_table_head(b);
    const cJSON *c;
    cJSON_ArrayForEach(c, item(report, "cases")) {
        if (strcmp(str(c, "op"), op)) continue;
        case_status s = case_status_of(c);
        html_case_row(b, c, (row_mode){!status_fails(s) && s != CASE_WAIVED, 0, NULL});
    }
    put(b, "</table>\n");
}

/* report.html's head: the styles, a failing row's colour by its status's kind (a flat template) */
static void html_head(buf_t *b, int pass)
{
    /* a row is styled by its status's kind: every failing status alike (crashed and timeout too) */
    char failing[160] = "", skipped[160] = "";
    for (int i = 0; i < CASE_N_STATUS; i++) {
        char *sel = status_fails((case_status)i) ? failing : status_kind_of((case_status)i) == STATUS_SKIP ? skipped : NULL;
        if (sel) snprintf(sel + strlen(sel), 160 - strlen(sel), "%str.%s td", *sel ? "," : "", status_name((case_status)i));
    }
    put(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>conform report</title>\n<style>\n"
           "body{font-family:system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse;margin:.5em 0}"
           "td,th{border:1px solid #ccc;padding:3px 5px;font-size:13px;text-align:left;vertical-align:top}"
           "th{background:#f2f2f2}%s{background:#fdecea}%s{background:#fff8e1}"
           ".verdict{font-size:1.4em;font-weight:bold;color:%s}figure{display:inline-block;margin:0 2em 1em 0}"
           "figcaption{font-size:12px;color:#555}code{font-size:12px}td code,td.msg{overflow-wrap:anywhere}td:first-child{min-width:14em;max-width:26em}td.st{white-space:nowrap}"
           "details>summary>h2,details>summary>h3{display:inline}svg.heat text{fill:#333}tr.unjudged td{background:#fff3cd}"
           ".why{font-size:1.1em;font-weight:bold;color:#c0392b}.waiver{color:#7d6608}tr:target td{outline:2px solid #2e86c1}\n</style></head><body>\n",
        failing, skipped, pass ? "#1e8449" : "#c0392b");
}

/* report.html's first screen: the verdict, what it rests on, the command */
static void html_summary(buf_t *b, const cJSON *report, int pass)
{
    const cJSON *s = item(report, "summary");
    char counts[256], why[256];
    put(b, "<h1>conform report</h1>\n<p class=\"verdict\">%s: %.0f cases: %s</p>\n", pass ? "PASS" : "FAIL",
        num(s, "total"), counts_text(s, counts, sizeof counts));
    if (failed_on_text(report, why, sizeof why)[0]) put(b, "<p class=\"why\">The run fails on: %s.</p>\n", why);
    if (cJSON_IsTrue(item(report, "interrupted")))
        put(b, "<p class=\"verdict\">INTERRUPTED: stopped by a signal, %.0f cases not run</p>\n", num(report, "cases_not_run"));
    put(b, "<p><code>");
    put_esc(b, str(report, "command"));
    put(b, "</code><br>isa %s, threads %.0f, seed %.0f, %.1f s; %.0f ambiguous elements; proofs %.0f/%.0f</p>\n",
        str(report, "isa"), num(report, "threads"), num(report, "seed"), num(s, "duration_s"), num(s, "ambiguous_elements"),
        num(s, "proofs") - num(s, "proofs_failed"), num(s, "proofs"));
    suite_power((doc_t){b, 1}, report);
}

/* the histograms' bin labels: 0, <= each inner edge, > the last edge */
static void hist_labels(const cJSON *edges, char lab[COMPARE_HIST_BINS][16], const char **p)
{
    for (int i = 0; i < COMPARE_HIST_BINS; i++) {
        if (i == 0) snprintf(lab[i], 16, "0");
        else if (i == COMPARE_HIST_BINS - 1) snprintf(lab[i], 16, ">%g", cJSON_GetArrayItem(edges, i - 1)->valuedouble);
        else snprintf(lab[i], 16, "<=%g", cJSON_GetArrayItem(edges, i)->valuedouble);
        p[i] = lab[i];
    }
}

/* one section per op: its error histograms and every case */
static void html_op_sections(buf_t *b, const cJSON *report)
{
    const cJSON *edges = item(report, "histogram_edges"), *o;
    char lr[COMPARE_HIST_BINS][16], lu[COMPARE_HIST_BINS][16];
    const char *plr[COMPARE_HIST_BINS], *plu[COMPARE_HIST_BINS];
    hist_labels(item(edges, "err_over_tol"), lr, plr);
    hist_labels(item(edges, "ulp"), lu, plu);
    cJSON_ArrayForEach(o, item(report, "ops")) {
        double hr[COMPARE_HIST_BINS] = {0}, hu[COMPARE_HIST_BINS] = {0};
        const cJSON *c, *out;
        cJSON_ArrayForEach(c, item(report, "cases")) {
            if (strcmp(str(c, "op"), o->string)) continue;
            cJSON_ArrayForEach(out, item(c, "outputs")) {
                for (int i = 0; i < COMPARE_HIST_BINS; i++) {
                    const cJSON *a = cJSON_GetArrayItem(item(out, "hist_err_over_tol"), i), *u = cJSON_GetArrayItem(item(out, "hist_ulp"), i);
                    hr[i] += a ? a->valuedouble : 0;
                    hu[i] += u ? u->valuedouble : 0;
                }
            }
        }
        put(b, "<h2>%s</h2>\n", o->string);
        svg_histogram(b, "error in units of the derived bound", hr, plr, COMPARE_HIST_BINS);
        svg_histogram(b, "error in ULPs (of the dtype) of the element's scale", hu, plu, COMPARE_HIST_BINS);
        put(b, "<details><summary>all %.0f cases</summary>\n", num(o, "total"));
        html_case_table(b, report, o->string);
        put(b, "</details>\n");
    }
}

char *report_html(const cJSON *report)
{
    buf_t b = {0};
    const doc_t d = {&b, 1};
    const cJSON *s = item(report, "summary");
    int pass = report_all_passed(report);
    html_head(&b, pass);
    html_summary(&b, report, pass);
    put_owned(&b, report_runner_html(report));
    put(&b, "<h2>By op</h2>\n");
    ops_table(&b, report, 1);
    if (count_failing(s) > 0) html_failures(&b, report);
    if (num(s, "waived") > 0) html_waived(&b, report);
    put_owned(&b, report_standards_html(report));
    put_owned(&b, report_disagreements(report, 1));
    html_op_sections(&b, report);
    put(&b, "<h2>Proofs of the references</h2>\n");
    proofs_table(d, report);
    const dtype_desc *dt = report_dtype(report);
    put(&b, "<h2>Tolerances</h2>\n<p>Per element: <code>%s</code>, u = 2<sup>%d</sup> (%s), eta = 2<sup>%d</sup>; %s.</p>\n",
        CONFORM_TOL_FORMULA, ilogb(dt->u), dt->name, ilogb(dt->eta), CONFORM_TOL_AMBIG);
    tolerances_table(d, report);
    /* a link to a case inside a closed group opens the group (no network, no other file) */
    put(&b, "<script>function conformOpen(){var e=document.getElementById(decodeURIComponent(location.hash.slice(1)));"
            "for(var p=e;p;p=p.parentElement)if(p.tagName==='DETAILS')p.open=true;if(e)e.scrollIntoView();}"
            "addEventListener('hashchange',conformOpen);if(location.hash)conformOpen();</script>\n");
    put(&b, "</body></html>\n");
    return b.s;
}

int report_write_all(const cJSON *report, const char *dir, char *err, size_t errlen)
{
    static const char *const names[] = {"report.json", "report.md", "junit.xml", "report.html"};
    char path[4][1100], *text[4] = {json_text(report), report_markdown(report), report_junit(report), report_html(report)};
    const char *paths[4], *texts[4];
    int rc = 0;
    for (int i = 0; i < 4; i++) {
        snprintf(path[i], sizeof path[i], "%s/%s", dir, names[i]);
        paths[i] = path[i];
        texts[i] = text[i];
        if (!text[i] && !rc) {
            snprintf(err, errlen, "%s: out of memory", path[i]);
            rc = -1;
        }
    }
    /* the four as one: a report never mixes this run's files with an earlier run's */
    if (!rc) rc = write_texts_atomic(4, paths, texts, err, errlen);
    for (int i = 0; i < 4; i++) free(text[i]);
    return rc;
}
