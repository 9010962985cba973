/* conform check: outputs computed elsewhere (a device dump, another library) judged against the
 * reference with tolerances derived for the dtype they were computed in. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dump_case.h"
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

/* The descr of a .npy's header ("<f2"), "" when the file is not one (its reader says why later) */
static void npy_descr_of(const char *file, char *descr, size_t len)
{
    char head[512];
    descr[0] = '\0';
    FILE *f = fopen(file, "rb");
    if (!f) return;
    size_t n = fread(head, 1, sizeof head - 1, f);
    fclose(f);
    head[n] = '\0';
    for (size_t i = 0; i < n; i++) if (!head[i]) head[i] = ' '; /* the magic's version bytes */
    const char *d = strstr(head, "'descr'");
    if (d && (d = strchr(d + 7, '\'')) && strchr(d + 1, '\'')) snprintf(descr, len, "%.*s", (int)(strchr(d + 1, '\'') - d - 1), d + 1);
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
    char descr[16];
    npy_descr_of(file, descr, sizeof descr);
    if (!strcmp(descr, "<f2") && dt->itemsize != 2)
        return usage_error("--actual %s: float16 data ('<f2'), --dtype %s: pass --dtype float16 (or drop --dtype)", arg, dt->name);
    if (npy_read_ex(file, t, wide16_of(dt), err, sizeof err)) return usage_error("--actual %s: %s", arg, npy_strip_path(err, file));
    if (!shape_equal(&t->shape, want))
        return usage_error("check: actual %s has shape %s, the op gives %s", arg, shape_str(&t->shape, b1, sizeof b1),
                           shape_str(want, b2, sizeof b2));
    return 0;
}

typedef struct {
    const op_desc *op;
    problem_args a;
    const dtype_desc *dt;
    int dtype_given, gate_mask, n_actual;
    const char *actual[CONFORM_MAX_TENSORS * 2], *report_dir, *dump_dir;
} check_args;

/* Without --dtype, the actuals say it: a raw file's name (out_float16.bin), a .npy's '<f2'
   (float16); '<u2' could be bfloat16's bits or integers, so it takes --dtype bfloat16. */
static int infer_dtype(check_args *x)
{
    const dtype_desc *from = NULL;
    const char *from_arg = NULL;
    for (int k = 0; k < x->n_actual; k++) {
        const char *file = strchr(x->actual[k], '=') + 1;
        char descr[16];
        npy_descr_of(file, descr, sizeof descr);
        const dtype_desc *named = dtype_from_bin_name(file);
        if (!named && !strcmp(descr, "<f2")) named = dtype_get(CONFORM_DTYPE_FLOAT16);
        if (!named && !strcmp(descr, "<u2"))
            return usage_error("check: --actual %s holds '<u2' data: bfloat16 bits are read with --dtype bfloat16 (pass it)",
                               x->actual[k]);
        if (named && from && named != from)
            return usage_error("check: --actual %s is %s, --actual %s %s: pass --dtype", x->actual[k], named->name, from_arg,
                               from->name);
        if (named) {
            x->dt = from = named;
            from_arg = x->actual[k];
        }
    }
    return EXIT_OK;
}

/* the command line; EXIT_OK or EXIT_USAGE after a message */
static int parse_check_args(int argc, char **argv, check_args *x)
{
    memset(x, 0, sizeof *x);
    if (argc < 3 || argv[2][0] == '-')
        return usage_error("check: usage: conform check OP [--attr N=V]... --input N=F.npy... --actual N=F.npy|F.bin... "
                           "[--dtype float32|float16|bfloat16|float64] [--report-dir DIR] [--dump-failures DIR] [--threads N]");
    if (!(x->op = op_find(argv[2]))) return cli_unknown_op("check", argv[2]);
    if (cli_once("check", argc, argv)) return EXIT_USAGE;
    x->dt = dtype_get(CONFORM_DTYPE_FLOAT32);
    ref_set_threads(omp_get_max_threads()); /* every core for the golden unless --threads says */
    char err[CONFORM_ERR_LEN];
    for (int i = 3; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(o, "--dtype") && v) {
            if (!(x->dt = dtype_find(v))) return usage_error("--dtype takes %s, got '%s'", dtype_names(), v);
            x->dtype_given = 1;
            i++;
        } else if (!strcmp(o, "--actual") && v && strchr(v, '=')) {
            if (x->n_actual == CONFORM_MAX_TENSORS * 2) return usage_error("check: too many --actual");
            x->actual[x->n_actual++] = v;
            i++;
        } else if (!strcmp(o, "--report-dir") && v) {
            x->report_dir = v;
            i++;
        } else if (!strcmp(o, "--dump-failures") && v) {
            x->dump_dir = v;
            i++;
        } else if (!strcmp(o, "--threads")) { /* the golden's (default: every core) */
            conform_exec ex = {CONFORM_ISA_AUTO, 0};
            if (parse_threads_arg(v, &ex)) return EXIT_USAGE;
            ref_set_threads(ex.threads);
            i++;
        } else if (!strcmp(o, "--gate-on")) {
            if ((x->gate_mask = standards_parse_list(v, err, sizeof err)) < 0) return usage_error("%s", err);
            i++;
        } else {
            int t = problem_args_take(&x->a, argc, argv, &i);
            if (t < 0) return EXIT_USAGE;
            if (!t) return cli_unknown_option("check", o, v);
        }
    }
    if (x->a.n_shape) return usage_error("check: inputs come from files (--input NAME=FILE.npy)");
    if (x->report_dir && dir_usable(x->report_dir, err, sizeof err)) /* before the golden is computed */
        return usage_error("--report-dir %s: %s", x->report_dir, err);
    if (x->dump_dir && dir_usable(x->dump_dir, err, sizeof err))
        return usage_error("--dump-failures %s: %s", x->dump_dir, err);
    if (!x->dtype_given && infer_dtype(x)) return EXIT_USAGE;
    /* inputs may be float16 whatever the dtype: widening them is exact */
    x->a.wide16 = x->dt->id == CONFORM_DTYPE_BFLOAT16 ? NPY_BF16_AS_U2 : NPY_F16;
    return EXIT_OK;
}

/* every computed output's --actual file, read at its shape */
static int read_actuals(const check_args *x, const problem_t *p, tensor_t *got)
{
    const op_desc *op = x->op;
    for (int k = 0; k < x->n_actual; k++) {
        char name[64];
        const char *eq = strchr(x->actual[k], '=');
        snprintf(name, sizeof name, "%.*s", (int)(eq - x->actual[k]), x->actual[k]);
        int o = -1, rc;
        for (int j = 0; j < op->n_outputs; j++) if (!strcmp(op->outputs[j].name, name)) o = j;
        if (o < 0) return usage_error("check: %s has no output '%s'", op->name, name);
        if (got[o].data) return usage_error("check: output %s given twice", name);
        if (p->out_skipped[o]) /* read, then never judged: a wrong file would sit under a pass */
            return usage_error("check: --actual %s: output_mask does not compute %s, so nothing would judge it (drop it, "
                               "or set its flag in output_mask)", x->actual[k], name);
        if ((rc = read_actual(x->actual[k], eq + 1, &p->out_shape[o], x->dt, x->dtype_given, &got[o]))) return rc;
    }
    for (int o = 0; o < op->n_outputs; o++)
        if (!p->out_skipped[o] && !got[o].data) return usage_error("check: --actual %s=FILE.npy is missing", op->outputs[o].name);
    return EXIT_OK;
}

/* the outputs judged as run judges them (judge.h), with the named standards beside */
static void judge_actuals(const problem_t *p, const judge_ref *j, const tensor_t *got, case_result *r)
{
    const op_desc *op = p->op;
    r->status = CASE_PASSED;
    r->n_out = op->n_outputs;
    double *values[CONFORM_MAX_TENSORS] = {0};
    for (int o = 0; o < op->n_outputs; o++) {
        output_result *out = &r->out[o];
        judge_output_init(p, j, o, out);
        if (out->skipped) continue;
        char m[400];
        if (judge_output(j, o, got[o].data, out, m, sizeof m) && r->status == CASE_PASSED) {
            r->status = CASE_FAILED; /* the first reason, as run gives it */
            snprintf(r->message, sizeof r->message, "%s", m);
        }
        values[o] = got[o].data;
    }
    standards_for_inputs(p, j->ref, values, j->dt->id, r);
}

static void print_check(const op_desc *op, const dtype_desc *dt, const case_result *r)
{
    printf("%s %s (%s): %s\n", op->name, status_name(r->status), dt->name, r->message[0] ? r->message : "every element within its tolerance");
    printf("%-14s %12s %12s %10s %13s %9s %10s\n", "output", "max abs err", "max rel err", "max ulp", "worst err/tol", "over", "ambiguous");
    for (int o = 0; o < op->n_outputs; o++) {
        const compare_result *m = &r->out[o].cmp;
        if (r->out[o].skipped) { printf("%-14s not computed (output_mask)\n", r->out[o].name); continue; }
        printf("%-14s %12.3g %12.3g %10.3g %13.3g %9lld %10lld\n", r->out[o].name, m->max_abs_err, m->max_rel_err, m->max_ulp,
               m->max_err_over_tol, (long long)m->n_over, (long long)m->n_ambiguous);
    }
    printf("%s\n", COMPARE_ULP_MEANING);
    standards_print(r, stdout);
}

/* the one-case report, its verdict (derived, or the gated standards') and its files */
static int report_check(int argc, char **argv, const check_args *x, case_result *r)
{
    case_t c;
    memset(&c, 0, sizeof c);
    snprintf(c.id, sizeof c.id, "check/%s", x->op->name);
    c.op = x->op;
    char cmd[4096], err[CONFORM_ERR_LEN];
    command_line(argc, argv, cmd, sizeof cmd);
    /* no kernel of ours runs: the outputs are given; the threads are the golden's */
    cJSON *report = report_new(cmd, "none (outputs given)", ref_get_threads());
    cJSON_AddStringToObject(report, "impl", "external outputs");
    report_set_dtype(report, x->dt->name, x->dt->u);
    cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(report, "cases"), case_result_json(&c, r, cmd));
    report_apply_gate(report, x->gate_mask);
    report_summarize(report);
    int rc = report_all_passed(report) ? EXIT_OK : EXIT_FAIL;
    if (report_gated(report)) printf("verdict gated on --gate-on standards: %s\n", rc == EXIT_OK ? "passed" : "failed");
    if (x->report_dir && (mkdir_p(x->report_dir, err, sizeof err) || report_write_all(report, x->report_dir, err, sizeof err)))
        rc = usage_error("%s", err);
    cJSON_Delete(report);
    return rc;
}

/* --dump-failures: the failing call in DIR/check_<op>, as run dumps a case */
static void dump_check(const check_args *x, const problem_t *p, const judge_ref *j, const tensor_t *got, const case_result *r)
{
    char id[96], err[CONFORM_ERR_LEN], folder[1100];
    const double *vals[CONFORM_MAX_TENSORS] = {0};
    for (int o = 0; o < x->op->n_outputs; o++) vals[o] = got[o].data;
    snprintf(id, sizeof id, "check/%s", x->op->name);
    dump_folder(x->dump_dir, id, folder, sizeof folder);
    if (dump_case(x->dump_dir, id, p, j, vals, r, err, sizeof err)) fprintf(stderr, "conform: --dump-failures: %s\n", err);
    else printf("dumped: %s (repro.sh judges it again from there)\n", folder);
}

int cmd_check(int argc, char **argv)
{
    check_args x;
    int rc = parse_check_args(argc, argv, &x);
    if (rc) return rc;
    problem_t p;
    if ((rc = problem_from_args(x.op, &x.a, &p))) {
        problem_free(&p);
        return rc;
    }
    tensor_t got[CONFORM_MAX_TENSORS];
    memset(got, 0, sizeof got);
    judge_ref j;
    case_result r;
    memset(&r, 0, sizeof r);
    if (!(rc = read_actuals(&x, &p, got))) {
        if (judge_reference(&p, x.dt, &j)) {
            fprintf(stderr, "conform: check: out of memory for the reference of %s and its bounds\n", x.op->name);
            rc = EXIT_FAIL;
        } else {
            judge_actuals(&p, &j, got, &r);
            print_check(x.op, x.dt, &r);
            if (x.dump_dir && status_fails(r.status)) dump_check(&x, &p, &j, got, &r);
            rc = report_check(argc, argv, &x, &r);
            judge_ref_free(&j);
        }
    }
    case_result_free(&r);
    for (int o = 0; o < CONFORM_MAX_TENSORS; o++) tensor_free(&got[o]);
    problem_free(&p);
    return rc;
}
