/* --impl dir:DIR: the outputs a device (or any outside runner) wrote for a suite exported with
 * `conform export`. The case's inputs come from DIR's files, checked against the hashes the
 * export recorded; its outputs are read from the files the manifest names (.npy at the
 * manifest's dtype, or a headerless .bin beside it). A missing or bad file is that case's
 * verdict, never the end of the run.
 *
 * The directory is untrusted input (another machine, another team, a network file system): every
 * path the manifest names must be relative, without "..", and resolve inside DIR with symlinks
 * followed (else the case is an error naming the path and the rule); only regular files no larger
 * than the case's tensor can be are read; and the reads run in a child process under the case's
 * timeout, so a stalled file system ends the case as a timeout, not the run. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "export.h"
#include "impl.h"
#include "npy.h"
#include "fsio.h"

struct impl_dir {
    cJSON *manifest;
    cJSON *runner; /* DIR/runner.json (what the runner ran and skipped), NULL when absent or unreadable */
    char runner_note[CONFORM_ERR_LEN]; /* why there is no runner record */
    cJSON *by_id; /* id -> the manifest's case (references) */
    char suites[256]; /* the suites the export holds, for messages */
    uint64_t seed;
    char real[PATH_MAX]; /* DIR with its symlinks resolved: what every file must resolve inside */
};

static const cJSON *item(const cJSON *o, const char *k) { return cJSON_GetObjectItemCaseSensitive(o, k); }

/* DIR/runner.json, written by tools/torch_runner.py (schema conform-runner 1): optional, and
   untrusted like every file of DIR: a bad one is noted in the reports and ignored, never fatal. */
static void read_runner(impl_t *impl)
{
    char path[700], why[CONFORM_ERR_LEN];
    snprintf(path, sizeof path, "%s/runner.json", impl->path);
    struct stat st;
    if (lstat(path, &st)) {
        snprintf(impl->dir->runner_note, sizeof impl->dir->runner_note,
                 "no runner.json: the runner that wrote these outputs did not record itself");
        return;
    }
    /* the runner writes a plain file of a few hundred KiB: no link (it could leave DIR), no FIFO
       (it could block), nothing that would take the run's memory */
    const off_t max_bytes = 16 << 20;
    int ok = S_ISREG(st.st_mode) && st.st_size <= max_bytes;
    cJSON *r = ok ? read_json_file(path, why, sizeof why) : NULL;
    if (!ok) snprintf(why, sizeof why, "%s: not a regular file of at most %lld bytes", path, (long long)max_bytes);
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

static int inside(const char *dir, const char *real);

/* DIR/manifest.json, read only when it resolves inside DIR (resolved into real): a manifest linked
   from elsewhere would make any JSON file on the machine the list of cases and hashes */
static cJSON *read_manifest(const char *arg, const char *path, char *real, char *err, size_t errlen)
{
    char why[CONFORM_ERR_LEN], mreal[PATH_MAX];
    if (!realpath(arg, real)) {
        snprintf(err, errlen, "--impl dir:%s: cannot resolve the directory (%s; a directory made by conform export)", arg,
                 strerror(errno));
        return NULL;
    }
    if (realpath(path, mreal) && !inside(real, mreal)) {
        snprintf(err, errlen, "--impl dir:%s: %s resolves to %s, outside the directory (symlinks followed): a device "
                 "directory's files must stay inside it", arg, path, mreal);
        return NULL;
    }
    cJSON *m = read_json_file(path, why, sizeof why);
    if (!m) snprintf(err, errlen, "--impl dir:%s: %s (a directory made by conform export)", arg, why);
    return m;
}

static int dir_open(impl_t *impl, const char *arg, const dtype_desc *dtype, char *err, size_t errlen)
{
    snprintf(impl->path, sizeof impl->path, "%s", arg);
    char path[700], real[PATH_MAX];
    snprintf(path, sizeof path, "%s/manifest.json", arg);
    cJSON *m = read_manifest(arg, path, real, err, errlen);
    if (!m) return -1;
    impl->dir = calloc(1, sizeof *impl->dir);
    impl->dir->manifest = m;
    snprintf(impl->dir->real, sizeof impl->dir->real, "%s", real);
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
    if (cJSON_IsString(item(e, "expect_error")) || cJSON_IsString(item(e, "invalid")) ||
        cJSON_IsString(item(e, "not_applicable"))) {
        snprintf(err, errlen, "%s/manifest.json exported case '%s' without data (a refusal was expected, or an input overflowed the dtype, "
                 "then): the suite changed since the export", impl->path, c->id);
        return NULL;
    }
    return e;
}

static void hex64(uint64_t h, char *buf, size_t len) { snprintf(buf, len, "%016llx", (unsigned long long)h); }

/* ---- the rules of a device directory's files ------------------------------------------------- */

/* rel as the manifest gives it: relative and without a ".." component (where it resolves is
   checked on the file itself). NULL when it keeps the rules, else the rule it breaks. */
static const char *broken_path_rule(const char *rel)
{
    if (!rel[0]) return "is empty";
    if (rel[0] == '/') return "is absolute (paths in a manifest are relative to its directory)";
    for (const char *q = rel; *q;) {
        size_t n = strcspn(q, "/");
        if (n == 2 && q[0] == '.' && q[1] == '.') return "has a '..' component (paths in a manifest stay inside its directory)";
        q += n;
        q += strspn(q, "/");
    }
    return NULL;
}

/* DIR/rel into path, or EXEC_REFUSED with msg naming the path and the rule */
static exec_status dir_path(const impl_t *impl, const char *what, const char *rel, char *path, size_t len, char *msg,
                            size_t msglen)
{
    const char *rule = broken_path_rule(rel);
    if (rule) {
        snprintf(msg, msglen, "%s: path '%.200s' in %s/manifest.json %s", what, rel, impl->path, rule);
        return EXEC_REFUSED;
    }
    snprintf(path, len, "%s/%s", impl->path, rel);
    return EXEC_OK;
}

static int inside(const char *dir, const char *real)
{
    size_t n = strlen(dir);
    return !strcmp(dir, "/") || (!strncmp(real, dir, n) && real[n] == '/');
}

/* A file, checked before anything reads it: it resolves (symlinks followed) inside DIR
   (EXEC_REFUSED), to a regular file no larger than max_bytes (EXEC_BAD_OUTPUT: the msg names
   what it is, so a FIFO, a socket, a device or a gigabyte posing as a small output is refused
   unopened and unread). EXEC_MISSING when there is nothing at path; msg is then untouched. */
static exec_status check_file(const impl_t *impl, const char *what, const char *path, int64_t max_bytes, char *msg,
                              size_t msglen)
{
    char real[PATH_MAX];
    struct stat st;
    if (!realpath(path, real)) {
        if (errno == ENOENT || errno == ENOTDIR) return EXEC_MISSING;
        snprintf(msg, msglen, "%s: %s cannot be resolved (%s)", what, path, strerror(errno));
        return EXEC_REFUSED;
    }
    int known = !stat(real, &st);
    if (!inside(impl->dir->real, real)) {
        snprintf(msg, msglen, "%s: %s resolves to %s%s%s, outside %s (symlinks followed): a device directory's files "
                 "must stay inside it", what, path, real, known ? ", " : "", known ? file_kind(st.st_mode) : "", impl->path);
        return EXEC_REFUSED;
    }
    if (!known || !S_ISREG(st.st_mode)) {
        snprintf(msg, msglen, "%s: %s is %s, not a regular file", what, path, known ? file_kind(st.st_mode) : "unreadable");
        return EXEC_BAD_OUTPUT;
    }
    if ((int64_t)st.st_size > max_bytes) {
        snprintf(msg, msglen, "%s: %s has %lld bytes, more than the %lld its tensor can take: refused unread", what, path,
                 (long long)st.st_size, (long long)max_bytes);
        return EXEC_BAD_OUTPUT;
    }
    return EXEC_OK;
}

/* ---- inputs ------------------------------------------------------------------------------------ */

/* EXEC_OK when the file read from path (t) has the shape want; else EXEC_BAD_OUTPUT with
   "<what>: <path> has shape <t's>, <says> <want>" */
static exec_status check_shape(const tensor_t *t, const shape_t *want, const char *what, const char *path,
                               const char *says, char *err, size_t errlen)
{
    if (shape_equal(&t->shape, want)) return EXEC_OK;
    char a[128], b[128];
    snprintf(err, errlen, "%s: %s has shape %s, %s %s", what, path, shape_str(&t->shape, a, sizeof a), says,
             shape_str(want, b, sizeof b));
    return EXEC_BAD_OUTPUT;
}

/* One input file: present, unchanged since the export (hash), of the dtype and the shape the case
   gives, decoded into dst (numel of shape). */
static exec_status load_input(const impl_t *impl, const cJSON *e, const char *name, const shape_t *shape, double *dst,
                              char *err, size_t errlen)
{
    const cJSON *rel = item(item(e, "inputs"), name), *want = item(item(e, "input_hashes"), name);
    if (!cJSON_IsString(rel) || !cJSON_IsString(want)) {
        snprintf(err, errlen, "%s/manifest.json: case '%s' names no file or hash for input %s", impl->path,
                 item(e, "id")->valuestring, name);
        return EXEC_BAD_OUTPUT;
    }
    char path[1200], got[32], why[CONFORM_ERR_LEN], what[96];
    snprintf(what, sizeof what, "input %s", name);
    exec_status st = dir_path(impl, what, rel->valuestring, path, sizeof path, err, errlen);
    if (st) return st;
    snprintf(err, errlen, "input %s: reading %s", name, path); /* what a stall is stuck on */
    st = check_file(impl, what, path, npy_max_bytes(shape_numel(shape), impl->dtype->itemsize), err, errlen);
    if (st == EXEC_MISSING) snprintf(err, errlen, "input %s: %s not found", name, path);
    if (st) return st;
    uint64_t h;
    if (file_fnv1a64(path, &h, why, sizeof why)) {
        snprintf(err, errlen, "input %s: %s", name, why);
        return EXEC_BAD_OUTPUT;
    }
    hex64(h, got, sizeof got);
    if (strcmp(got, want->valuestring)) {
        snprintf(err, errlen, "input %s: %s changed since the export (FNV-1a 64 of the file %s, the manifest recorded %s): "
                 "export again", name, path, got, want->valuestring);
        return EXEC_BAD_OUTPUT;
    }
    tensor_t f;
    if (npy_read_dtype(path, &f, impl->dtype, why, sizeof why)) {
        snprintf(err, errlen, "input %s: %s", name, why);
        return EXEC_BAD_OUTPUT;
    }
    st = check_shape(&f, shape, what, path, "the case gives", err, errlen);
    if (!st) memcpy(dst, f.data, (size_t)tensor_numel(&f) * sizeof *dst);
    tensor_free(&f);
    return st;
}

/* What a reading child needs: the case's manifest entry and where to leave what it read (shared
   memory: the inputs in double, or the outputs in the dtype's storage). */
typedef struct {
    const impl_t *impl;
    const case_t *c;
    const cJSON *e;
    const problem_t *p;
    double *in[CONFORM_MAX_TENSORS];
    size_t bytes[CONFORM_MAX_TENSORS];
    void **out; /* guarded_alloc */
} dir_reads;

static exec_status read_inputs(void *ctx, char *msg, size_t msglen)
{
    const dir_reads *x = ctx;
    exec_status st = EXEC_OK;
    for (int i = 0; i < x->p->op->n_inputs && !st; i++)
        st = load_input(x->impl, x->e, x->p->op->inputs[i].name, &x->p->in[i].shape, x->in[i], msg, msglen);
    return st;
}

static exec_status dir_inputs(const impl_t *impl, const case_t *c, problem_t *p, const exec_policy *policy, char *err,
                              size_t errlen)
{
    dir_reads x = {.impl = impl, .c = c, .e = entry_for(impl, c, err, errlen), .p = p};
    if (!x.e) return EXEC_BAD_OUTPUT;
    exec_status st = EXEC_OK;
    for (int i = 0; i < p->op->n_inputs && !st; i++) {
        x.bytes[i] = (size_t)(tensor_numel(&p->in[i]) + 1) * sizeof(double);
        x.in[i] = mmap(NULL, x.bytes[i], PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (x.in[i] == MAP_FAILED) {
            x.in[i] = NULL;
            snprintf(err, errlen, "input %s: out of memory", p->op->inputs[i].name);
            st = EXEC_BAD_OUTPUT;
        }
    }
    if (!st) st = impl_isolated_io(read_inputs, &x, policy, err, errlen);
    for (int i = 0; i < p->op->n_inputs; i++) {
        if (!st) memcpy(p->in[i].data, x.in[i], (size_t)tensor_numel(&p->in[i]) * sizeof(double));
        if (x.in[i]) munmap(x.in[i], x.bytes[i]);
    }
    return st;
}

/* ---- outputs ----------------------------------------------------------------------------------- */

/* Where an output is: the .npy the manifest names, else a raw .bin beside it (NAME.bin or
   NAME_<dtype>.bin), each checked as check_file does. EXEC_OK (path set, *raw 1 for .bin). */
static exec_status locate(const impl_t *impl, const char *what, const char *npy, const shape_t *want, char *path,
                          size_t len, int *raw, char *msg, size_t msglen)
{
    const int64_t numel = shape_numel(want), itemsize = impl->dtype->itemsize;
    size_t n = strlen(npy);
    int stem = n > 4 && !strcmp(npy + n - 4, ".npy") ? (int)n - 4 : (int)n;
    static const char *const suffixes[] = CONFORM_RAW_SUFFIXES;
    snprintf(path, len, "%s", npy);
    *raw = 0;
    exec_status st = check_file(impl, what, path, npy_max_bytes(numel, (int)itemsize), msg, msglen);
    for (size_t k = 0; st == EXEC_MISSING && k < sizeof suffixes / sizeof suffixes[0]; k++) {
        snprintf(path, len, "%.*s%s.bin", stem, npy, suffixes[k]);
        *raw = 1;
        /* a .bin of another dtype is refused by its name below, so its size is not judged here */
        st = check_file(impl, what, path, dtype_from_bin_name(path) ? numel * 8 : numel * itemsize, msg, msglen);
    }
    if (st == EXEC_MISSING) snprintf(msg, msglen, "%s: %s not found (nor a raw %.*s.bin)", what, npy, stem, npy);
    return st;
}

static exec_status read_output(const impl_t *impl, const char *name, const char *npy, const shape_t *want, void *out,
                               char *msg, size_t msglen)
{
    char path[1300], why[CONFORM_ERR_LEN], what[96];
    int raw;
    snprintf(what, sizeof what, "output %s", name);
    exec_status st = locate(impl, what, npy, want, path, sizeof path, &raw, msg, msglen);
    if (st) return st;
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
    st = check_shape(&t, want, what, path, "expected", msg, msglen);
    if (!st) dtype_encode(impl->dtype->id, t.data, out, tensor_numel(&t));
    tensor_free(&t);
    return st;
}

static exec_status read_outputs(void *ctx, char *msg, size_t msglen)
{
    const dir_reads *x = ctx;
    const impl_t *impl = x->impl;
    /* every output is looked at, so the message names the first problem and a missing file
       outranks nothing else: a bad file is a failure, a missing one its own status */
    exec_status worst = EXEC_OK;
    char first[CONFORM_ERR_LEN] = "", why[CONFORM_ERR_LEN];
    for (int o = 0; o < x->p->op->n_outputs; o++) {
        if (x->p->out_skipped[o]) continue;
        const char *name = x->p->op->outputs[o].name;
        const cJSON *rel = item(item(item(x->e, "outputs"), name), "path");
        if (!cJSON_IsString(rel)) {
            snprintf(msg, msglen, "%s/manifest.json: case '%s' names no file for output %s", impl->path, x->c->id, name);
            return EXEC_BAD_OUTPUT;
        }
        char npy[1200], what[96];
        snprintf(what, sizeof what, "output %s", name);
        snprintf(msg, msglen, "output %s: reading %s/%.200s", name, impl->path, rel->valuestring); /* what a stall is stuck on */
        exec_status st = dir_path(impl, what, rel->valuestring, npy, sizeof npy, why, sizeof why);
        if (!st) st = read_output(impl, name, npy, &x->p->out_shape[o], x->out[o], why, sizeof why);
        if (st != EXEC_OK && worst == EXEC_OK) {
            worst = st;
            snprintf(first, sizeof first, "%s", why);
        }
    }
    snprintf(msg, msglen, "%s", first);
    const char *skipped = worst == EXEC_MISSING ? runner_skip_reason(impl, x->c->id) : NULL;
    if (skipped) {
        size_t used = strlen(msg);
        snprintf(msg + used, msglen - used, " (the runner skipped it: %s)", skipped);
    }
    return worst;
}

static exec_status dir_outputs(const impl_t *impl, const case_t *c, const problem_t *p, void **out, const conform_exec *ex,
                               const exec_policy *policy, int *code, char *msg, size_t msglen)
{
    dir_reads x = {.impl = impl, .c = c, .e = entry_for(impl, c, msg, msglen), .p = p, .out = out};
    if (!x.e) return EXEC_BAD_OUTPUT;
    return impl_isolated_io(read_outputs, &x, policy, msg, msglen);
}

const impl_kind impl_kind_dir = {"dir:", "dir:DIR", dir_open, dir_close, dir_name, NULL, dir_inputs, dir_outputs,
                                 dir_pinned_seed, dir_why_not, dir_provenance};
