/* Any implementation judged: plugins that are right, wrong in one op, crash, hang or write past
 * an output are each reported for what they did, and the rest of the suite completes. */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "scratch.h"
#include "cli.h"
#include "report.h"
#include "suite.h"

static char dir[64];

static void setup(void) { scratch_make_quiet(dir, sizeof dir, "plug"); }

static void teardown(void) { scratch_remove(dir); }

/* runs the smoke suite (or the cases matching filter) through a plugin; the report */
static cJSON *through_with_timeout(const char *plugin, const char *filter, int expect_rc, const char *timeout)
{
    char impl[256], rep[128], path[256], err[256];
    snprintf(impl, sizeof impl, "plugin:" TEST_BUILD "/plugins/%s.so", plugin);
    snprintf(rep, sizeof rep, "%s/%s", dir, plugin);
    const char *argv[] = {"conform", "run", "cases/smoke.json", "--impl", impl, "--report-dir", rep, "--quiet",
                          "--timeout", timeout, "--filter", filter ? filter : "*"};
    cr_assert_eq(cmd_run(12, (char **)argv), expect_rc, "%s", plugin);
    snprintf(path, sizeof path, "%s/report.json", rep);
    cJSON *r = read_json_file(path, err, sizeof err);
    cr_assert(r, "%s", err);
    return r;
}

/* a generous limit: a sanitizer build on a loaded machine must not turn a slow case into a timeout */
static cJSON *through(const char *plugin, const char *filter, int expect_rc)
{
    return through_with_timeout(plugin, filter, expect_rc, "60");
}

/* counts of statuses per op */
static int count(const cJSON *r, const char *op, const char *status)
{
    int n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "cases"))
        n += !strcmp(cJSON_GetObjectItem(c, "op")->valuestring, op) && !strcmp(cJSON_GetObjectItem(c, "status")->valuestring, status);
    return n;
}

static int total(const cJSON *r, const char *op)
{
    int n = 0;
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "cases")) n += !strcmp(cJSON_GetObjectItem(c, "op")->valuestring, op);
    return n;
}

Test(plugins, the_example_plugin_conforms, .init = setup, .fini = teardown)
{
    cJSON *r = through("plugin_roi_align", NULL, EXIT_OK);
    cr_assert_eq(count(r, "roi_align", "passed"), total(r, "roi_align"));
    cr_assert_eq(count(r, "roi_align_v2_backward", "passed"), total(r, "roi_align_v2_backward"));
    /* ops the plugin does not provide are neither passed nor failed */
    cr_assert_gt(total(r, "roi_align_rotated"), 0);
    cr_assert_eq(count(r, "roi_align_rotated", "not_implemented") + count(r, "roi_align_rotated", "passed"),
                 total(r, "roi_align_rotated"), "refusals expected by a case still pass; the rest are not_implemented");
    cr_assert_gt(count(r, "roi_align_rotated", "not_implemented"), 0);
    /* what ran: the name and the optional version string the plugin reports */
    const cJSON *run = cJSON_GetObjectItem(r, "runner");
    cr_assert_str_eq(cJSON_GetObjectItem(run, "name")->valuestring, "example plain roi_align");
    cr_assert_str_eq(cJSON_GetObjectItem(run, "version")->valuestring, "example 1.0 (plain C, ABI 1)");
    cJSON_Delete(r);
}

Test(plugins, wrong_in_one_op, .init = setup, .fini = teardown)
{
    cJSON *r = through("faulty_wrong", NULL, EXIT_FAIL);
    cr_assert_eq(count(r, "roi_align", "passed"), total(r, "roi_align"), "the right op stays right");
    cr_assert_gt(count(r, "roi_align_v2_backward", "failed"), 10);
    cJSON_Delete(r);
}

Test(plugins, crashes_are_reported_and_the_suite_goes_on, .init = setup, .fini = teardown)
{
    cJSON *r = through("faulty_crash", NULL, EXIT_FAIL);
    int crashed = count(r, "roi_align", "crashed") + count(r, "roi_align_v2_backward", "crashed");
    cr_assert_gt(crashed, 100);
    const cJSON *c;
    int sigsegv = 0, sigabrt = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "cases")) {
        const cJSON *m = cJSON_GetObjectItem(c, "message");
        if (!m) continue;
        sigsegv += strstr(m->valuestring, "SIGSEGV") != NULL;
        sigabrt += strstr(m->valuestring, "SIGABRT") != NULL;
        if (strcmp(cJSON_GetObjectItem(c, "status")->valuestring, "crashed")) continue;
        cr_assert(strstr(cJSON_GetObjectItem(c, "repro")->valuestring, "--impl"), "the repro line names the plugin");
        /* its outputs are named, with their shape, and say that nothing was compared (no zeros that
           would read as a perfect match) */
        const cJSON *o;
        cJSON_ArrayForEach(o, cJSON_GetObjectItem(c, "outputs")) {
            cr_assert(cJSON_GetStringValue(cJSON_GetObjectItem(o, "name"))[0], "an output of a crashed case has a name");
            cr_assert(cJSON_GetObjectItem(o, "shape"));
            cr_assert_null(cJSON_GetObjectItem(o, "max_err_over_tol"), "a crashed case's output carries no metrics");
            cr_assert(strstr(cJSON_GetStringValue(cJSON_GetObjectItem(o, "status")), "not compared"));
        }
    }
    cr_assert_gt(sigsegv, 0);
    cr_assert_gt(sigabrt, 0);
    suite_t smoke;
    char err[256];
    cr_assert_eq(suite_load("cases/smoke.json", &smoke, err, sizeof err), 0);
    cr_assert_eq(cJSON_GetArraySize(cJSON_GetObjectItem(r, "cases")), smoke.n_cases, "every case has a verdict");
    suite_free(&smoke);
    cJSON_Delete(r);
}

/* an element left as the buffer held it (conform's poison NaN) fails even where the golden is NaN: the
   NaN features of fwd_nan_features give NaN golden elements, which the plugin never writes */
Test(plugins, an_unwritten_element_fails_where_the_golden_is_nan, .init = setup, .fini = teardown)
{
    cJSON *r = through("faulty_unwritten", "smoke/fwd_nan_features*", EXIT_FAIL);
    cr_assert_gt(total(r, "roi_align"), 0);
    cr_assert_eq(count(r, "roi_align", "failed"), total(r, "roi_align"));
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "cases")) {
        const char *msg = cJSON_GetStringValue(cJSON_GetObjectItem(c, "message"));
        cr_assert(msg && strstr(msg, "never written (still conform's poison NaN"), "%s", msg ? msg : "(none)");
        const cJSON *o = cJSON_GetArrayItem(cJSON_GetObjectItem(c, "outputs"), 0);
        cr_assert_gt(cJSON_GetNumberValue(cJSON_GetObjectItem(o, "n_unwritten")), 0);
        /* every element it did write is right: the comparison alone passes them */
        cr_assert_eq(cJSON_GetNumberValue(cJSON_GetObjectItem(o, "n_over_tol")), 0);
    }
    cJSON_Delete(r);
}

Test(plugins, hangs_time_out, .init = setup, .fini = teardown)
{
    cJSON *r = through_with_timeout("faulty_hang", "smoke/*_grid/aligned=true,sampling_ratio=0", EXIT_FAIL, "2");
    cr_assert_eq(count(r, "roi_align", "timeout"), 1);
    cr_assert_eq(count(r, "roi_align_v2_backward", "passed"), 1, "the case after the hang still runs");
    cJSON_Delete(r);
}

Test(plugins, writes_past_an_output_are_caught, .init = setup, .fini = teardown)
{
    cJSON *r = through("faulty_overflow", "smoke/fwd_grid*", EXIT_FAIL);
    const cJSON *c;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "cases")) {
        cr_assert_str_eq(cJSON_GetObjectItem(c, "status")->valuestring, "failed");
        cr_assert(strstr(cJSON_GetObjectItem(c, "message")->valuestring, "write outside the output buffer at element offset"),
                  "%s", cJSON_GetObjectItem(c, "message")->valuestring);
    }
    cJSON_Delete(r);
}

/* a kernel writing through its const input pointers, there where conform's buffer header is: the
   inputs are read-only in its child, so that is the kernel's SIGSEGV, named per case, and not the
   harness stopping at a corrupt header when it frees the shared input (it aborted, with no report) */
Test(plugins, writes_into_an_input_are_the_kernels_crash, .init = setup, .fini = teardown)
{
    cJSON *r = through("faulty_scribble", "smoke/fwd_grid*", EXIT_FAIL);
    const cJSON *c;
    int n = 0;
    cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "cases")) {
        cr_assert_str_eq(cJSON_GetObjectItem(c, "status")->valuestring, "crashed");
        cr_assert(strstr(cJSON_GetObjectItem(c, "message")->valuestring, "SIGSEGV"), "%s",
                  cJSON_GetObjectItem(c, "message")->valuestring);
        n++;
    }
    cr_assert_eq(n, 8, "every case of the filter has its verdict");
    cJSON_Delete(r);
}

/* a kernel reading one element past its input x: that element is a guard band's 0.25, in every
   case and every run, so each case with an output fails; before the inputs had bands it read
   whatever lay past the input in a recycled buffer (fresh pages: a zero, which passed) */
Test(plugins, a_read_past_an_input_fails_every_time, .init = setup, .fini = teardown)
{
    for (int run = 0; run < 2; run++) {
        cJSON *r = through("faulty_overread", "smoke/fwd_grid*", EXIT_FAIL);
        const cJSON *c;
        int n = 0;
        cJSON_ArrayForEach(c, cJSON_GetObjectItem(r, "cases")) {
            cr_assert_str_eq(cJSON_GetObjectItem(c, "status")->valuestring, "failed", "%s",
                             cJSON_GetObjectItem(c, "id")->valuestring);
            n++;
        }
        cr_assert_eq(n, 8, "every case of the filter has its verdict");
        cJSON_Delete(r);
    }
}

Test(plugins, abi_mismatch_and_missing_library_are_refused, .init = setup, .fini = teardown)
{
    char impl[] = "plugin:" TEST_BUILD "/plugins/faulty_abi.so", rep[128];
    snprintf(rep, sizeof rep, "%s/abi", dir);
    const char *argv[] = {"conform", "run", "cases/smoke.json", "--impl", impl, "--report-dir", rep, "--quiet"};
    cr_assert_eq(cmd_run(8, (char **)argv), EXIT_USAGE, "an ABI mismatch is refused before anything runs");
    const char *nolib[] = {"conform", "run", "cases/smoke.json", "--impl", "plugin:/nonexistent.so", "--report-dir", rep};
    cr_assert_eq(cmd_run(7, (char **)nolib), EXIT_USAGE);
}

/* the exit code of cmd, its stderr into buf */
static int with_stderr(int (*cmd)(int, char **), int argc, const char **argv, char *buf, size_t len)
{
    char path[128];
    snprintf(path, sizeof path, "%s/stderr.txt", dir);
    fflush(stderr);
    int saved = dup(2), fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0644);
    dup2(fd, 2);
    int rc = cmd(argc, (char **)argv);
    fflush(stderr);
    dup2(saved, 2);
    close(fd);
    close(saved);
    FILE *f = fopen(path, "r");
    size_t n = f ? fread(buf, 1, len - 1, f) : 0;
    buf[n] = '\0';
    if (f) fclose(f);
    return rc;
}

/* supports() runs in conform's own process (in-process with --jobs 1, and in export): a plugin that
   crashes there is refused before anything runs, naming the call, instead of killing conform with
   no report */
Test(plugins, a_crash_in_a_call_conform_makes_itself_refuses_the_plugin, .init = setup, .fini = teardown)
{
    char impl[] = "plugin:" TEST_BUILD "/plugins/faulty_supports.so", rep[128], ex[128], msg[2048];
    snprintf(rep, sizeof rep, "%s/supports", dir);
    snprintf(ex, sizeof ex, "%s/ex", dir);
    const char *argv[] = {"conform", "run", "cases/smoke.json", "--impl", impl, "--report-dir", rep, "--quiet", "--jobs", "1"};
    cr_assert_eq(with_stderr(cmd_run, 10, argv, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "supports(\"grid_sampler_2d\") crashed (signal 11"), "%s", msg);
    cr_assert_neq(access(rep, F_OK), 0, "nothing written");
    const char *exp[] = {"conform", "export", "cases/smoke.json", "--outputs", impl, "--out", ex, "--filter", "smoke/fwd_grid"};
    cr_assert_eq(with_stderr(cmd_export, 9, exp, msg, sizeof msg), EXIT_USAGE);
    cr_assert(strstr(msg, "supports(\"grid_sampler_2d\") crashed"), "%s", msg);
    cr_assert_neq(access(ex, F_OK), 0, "nothing exported");
}

/* export --outputs names what became of a case the plugin gave nothing for: a crash is a crash */
Test(plugins, export_says_a_crashed_case_crashed, .init = setup, .fini = teardown)
{
    char ex[128], msg[4096];
    snprintf(ex, sizeof ex, "%s/ex", dir);
    const char *exp[] = {"conform", "export", "cases/smoke.json", "--outputs", "plugin:" TEST_BUILD "/plugins/faulty_crash.so", "--out",
                         ex, "--filter", "smoke/fwd_grid/aligned=true,sampling_ratio=0"};
    cr_assert_eq(with_stderr(cmd_export, 9, exp, msg, sizeof msg), EXIT_OK);
    cr_assert(strstr(msg, "gave no outputs (crashed: signal 11"), "%s", msg);
}
