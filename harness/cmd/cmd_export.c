/* conform export: see export.h. Inputs are generated exactly as `run` generates them (same ids,
 * same per-case seeds), then rounded to the dtype, so the device and the reference read the same
 * numbers. `--outputs IMPL` also writes an implementation's outputs where a device would, for a
 * round trip without one. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "help.h"
#include "export.h"
#include "impl.h"
#include "npy.h"
#include "report.h"
#include "runner.h"
#include "select.h"

#define MAX_SUITES 32

typedef struct {
    const char *dir;
    const dtype_desc *dt;
    const impl_t *impl; /* --outputs, or NULL */
    conform_exec ex;
} export_ctx;

static cJSON *attrs_json(const problem_t *p)
{
    cJSON *a = cJSON_CreateObject();
    for (int i = 0; i < p->op->n_attrs; i++) {
        if (!p->attr_set[i]) continue; /* a case refused before its defaults were filled in */
        const attr_value *v = &p->attr[i];
        const char *name = p->op->attrs[i].name;
        switch (v->kind) {
        case ATTR_INT: cJSON_AddNumberToObject(a, name, (double)v->i); break;
        case ATTR_FLOAT: cJSON_AddNumberToObject(a, name, v->f); break;
        case ATTR_BOOL: cJSON_AddBoolToObject(a, name, v->i != 0); break;
        case ATTR_STRING: cJSON_AddStringToObject(a, name, v->s); break;
        case ATTR_INT_LIST: {
            cJSON *l = cJSON_AddArrayToObject(a, name);
            for (int k = 0; k < v->n; k++) cJSON_AddItemToArray(l, cJSON_CreateNumber((double)v->list[k]));
            break;
        }
        }
    }
    return a;
}

static cJSON *shape_json(const shape_t *s)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < s->rank; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber((double)s->dims[i]));
    return a;
}

/* DIR-relative folder of a case: its suite, its place in the suite (unique, stable under any
   selection) and a readable rest of the id */
static void case_folder(const suite_t *s, int index, const case_t *c, char *buf, size_t len)
{
    const char *rest = strchr(c->id, '/') ? strchr(c->id, '/') + 1 : c->id;
    char clean[81];
    size_t k = 0;
    for (; rest[k] && k < sizeof clean - 1; k++) {
        char ch = rest[k];
        int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' || ch == '-' ||
                 ch == '=';
        clean[k] = ok ? ch : '_';
    }
    clean[k] = '\0';
    snprintf(buf, len, "%s/%05d-%s", s->name, index, clean);
}

/* the implementation's outputs, written where the manifest says a device writes them */
static int write_outputs(const export_ctx *x, const case_t *c, const problem_t *p, const char *folder, char *err, size_t errlen)
{
    const op_desc *op = p->op;
    void *out[CONFORM_MAX_TENSORS] = {0};
    double *val = NULL;
    int rc = 0, code = 0;
    for (int o = 0; o < op->n_outputs; o++)
        if (!(out[o] = guarded_alloc(shape_numel(&p->out_shape[o]), x->impl->dtype))) rc = -1;
    /* isolated as in run: a crashing plugin costs its case, and OpenMP threads never start in
       this process (libgomp does not survive a fork, and a test may run export, then run) */
    exec_policy isolated = {1, 120.0, NULL};
    char why[CONFORM_ERR_LEN] = "";
    exec_status st = rc ? EXEC_KERNEL_ERROR : impl_outputs(x->impl, c, p, out, &x->ex, &isolated, &code, why, sizeof why);
    if (st != EXEC_OK && !why[0]) { /* a crash is not a kernel error: say which it was */
        if (st == EXEC_CRASHED) snprintf(why, sizeof why, "crashed: signal %d, %s", code, strsignal(code));
        else if (st == EXEC_TIMEOUT) snprintf(why, sizeof why, "no result within %.0f s", isolated.timeout_s);
        else snprintf(why, sizeof why, "kernel error %d", code);
    }
    if (st != EXEC_OK) /* no file: the run reports the case missing, as it would for a device */
        fprintf(stderr, "conform: export: %s: %s gave no outputs (%s)\n", c->id, impl_name(x->impl), why);
    for (int o = 0; st == EXEC_OK && !rc && o < op->n_outputs; o++) {
        if (p->out_skipped[o]) continue;
        int64_t n = shape_numel(&p->out_shape[o]);
        val = realloc(val, (size_t)(n ? n : 1) * sizeof *val);
        if (!val) { rc = -1; break; }
        dtype_decode(x->impl->dtype->id, out[o], val, n); /* then rounded to the export's dtype */
        char path[1400];
        snprintf(path, sizeof path, "%s/%s/%s.npy", x->dir, folder, op->outputs[o].name);
        rc = npy_write_dtype(path, &p->out_shape[o], x->dt, val, err, errlen);
    }
    free(val);
    for (int o = 0; o < CONFORM_MAX_TENSORS; o++) guarded_free(out[o]);
    return rc;
}

/* Whatever an earlier export (its --outputs) or a device left at an output's paths (the .npy and
   every raw form run would read in its place): removed, so an output DIR holds was written after
   this export, and one that was not is missing, never an old file judged as the device's. */
static int remove_old_output(const export_ctx *x, const char *folder, const char *name, char *err, size_t errlen)
{
    static const char *const raw[] = CONFORM_RAW_SUFFIXES;
    char path[1400];
    for (size_t k = 0; k <= sizeof raw / sizeof raw[0]; k++) {
        if (k == 0) snprintf(path, sizeof path, "%s/%s/%s.npy", x->dir, folder, name);
        else snprintf(path, sizeof path, "%s/%s/%s%s.bin", x->dir, folder, name, raw[k - 1]);
        if (remove(path) && errno != ENOENT) {
            snprintf(err, errlen, "%s: cannot remove an earlier export's output (%s)", path, strerror(errno));
            return -1;
        }
    }
    return 0;
}

/* one input: the file at the dtype, its hash and shape into the entry */
static int write_input(const export_ctx *x, const char *folder, const char *name, const tensor_t *t, cJSON *e, char *err,
                       size_t errlen)
{
    char rel[700], path[1400], hex[32];
    snprintf(rel, sizeof rel, "%s/%s.npy", folder, name);
    snprintf(path, sizeof path, "%s/%s", x->dir, rel);
    uint64_t h;
    if (npy_write_dtype(path, &t->shape, x->dt, t->data, err, errlen) || file_fnv1a64(path, &h, err, errlen)) return -1;
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
    cJSON_AddStringToObject(cJSON_GetObjectItem(e, "inputs"), name, rel);
    cJSON_AddStringToObject(cJSON_GetObjectItem(e, "input_hashes"), name, hex);
    cJSON_AddItemToObject(cJSON_GetObjectItem(e, "input_shapes"), name, shape_json(&t->shape));
    return 0;
}

/* The manifest entry of one case, its input files and (--outputs) its output files. -1: a file
   could not be written (err says which). */
static int export_case(const export_ctx *x, const suite_t *s, int index, uint64_t run_seed, cJSON *cases, char *err,
                       size_t errlen)
{
    const case_t *c = &s->cases[index];
    uint64_t seed = case_seed(c, run_seed);
    cJSON *e = cJSON_CreateObject();
    cJSON_AddItemToArray(cases, e);
    cJSON_AddStringToObject(e, "id", c->id);
    cJSON_AddStringToObject(e, "op", c->op->name);
    cJSON_AddStringToObject(e, "suite", s->name);
    cJSON_AddNumberToObject(e, "seed", (double)seed);
    cJSON *ins = cJSON_AddObjectToObject(e, "inputs"), *outs = cJSON_AddObjectToObject(e, "outputs");
    cJSON_AddObjectToObject(e, "input_hashes");
    cJSON_AddObjectToObject(e, "input_shapes");
    (void)ins;
    problem_t p;
    char why[CONFORM_ERR_LEN];
    int bad = case_build(c, seed, &p, why, sizeof why);
    const char *expect_error = case_expect_error(c);
    if (!bad && !expect_error && case_inputs_overflow(&p, x->dt, why, sizeof why)) {
        /* no data: a device would read infinities where the case means finite values; run says why */
        cJSON_AddItemToObject(e, "attrs", attrs_json(&p));
        cJSON_AddStringToObject(e, "not_applicable", why);
        problem_free(&p);
        return 0;
    }
    for (int i = 0; !bad && i < p.op->n_inputs; i++) dtype_round_array(x->dt->id, p.in[i].data, tensor_numel(&p.in[i]));
    if (!bad) bad = c->op->validate(&p, why, sizeof why);
    cJSON_AddItemToObject(e, "attrs", attrs_json(&p));
    if (expect_error || bad) {
        /* nothing for a device to run: run judges these by validation alone */
        if (expect_error) cJSON_AddStringToObject(e, "expect_error", expect_error);
        else cJSON_AddStringToObject(e, "invalid", why);
        problem_free(&p);
        return 0;
    }
    char folder[600], path[1400];
    case_folder(s, index, c, folder, sizeof folder);
    snprintf(path, sizeof path, "%s/%s", x->dir, folder);
    int rc = mkdir_p(path, err, errlen);
    for (int i = 0; !rc && i < p.op->n_inputs; i++) rc = write_input(x, folder, p.op->inputs[i].name, &p.in[i], e, err, errlen);
    for (int o = 0; !rc && o < p.op->n_outputs; o++) {
        rc = remove_old_output(x, folder, p.op->outputs[o].name, err, errlen);
        cJSON *jo = cJSON_AddObjectToObject(outs, p.op->outputs[o].name);
        snprintf(path, sizeof path, "%s/%s.npy", folder, p.op->outputs[o].name);
        cJSON_AddStringToObject(jo, "path", path);
        cJSON_AddItemToObject(jo, "shape", shape_json(&p.out_shape[o]));
        cJSON_AddBoolToObject(jo, "computed", !p.out_skipped[o]);
    }
    if (!rc && x->impl && impl_supports(x->impl, c->op)) rc = write_outputs(x, c, &p, folder, err, errlen);
    problem_free(&p);
    return rc;
}

static cJSON *manifest_new(int argc, char **argv, const export_ctx *x, const suite_t *suites, int n_suites, uint64_t seed)
{
    char cmd[4096];
    command_line(argc, argv, cmd, sizeof cmd);
    cJSON *m = cJSON_CreateObject();
    cJSON_AddStringToObject(m, "schema", CONFORM_EXPORT_SCHEMA);
    cJSON_AddNumberToObject(m, "schema_version", CONFORM_EXPORT_SCHEMA_VERSION);
    cJSON_AddStringToObject(m, "tool_version", CONFORM_VERSION);
    cJSON_AddStringToObject(m, "command", cmd);
    cJSON_AddStringToObject(m, "suite", suites[0].name);
    cJSON *names = cJSON_AddArrayToObject(m, "suites");
    for (int s = 0; s < n_suites; s++) cJSON_AddItemToArray(names, cJSON_CreateString(suites[s].name));
    cJSON_AddNumberToObject(m, "seed", (double)seed);
    cJSON_AddStringToObject(m, "dtype", x->dt->name);
    cJSON_AddStringToObject(m, "npy_descr", x->dt->npy_descr);
    cJSON_AddStringToObject(m, "hash", "input_hashes: 64-bit FNV-1a of each input file's bytes, 16 hex digits, "
                                       "from offset basis 1469598103934665603 (not the published "
                                       "14695981039346656037) with prime 1099511628211 "
                                       "(non-cryptographic: it detects edited or stale files, not tampering)");
    if (x->impl) cJSON_AddStringToObject(m, "outputs_from", impl_name(x->impl));
    else cJSON_AddNullToObject(m, "outputs_from");
    cJSON_AddArrayToObject(m, "cases");
    return m;
}

/* The selection the export was made with: `run --impl dir:` judges the cases the manifest lists
   (that is the selection), and takes the shard from here so its report records I/N for merge. */
static void add_selection(cJSON *m, const selection *sel)
{
    cJSON *o = cJSON_AddObjectToObject(m, "selection"), *ops = cJSON_AddArrayToObject(o, "ops");
    for (int i = 0; i < sel->n_ops; i++) cJSON_AddItemToArray(ops, cJSON_CreateString(sel->ops[i]));
    if (sel->filter) cJSON_AddStringToObject(o, "filter", sel->filter);
    else cJSON_AddNullToObject(o, "filter");
    if (sel->shard_count > 1) {
        char shard[32];
        snprintf(shard, sizeof shard, "%d/%d", sel->shard_index, sel->shard_count);
        cJSON_AddStringToObject(o, "shard", shard);
    } else cJSON_AddNullToObject(o, "shard");
}

/* export's command line */
typedef struct {
    const char *paths[MAX_SUITES], *out_dir, *outputs;
    int n_suites, seed_set;
    long long seed;
    selection sel;
} export_args;

/* 0, or the exit code of a usage error (named) */
static int export_parse(int argc, char **argv, export_args *ea, export_ctx *x)
{
    selection *sel = &ea->sel;
    if (cli_once("export", argc, argv)) return EXIT_USAGE;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--out") && v) { ea->out_dir = v; i++; }
        else if (!strcmp(a, "--dtype")) {
            if (!(x->dt = dtype_find(v))) return usage_error("--dtype takes %s, got '%s'", dtype_names(), v ? v : "");
            i++;
        }
        else if (!strcmp(a, "--outputs") && v) { ea->outputs = v; i++; }
        else if (!strcmp(a, "--filter") && v) { sel->filter = v; i++; }
        else if (!strcmp(a, "--op") && v) {
            if (!op_find(v)) return cli_unknown_op("--op", v);
            if (sel->n_ops == MAX_OPS) return usage_error("--op: at most %d", MAX_OPS);
            sel->ops[sel->n_ops++] = v;
            i++;
        }
        else if (!strcmp(a, "--shard")) { if (parse_shard(v, &sel->shard_index, &sel->shard_count)) return EXIT_USAGE; i++; }
        else if (!strcmp(a, "--seed")) { if (parse_int_arg(a, v, 0, 4294967295LL, &ea->seed)) return EXIT_USAGE; ea->seed_set = 1; i++; }
        else if (!strcmp(a, "--threads")) { if (parse_threads_arg(v, &x->ex)) return EXIT_USAGE; i++; }
        else if (!strcmp(a, "--isa")) { if (parse_isa_arg(v, &x->ex)) return EXIT_USAGE; i++; }
        else if (a[0] == '-') return cli_unknown_option("export", a, v);
        else if (ea->n_suites == MAX_SUITES) return usage_error("export: at most %d suites", MAX_SUITES);
        else ea->paths[ea->n_suites++] = a;
    }
    if (!ea->out_dir) return usage_error("export: --out DIR is required (where the manifest and the inputs go)");
    if (!ea->n_suites) ea->paths[ea->n_suites++] = "cases/conformance.json";
    if (resolve_isa(&x->ex)) return EXIT_USAGE;
    x->dir = ea->out_dir;
    return EXIT_OK;
}

/* The selected cases of the loaded suites (total of them) into the export directory, the manifest
 * last: a directory without one was never finished */
static int export_all(int argc, char **argv, const export_args *ea, const export_ctx *x, const suite_t *loaded,
                      int total)
{
    char err[CONFORM_ERR_LEN], mpath[1100];
    const char *out_dir = ea->out_dir;
    if (mkdir_p(out_dir, err, sizeof err)) return usage_error("%s", err);
    snprintf(mpath, sizeof mpath, "%s/manifest.json", out_dir);
    /* an earlier export's manifest would vouch for the files this one overwrites: gone before the
       first file is written, back only when every file is */
    if (remove(mpath) && errno != ENOENT) return usage_error("%s: cannot remove (%s)", mpath, strerror(errno));
    /* and an earlier runner's record would describe outputs this export removes */
    snprintf(mpath, sizeof mpath, "%s/runner.json", out_dir);
    if (remove(mpath) && errno != ENOENT) return usage_error("%s: cannot remove (%s)", mpath, strerror(errno));
    snprintf(mpath, sizeof mpath, "%s/manifest.json", out_dir);
    /* one seed for every suite, as run uses --seed: the manifest's seed regenerates every case */
    uint64_t run_seed = ea->seed_set ? (uint64_t)ea->seed : loaded[0].seed;
    cJSON *m = manifest_new(argc, argv, x, loaded, ea->n_suites, run_seed), *cases = cJSON_GetObjectItem(m, "cases");
    add_selection(m, &ea->sel);
    int rc = EXIT_OK;
    for (int s = 0; s < ea->n_suites && rc == EXIT_OK; s++)
        for (int c = 0; c < loaded[s].n_cases && rc == EXIT_OK; c++)
            if (selected(&ea->sel, &loaded[s].cases[c]) && export_case(x, &loaded[s], c, run_seed, cases, err, sizeof err))
                rc = usage_error("export: %s (%s holds no manifest: nothing there is usable until an export finishes)", err, out_dir);
    if (rc == EXIT_OK && write_json_atomic(mpath, m, err, sizeof err))
        rc = usage_error("export: %s (%s holds no manifest: nothing there is usable until an export finishes)", err, out_dir);
    int n_na = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, cases) n_na += cJSON_GetObjectItem(e, "not_applicable") != NULL;
    if (rc == EXIT_OK)
        printf("exported %d cases at %s to %s%s%s\n", total, x->dt->name, mpath, x->impl ? ", outputs from " : "",
               x->impl ? impl_name(x->impl) : "");
    if (rc == EXIT_OK && n_na)
        printf("%d of them without data: a finite input overflows %s (each entry's \"not_applicable\" says which; run "
               "reports them not_applicable)\n", n_na, x->dt->name);
    cJSON_Delete(m);
    return rc;
}

int cmd_export(int argc, char **argv)
{
    export_args ea;
    memset(&ea, 0, sizeof ea);
    export_ctx x = {NULL, dtype_get(CONFORM_DTYPE_FLOAT32), NULL, {CONFORM_ISA_AUTO, 0}};
    int rc = export_parse(argc, argv, &ea, &x);
    if (rc) return rc;
    impl_t impl;
    char err[CONFORM_ERR_LEN];
    if (ea.outputs) {
        if (strcmp(ea.outputs, "optimized") && strncmp(ea.outputs, "plugin:", 7))
            return cli_bad_value("--outputs", ea.outputs, "optimized, plugin:PATH.so");
        /* the optimized kernels compute in float32 and store 16-bit results rounded, as a device
           computing 16-bit data in float32 does; float32 results held to float64 bounds would
           fail, so a float64 export takes its outputs from a plugin */
        int widen = !strcmp(ea.outputs, "optimized") && x.dt->itemsize == 2;
        if (impl_open_as("--outputs", ea.outputs, widen ? NULL : x.dt, &impl, err, sizeof err))
            return usage_error("%s%s", strncmp(err, "--", 2) ? "--outputs: " : "", err); /* once, not twice */
        x.impl = &impl;
    }
    /* everything is loaded and checked before anything is written */
    suite_t *loaded = calloc((size_t)ea.n_suites, sizeof *loaded);
    int total = 0, loaded_n = 0;
    for (int s = 0; s < ea.n_suites && rc == EXIT_OK; s++, loaded_n++) {
        if (suite_load(ea.paths[s], &loaded[s], err, sizeof err)) rc = usage_error("%s", err);
        for (int c = 0; c < loaded[s].n_cases; c++) total += selected(&ea.sel, &loaded[s].cases[c]);
    }
    if (rc == EXIT_OK && suites_distinct(loaded, loaded_n, err, sizeof err)) rc = usage_error("export: %s", err);
    if (rc == EXIT_OK && !total) {
        char hint[700];
        selection_hint(loaded, loaded_n, &ea.sel, hint, sizeof hint);
        rc = usage_error("export: no case matches the selection%s%s%s", ea.sel.filter ? " --filter " : "",
                         ea.sel.filter ? ea.sel.filter : "", hint);
    }
    if (rc == EXIT_OK) rc = export_all(argc, argv, &ea, &x, loaded, total);
    for (int s = 0; s < loaded_n; s++) suite_free(&loaded[s]);
    free(loaded);
    if (x.impl) impl_close(&impl);
    return rc;
}
