/* conform run: suites -> cases -> both paths -> verdicts -> reports in every format. */
#include <fnmatch.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "help.h"
#include "datadir.h"
#include "jobs.h"
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

static int waivers_load(const char *path, waivers_t *w)
{
    memset(w, 0, sizeof *w);
    if (!path) return 0;
    char err[CONFORM_ERR_LEN];
    w->root = read_json_file(path, err, sizeof err);
    if (!w->root) return usage_error("--waivers %s", err);
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(w->root, "waivers"), *it;
    if (!cJSON_IsArray(list)) return usage_error("%s: expected {\"waivers\": [{\"pattern\", \"reason\", \"link\"}, ...]}", path);
    w->n = cJSON_GetArraySize(list);
    w->items = calloc((size_t)w->n + 1, sizeof *w->items);
    w->used = calloc((size_t)w->n + 1, sizeof *w->used);
    int i = 0;
    cJSON_ArrayForEach(it, list) {
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(it, "pattern"), *r = cJSON_GetObjectItemCaseSensitive(it, "reason"),
                    *l = cJSON_GetObjectItemCaseSensitive(it, "link");
        if (!cJSON_IsString(p) || !cJSON_IsString(r) || !r->valuestring[0] || !cJSON_IsString(l) || !l->valuestring[0])
            return usage_error("%s: waivers[%d] needs a \"pattern\", a non-empty \"reason\" and a \"link\"", path, i);
        w->items[i++] = it;
    }
    return 0;
}

static const cJSON *waiver_for(waivers_t *w, const char *id)
{
    for (int i = 0; i < w->n; i++) {
        const char *pat = cJSON_GetObjectItemCaseSensitive(w->items[i], "pattern")->valuestring;
        if (!fnmatch(pat, id, 0) || !strcmp(pat, id)) {
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
    int quiet, progress, total, done, failed;
    double t_start;
    cJSON *jcases;
    const op_desc *touched[64];
    int n_touched;
} tally;

static void record_case(const job_case *jc, cJSON *case_json, void *ctx)
{
    tally *t = ctx;
    const case_t *cs = jc->c;
    const char *status = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(case_json, "status"));
    const char *message = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(case_json, "message"));
    char st[16];
    snprintf(st, sizeof st, "%s", status ? status : "error");
    if (status_fails(status_parse(st))) {
        const cJSON *w = waiver_for(t->waivers, cs->id);
        if (w) {
            cJSON_ReplaceItemInObject(case_json, "status", cJSON_CreateString(status_name(CASE_WAIVED)));
            cJSON_AddItemToObject(case_json, "waiver", cJSON_Duplicate(w, 1));
            cJSON_AddStringToObject(case_json, "waived_status", st);
        } else {
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

static int run_suites(int argc, char **argv)
{
    const char *suites[MAX_SUITES];
    int n_suites = 0, seed_set = 0, dry = 0, quiet = 0, shard_set = 0;
    long long seed = 0, jobs = 0; /* jobs 0: as many as the cores and the memory budget allow */
    const char *report_dir = "reports/latest", *waiver_path = NULL, *rerun_path = NULL, *statuses = "failed,error";
    conform_exec ex = {CONFORM_ISA_AUTO, 0};
    const char *impl_spec = "optimized";
    int gate_mask = 0; /* --gate-on: named standards that decide the verdict instead of the derived bound */
    const dtype_desc *dtype = NULL; /* --dtype; NULL: the implementation's own */
    exec_policy policy = {1, 120.0, &interrupted};
    selection sel;
    memset(&sel, 0, sizeof sel);
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--filter") && v) { sel.filter = v; i++; }
        else if (!strcmp(a, "--op") && v) {
            if (!op_find(v)) return cli_unknown_op("--op", v);
            if (sel.n_ops == MAX_OPS) return usage_error("--op: at most %d", MAX_OPS);
            sel.ops[sel.n_ops++] = v;
            i++;
        }
        else if (!strcmp(a, "--seed")) { if (parse_int_arg(a, v, 0, 4294967295LL, &seed)) return EXIT_USAGE; seed_set = 1; i++; }
        else if (!strcmp(a, "--threads")) { if (parse_threads_arg(v, &ex)) return EXIT_USAGE; i++; }
        else if (!strcmp(a, "--isa")) { if (parse_isa_arg(v, &ex)) return EXIT_USAGE; i++; }
        else if (!strcmp(a, "--report-dir") && v) { report_dir = v; i++; }
        else if (!strcmp(a, "--golden-dir") && v) { verify_golden_dir = v; i++; }
        else if (!strcmp(a, "--waivers") && v) { waiver_path = v; i++; }
        else if (!strcmp(a, "--rerun") && v) { rerun_path = v; i++; }
        else if (!strcmp(a, "--status") && v) { statuses = v; i++; }
        else if (!strcmp(a, "--shard")) { if (parse_shard(v, &sel.shard_index, &sel.shard_count)) return EXIT_USAGE; shard_set = 1; i++; }
        else if (!strcmp(a, "--impl") && v) { impl_spec = v; i++; }
        else if (!strcmp(a, "--gate-on")) {
            char gerr[CONFORM_ERR_LEN];
            if ((gate_mask = standards_parse_list(v, gerr, sizeof gerr)) < 0) return usage_error("%s", gerr);
            i++;
        }
        else if (!strcmp(a, "--dtype")) {
            if (!(dtype = dtype_find(v))) return usage_error("--dtype takes %s, got '%s'", dtype_names(), v ? v : "");
            i++;
        }
        else if (!strcmp(a, "--timeout")) {
            long long t;
            if (parse_int_arg(a, v, 1, 86400, &t)) return EXIT_USAGE;
            policy.timeout_s = (double)t;
            i++;
        }
        else if (!strcmp(a, "--no-isolate")) policy.isolate = 0;
        else if (!strcmp(a, "--jobs")) { if (parse_int_arg(a, v, 1, 1024, &jobs)) return EXIT_USAGE; i++; }
        else if (!strcmp(a, "--max-samples")) {
            long long n;
            if (parse_int_arg(a, v, 1, 1LL << 50, &n)) return EXIT_USAGE;
            conform_sample_budget = (double)n;
            i++;
        }
        else if (!strcmp(a, "--max-memory")) {
            long long mib;
            if (parse_int_arg(a, v, 1, 1LL << 30, &mib)) return EXIT_USAGE;
            conform_memory_budget = (double)mib * 1048576.0;
            i++;
        }
        else if (!strcmp(a, "--list") || !strcmp(a, "--dry-run")) dry = 1;
        else if (!strcmp(a, "--quiet")) quiet = 1;
        else if (a[0] == '-') return cli_unknown_option("run", a, v);
        else if (n_suites == MAX_SUITES) return usage_error("run: at most %d suites", MAX_SUITES);
        else suites[n_suites++] = a;
    }
    if (!n_suites) suites[n_suites++] = "cases/conformance.json";
    if (!shard_set && shard_from_environment(&sel.shard_index, &sel.shard_count)) return EXIT_USAGE;
    int threads_given = ex.threads > 0;
    if (resolve_isa(&ex)) return EXIT_USAGE;
    impl_t impl;
    char ierr[CONFORM_ERR_LEN];
    if (impl_open(impl_spec, dtype, &impl, ierr, sizeof ierr)) return usage_error("%s", ierr);
    uint64_t pinned;
    if (impl_pinned_seed(&impl, &pinned)) { /* dir: the inputs were generated from the export's seed */
        if (seed_set && (uint64_t)seed != pinned) {
            impl_close(&impl);
            return usage_error("--seed %lld, but %s was exported with seed %llu (drop --seed)", seed, impl_spec,
                               (unsigned long long)pinned);
        }
        seed = (long long)pinned;
        seed_set = 1;
    }
    run_env env = {ex, &impl, policy};
    char waiver_found[4096];
    if (waiver_path) waiver_path = conform_suite_path(waiver_path, waiver_found, sizeof waiver_found);
    else if (!access(conform_data_file("cases/waivers.json", waiver_found, sizeof waiver_found), R_OK))
        waiver_path = waiver_found; /* the default waivers, when there are some */
    waivers_t waivers;
    if (waivers_load(waiver_path, &waivers) || (rerun_path && load_rerun(rerun_path, statuses, &sel))) {
        waivers_free(&waivers);
        cJSON_Delete(sel.rerun);
        impl_close(&impl);
        return EXIT_USAGE;
    }

    /* everything is loaded and checked before anything runs or is written */
    suite_t *loaded = calloc((size_t)n_suites, sizeof *loaded);
    char err[CONFORM_ERR_LEN];
    int total = 0, rc = EXIT_OK;
    for (int s = 0; s < n_suites; s++) {
        if (suite_load(suites[s], &loaded[s], err, sizeof err)) {
            rc = usage_error("%s", err);
            n_suites = s;
            goto out;
        }
        for (int c = 0; c < loaded[s].n_cases; c++) total += selected(&sel, &loaded[s].cases[c]);
    }
    if (!total && sel.shard_count <= 1) {
        rc = usage_error("run: no case matches the selection%s%s", sel.filter ? " --filter " : "", sel.filter ? sel.filter : "");
        goto out;
    }
    if (dry) {
        for (int s = 0; s < n_suites; s++)
            for (int c = 0; c < loaded[s].n_cases; c++)
                if (selected(&sel, &loaded[s].cases[c])) printf("%s\n", loaded[s].cases[c].id);
        goto out;
    }
    if (mkdir_p(report_dir, err, sizeof err)) { rc = usage_error("%s", err); goto out; }

    /* the selected cases in suite order, each with the line that reruns it alone */
    job_case *todo = calloc((size_t)total + 1, sizeof *todo);
    uint64_t *run_seeds = calloc((size_t)total + 1, sizeof *run_seeds);
    char *repros = calloc((size_t)total + 1, REPRO_LEN);
    int n_todo = 0, n_jobs = (int)jobs;
    for (int s = 0; s < n_suites; s++)
        for (int c = 0; c < loaded[s].n_cases; c++) {
            const case_t *cs = &loaded[s].cases[c];
            if (!selected(&sel, cs)) continue;
            run_seeds[n_todo] = seed_set ? (uint64_t)seed : loaded[s].seed;
            todo[n_todo] = (job_case){cs, case_seed(cs, run_seeds[n_todo]), repros + (size_t)n_todo * REPRO_LEN};
            n_todo++;
        }
    if (!threads_given) ex.threads = 0;
    jobs_share_cores(todo, n_todo, &n_jobs, &ex.threads);
    env.ex = ex;
    for (int i = 0; i < n_todo; i++) {
        char q1[600], q2[600], q3[600] = "";
        if (impl.kind != &impl_kind_optimized)
            snprintf(q3, sizeof q3, " --impl %s%s%s", shell_quote(impl_spec, q1, sizeof q1), dtype ? " --dtype " : "",
                     dtype ? dtype->name : "");
        snprintf((char *)todo[i].repro, REPRO_LEN, "build/conform run %s --filter %s --seed %llu --isa %s --threads %d%s",
                 shell_quote(todo[i].c->suite_path, q1, sizeof q1), shell_quote(todo[i].c->id, q2, sizeof q2),
                 (unsigned long long)run_seeds[i], conform_isa_name(ex.isa), ex.threads, q3);
    }
    free(run_seeds);
    char cmd[4096];
    command_line(argc, argv, cmd, sizeof cmd);
    cJSON *report = report_new(cmd, conform_isa_name(ex.isa), ex.threads);
    cJSON_AddStringToObject(report, "impl", impl_name(&impl));
    cJSON_AddItemToObject(report, "runner", impl_provenance(&impl));
    report_set_dtype(report, impl.dtype->name, impl.dtype->u);
    cJSON *js = cJSON_GetObjectItemCaseSensitive(report, "suites");
    for (int s = 0; s < n_suites; s++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "path", loaded[s].path);
        cJSON_AddStringToObject(o, "name", loaded[s].name);
        cJSON_AddNumberToObject(o, "seed", (double)(seed_set ? (uint64_t)seed : loaded[s].seed));
        cJSON_AddItemToArray(js, o);
    }
    cJSON_ReplaceItemInObject(report, "seed", cJSON_CreateNumber((double)(seed_set ? (uint64_t)seed : loaded[0].seed)));
    if (sel.shard_count > 1) {
        char shard[32];
        snprintf(shard, sizeof shard, "%d/%d", sel.shard_index, sel.shard_count);
        cJSON_AddStringToObject(report, "shard", shard);
    }
    cJSON *jcases = cJSON_GetObjectItemCaseSensitive(report, "cases");

    tally t = {&waivers, quiet, !quiet && isatty(2) && !getenv("CI"), total, 0, 0, now_seconds(), jcases, {0}, 0};
    int progress = t.progress;
    double t_start = t.t_start;
    jobs_stats stats;
    int done = jobs_run(todo, n_todo, n_jobs, &env, job_run_case, record_case, &t, &stats);
    if (stats.waited_for_memory && !quiet)
        fprintf(stderr, "conform: %d cases waited for memory: at most %.0f of %.0f MiB admitted at once (--max-memory)\n",
                stats.waited_for_memory, stats.max_admitted_bytes / 1048576.0, memory_budget() / 1048576.0);
    free(todo);
    free(repros);
    const op_desc **touched = t.touched;
    int n_touched = t.n_touched;
    if (progress) fputs("\r\033[K", stderr);
    if (interrupted) {
        cJSON_AddBoolToObject(report, "interrupted", 1);
        cJSON_AddNumberToObject(report, "cases_not_run", total - done);
        fprintf(stderr, "conform: interrupted by signal %d after %d of %d cases; the report holds those\n", (int)interrupted,
                done, total);
    }

    /* the proofs of every op the run touched: a verdict is only as good as its golden */
    cJSON *jproofs = cJSON_GetObjectItemCaseSensitive(report, "proofs");
    for (int i = 0; i < n_touched; i++) verify_op(touched[i], 1, jproofs);
    cJSON *stale = cJSON_GetObjectItemCaseSensitive(report, "stale_waivers");
    for (int i = 0; i < waivers.n; i++)
        if (!waivers.used[i]) cJSON_AddItemToArray(stale, cJSON_Duplicate(waivers.items[i], 1));
    cJSON_AddNumberToObject(report, "duration_s", now_seconds() - t_start);
    report_apply_gate(report, gate_mask);
    zoo_power_attach(report, loaded, n_suites, ZOO_POWER_FILE);
    report_summarize(report);
    if (report_write_all(report, report_dir, err, sizeof err)) rc = usage_error("%s", err);
    printf("\nreports: %s/report.{json,md,html}, %s/junit.xml\n", report_dir, report_dir);
    report_print_summary(report, stdout); /* ends with the line counting every status */
    if (rc == EXIT_OK && (!report_all_passed(report) || interrupted)) rc = EXIT_FAIL;
    cJSON_Delete(report);
out:
    for (int s = 0; s < n_suites; s++) suite_free(&loaded[s]);
    free(loaded);
    waivers_free(&waivers);
    cJSON_Delete(sel.rerun);
    impl_close(&impl);
    return rc;
}
