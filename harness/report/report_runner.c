/* "What ran": report.json's "runner" (impl_provenance: the plugin's name and version, or the
 * device runner's record DIR/runner.json) in the summary, report.md, report.html and the JUnit
 * properties. An op the runner declared unsupported is named with its reason wherever its cases
 * are counted not_implemented. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "report_buf.h"

typedef void (*put_text_fn)(buf_t *b, const char *t);

/* a string field, or "" */
static const char *field(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsString(v) ? v->valuestring : "";
}

/* the console's text: as it is */
static void put_plain(buf_t *b, const char *t) { put(b, "%s", t ? t : ""); }

/* one line: kind name [version], device (device_name) on host, dtype, library versions */
static void put_what_ran(buf_t *b, const cJSON *r, put_text_fn text)
{
    const char *device = field(r, "device");
    const char *name = *field(r, "runner") ? field(r, "runner") : field(r, "name");
    text(b, field(r, "kind"));
    if (strcmp(name, field(r, "kind"))) { put(b, " "); text(b, name); }
    if (*field(r, "version")) { put(b, " "); text(b, field(r, "version")); }
    if (*device) {
        put(b, ", device ");
        text(b, device);
        put(b, " (");
        text(b, field(r, "device_name"));
        put(b, ") on ");
        text(b, field(r, "host"));
    }
    if (*field(r, "compute_dtype")) { put(b, ", computed in "); text(b, field(r, "compute_dtype")); }
    const cJSON *v;
    int first = 1;
    cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(r, "versions")) {
        put(b, first ? "; " : ", ");
        first = 0;
        text(b, v->string);
        put(b, " ");
        text(b, cJSON_IsString(v) ? v->valuestring : "not found");
    }
    if (*field(r, "note")) { put(b, "; "); text(b, field(r, "note")); }
}

/* whether the report has cases of op */
static int op_in_report(const cJSON *report, const char *op)
{
    return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(report, "ops"), op) != NULL;
}

void report_runner_summary(const cJSON *report, FILE *f)
{
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(report, "runner"), *o;
    if (!r) return;
    buf_t b = {0};
    put_what_ran(&b, r, put_plain);
    fprintf(f, "what ran: %s\n", b.s ? b.s : "");
    free(b.s);
    cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(r, "ops"))
        if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(o, "supported")) && op_in_report(report, o->string))
            fprintf(f, "%s: not run on this device: %s\n", o->string, field(o, "reason"));
}

/* "## What ran" (md) or <h2>What ran</h2> (html): the line above, then the call per op */
static char *what_ran_doc(const cJSON *report, int html)
{
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(report, "runner"), *o;
    if (!r) return NULL;
    buf_t b = {0};
    put_text_fn text = html ? put_esc : put_md;
    put(&b, html ? "<h2>What ran</h2>\n<p>" : "\n## What ran\n\n");
    put_what_ran(&b, r, text);
    put(&b, html ? "</p>\n" : "\n\n");
    const cJSON *ops = cJSON_GetObjectItemCaseSensitive(r, "ops");
    if (cJSON_GetArraySize(ops) > 0)
        put(&b, html ? "<table><tr><th>op</th><th>run</th><th>call, or why not</th></tr>\n"
                     : "| op | run | call, or why not |\n|---|---|---|\n");
    cJSON_ArrayForEach(o, ops) {
        int ok = !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(o, "supported"));
        const char *what = ok ? field(o, "call") : field(o, "reason");
        put(&b, html ? "<tr class=\"%s\"><td>" : "| ", ok ? "passed" : "waived");
        text(&b, o->string);
        put(&b, html ? "</td><td>%s</td><td>" : " | %s | ", ok ? "yes" : "not on this device");
        text(&b, what);
        put(&b, html ? "</td></tr>\n" : " |\n");
    }
    if (cJSON_GetArraySize(ops) > 0 && html) put(&b, "</table>\n");
    return b.s;
}

char *report_runner_markdown(const cJSON *report) { return what_ran_doc(report, 0); }
char *report_runner_html(const cJSON *report) { return what_ran_doc(report, 1); }

/* JUnit <property> lines of what ran: runner.<field> for the strings, runner.version.<lib>, runner.op.<op> */
char *report_runner_junit(const cJSON *report)
{
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(report, "runner"), *v;
    if (!r) return NULL;
    buf_t b = {0};
    cJSON_ArrayForEach(v, r) if (cJSON_IsString(v)) {
        put(&b, "      <property name=\"runner.");
        put_esc(&b, v->string);
        put(&b, "\" value=\"");
        put_esc(&b, v->valuestring);
        put(&b, "\"/>\n");
    }
    cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(r, "versions")) {
        put(&b, "      <property name=\"runner.version.");
        put_esc(&b, v->string);
        put(&b, "\" value=\"");
        put_esc(&b, cJSON_IsString(v) ? v->valuestring : "not found");
        put(&b, "\"/>\n");
    }
    cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(r, "ops")) {
        int ok = !cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(v, "supported"));
        put(&b, "      <property name=\"runner.op.");
        put_esc(&b, v->string);
        put(&b, "\" value=\"%s", ok ? "" : "not run on this device: ");
        put_esc(&b, ok ? field(v, "call") : field(v, "reason"));
        put(&b, "\"/>\n");
    }
    return b.s;
}
