/* No report hides a status: a run whose outputs of one op are all missing says so in the first
 * lines of report.md and report.html, in the console's last lines and in junit.xml, and that op's
 * row never shows the perfect numbers of a pass. (tests/reports_browser.py checks the rendered
 * first screens where chromium is installed.) */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* a report of 3 passing roi_align cases and 4 roi_align_rotated cases whose outputs are missing */
static cJSON *missing_run(void)
{
    cJSON *r = report_new("conform run --impl dir:X", "avx2", 2), *cases = cJSON_GetObjectItem(r, "cases");
    for (int k = 0; k < 7; k++) {
        cJSON *c = cJSON_CreateObject(), *outs = cJSON_CreateArray(), *o = cJSON_CreateObject();
        char id[64];
        snprintf(id, sizeof id, "t/case%d", k);
        cJSON_AddStringToObject(c, "id", id);
        cJSON_AddStringToObject(c, "op", k < 3 ? "roi_align" : "roi_align_rotated");
        cJSON_AddStringToObject(c, "status", k < 3 ? "passed" : "missing");
        cJSON_AddStringToObject(c, "message", k < 3 ? "" : "output y: X/y.npy not found");
        cJSON_AddStringToObject(c, "repro", "conform run ...");
        if (k < 3) { /* a compared output */
            cJSON_AddStringToObject(o, "name", "output");
            cJSON_AddNumberToObject(o, "numel", 12);
            cJSON_AddNumberToObject(o, "max_err_over_tol", 0.25);
            cJSON_AddNumberToObject(o, "max_ulp", 3);
            cJSON_AddItemToArray(outs, o);
        } else cJSON_Delete(o);
        cJSON_AddItemToObject(c, "outputs", outs);
        cJSON_AddItemToArray(cases, c);
    }
    report_summarize(r);
    return r;
}

static char *first_lines(const char *text, int n)
{
    char *s = strdup(text), *p = s;
    for (int i = 0; i < n && p; i++) p = strchr(p + 1, '\n');
    if (p) *p = '\0';
    return s;
}

Test(report_status, missing_outputs_are_named_in_the_first_lines_of_every_format)
{
    cJSON *r = missing_run();
    cr_assert(!report_all_passed(r));
    char *md = report_markdown(r), *top = first_lines(md, 8);
    cr_assert(strstr(top, "**FAIL: 7 cases: 3 passed, 0 failed, 4 missing**"), "%s", top);
    cr_assert(strstr(top, "The run fails on: 4 missing"), "%s", top);
    /* the op whose outputs are all missing: a missing count and no perfect numbers (passed, then validated) */
    cr_assert(strstr(md, "| roi_align_rotated | 4 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 0 | 4 | 0 | 0 | n/a | n/a |"), "%s", md);
    cr_assert(strstr(md, "| roi_align | 3 | 3 | 0 |"), "%s", md);
    char *html = report_html(r), *body = strstr(html, "<body>");
    cr_assert(body);
    char *head = first_lines(body, 4);
    cr_assert(strstr(head, "FAIL: 7 cases: 3 passed, 0 failed, 4 missing") && strstr(head, "The run fails on: 4 missing"), "%s", head);
    cr_assert(strstr(html, "<tr class=\"failed\"><td>roi_align_rotated</td>"), "the all-missing op's row is not marked");
    char *junit = report_junit(r);
    cr_assert(strstr(junit, "failures=\"4\""), "%s", junit);
    cr_assert(strstr(junit, "<property name=\"status.missing\" value=\"4\"/>"), "%s", junit);
    cr_assert(strstr(junit, "<property name=\"status.not_implemented\" value=\"0\"/>"), "every status, even at 0: %s", junit);
    char console[8192] = "";
    FILE *f = fmemopen(console, sizeof console - 1, "w");
    report_print_summary(r, f);
    fclose(f);
    size_t n = strlen(console);
    while (n && console[n - 1] == '\n') console[--n] = '\0';
    const char *last = strrchr(console, '\n');
    cr_assert_str_eq(last ? last + 1 : console, "3 passed, 0 failed, 4 missing", "%s", console);
    cr_assert(strstr(console, "the run fails on: 4 missing"), "%s", console);
    free(md); free(top); free(html); free(head); free(junit);
    cJSON_Delete(r);
}

Test(report_status, waived_and_not_implemented_are_counted_as_themselves)
{
    cJSON *r = missing_run();
    const cJSON *c;
    int k = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "cases")) {
        if (k == 3) cJSON_ReplaceItemInObject((cJSON *)c, "status", cJSON_CreateString("waived"));
        if (k >= 4) cJSON_ReplaceItemInObject((cJSON *)c, "status", cJSON_CreateString("not_implemented"));
        k++;
    }
    report_summarize(r);
    cr_assert(report_all_passed(r));
    char *md = report_markdown(r);
    cr_assert(strstr(md, "**PASS: 7 cases: 3 passed, 0 failed, 1 waived, 3 not implemented**"), "%s", md);
    cr_assert(!strstr(md, "The run fails on"), "%s", md);
    char console[8192] = "";
    FILE *f = fmemopen(console, sizeof console - 1, "w");
    report_print_summary(r, f);
    fclose(f);
    cr_assert(strstr(console, "\n3 passed, 0 failed, 1 waived, 3 not implemented\n"), "waived is not passed: %s", console);
    free(md);
    cJSON_Delete(r);
}
