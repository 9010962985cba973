/* The hunt-finds tests' one loop: every case of a suite file on an implementation, and the ids of
 * those that did not pass. */
#ifndef CONFORM_TESTS_SUITE_FAILING_H
#define CONFORM_TESTS_SUITE_FAILING_H

#include <criterion/criterion.h>
#include <string.h>

#include "conform_opt.h"
#include "runner.h"
#include "suite.h"

/* every case of file (at least min_cases) on impl spec (optimized, or a plugin) at isa, threads,
   each in a child within timeout_s when that is > 0 (else in-process): how many did not pass, their
   ids with status and message in ids */
static inline int suite_failing(const char *file, int min_cases, double timeout_s, const char *spec, conform_isa isa,
                                int threads, char *ids, size_t n)
{
    char err[512];
    suite_t s;
    cr_assert_eq(suite_load(file, &s, err, sizeof err), 0, "%s", err);
    cr_assert_geq(s.n_cases, min_cases, "%s: %d cases", file, s.n_cases);
    impl_t impl;
    cr_assert_eq(impl_open(spec, NULL, &impl, err, sizeof err), 0, "%s", err);
    run_env env = {{isa, threads}, &impl, {timeout_s > 0, timeout_s, NULL}, 0, NULL, NULL};
    int bad = 0;
    ids[0] = 0;
    for (int i = 0; i < s.n_cases; i++) {
        case_result r;
        run_case(&s.cases[i], case_seed(&s.cases[i], s.seed), &env, &r);
        if (r.status == CASE_PASSED) continue;
        bad++;
        size_t l = strlen(ids);
        snprintf(ids + l, n - l, " %s (%s: %s)", s.cases[i].id, status_name(r.status), r.message);
    }
    impl_close(&impl);
    suite_free(&s);
    return bad;
}

#endif
