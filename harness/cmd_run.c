/* conform run: suites -> cases -> both paths -> verdicts -> report.json and a summary table. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "report.h"
#include "runner.h"
#include "verify.h"

#define MAX_SUITES 32

typedef struct {
    const char *op;
    int total, passed, failed, error;
    long long ambiguous;
    double worst_ratio, max_ulp;
} op_summary;

static op_summary *summary_of(op_summary *s, int *n, const char *op)
{
    for (int i = 0; i < *n; i++)
        if (!strcmp(s[i].op, op)) return &s[i];
    memset(&s[*n], 0, sizeof s[*n]);
    s[*n].op = op;
    return &s[(*n)++];
}

static cJSON *tolerance_models(void)
{
    cJSON *j = cJSON_CreateObject();
    for (int i = 0; conform_ops[i]; i++) {
        const op_desc *op = conform_ops[i];
        cJSON *o = cJSON_AddArrayToObject(j, op->name);
        for (int k = 0; k < op->n_outputs; k++) {
            cJSON *t = cJSON_CreateObject();
            cJSON_AddStringToObject(t, "output", op->outputs[k].name);
            cJSON_AddStringToObject(t, "formula",
                                    "tol = u*(k_val + n_terms)*abs_sum + pos_err; ambiguous: + ambig");
            cJSON_AddNumberToObject(t, "k_val", op->tol[k].k_val);
            cJSON_AddStringToObject(t, "k_val_why", op->tol[k].k_val_why);
            cJSON_AddNumberToObject(t, "k_pos", op->tol[k].k_pos);
            cJSON_AddStringToObject(t, "k_pos_why", op->tol[k].k_pos_why);
            cJSON_AddItemToArray(o, t);
        }
    }
    return j;
}

int cmd_run(int argc, char **argv)
{
    const char *suites[MAX_SUITES];
    int n_suites = 0, seed_set = 0, dry = 0, quiet = 0;
    long long seed = 0;
    const char *filter = NULL, *report_dir = "reports/latest";
    conform_exec ex = {CONFORM_ISA_AUTO, 0};
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--filter") && v) { filter = v; i++; }
        else if (!strcmp(a, "--seed")) { if (parse_int_arg(a, v, 0, 4294967295LL, &seed)) return EXIT_USAGE; seed_set = 1; i++; }
        else if (!strcmp(a, "--threads")) { if (parse_threads_arg(v, &ex)) return EXIT_USAGE; i++; }
        else if (!strcmp(a, "--isa")) { if (parse_isa_arg(v, &ex)) return EXIT_USAGE; i++; }
        else if (!strcmp(a, "--report-dir") && v) { report_dir = v; i++; }
        else if (!strcmp(a, "--golden-dir") && v) { verify_golden_dir = v; i++; }
        else if (!strcmp(a, "--list") || !strcmp(a, "--dry-run")) dry = 1;
        else if (!strcmp(a, "--quiet")) quiet = 1;
        else if (a[0] == '-') return usage_error("run: unknown option '%s' (see conform --help)", a);
        else if (n_suites == MAX_SUITES) return usage_error("run: at most %d suites", MAX_SUITES);
        else suites[n_suites++] = a;
    }
    if (!n_suites) suites[n_suites++] = "cases/conformance.json";
    if (resolve_isa(&ex)) return EXIT_USAGE;

    /* everything is loaded and checked before anything runs or is written */
    suite_t *loaded = calloc((size_t)n_suites, sizeof *loaded);
    char err[CONFORM_ERR_LEN];
    int total = 0;
    for (int s = 0; s < n_suites; s++) {
        if (suite_load(suites[s], &loaded[s], err, sizeof err)) {
            for (int k = 0; k < s; k++) suite_free(&loaded[k]);
            free(loaded);
            return usage_error("%s", err);
        }
        for (int c = 0; c < loaded[s].n_cases; c++) total += case_matches(&loaded[s].cases[c], filter);
    }
    int rc = EXIT_OK;
    if (!total) {
        rc = usage_error("run: no case matches%s%s", filter ? " --filter " : "", filter ? filter : "");
        goto out;
    }
    if (dry) {
        for (int s = 0; s < n_suites; s++)
            for (int c = 0; c < loaded[s].n_cases; c++)
                if (case_matches(&loaded[s].cases[c], filter)) printf("%s\n", loaded[s].cases[c].id);
        goto out;
    }
    if (mkdir_p(report_dir, err, sizeof err)) { rc = usage_error("%s", err); goto out; }

    char cmd[4096];
    command_line(argc, argv, cmd, sizeof cmd);
    cJSON *report = cJSON_CreateObject();
    cJSON_AddStringToObject(report, "schema", CONFORM_REPORT_SCHEMA);
    cJSON_AddNumberToObject(report, "schema_version", CONFORM_REPORT_SCHEMA_VERSION);
    cJSON_AddStringToObject(report, "tool_version", CONFORM_VERSION);
    cJSON_AddStringToObject(report, "command", cmd);
    cJSON_AddStringToObject(report, "isa", conform_isa_name(ex.isa));
    cJSON_AddNumberToObject(report, "threads", ex.threads);
    cJSON *js = cJSON_AddArrayToObject(report, "suites");
    for (int s = 0; s < n_suites; s++) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "path", loaded[s].path);
        cJSON_AddStringToObject(o, "name", loaded[s].name);
        cJSON_AddNumberToObject(o, "seed", (double)(seed_set ? (uint64_t)seed : loaded[s].seed));
        cJSON_AddItemToArray(js, o);
    }
    if (seed_set) cJSON_AddNumberToObject(report, "seed", (double)seed);
    else cJSON_AddNumberToObject(report, "seed", (double)loaded[0].seed);
    cJSON *summary = cJSON_AddObjectToObject(report, "summary");
    cJSON *jcases = cJSON_CreateArray();

    op_summary ops[64];
    int n_ops = 0, done = 0, failed = 0;
    int progress = !quiet && isatty(2) && !getenv("CI");
    double t_start = now_seconds();
    for (int s = 0; s < n_suites; s++) {
        uint64_t run_seed = seed_set ? (uint64_t)seed : loaded[s].seed;
        for (int c = 0; c < loaded[s].n_cases; c++) {
            const case_t *cs = &loaded[s].cases[c];
            if (!case_matches(cs, filter)) continue;
            case_result r;
            run_case(cs, case_seed(cs, run_seed), &ex, &r);
            char repro[2048], q1[600], q2[600];
            snprintf(repro, sizeof repro, "build/conform run %s --filter %s --seed %llu --isa %s --threads %d",
                     shell_quote(loaded[s].path, q1, sizeof q1), shell_quote(cs->id, q2, sizeof q2),
                     (unsigned long long)run_seed, conform_isa_name(ex.isa), ex.threads > 0 ? ex.threads : 1);
            cJSON_AddItemToArray(jcases, case_result_json(cs, &r, repro));
            op_summary *os = summary_of(ops, &n_ops, cs->op->name);
            os->total++;
            if (!strcmp(r.status, "passed")) os->passed++;
            else if (!strcmp(r.status, "failed")) os->failed++;
            else os->error++;
            for (int o = 0; o < r.n_out; o++) {
                os->ambiguous += r.out[o].cmp.n_ambiguous;
                if (r.out[o].cmp.max_err_over_tol > os->worst_ratio) os->worst_ratio = r.out[o].cmp.max_err_over_tol;
                if (r.out[o].cmp.max_ulp > os->max_ulp) os->max_ulp = r.out[o].cmp.max_ulp;
            }
            done++;
            if (strcmp(r.status, "passed")) {
                failed++;
                if (!quiet) {
                    if (progress) fputs("\r\033[K", stderr);
                    printf("%-6s %s\n       %s\n       repro: %s\n", r.status, cs->id, r.message, repro);
                }
            }
            if (progress) {
                double el = now_seconds() - t_start, left = el / done * (total - done);
                fprintf(stderr, "\r\033[K[%d/%d] failures %d, %.0fs left", done, total, failed, left);
            }
        }
    }
    if (progress) fputs("\r\033[K", stderr);
    double elapsed = now_seconds() - t_start;

    int sum_p = 0, sum_f = 0, sum_e = 0;
    long long sum_a = 0;
    cJSON *jops = cJSON_CreateObject();
    for (int i = 0; i < n_ops; i++) {
        sum_p += ops[i].passed; sum_f += ops[i].failed; sum_e += ops[i].error; sum_a += ops[i].ambiguous;
        cJSON *o = cJSON_AddObjectToObject(jops, ops[i].op);
        cJSON_AddNumberToObject(o, "total", ops[i].total);
        cJSON_AddNumberToObject(o, "passed", ops[i].passed);
        cJSON_AddNumberToObject(o, "failed", ops[i].failed);
        cJSON_AddNumberToObject(o, "error", ops[i].error);
        cJSON_AddNumberToObject(o, "ambiguous_elements", (double)ops[i].ambiguous);
        cJSON_AddNumberToObject(o, "max_err_over_tol", isfinite(ops[i].worst_ratio) ? ops[i].worst_ratio : 1e308);
        cJSON_AddNumberToObject(o, "max_ulp", ops[i].max_ulp);
    }
    cJSON_AddNumberToObject(summary, "total", done);
    cJSON_AddNumberToObject(summary, "passed", sum_p);
    cJSON_AddNumberToObject(summary, "failed", sum_f);
    cJSON_AddNumberToObject(summary, "error", sum_e);
    cJSON_AddNumberToObject(summary, "ambiguous_elements", (double)sum_a);
    cJSON_AddNumberToObject(summary, "duration_s", elapsed);
    /* the proofs of every op the run touched: a verdict is only as good as its golden */
    cJSON *jproofs = cJSON_CreateArray();
    int proofs_failed = 0;
    for (int i = 0; i < n_ops; i++) proofs_failed += verify_op(op_find(ops[i].op), 1, jproofs);
    int n_proofs = cJSON_GetArraySize(jproofs);
    cJSON_AddNumberToObject(summary, "proofs", n_proofs);
    cJSON_AddNumberToObject(summary, "proofs_failed", proofs_failed);
    cJSON_AddItemToObject(report, "ops", jops);
    cJSON_AddItemToObject(report, "proofs", jproofs);
    cJSON_AddItemToObject(report, "tolerance_models", tolerance_models());
    cJSON_AddItemToObject(report, "cases", jcases);

    char path[1100];
    snprintf(path, sizeof path, "%s/report.json", report_dir);
    if (write_json_atomic(path, report, err, sizeof err)) rc = usage_error("%s", err);
    cJSON_Delete(report);

    printf("\n%-26s %6s %7s %7s %6s %10s %13s %9s\n", "op", "cases", "passed", "failed", "error", "ambiguous",
           "worst err/tol", "max ulp");
    for (int i = 0; i < n_ops; i++)
        printf("%-26s %6d %7d %7d %6d %10lld %13.3g %9.3g\n", ops[i].op, ops[i].total, ops[i].passed, ops[i].failed,
               ops[i].error, ops[i].ambiguous, ops[i].worst_ratio, ops[i].max_ulp);
    printf("%-26s %6d %7d %7d %6d %10lld\n", "total", done, sum_p, sum_f, sum_e, sum_a);
    printf("isa %s, threads %d, %.1f s; report: %s\n", conform_isa_name(ex.isa), ex.threads, elapsed, path);
    printf("proofs of the references: %d run, %d failed%s\n", n_proofs, proofs_failed,
           proofs_failed ? " (see conform verify)" : "");
    printf("%d passed, %d failed\n", sum_p, sum_f + sum_e);
    if (rc == EXIT_OK && (sum_f || sum_e || proofs_failed)) rc = EXIT_FAIL;
out:
    for (int s = 0; s < n_suites; s++) suite_free(&loaded[s]);
    free(loaded);
    return rc;
}
