/* --dump-failures DIR: a failing case of run (or a failing check) in one folder, with its inputs,
 * golden, output, each element's tolerance and err/tol, its attributes and a repro that gives the
 * same verdict from the folder alone, moved elsewhere and run from another directory. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scratch.h"
#include "test_files.h"
#include "cmd_argv.h"
#include "cli.h"
#include "npy.h"
#include "report.h"

static char dir[64];

static void setup(void) { scratch_make_quiet(dir, sizeof dir, "dump"); }

static void teardown(void) { scratch_remove(dir); }


#define GRID "smoke/fwd_grid"
#define VICTIM "smoke/fwd_grid/aligned=true,sampling_ratio=2"
#define FOLDER "smoke_fwd_grid_aligned=true,sampling_ratio=2"

static const char *sub(const char *name) { return sub_of(dir, name); }

/* the victim's output in the export, one element moved by 0.5 */
static void spoil_victim(const char *ex)
{
    char p[300];
    snprintf(p, sizeof p, "%s/manifest.json", ex);
    cJSON *m = test_json(p);
    const cJSON *c;
    char path[700] = "";
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(m, "cases"))
        if (!strcmp(cJSON_GetObjectItem(c, "id")->valuestring, VICTIM))
            snprintf(path, sizeof path, "%s/%s", ex,
                     cJSON_GetObjectItem(cJSON_GetObjectItem(cJSON_GetObjectItem(c, "outputs"), "output"), "path")->valuestring);
    cJSON_Delete(m);
    cr_assert(path[0]);
    tensor_t t;
    char err[512];
    cr_assert_eq(npy_read(path, &t, err, sizeof err), 0, "%s", err);
    t.data[5] += 0.5;
    cr_assert_eq(npy_write_dtype(path, &t.shape, dtype_get(CONFORM_DTYPE_FLOAT32), t.data, err, sizeof err), 0);
    tensor_free(&t);
}

static tensor_t read_npy(const char *path)
{
    tensor_t t;
    char err[512];
    cr_assert_eq(npy_read_ex(path, &t, NPY_F16, err, sizeof err), 0, "%s", err);
    return t;
}

/* exit status of a shell line, its stdout into out */
static int shell(const char *line, const char *out)
{
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s > %s 2>&1", line, out);
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* the report's message of the victim */
static char *victim_message(const char *rep)
{
    cJSON *r = test_report(rep, NULL);
    const cJSON *c;
    char *m = NULL;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "cases"))
        if (!strcmp(cJSON_GetObjectItem(c, "id")->valuestring, VICTIM)) m = strdup(cJSON_GetObjectItem(c, "message")->valuestring);
    cJSON_Delete(r);
    cr_assert(m);
    return m;
}

Test(dump, a_dumped_failing_case_reproduces_its_verdict_from_its_folder_alone, .init = setup, .fini = teardown)
{
    const char *ex = sub("ex");
    cr_assert_eq(EXPORT("cases/smoke.json", "--filter", GRID, "--out", ex, "--outputs", "optimized"), EXIT_OK);
    spoil_victim(ex);
    char impl[300];
    snprintf(impl, sizeof impl, "dir:%s", ex);
    cr_assert_eq(RUN("--impl", impl, "--report-dir", sub("rep"), "--dump-failures", sub("dump"), "--quiet"), EXIT_FAIL);
    char folder[600], path[800];
    snprintf(folder, sizeof folder, "%s/" FOLDER, sub("dump"));
    cr_assert_eq(access(folder, F_OK), 0, "no folder %s", folder);
    /* only the failing case has one */
    snprintf(path, sizeof path, "ls %s | wc -l", sub("dump"));
    cr_assert_eq(shell(path, sub("count.txt")), 0);
    char *count = test_slurp(sub("count.txt"));
    cr_assert_eq(atoi(count), 1, "%s", count);
    free(count);
    /* the golden, the output, tol and err/tol agree: the moved element is over, the rest not */
    snprintf(path, sizeof path, "%s/golden_output.npy", folder);
    tensor_t g = read_npy(path);
    snprintf(path, sizeof path, "%s/output_output.npy", folder);
    tensor_t o = read_npy(path);
    snprintf(path, sizeof path, "%s/tol_output.npy", folder);
    tensor_t tol = read_npy(path);
    snprintf(path, sizeof path, "%s/err_over_tol_output.npy", folder);
    tensor_t ratio = read_npy(path);
    int64_t n = tensor_numel(&g), over = 0;
    cr_assert_eq(tensor_numel(&ratio), n);
    for (int64_t i = 0; i < n; i++) {
        cr_assert_gt(tol.data[i], 0);
        cr_assert_float_eq(ratio.data[i], fabs(o.data[i] - g.data[i]) / tol.data[i], 1e-9 * (1 + ratio.data[i]));
        over += ratio.data[i] > 1;
    }
    cr_assert_eq(over, 1);
    cr_assert_gt(ratio.data[5], 1);
    tensor_free(&g); tensor_free(&o); tensor_free(&tol); tensor_free(&ratio);
    snprintf(path, sizeof path, "%s/attrs.json", folder);
    cJSON *attrs = test_json(path);
    cr_assert(cJSON_IsTrue(cJSON_GetObjectItem(attrs, "aligned")));
    cr_assert_eq(cJSON_GetObjectItem(attrs, "sampling_ratio")->valueint, 2);
    cJSON_Delete(attrs);
    /* repro.txt: absolute paths, from another directory */
    char line[1600], *message = victim_message(sub("rep"));
    snprintf(line, sizeof line, "cd / && sh %s/repro.txt", folder);
    cr_assert_eq(shell(line, sub("out0.txt")), EXIT_FAIL);
    /* repro.sh: the folder moved elsewhere, the export gone, run from another directory */
    snprintf(line, sizeof line, "mv %s %s && rm -rf %s", folder, sub("moved"), ex);
    cr_assert_eq(shell(line, sub("mv.txt")), 0);
    snprintf(line, sizeof line, "cd / && sh %s/repro.sh", sub("moved"));
    cr_assert_eq(shell(line, sub("out.txt")), EXIT_FAIL);
    char *out = test_slurp(sub("out.txt"));
    cr_assert(strstr(out, "roi_align failed (float32): ") && strstr(out, message), "%s\nexpected: %s", out, message);
    free(out);
    free(message);
}

Test(dump, a_waived_failure_and_a_passing_run_dump_nothing, .init = setup, .fini = teardown)
{
    const char *ex = sub("ex");
    cr_assert_eq(EXPORT("cases/smoke.json", "--filter", GRID, "--out", ex, "--outputs", "optimized"), EXIT_OK);
    char impl[300], folder[600];
    snprintf(impl, sizeof impl, "dir:%s", ex);
    cr_assert_eq(RUN("--impl", impl, "--report-dir", sub("rep"), "--dump-failures", sub("dump"), "--quiet"), EXIT_OK);
    snprintf(folder, sizeof folder, "%s/" FOLDER, sub("dump"));
    cr_assert_neq(access(folder, F_OK), 0);
    spoil_victim(ex);
    FILE *w = fopen(sub("waivers.json"), "w");
    fprintf(w, "{\"waivers\": [{\"pattern\": \"%s\", \"reason\": \"known\", \"link\": \"https://example.com/1\"}]}", VICTIM);
    fclose(w);
    cr_assert_eq(RUN("--impl", impl, "--report-dir", sub("rep"), "--dump-failures", sub("dump"), "--waivers",
                     sub("waivers.json"), "--quiet"), EXIT_OK);
    cr_assert_neq(access(folder, F_OK), 0, "a waived case is not a failure to look at");
}

Test(dump, a_failing_check_dumps_a_folder_that_checks_again, .init = setup, .fini = teardown)
{
    const char *ex = sub("ex");
    cr_assert_eq(EXPORT("cases/smoke.json", "--filter", GRID, "--out", ex, "--outputs", "optimized"), EXIT_OK);
    spoil_victim(ex);
    char impl[300], folder[600], line[1600];
    snprintf(impl, sizeof impl, "dir:%s", ex);
    cr_assert_eq(RUN("--impl", impl, "--report-dir", sub("rep"), "--dump-failures", sub("dump"), "--quiet"), EXIT_FAIL);
    snprintf(folder, sizeof folder, "%s/" FOLDER, sub("dump"));
    /* the run's folder through check, dumping again: check's own folder judges the same */
    snprintf(line, sizeof line, "sh %s/repro.sh --dump-failures %s", folder, sub("again"));
    cr_assert_eq(shell(line, sub("out.txt")), EXIT_FAIL);
    snprintf(line, sizeof line, "cd / && sh %s/check_roi_align/repro.sh", sub("again"));
    cr_assert_eq(shell(line, sub("out2.txt")), EXIT_FAIL);
    char *a = test_slurp(sub("out.txt")), *b = test_slurp(sub("out2.txt"));
    cr_assert(!strncmp(a, b, strcspn(b, "\n")), "%s\n%s", a, b);
    free(a);
    free(b);
}
