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
#include "suite_failing.h"

static const char *const finds = "tests/roi_hunt_finds.json";
/* rois of an infinite extent at sampling_ratio 0: every sample lies at a non-finite position and
   samples nothing (ops.md 0); the zoo's bug-free build took ceil(inf), capped at 1e9, and looped */
static const char *const infinite_rois = "tests/roi_infinite_rois.json";

static int failing_in(const char *file, double timeout_s, const char *spec, conform_isa isa, int threads, char *ids,
                      size_t n)
{
    return suite_failing(file, file == finds ? 9 : 4, timeout_s, spec, isa, threads, ids, n);
}

Test(roi_hunt_finds, every_minimal_case_passes_on_every_isa_and_thread_count) { suite_passes_on_every_isa(finds, 9); }

/* the gaps of the golden were shared by the zoo's bug-free build (an independent kernel that follows
   the spec): where it is built (make zoo), it passes every case too */
Test(roi_hunt_finds, the_bug_free_zoo_build_passes_every_minimal_case) { SUITE_PASSES_ON_ZOO_NONE(finds, 9); }

/* each op at sampling_ratio 0 with one roi extent +inf: no sample, zeros, on the optimized path and
   on the bug-free zoo build, each case well within 10 s (the zoo build ran past any timeout) */
Test(roi_hunt_finds, an_infinite_adaptive_roi_samples_nothing_without_a_hang, .timeout = 60)
{
    static char ids[4096];
    cr_expect_eq(failing_in(infinite_rois, 10.0, "optimized", CONFORM_ISA_AUTO, 1, ids, sizeof ids), 0,
                 "optimized:%s", ids);
    if (access(TEST_BUILD "/zoo/none.so", R_OK) != 0) {
        cr_skip_test(TEST_BUILD "/zoo/none.so not built (make zoo): skipped");
    }
    const char *none = "plugin:" TEST_BUILD "/zoo/none.so";
    cr_expect_eq(failing_in(infinite_rois, 10.0, none, CONFORM_ISA_AUTO, 1, ids, sizeof ids), 0, "none.so:%s", ids);
}
