/* --impl dir:DIR: the outputs a device (or any outside runner) wrote for a suite exported with
 * `conform export`. The case's inputs come from DIR's files, checked against the hashes the
 * export recorded; its outputs are read from the files the manifest names (.npy at the
 * manifest's dtype, or a headerless .bin beside it). A missing or bad file is that case's
 * verdict, never the end of the run. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "export.h"
#include "impl.h"
#include "npy.h"
#include "report.h"

struct impl_dir {
    cJSON *manifest;
    cJSON *runner; /* DIR/runner.json (what the runner ran and skipped), NULL when absent or unreadable */
    char runner_note[CONFORM_ERR_LEN]; /* why there is no runner record */
    cJSON *by_id; /* id -> the manifest's case (references) */
    char suites[256]; /* the suites the export holds, for messages */
    uint64_t seed;
};

static const cJSON *item(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

/* DIR/runner.json, written by tools/torch_runner.py (schema conform-runner 1): optional, and
   untrusted like every file of DIR: a bad one is noted in the reports and ignored, never fatal. */
static void read_runner(impl_t *impl)
{
    char path[700], why[CONFORM_ERR_LEN];
    snprintf(path, sizeof path, "%s/runner.json", impl->path);
    struct stat st;
    if (stat(path, &st)) {
        snprintf(impl->dir->runner_note, sizeof impl->dir->runner_note,
                 "no runner.json: the runner that wrote these outputs did not record itself");
        return;
    }
    cJSON *r = S_ISREG(st.st_mode) ? read_json_file(path, why, sizeof why) : NULL;
    if (!S_ISREG(st.st_mode)) snprintf(why, sizeof why, "%s: not a regular file", path);
    const cJSON *schema = item(r, "schema"), *version = item(r, "schema_version"), *ops = item(r, "ops");
    if (r && !(cJSON_IsString(schema) && !strcmp(schema->valuestring, "conform-runner") && cJSON_IsNumber(version) &&
               version->valueint == 1 && (!ops || cJSON_IsObject(ops)))) {
        snprintf(why, sizeof why, "%s: not a conform-runner record of schema_version 1", path);
        cJSON_Delete(r);
        r = NULL;
    }
    if (!r) snprintf(impl->dir->runner_note, sizeof impl->dir->runner_note, "runner.json ignored: %s", why);
    impl->dir->runner = r;
}

static int dir_open(impl_t *impl, const char *arg, const dtype_desc *dtype, char *err, size_t errlen)
{
    snprintf(impl->path, sizeof impl->path, "%s", arg);
    char path[700], why[CONFORM_ERR_LEN];
    snprintf(path, sizeof path, "%s/manifest.json", arg);
    cJSON *m = read_json_file(path, why, sizeof why);
    if (!m) {
        snprintf(err, errlen, "--impl dir:%s: %s (a directory made by conform export)", arg, why);
        return -1;
    }
    impl->dir = calloc(1, sizeof *impl->dir);
    impl->dir->manifest = m;
    const cJSON *schema = item(m, "schema"), *version = item(m, "schema_version"), *dt = item(m, "dtype"),
                *seed = item(m, "seed"), *cases = item(m, "cases");
    cJSON *c;
    if (!cJSON_IsString(schema) || strcmp(schema->valuestring, CONFORM_EXPORT_SCHEMA) || !cJSON_IsNumber(version) ||
        version->valueint != CONFORM_EXPORT_SCHEMA_VERSION) {
        snprintf(err, errlen, "%s: not a %s manifest of schema_version %d", path, CONFORM_EXPORT_SCHEMA,
                 CONFORM_EXPORT_SCHEMA_VERSION);
        return -1;
    }
    impl->dtype = cJSON_IsString(dt) ? dtype_find(dt->valuestring) : NULL;
    if (!impl->dtype || !cJSON_IsNumber(seed) || !cJSON_IsArray(cases)) {
        snprintf(err, errlen, "%s: needs \"dtype\" (%s), \"seed\" and \"cases\"", path, dtype_names());
        return -1;
    }
    if (dtype && dtype != impl->dtype) {
        snprintf(err, errlen, "--dtype %s, but %s was exported at %s (the manifest's dtype rules: drop --dtype)",
                 dtype->name, path, impl->dtype->name);
        return -1;
    }
    impl->dir->seed = (uint64_t)seed->valuedouble;
    const cJSON *names = item(m, "suites"), *s;
    cJSON_ArrayForEach(s, names) if (cJSON_IsString(s)) {
        size_t used = strlen(impl->dir->suites);
        snprintf(impl->dir->suites + used, sizeof impl->dir->suites - used, "%s'%s'", used ? ", " : "", s->valuestring);
    }
    read_runner(impl);
    impl->dir->by_id = cJSON_CreateObject();
    cJSON_ArrayForEach(c, cases) {
        const cJSON *id = item(c, "id");
        if (cJSON_IsString(id) && !item(impl->dir->by_id, id->valuestring))
            cJSON_AddItemReferenceToObject(impl->dir->by_id, id->valuestring, c);
    }
    return 0;
}

static void dir_close(impl_t *impl)
{
    if (!impl->dir) return;
    cJSON_Delete(impl->dir->by_id);
    cJSON_Delete(impl->dir->manifest);
    cJSON_Delete(impl->dir->runner);
    free(impl->dir);
    impl->dir = NULL;
}

static const char *dir_name(const impl_t *impl) { return impl->spec; }

static int dir_pinned_seed(const impl_t *impl, uint64_t *seed)
{
    *seed = impl->dir->seed;
    return 1;
}

/* The runner's reason when it declared op unsupported on its device ("ops": {op: {"supported":
   false, "reason": ...}}), else NULL: the op's cases are not_implemented, never failures. */
static const char *dir_why_not(const impl_t *impl, const op_desc *op)
{
    const cJSON *o = item(item(impl->dir->runner, "ops"), op->name), *reason = item(o, "reason");
    if (!cJSON_IsFalse(item(o, "supported"))) return NULL;
    return cJSON_IsString(reason) ? reason->valuestring : "declared unsupported by the runner (no reason given)";
}

/* everything runner.json records but its per-case list (that is in each case's message) */
static cJSON *dir_provenance(const impl_t *impl)
{
    cJSON *o = impl->dir->runner ? cJSON_Duplicate(impl->dir->runner, 1) : cJSON_CreateObject();
    cJSON_DeleteItemFromObjectCaseSensitive(o, "cases");
    cJSON_DeleteItemFromObjectCaseSensitive(o, "kind");
    cJSON_AddStringToObject(o, "kind", "dir");
    if (!impl->dir->runner) cJSON_AddStringToObject(o, "note", impl->dir->runner_note);
    return o;
}

/* what the runner said of a case it did not write ("cases": {id: {"status", "reason"}}), or NULL */
static const char *runner_skip_reason(const impl_t *impl, const char *id)
{
    const cJSON *reason = item(item(item(impl->dir->runner, "cases"), id), "reason");
    return cJSON_IsString(reason) ? reason->valuestring : NULL;
}

/* the manifest's entry for the case, or NULL with a message that says why it is not there */
static const cJSON *entry_for(const impl_t *impl, const case_t *c, char *err, size_t errlen)
{
    const cJSON *e = item(impl->dir->by_id, c->id);
    if (!e) {
        snprintf(err, errlen, "%s/manifest.json has no case '%s' (the export holds suite %s: export this suite, or run "
                 "the suite that was exported)", impl->path, c->id, impl->dir->suites[0] ? impl->dir->suites : "?");
        return NULL;
    }
    if (cJSON_IsString(item(e, "expect_error")) || cJSON_IsString(item(e, "invalid"))) {
        snprintf(err, errlen, "%s/manifest.json exported case '%s' without data (it expected a refusal then): the suite "
                 "changed since the export", impl->path, c->id);
        return NULL;
    }
    return e;
}

static void hex64(uint64_t h, char *buf, size_t len) { snprintf(buf, len, "%016llx", (unsigned long long)h); }

/* One input file: present, unchanged since the export (hash), of the dtype and the shape the case gives. */
static int load_input(const impl_t *impl, const cJSON *e, const char *name, tensor_t *t, char *err, size_t errlen)
{
    const cJSON *rel = item(item(e, "inputs"), name), *want = item(item(e, "input_hashes"), name);
    if (!cJSON_IsString(rel) || !cJSON_IsString(want)) {
        snprintf(err, errlen, "%s/manifest.json: case '%s' names no file or hash for input %s", impl->path,
                 item(e, "id")->valuestring, name);
        return -1;
    }
    char path[1200], got[32], why[CONFORM_ERR_LEN];
    snprintf(path, sizeof path, "%s/%s", impl->path, rel->valuestring);
    uint64_t h;
    if (file_fnv1a64(path, &h, why, sizeof why)) {
        snprintf(err, errlen, "input %s: %s", name, why);
        return -1;
    }
    hex64(h, got, sizeof got);
    if (strcmp(got, want->valuestring)) {
        snprintf(err, errlen, "input %s: %s changed since the export (FNV-1a 64 of the file %s, the manifest recorded %s): "
                 "export again", name, path, got, want->valuestring);
        return -1;
    }
    tensor_t f;
    if (npy_read_dtype(path, &f, impl->dtype, why, sizeof why)) {
        snprintf(err, errlen, "input %s: %s", name, why);
        return -1;
    }
    if (!shape_equal(&f.shape, &t->shape)) {
        char a[128], b[128];
        snprintf(err, errlen, "input %s: %s has shape %s, the case gives %s", name, path, shape_str(&f.shape, a, sizeof a),
                 shape_str(&t->shape, b, sizeof b));
        tensor_free(&f);
        return -1;
    }
    tensor_free(t);
    *t = f;
    return 0;
}

static int dir_inputs(const impl_t *impl, const case_t *c, problem_t *p, char *err, size_t errlen)
{
    const cJSON *e = entry_for(impl, c, err, errlen);
    if (!e) return -1;
    for (int i = 0; i < p->op->n_inputs; i++)
        if (load_input(impl, e, p->op->inputs[i].name, &p->in[i], err, errlen)) return -1;
    return 0;
}

static int exists(const char *path)
{
    struct stat st;
    return !stat(path, &st);
}

/* Where an output is: the .npy the manifest names, else a raw .bin beside it (NAME.bin or
   NAME_<dtype>.bin). 0 found (path set, *raw 1 for .bin), -1 none. */
static int locate(const char *npy, char *path, size_t len, int *raw)
{
    *raw = 0;
    snprintf(path, len, "%s", npy);
    if (exists(path)) return 0;
    size_t n = strlen(npy);
    int stem = n > 4 && !strcmp(npy + n - 4, ".npy") ? (int)n - 4 : (int)n;
    static const char *const suffixes[] = {"", "_float32", "_float16", "_bfloat16", "_float64"};
    *raw = 1;
    for (size_t k = 0; k < sizeof suffixes / sizeof suffixes[0]; k++) {
        snprintf(path, len, "%.*s%s.bin", stem, npy, suffixes[k]);
        if (exists(path)) return 0;
    }
    return -1;
}

static exec_status read_output(const impl_t *impl, const char *name, const char *npy, const shape_t *want, void *out,
                               char *msg, size_t msglen)
{
    char path[1300], why[CONFORM_ERR_LEN], a[128], b[128];
    int raw;
    if (locate(npy, path, sizeof path, &raw)) {
        size_t n = strlen(npy);
        snprintf(msg, msglen, "output %s: %s not found (nor a raw %.*s.bin)", name, npy,
                 (int)(n > 4 ? n - 4 : n), npy);
        return EXEC_MISSING;
    }
    const dtype_desc *named = raw ? dtype_from_bin_name(path) : NULL;
    if (named && named != impl->dtype) {
        snprintf(msg, msglen, "output %s: %s is named %s, the export's dtype is %s", name, path, named->name, impl->dtype->name);
        return EXEC_BAD_OUTPUT;
    }
    tensor_t t;
    int rc = raw ? npy_read_raw(path, want, impl->dtype, &t, why, sizeof why) : npy_read_dtype(path, &t, impl->dtype, why, sizeof why);
    if (rc) {
        snprintf(msg, msglen, "output %s: %s", name, why);
        return EXEC_BAD_OUTPUT;
    }
    if (!shape_equal(&t.shape, want)) {
        snprintf(msg, msglen, "output %s: %s has shape %s, expected %s", name, path, shape_str(&t.shape, a, sizeof a),
                 shape_str(want, b, sizeof b));
        tensor_free(&t);
        return EXEC_BAD_OUTPUT;
    }
    dtype_encode(impl->dtype->id, t.data, out, tensor_numel(&t));
    tensor_free(&t);
    return EXEC_OK;
}

static exec_status dir_outputs(const impl_t *impl, const case_t *c, const problem_t *p, void **out, const conform_exec *ex,
                               const exec_policy *policy, int *code, char *msg, size_t msglen)
{
    const cJSON *e = entry_for(impl, c, msg, msglen);
    if (!e) return EXEC_BAD_OUTPUT;
    /* every output is looked at, so the message names the first problem and a missing file
       outranks nothing else: a bad file is a failure, a missing one its own status */
    exec_status worst = EXEC_OK;
    char first[CONFORM_ERR_LEN] = "";
    for (int o = 0; o < p->op->n_outputs; o++) {
        if (p->out_skipped[o]) continue;
        const char *name = p->op->outputs[o].name;
        const cJSON *rel = item(item(item(e, "outputs"), name), "path");
        if (!cJSON_IsString(rel)) {
            snprintf(msg, msglen, "%s/manifest.json: case '%s' names no file for output %s", impl->path, c->id, name);
            return EXEC_BAD_OUTPUT;
        }
        char npy[1200];
        snprintf(npy, sizeof npy, "%s/%s", impl->path, rel->valuestring);
        exec_status st = read_output(impl, name, npy, &p->out_shape[o], out[o], first, sizeof first);
        if (st != EXEC_OK && worst == EXEC_OK) {
            worst = st;
            snprintf(msg, msglen, "%s", first);
        }
    }
    const char *skipped = worst == EXEC_MISSING ? runner_skip_reason(impl, c->id) : NULL;
    if (skipped) {
        size_t used = strlen(msg);
        snprintf(msg + used, msglen - used, " (the runner skipped it: %s)", skipped);
    }
    return worst;
}

const impl_kind impl_kind_dir = {"dir:", "dir:DIR", dir_open, dir_close, dir_name, NULL, dir_inputs, dir_outputs,
                                 dir_pinned_seed, dir_why_not, dir_provenance};
