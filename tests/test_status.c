/* The case status: one name table, one failure predicate, and every report format reading a
 * status through them (a crashed case is styled, counted and verdicted as a failure). */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "status.h"

Test(status, names_round_trip_and_unknown_names_read_as_errors)
{
    for (int s = 0; s < CASE_N_STATUS; s++) {
        cr_assert_eq(status_parse(status_name((case_status)s)), (case_status)s, "%s", status_name((case_status)s));
        cr_assert(status_known(status_name((case_status)s)));
    }
    cr_assert_eq(status_parse("no such status"), CASE_ERROR);
    cr_assert(!status_known("no such status"));
    cr_assert(!status_known(""));
}

Test(status, what_fails_a_run)
{
    const case_status failing[] = {CASE_FAILED, CASE_ERROR, CASE_CRASHED, CASE_TIMEOUT, CASE_MISSING};
    const case_status not_failing[] = {CASE_PASSED, CASE_WAIVED, CASE_NOT_IMPLEMENTED};
    for (size_t i = 0; i < sizeof failing / sizeof *failing; i++) cr_assert(status_fails(failing[i]), "%s", status_name(failing[i]));
    for (size_t i = 0; i < sizeof not_failing / sizeof *not_failing; i++)
        cr_assert(!status_fails(not_failing[i]), "%s", status_name(not_failing[i]));
    cr_assert_eq(status_kind_of(CASE_ERROR), STATUS_ERROR);
    cr_assert_eq(status_kind_of(CASE_CRASHED), STATUS_FAIL);
}

/* one case of each status but passed, the others passing: every format says which failed */
Test(status, every_failing_status_is_styled_and_counted_as_a_failure)
{
    for (int s = 0; s < CASE_N_STATUS; s++) {
        cJSON *report = report_new("test", "none", 1);
        cJSON *cases = cJSON_GetObjectItemCaseSensitive(report, "cases");
        cJSON *c = cJSON_CreateObject();
        cJSON_AddStringToObject(c, "id", "t/one");
        cJSON_AddStringToObject(c, "op", "roi_align");
        cJSON_AddStringToObject(c, "status", status_name((case_status)s));
        cJSON_AddStringToObject(c, "message", "why");
        cJSON_AddArrayToObject(c, "outputs");
        cJSON_AddItemToArray(cases, c);
        report_summarize(report);
        int fails = status_fails((case_status)s);
        /* a refused case alone in a run: no failure, but nothing judged, which no run passes on */
        int refused = s == CASE_NOT_IMPLEMENTED || s == CASE_NOT_APPLICABLE;
        cr_assert_eq(report_all_passed(report), !fails && !refused, "%s", status_name((case_status)s));
        char *html = report_html(report), sel[64], row[64];
        /* the row carries its status as its class, and the style sheet colours that class */
        snprintf(row, sizeof row, "<tr class=\"%s\">", status_name((case_status)s));
        snprintf(sel, sizeof sel, "tr.%s td", status_name((case_status)s));
        const char *style_end = strstr(html, "{background:#fdecea}");
        cr_assert(style_end);
        const char *in_style = strstr(html, sel);
        if (fails) {
            cr_assert(strstr(html, row), "%s: a row in the failures table", status_name((case_status)s));
            cr_assert(in_style && in_style < style_end, "%s: styled as a failure", status_name((case_status)s));
            cr_assert(strstr(html, "<tr class=\"failed\"><td>roi_align</td>"), "%s: its op marked failed", status_name((case_status)s));
        } else
            cr_assert(!in_style || in_style > style_end, "%s: not styled as a failure", status_name((case_status)s));
        free(html);
        cJSON_Delete(report);
    }
}
