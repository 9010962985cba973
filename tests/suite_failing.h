/* The hunt-finds tests' one loop: every case of a suite file on an implementation, and the ids of
 * those that did not pass. */
#ifndef CONFORM_TESTS_SUITE_FAILING_H
#define CONFORM_TESTS_SUITE_FAILING_H

#include <criterion/criterion.h>
#include <string.h>
#include <unistd.h>

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

/* every case of file on the optimized path passes on every ISA this CPU has, at 1 and 2 threads */
static inline void suite_passes_on_every_isa(const char *file, int min_cases)
{
    const conform_isa isas[] = {CONFORM_ISA_SCALAR, CONFORM_ISA_AVX2, CONFORM_ISA_AVX512};
    static char ids[16384];
    for (size_t k = 0; k < sizeof isas / sizeof isas[0]; k++)
        for (int threads = 1; threads <= 2 && conform_isa_available(isas[k]); threads++)
            cr_expect_eq(suite_failing(file, min_cases, 0, "optimized", isas[k], threads, ids, sizeof ids), 0,
                         "%s, %d threads:%s", conform_isa_name(isas[k]), threads, ids);
}

/* every case of file passes on the zoo's bug-free build, where this test build made it (make zoo) */
#define SUITE_PASSES_ON_ZOO_NONE(file, min_cases)                                                                  \
    do {                                                                                                           \
        static char ids_[16384];                                                                                   \
        if (access(TEST_BUILD "/zoo/none.so", R_OK) != 0) cr_skip_test(TEST_BUILD "/zoo/none.so not built (make zoo): skipped"); \
        cr_expect_eq(suite_failing(file, min_cases, 0, "plugin:" TEST_BUILD "/zoo/none.so", CONFORM_ISA_AUTO, 1, ids_, \
                                   sizeof ids_), 0, "none.so:%s", ids_);                                           \
    } while (0)

#endif
