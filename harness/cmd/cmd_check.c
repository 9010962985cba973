/* conform check: outputs computed elsewhere (a device dump, another library) judged against the
 * reference with tolerances derived for the dtype they were computed in. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "help.h"
#include "npy.h"
#include "report.h"
#include "runner.h"
#include "standards_run.h"
#include "verify.h"

/* Value arithmetic in the output dtype; sample coordinates in float32, as accelerator kernels
 * compute them for 16-bit data (a coordinate in float16 could not even address a 4096-pixel row
 * to better than 2 pixels). */

/* the npy_read_ex mode that takes a dtype's files besides float32/float64 */
static int wide16_of(const dtype_desc *dt)
{
    return dt->id == CONFORM_DTYPE_FLOAT16 ? NPY_F16 : dt->id == CONFORM_DTYPE_BFLOAT16 ? NPY_BF16_AS_U2 : 0;
}

/* One --actual NAME=FILE: a .npy, or a headerless .bin of the output's shape at the dtype (from
   --dtype, or from a _float16/_float32/_bfloat16/_float64 suffix of the name when --dtype is not given). */
static int read_actual(const char *arg, const char *file, const shape_t *want, const dtype_desc *dt, int dtype_given,
                       tensor_t *t)
{
    char err[CONFORM_ERR_LEN], b1[128], b2[128];
    size_t n = strlen(file);
    if (n > 4 && !strcmp(file + n - 4, ".bin")) {
        const dtype_desc *named = dtype_from_bin_name(file);
        if (named && dtype_given && named != dt)
            return usage_error("--actual %s: the name says %s, --dtype says %s", arg, named->name, dt->name);
        if (npy_read_raw(file, want, named ? named : dt, t, err, sizeof err))
            return usage_error("--actual %s: %s", arg, npy_strip_path(err, file));
        return 0;
    }
    if (npy_read_ex(file, t, wide16_of(dt), err, sizeof err)) return usage_error("--actual %s: %s", arg, npy_strip_path(err, file));
    if (!shape_equal(&t->shape, want))
        return usage_error("check: actual %s has shape %s, the op gives %s", arg, shape_str(&t->shape, b1, sizeof b1),
                           shape_str(want, b2, sizeof b2));
    return 0;
}

int cmd_check(int argc, char **argv)
{
    if (argc < 3 || argv[2][0] == '-')
        return usage_error("check: usage: conform check OP [--attr N=V]... --input N=F.npy... --actual N=F.npy|F.bin... "
                           "[--dtype float32|float16|bfloat16|float64] [--report-dir DIR]");
    const op_desc *op = op_find(argv[2]);
    if (!op) return cli_unknown_op("check", argv[2]);
    problem_args a;
    memset(&a, 0, sizeof a);
    const dtype_desc *dt = dtype_get(CONFORM_DTYPE_FLOAT32);
    int dtype_given = 0;
    const char *actual[CONFORM_MAX_TENSORS * 2], *report_dir = NULL;
    int n_actual = 0, gate_mask = 0;
    char err[CONFORM_ERR_LEN];
    for (int i = 3; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--dtype") && v) {
            if (!(dt = dtype_find(v))) return usage_error("--dtype takes %s, got '%s'", dtype_names(), v);
            dtype_given = 1;
            i++;
            continue;
        }
        if (!strcmp(o, "--actual") && v && strchr(v, '=')) {
            if (n_actual == CONFORM_MAX_TENSORS * 2) return usage_error("check: too many --actual");
            actual[n_actual++] = v;
            i++;
            continue;
        }
        if (!strcmp(o, "--report-dir") && v) { report_dir = v; i++; continue; }
        if (!strcmp(o, "--gate-on")) {
            if ((gate_mask = standards_parse_list(v, err, sizeof err)) < 0) return usage_error("%s", err);
            i++;
            continue;
        }
        int t = problem_args_take(&a, argc, argv, &i);
        if (t < 0) return EXIT_USAGE;
        if (!t) return cli_unknown_option("check", o, v);
    }
    if (a.n_shape) return usage_error("check: inputs come from files (--input NAME=FILE.npy)");
    /* without --dtype, a raw file's name may say it: out_float16.bin */
    const dtype_desc *from_name = NULL;
    for (int k = 0; k < n_actual && !dtype_given; k++) {
        const dtype_desc *named = dtype_from_bin_name(strchr(actual[k], '=') + 1);
        if (named && from_name && named != from_name)
            return usage_error("check: --actual %s is named %s, another %s", actual[k], named->name, from_name->name);
        if (named) dt = from_name = named;
    }
    a.wide16 = wide16_of(dt);
    problem_t p;
    int rc = problem_from_args(op, &a, &p);
    if (rc) { problem_free(&p); return rc; }

    tensor_t got[CONFORM_MAX_TENSORS];
    memset(got, 0, sizeof got);
    for (int k = 0; k < n_actual; k++) {
        char name[64];
        const char *eq = strchr(actual[k], '=');
        snprintf(name, sizeof name, "%.*s", (int)(eq - actual[k]), actual[k]);
        int o = -1;
        for (int j = 0; j < op->n_outputs; j++) if (!strcmp(op->outputs[j].name, name)) o = j;
        if (o < 0) { rc = usage_error("check: %s has no output '%s'", op->name, name); goto out; }
        if (got[o].data) { rc = usage_error("check: output %s given twice", name); goto out; }
        if ((rc = read_actual(actual[k], eq + 1, &p.out_shape[o], dt, dtype_given, &got[o]))) goto out;
    }
    for (int o = 0; o < op->n_outputs; o++)
        if (!p.out_skipped[o] && !got[o].data) {
            rc = usage_error("check: --actual %s=FILE.npy is missing", op->outputs[o].name);
            goto out;
        }

    /* the reference and its bounds for this dtype */
    double *ref[CONFORM_MAX_TENSORS] = {0}, *bt[CONFORM_MAX_TENSORS][4] = {{0}};
    ref_bounds bounds[CONFORM_MAX_TENSORS];
    for (int o = 0; o < op->n_outputs; o++) {
        size_t n = (size_t)shape_numel(&p.out_shape[o]);
        ref[o] = calloc(n ? n : 1, sizeof(double));
        for (int t = 0; t < 4; t++) bt[o][t] = calloc(n ? n : 1, sizeof(double));
        bounds[o] = (ref_bounds){op->tol[o].k_pos * CONFORM_U_F32, bt[o][0], bt[o][1], bt[o][2], bt[o][3]};
    }
    op->reference(&p, ref, bounds);

    case_t c;
    memset(&c, 0, sizeof c);
    snprintf(c.id, sizeof c.id, "check/%s", op->name);
    c.op = op;
    case_result r;
    memset(&r, 0, sizeof r);
    r.status = CASE_PASSED;
    r.n_out = op->n_outputs;
    for (int o = 0; o < op->n_outputs; o++) {
        output_result *out = &r.out[o];
        snprintf(out->name, sizeof out->name, "%s", op->outputs[o].name);
        out->shape = p.out_shape[o];
        out->skipped = p.out_skipped[o];
        out->dt = dt;
        out->guard_ok = 1;
        if (out->skipped) continue;
        int64_t n = shape_numel(&p.out_shape[o]);
        tol_inputs t = {dt, &op->tol[o], bt[o][0], bt[o][1], bt[o][2], bt[o][3]};
        compare_f64(ref[o], got[o].data, n, &t, &out->cmp);
        if (out->cmp.n_over || out->cmp.all_zero) {
            r.status = CASE_FAILED;
            char at[96];
            snprintf(r.message, sizeof r.message, "%s: %lld of %lld elements beyond the %s tolerance (worst at %s: ref %.9g, got %.9g, tol %.3g)",
                     out->name, (long long)out->cmp.n_over, (long long)n, dt->name,
                     index_str(&out->shape, out->cmp.worst_index, at, sizeof at), out->cmp.worst_ref, out->cmp.worst_got,
                     out->cmp.worst_tol);
            case_heat_map(out, ref[o], got[o].data, &t); /* where the errors sit, in check's HTML too */
        }
    }
    double *values[CONFORM_MAX_TENSORS] = {0};
    for (int o = 0; o < op->n_outputs; o++) values[o] = got[o].data;
    standards_for_inputs(&p, ref, values, dt->id, &r);
    printf("%s %s (%s): %s\n", op->name, status_name(r.status), dt->name, r.message[0] ? r.message : "every element within its tolerance");
    printf("%-14s %12s %12s %10s %13s %9s %10s\n", "output", "max abs err", "max rel err", "max ulp", "worst err/tol", "over", "ambiguous");
    for (int o = 0; o < op->n_outputs; o++) {
        const compare_result *m = &r.out[o].cmp;
        if (r.out[o].skipped) { printf("%-14s not computed (output_mask)\n", r.out[o].name); continue; }
        printf("%-14s %12.3g %12.3g %10.3g %13.3g %9lld %10lld\n", r.out[o].name, m->max_abs_err, m->max_rel_err, m->max_ulp,
               m->max_err_over_tol, (long long)m->n_over, (long long)m->n_ambiguous);
    }
    printf("%s\n", COMPARE_ULP_MEANING);
    standards_print(&r, stdout);
    char cmd[4096];
    command_line(argc, argv, cmd, sizeof cmd);
    cJSON *report = report_new(cmd, dt->name, 0);
    cJSON_AddStringToObject(report, "impl", "external outputs");
    report_set_dtype(report, dt->name, dt->u);
    cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(report, "cases"), case_result_json(&c, &r, cmd));
    report_apply_gate(report, gate_mask);
    report_summarize(report);
    rc = report_all_passed(report) ? EXIT_OK : EXIT_FAIL; /* the derived verdict, or the gated standards' */
    if (report_gated(report)) printf("verdict gated on --gate-on standards: %s\n", rc == EXIT_OK ? "passed" : "failed");
    if (report_dir && (mkdir_p(report_dir, err, sizeof err) || report_write_all(report, report_dir, err, sizeof err)))
        rc = usage_error("%s", err);
    cJSON_Delete(report);
    case_result_free(&r);
    for (int o = 0; o < op->n_outputs; o++) {
        free(ref[o]);
        for (int t = 0; t < 4; t++) free(bt[o][t]);
    }
out:
    for (int o = 0; o < CONFORM_MAX_TENSORS; o++) tensor_free(&got[o]);
    problem_free(&p);
    return rc;
}
