/* conform run: suites -> cases -> both paths -> verdicts -> reports in every format. */
#include <fnmatch.h>
#include <limits.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "help.h"
#include "datadir.h"
#include "dump_case.h"
#include "jobs.h"
#include "fill.h"
#include "report.h"
#include "runner.h"
#include "select.h"
#include "standards.h"
#include "verify.h"
#include "zoo_power.h"

#define MAX_SUITES 32

/* SIGINT/SIGTERM: finish nothing more, write what was done, say the run was interrupted */
static volatile sig_atomic_t interrupted;
static void on_signal(int sig) { interrupted = sig; }
static int run_suites(int argc, char **argv);

/* ---- waivers: expected failures, each with a reason and a link ----------------------------- */

typedef struct {
    cJSON *root;
    int n;
    const cJSON **items;
    int *used;
} waivers_t;

/* The waivers of path that hold at dtype: a waiver with "dtypes" holds only at those (a divergence
   that rounding to a 16-bit dtype exposes, e.g. samples landing exactly on a line, would be stale
   at float32), so it is neither applied nor reported stale elsewhere. */
static int waivers_load(const char *path, const dtype_desc *dt, waivers_t *w)
{
    memset(w, 0, sizeof *w);
    if (!path) return 0;
    char err[CONFORM_ERR_LEN];
    w->root = read_json_file(path, err, sizeof err);
    if (!w->root) return usage_error("--waivers %s", err);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(w->root, "waivers"), *it;
    if (!cJSON_IsArray(list)) return usage_error("%s: expected {\"waivers\": [{\"pattern\", \"reason\", \"link\"}, ...]}", path);
    int n = cJSON_GetArraySize(list), i = 0;
    w->items = calloc((size_t)n + 1, sizeof *w->items);
    w->used = calloc((size_t)n + 1, sizeof *w->used);
    cJSON_ArrayForEach(it, list) {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(it, "pattern"), *r = cJSON_GetObjectItemCaseSensitive(it, "reason"),
                    *l = cJSON_GetObjectItemCaseSensitive(it, "link"), *d;
        if (!p && cJSON_GetObjectItemCaseSensitive(it, "when")) { i++; continue; } /* a hunt's alone (docs/hunt.md) */
        if (!cJSON_IsString(p) || !cJSON_IsString(r) || !r->valuestring[0] || !cJSON_IsString(l) || !l->valuestring[0])
            return usage_error("%s: waivers[%d] needs a \"pattern\", a non-empty \"reason\" and a \"link\"", path, i);
        if (json_names_hold(it, "dtypes", NULL) < 0 || json_names_hold(it, "outputs", NULL) < 0)
            return usage_error("%s: waivers[%d]: \"dtypes\" and \"outputs\" are arrays of names", path, i);
        cJSON_ArrayForEach(d, cJSON_GetObjectItemCaseSensitive(it, "dtypes"))
            if (!dtype_find(d->valuestring))
                return usage_error("%s: waivers[%d]: dtype '%s' is not one of %s", path, i, d->valuestring, dtype_names());
        i++;
        if (json_names_hold(it, "dtypes", dt->name)) w->items[w->n++] = it;
    }
    return 0;
}

/* 1 when every output of the case that failed (beyond tolerance, a non-finite mismatch, all zero)
   is one the waiver names in "outputs" (no "outputs": any); a failure elsewhere is not the
   divergence the waiver is about. A case that gave no outputs (missing, crashed) has none. */
static int waiver_covers_outputs(const cJSON *w, const cJSON *case_json)
{
    const cJSON *o;
    cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(case_json, "outputs")) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "name");
        int bad = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "n_over_tol")) > 0 ||
                  cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(o, "n_nonfinite_mismatch")) > 0 ||
                  cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "all_zero"));
        if (bad && json_names_hold(w, "outputs", cJSON_GetStringValue(name)) != 1) return 0;
    }
    return 1;
}

static const cJSON *waiver_for(waivers_t *w, const char *id, const cJSON *case_json)
{
    for (int i = 0; i < w->n; i++) {
        const char *pat = cJSON_GetObjectItemCaseSensitive(w->items[i], "pattern")->valuestring;
        if ((!fnmatch(pat, id, 0) || !strcmp(pat, id)) && waiver_covers_outputs(w->items[i], case_json)) {
            w->used[i] = 1;
            return w->items[i];
        }
    }
    return NULL;
}

static void waivers_free(waivers_t *w)
{
    cJSON_Delete(w->root);
    free(w->items);
    free(w->used);
}

/* ---- one finished case into the report, in suite order ------------------------------------- */

#define REPRO_LEN 2048

typedef struct {
    waivers_t *waivers;
    const char *dump_dir; /* --dump-failures */
    int quiet, progress, total, done, failed;
    double t_start;
    cJSON *jcases;
    const op_desc *touched[64];
    int n_touched;
} tally;

/* beside a dumped case, the line that runs it again through the implementation */
static void note_run_repro(const char *dir, const char *id, const char *repro)
{
    char folder[1100], path[1200];
    dump_folder(dir, id, folder, sizeof folder);
    snprintf(path, sizeof path, "%s/repro_run.txt", folder);
    FILE *f = access(folder, F_OK) ? NULL : fopen(path, "w");
    if (f) {
        fprintf(f, "%s\n", repro);
        fclose(f);
    }
}

static void record_case(const job_case *jc, cJSON *case_json, void *ctx)
{
    tally *t = ctx;
    const case_t *cs = jc->c;
    const char *status = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(case_json, "status"));
    const char *message = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(case_json, "message"));
    char st[16];
    snprintf(st, sizeof st, "%s", status ? status : "error");
    if (status_fails(status_parse(st))) {
        const cJSON *w = waiver_for(t->waivers, cs->id, case_json);
        if (w) {
            cJSON_ReplaceItemInObject(case_json, "status", cJSON_CreateString(status_name(CASE_WAIVED)));
            cJSON_AddItemToObject(case_json, "waiver", cJSON_Duplicate(w, 1));
            cJSON_AddStringToObject(case_json, "waived_status", st);
            if (t->dump_dir) dump_remove(t->dump_dir, cs->id); /* not a failure to look at */
        } else {
            if (t->dump_dir) note_run_repro(t->dump_dir, cs->id, jc->repro);
            t->failed++;
            if (!t->quiet) {
                if (t->progress) fputs("\r\033[K", stderr);
                printf("%-6s %s\n       %s\n       repro: %s\n", st, cs->id, message ? message : "", jc->repro);
            }
        }
    }
    cJSON_AddItemToArray(t->jcases, case_json);
    int seen = 0;
    for (int k = 0; k < t->n_touched; k++) seen |= t->touched[k] == cs->op;
    if (!seen && t->n_touched < 64) t->touched[t->n_touched++] = cs->op;
    t->done++;
    if (t->progress) {
        double el = now_seconds() - t->t_start, left = el / t->done * (t->total - t->done);
        fprintf(stderr, "\r\033[K[%d/%d] failures %d, %.0fs left", t->done, t->total, t->failed, left);
    }
}

int cmd_run(int argc, char **argv)
{
    /* from the start, so a signal while suites load is an interruption too, not a death */
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    interrupted = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    int rc = run_suites(argc, argv);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    return rc;
}

/* ---- the phases of a run ------------------------------------------------------------------- */

typedef struct {
    const char *suites[MAX_SUITES];
    int n_suites, suites_given, seed_set, dry, quiet, shard_set, threads_given, no_proofs;
    char suite_files[MAX_SUITES][600]; /* dir: the export's suites, when the run names none */
    const cJSON *manifest; /* dir: the export's */
    long long seed, jobs; /* jobs 0: as many as the cores and the memory budget allow */
    const char *report_dir, *waiver_path, *rerun_path, *statuses, *impl_spec, *dump_dir;
    conform_exec ex;
    int gate_mask; /* --gate-on: named standards that decide the verdict instead of the derived bound */
    const dtype_desc *dtype; /* --dtype; NULL: the implementation's own */
    exec_policy policy;
    selection sel;
} run_opts;

/* one option at argv[*i] (its value at argv[*i + 1]); EXIT_OK, or EXIT_USAGE after a message */
static int take_run_option(run_opts *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i], *v = *i + 1 < argc ? argv[*i + 1] : NULL;
    selection *sel = &o->sel;
    long long n;
    int takes = v != NULL; /* the option consumes a value */
    if (!strcmp(a, "--filter") && v) sel->filter = v;
    else if (!strcmp(a, "--op") && v) {
        if (!op_find(v)) return cli_unknown_op("--op", v);
        if (sel->n_ops == MAX_OPS) return usage_error("--op: at most %d", MAX_OPS);
        sel->ops[sel->n_ops++] = v;
    } else if (!strcmp(a, "--seed")) {
        if (parse_int_arg(a, v, 0, 4294967295LL, &o->seed)) return EXIT_USAGE;
        o->seed_set = 1;
    } else if (!strcmp(a, "--threads")) { if (parse_threads_arg(v, &o->ex)) return EXIT_USAGE; }
    else if (!strcmp(a, "--isa")) { if (parse_isa_arg(v, &o->ex)) return EXIT_USAGE; }
    else if (!strcmp(a, "--report-dir") && v) o->report_dir = v;
    else if (!strcmp(a, "--golden-dir") && v) { if (verify_set_golden_dir(v)) return EXIT_USAGE; }
    else if (!strcmp(a, "--waivers") && v) o->waiver_path = v;
    else if (!strcmp(a, "--dump-failures") && v) o->dump_dir = v;
    else if (!strcmp(a, "--rerun") && v) o->rerun_path = v;
    else if (!strcmp(a, "--status") && v) o->statuses = v;
    else if (!strcmp(a, "--shard")) {
        if (parse_shard(v, &sel->shard_index, &sel->shard_count)) return EXIT_USAGE;
        o->shard_set = 1;
    } else if (!strcmp(a, "--impl") && v) o->impl_spec = v;
    else if (!strcmp(a, "--gate-on")) {
        char gerr[CONFORM_ERR_LEN];
        if ((o->gate_mask = standards_parse_list(v, gerr, sizeof gerr)) < 0) return usage_error("%s", gerr);
    } else if (!strcmp(a, "--dtype")) {
        if (!(o->dtype = dtype_find(v))) return usage_error("--dtype takes %s, got '%s'", dtype_names(), v ? v : "");
    } else if (!strcmp(a, "--timeout")) {
        if (parse_int_arg(a, v, 1, 86400, &n)) return EXIT_USAGE;
        o->policy.timeout_s = (double)n;
    } else if (!strcmp(a, "--jobs")) { if (parse_int_arg(a, v, 1, 1024, &o->jobs)) return EXIT_USAGE; }
    else if (!strcmp(a, "--max-samples")) {
        if (parse_int_arg(a, v, 1, 1LL << 50, &n)) return EXIT_USAGE;
        conform_sample_budget = (double)n;
    } else if (!strcmp(a, "--max-memory")) {
        if (parse_int_arg(a, v, 1, 1LL << 30, &n)) return EXIT_USAGE;
        conform_memory_budget = (double)n * 1048576.0;
    } else {
        takes = 0;
        if (!strcmp(a, "--no-isolate")) o->policy.isolate = 0;
        else if (!strcmp(a, "--list") || !strcmp(a, "--dry-run")) o->dry = 1;
        else if (!strcmp(a, "--quiet")) o->quiet = 1;
        else if (!strcmp(a, "--no-proofs")) o->no_proofs = 1;
        else if (a[0] == '-') return cli_unknown_option("run", a, v);
        else if (o->n_suites == MAX_SUITES) return usage_error("run: at most %d suites", MAX_SUITES);
        else o->suites[o->n_suites++] = a;
    }
    *i += takes;
    return EXIT_OK;
}

static int parse_run_args(int argc, char **argv, run_opts *o)
{
    memset(o, 0, sizeof *o);
    o->report_dir = "reports/latest";
    o->statuses = "failed,error";
    o->impl_spec = "optimized";
    o->ex = (conform_exec){CONFORM_ISA_AUTO, 0};
    o->policy = (exec_policy){1, 120.0, &interrupted};
    if (cli_once("run", argc, argv)) return EXIT_USAGE;
    for (int i = 2; i < argc; i++)
        if (take_run_option(o, argc, argv, &i)) return EXIT_USAGE;
    o->suites_given = o->n_suites > 0;
    if (!o->n_suites) o->suites[o->n_suites++] = "cases/conformance.json";
    if (!o->shard_set && shard_from_environment(&o->sel.shard_index, &o->sel.shard_count)) return EXIT_USAGE;
    o->threads_given = o->ex.threads > 0;
    char err[CONFORM_ERR_LEN];
    if (!o->dry && dir_usable(o->report_dir, err, sizeof err)) /* before any case runs */
        return usage_error("--report-dir %s: %s", o->report_dir, err);
    if (!o->dry && o->dump_dir && dir_usable(o->dump_dir, err, sizeof err))
        return usage_error("--dump-failures %s: %s", o->dump_dir, err);
    return resolve_isa(&o->ex) ? EXIT_USAGE : EXIT_OK;
}

/* A dir: run judges what its export holds: the manifest's cases are the selection (the run's own
   --op, --filter and --rerun narrow it; a case not exported is not selected, never an error), its
   suites are the default, and its shard is the run's, so the report records I/N for merge. */
static int adopt_export_selection(run_opts *o, const impl_t *impl)
{
    const cJSON *m = impl_dir_manifest(impl), *f;
    o->sel.held = impl_dir_held(impl);
    o->manifest = m;
    const char *shard = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m, "selection"), "shard"));
    int si, sn;
    if (shard && parse_shard(shard, &si, &sn)) return usage_error("--impl %s: the manifest's shard '%s' is malformed", o->impl_spec, shard);
    if (shard && o->sel.shard_count > 1 && (si != o->sel.shard_index || sn != o->sel.shard_count))
        return usage_error("--shard %d/%d, but %s holds shard %s of the export (drop --shard)", o->sel.shard_index,
                           o->sel.shard_count, o->impl_spec, shard);
    if (shard) {
        o->sel.shard_index = si;
        o->sel.shard_count = sn;
    }
    if (o->suites_given) return EXIT_OK;
    /* the export's suites by name, from conform's own data (cases/NAME.json): a path the manifest
       names is never read, since a device directory is untrusted input */
    const cJSON *names = cJSON_GetObjectItemCaseSensitive(m, "suites");
    int n = 0;
    cJSON_ArrayForEach(f, names) {
        const char *name = cJSON_GetStringValue(f);
        if (!name || n == MAX_SUITES) break;
        if (!*name || strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != strlen(name))
            return usage_error("--impl %s: the manifest's suite name '%s' is not a name of letters, digits, '_' and '-' "
                               "(name the suite: conform run SUITE --impl %s)", o->impl_spec, name, o->impl_spec);
        char rel[200], found[600];
        snprintf(rel, sizeof rel, "cases/%s.json", name);
        snprintf(o->suite_files[n], sizeof o->suite_files[n], "%s", conform_suite_path(rel, found, sizeof found));
        o->suites[n] = o->suite_files[n];
        n++;
    }
    if (n) o->n_suites = n;
    return EXIT_OK;
}

/* the implementation, and the seed a dir: export pins */
static int open_impl(run_opts *o, impl_t *impl)
{
    char ierr[CONFORM_ERR_LEN];
    if (impl_open(o->impl_spec, o->dtype, impl, ierr, sizeof ierr)) return usage_error("%s", ierr);
    uint64_t pinned;
    if (impl_pinned_seed(impl, &pinned)) { /* dir: the inputs were generated from the export's seed */
        if (o->seed_set && (uint64_t)o->seed != pinned) {
            impl_close(impl);
            return usage_error("--seed %lld, but %s was exported with seed %llu (drop --seed)", o->seed, o->impl_spec,
                               (unsigned long long)pinned);
        }
        o->seed = (long long)pinned;
        o->seed_set = 1;
    }
    if (impl_dir_held(impl) && adopt_export_selection(o, impl)) {
        impl_close(impl);
        return EXIT_USAGE;
    }
    return EXIT_OK;
}

static int load_waivers(run_opts *o, const impl_t *impl, waivers_t *waivers)
{
    char found[4096];
    const char *path = o->waiver_path;
    if (path) path = conform_suite_path(path, found, sizeof found);
    else if (!access(conform_data_file("cases/waivers.json", found, sizeof found), R_OK))
        path = found; /* the default waivers, when there are some */
    return waivers_load(path, impl->dtype, waivers) || (o->rerun_path && load_rerun(o->rerun_path, o->statuses, &o->sel)) ? EXIT_USAGE
                                                                                                           : EXIT_OK;
}

/* every suite loaded and checked before anything runs or is written; *n_loaded of them to free */
static int load_suites(const run_opts *o, suite_t *loaded, int *n_loaded, int *total)
{
    char err[CONFORM_ERR_LEN];
    *total = 0;
    for (*n_loaded = 0; *n_loaded < o->n_suites; ++*n_loaded) {
        suite_t *s = &loaded[*n_loaded];
        if (suite_load(o->suites[*n_loaded], s, err, sizeof err)) return usage_error("%s", err);
        for (int c = 0; c < s->n_cases; c++) *total += selected(&o->sel, &s->cases[c]);
    }
    if (suites_distinct(loaded, *n_loaded, err, sizeof err)) return usage_error("run: %s", err);
    const char *exported = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(o->manifest, "command"));
    if (!*total && o->sel.held)
        return usage_error("run: no selected case is in %s, which holds %d cases (exported with: %s): run the suite "
                           "and selection that were exported, or export this one", o->impl_spec,
                           cJSON_GetArraySize(o->sel.held),
                           exported ? exported : "?");
    char hint[700];
    if (!*total && o->sel.shard_count <= 1) selection_hint(loaded, *n_loaded, &o->sel, hint, sizeof hint);
    if (!*total && o->sel.shard_count <= 1)
        return usage_error("run: no case matches the selection%s%s%s", o->sel.filter ? " --filter " : "",
                           o->sel.filter ? o->sel.filter : "", hint);
    return EXIT_OK;
}

static uint64_t suite_seed(const run_opts *o, const suite_t *s) { return o->seed_set ? (uint64_t)o->seed : s->seed; }

/* the selected cases in suite order, each with the line that reruns it alone; the cores shared */
static int plan_cases(const run_opts *o, const suite_t *loaded, const impl_t *impl, job_case *todo, char *repros,
                      conform_exec *ex, int *n_jobs)
{
    int n_todo = 0;
    for (int s = 0; s < o->n_suites; s++)
        for (int c = 0; c < loaded[s].n_cases; c++) {
            const case_t *cs = &loaded[s].cases[c];
            if (!selected(&o->sel, cs)) continue;
            todo[n_todo] = (job_case){cs, case_seed(cs, suite_seed(o, &loaded[s])), repros + (size_t)n_todo * REPRO_LEN};
            /* the suite's seed, until the repro line replaces it */
            snprintf(repros + (size_t)n_todo * REPRO_LEN, REPRO_LEN, "%llu", (unsigned long long)suite_seed(o, &loaded[s]));
            n_todo++;
        }
    *ex = o->ex;
    if (!o->threads_given) ex->threads = 0;
    *n_jobs = (int)o->jobs;
    jobs_share_cores(todo, n_todo, n_jobs, &ex->threads);
    /* a directory as an absolute path, so the repro runs from anywhere */
    char spec[PATH_MAX + 8], real[PATH_MAX];
    if (impl->kind == &impl_kind_dir && realpath(impl->path, real)) snprintf(spec, sizeof spec, "dir:%s", real);
    else snprintf(spec, sizeof spec, "%s", o->impl_spec);
    for (int i = 0; i < n_todo; i++) {
        char q1[600], q2[600], q3[600] = "";
        unsigned long long seed = strtoull(todo[i].repro, NULL, 10);
        if (impl->kind != &impl_kind_optimized)
            snprintf(q3, sizeof q3, " --impl %s%s%s", shell_quote(spec, q1, sizeof q1), o->dtype ? " --dtype " : "",
                     o->dtype ? o->dtype->name : "");
        snprintf((char *)todo[i].repro, REPRO_LEN, "%s run %s --filter %s --seed %llu --isa %s --threads %d%s", conform_program(),
                 shell_quote(todo[i].c->suite_path, q1, sizeof q1), shell_quote(todo[i].c->id, q2, sizeof q2), seed,
                 conform_isa_name(ex->isa), ex->threads, q3);
    }
    return n_todo;
}

/* the report before any case: the command, what runs, the suites and their seeds, the shard */
static cJSON *report_header(int argc, char **argv, const run_opts *o, const impl_t *impl, const conform_exec *ex,
                            const suite_t *loaded)
{
    char cmd[4096];
    command_line(argc, argv, cmd, sizeof cmd);
    cJSON *report = report_new(cmd, conform_isa_name(ex->isa), ex->threads);
    cJSON_AddStringToObject(report, "impl", impl_name(impl));
    cJSON_AddItemToObject(report, "runner", impl_provenance(impl));
    report_set_dtype(report, impl->dtype->name, impl->dtype->u);
    cJSON *js = cJSON_GetObjectItemCaseSensitive(report, "suites");
    for (int s = 0; s < o->n_suites; s++) {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddStringToObject(j, "path", loaded[s].path);
        cJSON_AddStringToObject(j, "name", loaded[s].name);
        cJSON_AddNumberToObject(j, "seed", (double)suite_seed(o, &loaded[s]));
        cJSON_AddItemToArray(js, j);
    }
    cJSON_ReplaceItemInObject(report, "seed", cJSON_CreateNumber((double)suite_seed(o, &loaded[0])));
    if (o->sel.shard_count > 1) {
        char shard[32];
        snprintf(shard, sizeof shard, "%d/%d", o->sel.shard_index, o->sel.shard_count);
        cJSON_AddStringToObject(report, "shard", shard);
    }
    return report;
}

/* after the cases: an interruption, the proofs of every op touched (a verdict is only as good as
   its golden), stale waivers, the gate and the suite power; then the files and the verdict */
static int finish_report(cJSON *report, const run_opts *o, const tally *t, int done, const waivers_t *waivers,
                         const suite_t *loaded)
{
    if (interrupted) {
        cJSON_AddBoolToObject(report, "interrupted", 1);
        cJSON_AddNumberToObject(report, "cases_not_run", t->total - done);
        fprintf(stderr, "conform: interrupted by signal %d after %d of %d cases; the report holds those\n", (int)interrupted,
                done, t->total);
    }
    cJSON *jproofs = cJSON_GetObjectItemCaseSensitive(report, "proofs");
    for (int i = 0; i < t->n_touched && !o->no_proofs; i++) verify_op(t->touched[i], 1, jproofs);
    cJSON *stale = cJSON_GetObjectItemCaseSensitive(report, "stale_waivers");
    for (int i = 0; i < waivers->n; i++)
        if (!waivers->used[i]) cJSON_AddItemToArray(stale, cJSON_Duplicate(waivers->items[i], 1));
    cJSON_AddNumberToObject(report, "duration_s", now_seconds() - t->t_start);
    report_apply_gate(report, o->gate_mask);
    zoo_power_attach(report, loaded, o->n_suites, ZOO_POWER_FILE);
    report_summarize(report);
    char err[CONFORM_ERR_LEN];
    int rc = EXIT_OK;
    if (report_write_all(report, o->report_dir, err, sizeof err))
        rc = usage_error("%s: no report was written (the previous one in %s, if any, is unchanged)", err, o->report_dir);
    else printf("\nreports: %s/report.{json,md,html}, %s/junit.xml\n", o->report_dir, o->report_dir);
    report_print_summary(report, stdout); /* ends with the line counting every status */
    if (rc == EXIT_OK && (!report_all_passed(report) || interrupted)) rc = EXIT_FAIL;
    return rc;
}

/* the planned cases through the jobs, each recorded into the report as it finishes */
static int run_cases(const run_opts *o, const suite_t *loaded, const run_env *env, job_case *todo, int n_todo, int n_jobs,
                     cJSON *report, waivers_t *waivers, int total)
{
    tally t = {waivers, o->dump_dir, o->quiet, !o->quiet && isatty(2) && !getenv("CI"), total, 0, 0, now_seconds(),
               cJSON_GetObjectItemCaseSensitive(report, "cases"), {0}, 0};
    jobs_stats stats;
    int done = jobs_run(todo, n_todo, n_jobs, env, job_run_case, record_case, &t, &stats);
    if (stats.waited_for_memory && !o->quiet)
        fprintf(stderr, "conform: %d cases waited for memory: at most %.0f of %.0f MiB admitted at once (--max-memory)\n",
                stats.waited_for_memory, stats.max_admitted_bytes / 1048576.0, memory_budget() / 1048576.0);
    if (t.progress) fputs("\r\033[K", stderr);
    return finish_report(report, o, &t, done, waivers, loaded);
}

/* the selected cases planned, the report begun, the cases run, the report finished */
static int run_selected(int argc, char **argv, const run_opts *o, const suite_t *loaded, impl_t *impl, waivers_t *waivers,
                        int total)
{
    job_case *todo = calloc((size_t)total + 1, sizeof *todo);
    char *repros = calloc((size_t)total + 1, REPRO_LEN);
    conform_exec ex;
    int n_jobs, n_todo = plan_cases(o, loaded, impl, todo, repros, &ex, &n_jobs);
    /* the golden of a case uses every core, also beside other jobs: its threads take work in chunks
       and sleep when idle, so two goldens share the cores as one would, and the last big case of a
       suite gets them all (its numbers are the same for every thread count) */
    run_env env = {ex, impl, o->policy, o->threads_given ? o->ex.threads : omp_get_max_threads(), o->dump_dir,
                   o->dump_dir ? dump_case_hook : NULL};
    cJSON *report = report_header(argc, argv, o, impl, &ex, loaded);
    int rc = run_cases(o, loaded, &env, todo, n_todo, n_jobs, report, waivers, total);
    cJSON_Delete(report);
    free(todo);
    free(repros);
    return rc;
}

static int run_suites(int argc, char **argv)
{
    run_opts o;
    impl_t impl;
    int rc = parse_run_args(argc, argv, &o);
    if (rc || (rc = open_impl(&o, &impl))) return rc;
    waivers_t waivers;
    if (load_waivers(&o, &impl, &waivers)) {
        waivers_free(&waivers);
        cJSON_Delete(o.sel.rerun);
        impl_close(&impl);
        return EXIT_USAGE;
    }
    suite_t *loaded = calloc((size_t)o.n_suites, sizeof *loaded);
    int n_loaded = 0, total = 0;
    char err[CONFORM_ERR_LEN];
    if (!(rc = load_suites(&o, loaded, &n_loaded, &total))) {
        if (o.dry) {
            for (int s = 0; s < o.n_suites; s++)
                for (int c = 0; c < loaded[s].n_cases; c++)
                    if (selected(&o.sel, &loaded[s].cases[c])) printf("%s\n", loaded[s].cases[c].id);
        } else if (mkdir_p(o.report_dir, err, sizeof err) || (o.dump_dir && mkdir_p(o.dump_dir, err, sizeof err)))
            rc = usage_error("%s", err);
        else rc = run_selected(argc, argv, &o, loaded, &impl, &waivers, total);
    }
    for (int s = 0; s < n_loaded; s++) suite_free(&loaded[s]);
    free(loaded);
    waivers_free(&waivers);
    cJSON_Delete(o.sel.rerun);
    impl_close(&impl);
    return rc;
}
