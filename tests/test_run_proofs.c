/* conform run proves the references of the ops it touched, unless --no-proofs (for many runs of one
 * build: the zoo, the stand-in; conform verify proves them once). */
#include <criterion/criterion.h>
#include <stdio.h>

#include "scratch.h"
#include "test_files.h"
#include "cli.h"

static char dir[64];

static void setup(void) { scratch_make_quiet(dir, sizeof dir, "proofs"); }

static void teardown(void) { scratch_remove(dir); }

/* the number of proofs report.json of DIR/sub holds, its cases all passed */
static int proofs_of_run(const char *sub, int no_proofs)
{
    char rep[128];
    snprintf(rep, sizeof rep, "%s/%s", dir, sub);
    const char *argv[] = {"conform", "run", "cases/smoke.json", "--filter", "smoke/fwd_grid*", "--report-dir", rep, "--quiet",
                          "--no-proofs"};
    cr_assert_eq(cmd_run(no_proofs ? 9 : 8, (char **)argv), EXIT_OK);
    cJSON *r = test_report(dir, sub);
    int n = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r, "proofs"));
    cr_assert_gt(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(r, "cases")), 0);
    cJSON_Delete(r);
    return n;
}

Test(run_proofs, a_run_proves_its_ops_and_no_proofs_skips_them, .init = setup, .fini = teardown)
{
    cr_assert_gt(proofs_of_run("with", 0), 0, "a run proves the references of the ops it ran");
    cr_assert_eq(proofs_of_run("without", 1), 0, "--no-proofs runs no proof");
}
