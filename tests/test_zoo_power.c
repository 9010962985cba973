/* The suite power a run attaches to its report (harness/report/zoo_power.c, docs/zoo.md): the committed
 * measurement of the suites the run loaded, and whether it is still current. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "report.h"
#include "scratch.h"
#include "suite.h"
#include "zoo_power.h"

static char dir[64], suite_path[128], power_path[128];
static suite_t suite; /* 2 cases, named "tiny" */

static void write_file(const char *p, const char *text)
{
    FILE *f = fopen(p, "w");
    cr_assert(f);
    fputs(text, f);
    fclose(f);
}

static void setup(void)
{
    scratch_make(dir, sizeof dir, "zoo");
    snprintf(suite_path, sizeof suite_path, "%s/tiny.json", dir);
    snprintf(power_path, sizeof power_path, "%s/power.json", dir);
    write_file(suite_path, "{\"suite\": \"tiny\", \"cases\": [{\"name\": \"a\", \"op\": \"roi_align\", "
                           "\"shapes\": {\"input\": [1,1,4,4], \"rois\": [2,5]}, \"attrs\": {\"pooled_h\": 2, \"pooled_w\": 2}, "
                           "\"grid\": {\"aligned\": [true, false]}}]}");
    char err[CONFORM_ERR_LEN];
    cr_assert_eq(suite_load(suite_path, &suite, err, sizeof err), 0, "%s", err);
    cr_assert_eq(suite.n_cases, 2);
}

static void teardown(void)
{
    suite_free(&suite);
    scratch_remove(dir);
}

static const cJSON *attach(const char *power_text)
{
    static cJSON *report;
    cJSON_Delete(report);
    report = cJSON_CreateObject();
    if (power_text) write_file(power_path, power_text);
    zoo_power_attach(report, &suite, 1, power_path);
    return cJSON_GetObjectItemCaseSensitive(report, "suite_power");
}

static const char *summary(const cJSON *list)
{
    cr_assert_eq(cJSON_GetArraySize(list), 1);
    return cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(list, 0), "summary")->valuestring;
}

TestSuite(zoo_power, .init = setup, .fini = teardown);

Test(zoo_power, a_current_measurement_is_reported_with_its_counts)
{
    const cJSON *l = attach("{\"suite\": \"tiny\", \"cases\": 2, \"caught\": 30, \"total\": 31, \"hidden\": [\"x\"], "
                            "\"bugs\": [{\"id\": \"b1\", \"op\": \"roi_align\", \"what\": \"long text\", \"caught\": true, "
                            "\"cases_failed\": 3, \"first_case\": \"tiny/a\"}]}");
    const char *s = summary(l);
    const cJSON *row = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(l, 0), "bugs"), 0);
    cr_assert_str_eq(cJSON_GetObjectItemCaseSensitive(row, "first_case")->valuestring, "tiny/a");
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(row, "cases_failed")->valueint, 3);
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(row, "what"), "descriptions stay in docs/zoo.md");
    cr_assert(strstr(s, "the tiny suite catches 30 of 31 known bug classes"), "%s", s);
    cr_assert(strstr(s, "1 hidden") && strstr(s, "measured on its 2 cases"), "%s", s);
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(l, 0), "current")));
}

Test(zoo_power, the_generated_mutants_are_counted_when_measured)
{
    const cJSON *l = attach("{\"suite\": \"tiny\", \"cases\": 2, \"caught\": 3, \"total\": 3, \"hidden\": [], "
                            "\"mutants\": {\"total\": {\"generated\": 100, \"killed\": 90, \"equivalent\": 6, "
                            "\"within_rounding\": 2, \"unexplained\": 1, \"did_not_compile\": 1}, "
                            "\"per_op\": {\"roi_align\": {\"generated\": 40, \"killed\": 39}}}}");
    const char *s = summary(l);
    cr_assert(strstr(s, "of 100 generated mutants of the zoo's kernels it kills 90, 6 survive as equivalent, 2 within "
                        "rounding, 1 unexplained, 1 do not compile"), "%s", s);
    const cJSON *mu = cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(l, 0), "mutants");
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(mu, "total"), "killed")->valueint, 90);
    const cJSON *ra = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(mu, "per_op"), "roi_align");
    cr_assert_eq(cJSON_GetObjectItemCaseSensitive(ra, "killed")->valueint, 39);
}

Test(zoo_power, a_table_without_mutants_or_with_broken_counts_reads_as_before)
{
    const char *before = summary(attach("{\"suite\": \"tiny\", \"cases\": 2, \"caught\": 3, \"total\": 3, \"hidden\": []}"));
    cr_assert(strstr(before, "catches 3 of 3") && !strstr(before, "mutants"), "%s", before);
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(attach(NULL), 0), "mutants"));
    const cJSON *l = attach("{\"suite\": \"tiny\", \"cases\": 2, \"caught\": 3, \"total\": 3, \"hidden\": [], "
                            "\"mutants\": {\"total\": {\"generated\": 100, \"killed\": \"many\"}}}");
    const char *s = summary(l);
    cr_assert(strstr(s, "catches 3 of 3") && !strstr(s, "mutants"), "a count that is not a number says nothing: %s", s);
    cr_assert_null(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(l, 0), "mutants"));
}

Test(zoo_power, a_measurement_of_another_version_of_the_suite_says_so)
{
    const cJSON *l = attach("[{\"suite\": \"other\", \"cases\": 2, \"caught\": 1, \"total\": 1, \"hidden\": []},"
                            " {\"suite\": \"tiny\", \"cases\": 7, \"caught\": 3, \"total\": 3, \"hidden\": []}]");
    const char *s = summary(l);
    cr_assert(strstr(s, "catches 3 of 3") && strstr(s, "earlier version of it with 7 cases, it has 2 now: make zoo-docs"),
              "%s", s);
    cr_assert(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(l, 0), "current")));
}

Test(zoo_power, nothing_without_a_measurement_of_the_suite)
{
    cr_assert_null(attach("{\"suite\": \"other\", \"cases\": 2, \"caught\": 1, \"total\": 1, \"hidden\": []}"));
    cr_assert_null(attach("{\"suite\": \"tiny\", \"cases\": 2}"), "a measurement without counts says nothing");
    unlink(power_path);
    cr_assert_null(attach(NULL), "no file, nothing said");
}

/* the committed tables are the zoo's: every bug is caught or marked hidden, in every suite measured */
Test(zoo_power_table, the_committed_table_accounts_for_every_bug)
{
    char err[CONFORM_ERR_LEN];
    cJSON *all = read_json_file(ZOO_POWER_FILE, err, sizeof err);
    cr_assert(all, "%s", err);
    cr_assert_geq(cJSON_GetArraySize(all), 1);
    const cJSON *p;
    cJSON_ArrayForEach(p, all) {
        int caught = cJSON_GetObjectItemCaseSensitive(p, "caught")->valueint;
        int total = cJSON_GetObjectItemCaseSensitive(p, "total")->valueint;
        int hidden = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(p, "hidden"));
        cr_assert_geq(total, 24);
        cr_assert_eq(caught + hidden, total, "%d caught + %d hidden of %d", caught, hidden, total);
        /* the generated zoo's counts, where measured: every mutant in exactly one column */
        const cJSON *mt = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(p, "mutants"), "total");
        if (!mt) continue;
        int sum = 0;
        static const char *const cols[] = {"killed", "equivalent", "within_rounding", "unexplained", "did_not_compile"};
        for (size_t k = 0; k < sizeof cols / sizeof cols[0]; k++)
            sum += cJSON_GetObjectItemCaseSensitive(mt, cols[k])->valueint;
        cr_assert_eq(sum, cJSON_GetObjectItemCaseSensitive(mt, "generated")->valueint);
    }
    cJSON_Delete(all);
}
