/* Suites: parsing, expansion, errors that name the problem, filters and seeds. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "suite.h"

static char path[64];

static const char *write_suite(const char *text)
{
    snprintf(path, sizeof path, "/tmp/conform-suite-XXXXXX");
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static void expect_refusal(const char *text, const char *needle)
{
    suite_t s;
    char err[CONFORM_ERR_LEN] = "";
    int rc = suite_load(write_suite(text), &s, err, sizeof err);
    unlink(path);
    cr_assert_eq(rc, -1, "accepted: %s", text);
    cr_assert(strstr(err, needle), "message '%s' lacks '%s'", err, needle);
}

#define CASE_NO_ATTRS "{\"name\": \"a\", \"op\": \"roi_align\", \"shapes\": {\"input\": [1,1,4,4], \"rois\": [2,5]}"
#define CASE_OK CASE_NO_ATTRS ", \"attrs\": {\"pooled_h\": 2, \"pooled_w\": 2}"

Test(suite, invalid_json_names_the_line) { expect_refusal("{\"suite\": \"x\",\n\"cases\": [\n}", "invalid JSON near line"); }
Test(suite, missing_cases) { expect_refusal("{\"suite\": \"x\"}", "\"cases\""); }
Test(suite, unknown_op) { expect_refusal("{\"suite\": \"x\", \"cases\": [{\"name\": \"a\", \"op\": \"nope\"}]}", "unknown op 'nope'"); }
Test(suite, unknown_attribute) { expect_refusal("{\"suite\": \"x\", \"cases\": [" CASE_NO_ATTRS ", \"attrs\": {\"pooled_h\": 2, \"pooled_w\": 2, \"colour\": 1}}]}", "unknown attribute 'colour'"); }
Test(suite, attribute_of_the_wrong_type) { expect_refusal("{\"suite\": \"x\", \"cases\": [" CASE_NO_ATTRS ", \"attrs\": {\"pooled_h\": 2.5, \"pooled_w\": 2}}]}", "pooled_h"); }
Test(suite, missing_required_attribute) { expect_refusal("{\"suite\": \"x\", \"cases\": [" CASE_NO_ATTRS ", \"attrs\": {\"pooled_h\": 2}}]}", "pooled_w is required"); }
Test(suite, missing_shape) { expect_refusal("{\"suite\": \"x\", \"cases\": [{\"name\": \"a\", \"op\": \"roi_align\", \"shapes\": {\"input\": [1,1,4,4]}, \"attrs\": {\"pooled_h\": 2, \"pooled_w\": 2}}]}", "shapes.rois is missing"); }
Test(suite, invalid_problem_without_expect_error) { expect_refusal("{\"suite\": \"x\", \"cases\": [" CASE_NO_ATTRS ", \"attrs\": {\"pooled_h\": 0, \"pooled_w\": 2}}]}", "pooled_h = 0: must be >= 1"); }
Test(suite, bad_grid) { expect_refusal("{\"suite\": \"x\", \"cases\": [" CASE_OK ", \"grid\": {\"aligned\": []}}]}", "grid.aligned"); }
Test(suite, bad_name) { expect_refusal("{\"suite\": \"x\", \"cases\": [{\"name\": \"a b\", \"op\": \"roi_align\"}]}", "may not contain"); }
/* found by fuzz_suite: a seed beyond unsigned long was cast with undefined behaviour */
Test(suite, seed_out_of_range) { expect_refusal("{\"suite\": \"x\", \"seed\": 1e98, \"cases\": []}", "\"seed\" must be an integer"); }
Test(suite, seed_fractional) { expect_refusal("{\"suite\": \"x\", \"seed\": 1.5, \"cases\": []}", "\"seed\" must be an integer"); }
Test(suite, repeat_not_integral) { expect_refusal("{\"suite\": \"x\", \"cases\": [" CASE_OK ", \"repeat\": 2.5}]}", "repeat must be an integer"); }
/* found by fuzz_suite: a dim of 5.6e50 was cast to int64 with undefined behaviour */
Test(suite, huge_dim) { expect_refusal("{\"suite\": \"x\", \"cases\": [{\"name\": \"a\", \"op\": \"roi_align\", \"shapes\": {\"input\": [1,1,5.6e50,4], \"rois\": [2,5]}, \"attrs\": {\"pooled_h\": 2, \"pooled_w\": 2}}]}", "non-negative integer"); }
Test(suite, int_dist_range)
{
    suite_t s;
    char err[CONFORM_ERR_LEN];
    cr_assert_eq(suite_load(write_suite("{\"suite\": \"x\", \"cases\": [" CASE_OK ", \"gen\": {\"input\": {\"dist\": \"int\", \"lo\": 0, \"hi\": 1e30}}}]}"), &s, err, sizeof err), 0, "%s", err);
    unlink(path);
    problem_t p;
    cr_assert_eq(case_build(&s.cases[0], 1, &p, err, sizeof err), -1);
    cr_assert(strstr(err, "dist int needs integers"), "%s", err);
    problem_free(&p);
    suite_free(&s);
}
Test(suite, duplicate_keys) { expect_refusal("{\"suite\": \"x\", \"cases\": [" CASE_OK ", \"attrs\": {}}]}", "duplicate key 'attrs'"); }
Test(suite, duplicate_ids) { expect_refusal("{\"suite\": \"x\", \"cases\": [" CASE_OK "}, " CASE_OK "}]}", "duplicate case id"); }

Test(suite, grid_and_repeat_expand)
{
    suite_t s;
    char err[CONFORM_ERR_LEN];
    int rc = suite_load(write_suite("{\"suite\": \"x\", \"seed\": 5, \"cases\": [" CASE_OK
                                    ", \"grid\": {\"aligned\": [true, false], \"sampling_ratio\": [0, 1, 2]}, \"repeat\": 2}]}"),
                        &s, err, sizeof err);
    unlink(path);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_eq(s.n_cases, 12);
    cr_assert_str_eq(s.cases[0].id, "x/a/aligned=true,sampling_ratio=0#0");
    cr_assert_str_eq(s.cases[11].id, "x/a/aligned=false,sampling_ratio=2#1");
    cr_assert_eq(s.seed, 5);
    /* filters: exact id, op name, prefix at a boundary, glob */
    cr_assert(case_matches(&s.cases[0], "x/a/aligned=true,sampling_ratio=0#0"));
    cr_assert(!case_matches(&s.cases[1], "x/a/aligned=true,sampling_ratio=0#0"));
    cr_assert(case_matches(&s.cases[5], "roi_align"));
    cr_assert(case_matches(&s.cases[5], "x/a"));
    cr_assert(!case_matches(&s.cases[5], "x/"  "b"));
    cr_assert(case_matches(&s.cases[7], "*aligned=false*"));
    cr_assert(!case_matches(&s.cases[0], "*aligned=false*"));
    /* seeds depend on the id and the run seed only */
    cr_assert_neq(case_seed(&s.cases[0], 1), case_seed(&s.cases[1], 1));
    cr_assert_eq(case_seed(&s.cases[3], 9), case_seed(&s.cases[3], 9));
    cr_assert_neq(case_seed(&s.cases[3], 9), case_seed(&s.cases[3], 10));
    problem_t p;
    cr_assert_eq(case_build(&s.cases[8], 42, &p, err, sizeof err), 0, "%s", err); /* false, 1, #0 */
    cr_assert_eq(problem_int(&p, "aligned"), 0);
    cr_assert_eq(problem_int(&p, "sampling_ratio"), 1);
    problem_free(&p);
    suite_free(&s);
}

Test(suite, expect_error_cases_load)
{
    suite_t s;
    char err[CONFORM_ERR_LEN];
    int rc = suite_load(write_suite("{\"suite\": \"x\", \"cases\": [" CASE_NO_ATTRS
                                    ", \"attrs\": {\"pooled_h\": 0, \"pooled_w\": 2}, \"expect_error\": \"pooled_h\"}]}"),
                        &s, err, sizeof err);
    unlink(path);
    cr_assert_eq(rc, 0, "%s", err);
    cr_assert_str_eq(case_expect_error(&s.cases[0]), "pooled_h");
    suite_free(&s);
}

Test(suite, shipped_suites_load)
{
    const char *files[] = {"cases/conformance.json", "cases/smoke.json"};
    for (int i = 0; i < 2; i++) {
        suite_t s;
        char err[CONFORM_ERR_LEN];
        cr_assert_eq(suite_load(files[i], &s, err, sizeof err), 0, "%s", err);
        cr_assert(s.n_cases > 50);
        suite_free(&s);
    }
}
