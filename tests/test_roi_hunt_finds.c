/* The RoIAlign family's hunt finds (docs/hunt.md, "What the hunt found on this tree"): the minimal
 * cases of tests/roi_hunt_finds.json, each of which failed a float32 kernel that follows the spec
 * (the optimized path, the bug-free zoo build or both) for a gap of the golden's bounds or a bug of
 * the optimized path. Each is judged as `conform run` judges it, on every ISA this CPU has and at
 * 1 and 2 threads, and must pass. */
#include <criterion/criterion.h>
#include <string.h>
#include <unistd.h>

#include "conform_opt.h"
#include "runner.h"
#include "suite.h"

static const char *const finds = "tests/roi_hunt_finds.json";

/* every case of the file on impl (optimized, or a plugin) at isa, threads: the ids of those that
   did not pass */
static int failing(const char *spec, conform_isa isa, int threads, char *ids, size_t n)
{
    char err[512];
    suite_t s;
    cr_assert_eq(suite_load(finds, &s, err, sizeof err), 0, "%s", err);
    cr_assert_geq(s.n_cases, 9, "%s: %d cases", finds, s.n_cases);
    impl_t impl;
    cr_assert_eq(impl_open(spec, NULL, &impl, err, sizeof err), 0, "%s", err);
    run_env env = {{isa, threads}, &impl, {0, 60.0, NULL}, 0, NULL, NULL};
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

Test(roi_hunt_finds, every_minimal_case_passes_on_every_isa_and_thread_count)
{
    const conform_isa isas[] = {CONFORM_ISA_SCALAR, CONFORM_ISA_AVX2, CONFORM_ISA_AVX512};
    static char ids[16384];
    for (size_t k = 0; k < sizeof isas / sizeof isas[0]; k++)
        for (int threads = 1; threads <= 2 && conform_isa_available(isas[k]); threads++)
            cr_expect_eq(failing("optimized", isas[k], threads, ids, sizeof ids), 0, "%s, %d threads:%s",
                         conform_isa_name(isas[k]), threads, ids);
}

/* the gaps of the golden were shared by the zoo's bug-free build (an independent kernel that follows
   the spec): where it is built (make zoo), it passes every case too */
Test(roi_hunt_finds, the_bug_free_zoo_build_passes_every_minimal_case)
{
    static char ids[16384];
    if (access(TEST_BUILD "/zoo/none.so", R_OK) != 0) {
        cr_log_warn(TEST_BUILD "/zoo/none.so not built (make zoo): skipped");
        return;
    }
    cr_expect_eq(failing("plugin:" TEST_BUILD "/zoo/none.so", CONFORM_ISA_AUTO, 1, ids, sizeof ids), 0, "none.so:%s", ids);
}
