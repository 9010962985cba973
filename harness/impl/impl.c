#include "impl.h"

#include "bigbuf.h"
#include "guarded.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- the table of kinds ---------------------------------------------------------------------- */

static const impl_kind *const kinds[] = {&impl_kind_optimized, &impl_kind_plugin, &impl_kind_dir};
#define N_KINDS (int)(sizeof kinds / sizeof kinds[0])

int impl_open(const char *spec, const dtype_desc *dtype, impl_t *impl, char *err, size_t errlen)
{
    return impl_open_as("--impl", spec, dtype, impl, err, errlen);
}

int impl_open_as(const char *opt, const char *spec, const dtype_desc *dtype, impl_t *impl, char *err, size_t errlen)
{
    memset(impl, 0, sizeof *impl);
    impl->opt = opt;
    snprintf(impl->spec, sizeof impl->spec, "%s", spec);
    for (int k = 0; k < N_KINDS; k++) {
        const char *prefix = kinds[k]->prefix;
        size_t n = strlen(prefix);
        int takes_arg = prefix[n - 1] == ':';
        if (takes_arg ? strncmp(spec, prefix, n) : strcmp(spec, prefix)) continue;
        impl->kind = kinds[k];
        if (takes_arg && !spec[n]) {
            snprintf(err, errlen, "%s %s: expected %s", opt, spec, kinds[k]->usage);
            return -1;
        }
        int rc = kinds[k]->open(impl, spec + n, dtype, err, errlen);
        if (rc) impl_close(impl);
        return rc;
    }
    size_t used = (size_t)snprintf(err, errlen, "%s: unknown implementation '%s' (expected", opt, spec);
    for (int k = 0; k < N_KINDS && used < errlen; k++)
        used += (size_t)snprintf(err + used, errlen - used, "%s %s", k ? (k == N_KINDS - 1 ? " or" : ",") : "", kinds[k]->usage);
    if (used < errlen) snprintf(err + used, errlen - used, ")");
    return -1;
}

void impl_close(impl_t *impl)
{
    if (impl->kind && impl->kind->close) impl->kind->close(impl);
    impl->kind = NULL;
}

const char *impl_name(const impl_t *impl) { return impl->kind->name(impl); }

int impl_supports(const impl_t *impl, const op_desc *op)
{
    return !impl_why_not(impl, op) && (!impl->kind->supports || impl->kind->supports(impl, op));
}

const char *impl_why_not(const impl_t *impl, const op_desc *op)
{
    return impl->kind->why_not ? impl->kind->why_not(impl, op) : NULL;
}

cJSON *impl_provenance(const impl_t *impl)
{
    cJSON *o = impl->kind->provenance ? impl->kind->provenance(impl) : cJSON_CreateObject();
    if (!cJSON_GetObjectItemCaseSensitive(o, "kind")) {
        char kind[16];
        snprintf(kind, sizeof kind, "%.*s", (int)strcspn(impl->kind->prefix, ":"), impl->kind->prefix);
        cJSON_AddStringToObject(o, "kind", kind);
    }
    if (!cJSON_GetObjectItemCaseSensitive(o, "name")) cJSON_AddStringToObject(o, "name", impl_name(impl));
    return o;
}

exec_status impl_inputs(const impl_t *impl, const case_t *c, problem_t *p, const exec_policy *policy, char *err,
                        size_t errlen)
{
    return impl->kind->inputs ? impl->kind->inputs(impl, c, p, policy, err, errlen) : EXEC_OK;
}

exec_status impl_outputs(const impl_t *impl, const case_t *c, const problem_t *p, void **out, const conform_exec *ex,
                         const exec_policy *policy, int *code, char *msg, size_t msglen)
{
    *code = 0;
    if (msglen) msg[0] = '\0';
    return impl->kind->outputs(impl, c, p, out, ex, policy, code, msg, msglen);
}

int impl_pinned_seed(const impl_t *impl, uint64_t *seed)
{
    return impl->kind->pinned_seed ? impl->kind->pinned_seed(impl, seed) : 0;
}

/* ---- kernel kinds: inputs at the dtype, run in a child process --------------------------------- */

/* Encodes the inputs at the dtype, runs fn isolated as the policy says, frees the inputs. */
static exec_status run_kernel(impl_kernel_fn fn, const impl_t *impl, const problem_t *p, void **out, const conform_exec *ex,
                              const exec_policy *policy, int *code)
{
    const op_desc *op = p->op;
    void *in[CONFORM_MAX_TENSORS] = {0};
    exec_status st = EXEC_OK;
    for (int i = 0; i < op->n_inputs; i++) {
        int64_t n = tensor_numel(&p->in[i]);
        /* shared, not copied: the child only reads them, and shared pages stay writable here after the
           fork, so the next case encodes into them without a copy-on-write fault per page; guarded,
           so a read past an input gives the same value in every case (guarded.h) */
        in[i] = guarded_alloc_input(n, impl->dtype);
        if (!in[i]) {
            *code = CONFORM_E_NOMEM;
            st = EXEC_KERNEL_ERROR;
            goto done;
        }
        dtype_encode(impl->dtype->id, p->in[i].data, in[i], n);
    }
    st = impl_exec(fn, impl, p, (const void **)in, out, ex, policy, code);
done:
    for (int i = 0; i < CONFORM_MAX_TENSORS; i++) guarded_free(in[i]);
    return st;
}

/* ---- optimized: conform's own float32 kernels ------------------------------------------------ */

static int optimized_open(impl_t *impl, const char *arg, const dtype_desc *dtype, char *err, size_t errlen)
{
    if (dtype && dtype->id != CONFORM_DTYPE_FLOAT32) {
        /* export's --outputs takes no dir: (a directory is what it writes) */
        int impl_opt = !strcmp(impl->opt, "--impl");
        snprintf(err, errlen, "--dtype %s: the optimized kernels compute in float32 only (use %s plugin:PATH.so%s for %s)",
                 dtype->name, impl->opt, impl_opt ? " or dir:DIR" : "", dtype->name);
        return -1;
    }
    impl->dtype = dtype_get(CONFORM_DTYPE_FLOAT32);
    return 0;
}

static const char *optimized_name(const impl_t *impl) { return "optimized"; }

static int optimized_kernel(const impl_t *impl, const problem_t *p, const void **in, void **out, const conform_exec *ex)
{
    return p->op->optimized(p, (const float **)in, (float **)out, ex);
}

static exec_status optimized_outputs(const impl_t *impl, const case_t *c, const problem_t *p, void **out,
                                     const conform_exec *ex, const exec_policy *policy, int *code, char *msg, size_t msglen)
{
    return run_kernel(optimized_kernel, impl, p, out, ex, policy, code);
}

const impl_kind impl_kind_optimized = {"optimized", "optimized", optimized_open, NULL, optimized_name, NULL, NULL,
                                       optimized_outputs, NULL, NULL, NULL};

/* ---- plugin: a user's shared library, ABI 1 (float32) or 2 (any dtype) ----------------------- */

static int plugin_probe(const char *path, const dtype_desc *dtype, char *err, size_t errlen);

static int plugin_open(impl_t *impl, const char *arg, const dtype_desc *dtype, char *err, size_t errlen)
{
    snprintf(impl->path, sizeof impl->path, "%s", arg);
    /* a bare name would make dlopen search the library path: insist on a file */
    char path[600];
    snprintf(path, sizeof path, "%s%s", strchr(impl->path, '/') ? "" : "./", impl->path);
    if (plugin_probe(path, dtype ? dtype : dtype_get(CONFORM_DTYPE_FLOAT32), err, errlen)) return -1;
    impl->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!impl->handle) {
        snprintf(err, errlen, "plugin %s: cannot load (%s)", impl->path, dlerror());
        return -1;
    }
    const conform_plugin *(*entry)(void);
    *(void **)&entry = dlsym(impl->handle, "conform_plugin_entry");
    const conform_plugin *pl = entry ? entry() : NULL;
    if (!pl) {
        snprintf(err, errlen, "plugin %s: no conform_plugin_entry() returning a plugin (see conform_plugin.h)", impl->path);
        return -1;
    }
    impl->abi_version = pl->abi_version;
    /* optional, for every ABI version: a plugin says what it is beyond its name */
    const char *(*version)(void);
    *(void **)&version = dlsym(impl->handle, CONFORM_PLUGIN_VERSION_SYMBOL);
    impl->plugin_version = version ? version() : NULL;
    if (pl->abi_version == CONFORM_PLUGIN_ABI_V1 && pl->supports && pl->run) impl->plugin = pl;
    else if (pl->abi_version == CONFORM_PLUGIN_ABI_V2 && ((const conform_plugin_v2 *)pl)->supports &&
             ((const conform_plugin_v2 *)pl)->run)
        impl->plugin_v2 = (const conform_plugin_v2 *)pl;
    else {
        snprintf(err, errlen, "plugin %s: ABI version %d, this conform speaks %d and %d (and needs supports and run)",
                 impl->path, pl->abi_version, CONFORM_PLUGIN_ABI_V1, CONFORM_PLUGIN_ABI_V2);
        return -1;
    }
    impl->dtype = dtype ? dtype : dtype_get(CONFORM_DTYPE_FLOAT32);
    if (impl->plugin && impl->dtype->id != CONFORM_DTYPE_FLOAT32) {
        snprintf(err, errlen, "plugin %s: ABI version 1 computes in float32 only; --dtype %s needs a plugin of ABI version %d",
                 impl->path, impl->dtype->name, CONFORM_PLUGIN_ABI_V2);
        return -1;
    }
    return 0;
}

static void plugin_close(impl_t *impl)
{
    if (impl->handle) dlclose(impl->handle);
    impl->handle = NULL;
    impl->plugin = NULL;
    impl->plugin_v2 = NULL;
}

static const char *plugin_name(const impl_t *impl)
{
    const char *name = impl->plugin ? impl->plugin->name : impl->plugin_v2 ? impl->plugin_v2->name : NULL;
    return name ? name : impl->path;
}

static cJSON *plugin_provenance(const impl_t *impl)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "kind", "plugin");
    cJSON_AddStringToObject(o, "name", plugin_name(impl));
    if (impl->plugin_version) cJSON_AddStringToObject(o, "version", impl->plugin_version);
    cJSON_AddStringToObject(o, "path", impl->path);
    cJSON_AddNumberToObject(o, "abi_version", impl->abi_version);
    return o;
}

static int plugin_supports(const impl_t *impl, const op_desc *op)
{
    if (impl->plugin) return impl->plugin->supports(op->name);
    return impl->plugin_v2->supports(op->name, impl->dtype->id);
}

static void plugin_attrs(const problem_t *p, conform_plugin_attr *attrs)
{
    const op_desc *op = p->op;
    for (int a = 0; a < op->n_attrs; a++) {
        const attr_value *v = &p->attr[a];
        attrs[a] = (conform_plugin_attr){op->attrs[a].name, (conform_attr_kind)v->kind, v->i, v->f, v->s, v->n, v->list};
    }
}

static int plugin_kernel(const impl_t *impl, const problem_t *p, const void **in, void **out, const conform_exec *ex)
{
    const op_desc *op = p->op;
    conform_plugin_attr attrs[CONFORM_MAX_ATTRS];
    plugin_attrs(p, attrs);
    if (impl->plugin) {
        conform_plugin_input ins[CONFORM_MAX_TENSORS];
        conform_plugin_output outs[CONFORM_MAX_TENSORS];
        for (int i = 0; i < op->n_inputs; i++)
            ins[i] = (conform_plugin_input){op->inputs[i].name, p->in[i].shape.rank, p->in[i].shape.dims, in[i]};
        for (int o = 0; o < op->n_outputs; o++)
            outs[o] = (conform_plugin_output){op->outputs[o].name, p->out_shape[o].rank, p->out_shape[o].dims,
                                              p->out_skipped[o] ? NULL : out[o]};
        return impl->plugin->run(op->name, op->n_attrs, attrs, op->n_inputs, ins, op->n_outputs, outs);
    }
    conform_tensor_in ins[CONFORM_MAX_TENSORS];
    conform_tensor_out outs[CONFORM_MAX_TENSORS];
    conform_dtype dt = impl->dtype->id;
    for (int i = 0; i < op->n_inputs; i++)
        ins[i] = (conform_tensor_in){op->inputs[i].name, p->in[i].shape.rank, p->in[i].shape.dims, dt, in[i]};
    for (int o = 0; o < op->n_outputs; o++)
        outs[o] = (conform_tensor_out){op->outputs[o].name, p->out_shape[o].rank, p->out_shape[o].dims, dt,
                                       p->out_skipped[o] ? NULL : out[o]};
    return impl->plugin_v2->run(op->name, op->n_attrs, attrs, op->n_inputs, ins, op->n_outputs, outs);
}

static exec_status plugin_outputs(const impl_t *impl, const case_t *c, const problem_t *p, void **out, const conform_exec *ex,
                                  const exec_policy *policy, int *code, char *msg, size_t msglen)
{
    return run_kernel(plugin_kernel, impl, p, out, ex, policy, code);
}

const impl_kind impl_kind_plugin = {"plugin:", "plugin:PATH.so", plugin_open, plugin_close, plugin_name, plugin_supports,
                                    NULL, plugin_outputs, NULL, NULL, plugin_provenance};

/* ---- isolation ------------------------------------------------------------------------------- */

/* Waits for a child under the policy: 0 with its status, or -1 once the timeout (or a stop) has
   killed it. */
static int wait_child(pid_t pid, const exec_policy *policy, int *status)
{
    struct timespec start, now, nap = {0, 200000};
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        pid_t w = waitpid(pid, status, WNOHANG);
        if (w == pid) return 0;
        if (w < 0 && errno != EINTR) { /* not ours to wait for any more: say it died */
            *status = SIGKILL;
            return 0;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        double el = (double)(now.tv_sec - start.tv_sec) + 1e-9 * (double)(now.tv_nsec - start.tv_nsec);
        if ((policy->timeout_s > 0 && el > policy->timeout_s) || (policy->stop && *policy->stop)) {
            kill(pid, SIGKILL);
            waitpid(pid, status, 0);
            return -1;
        }
        nanosleep(&nap, NULL);
        if (nap.tv_nsec < 20000000) nap.tv_nsec *= 2; /* poll fast for short kernels, gently for long */
    }
}

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14 */
#define MADV_POPULATE_WRITE 23
#endif

/* A forked child's page tables hold none of its parent's shared memory (the inputs and outputs):
   the kernel under test would fault once per 4 KiB page writing its outputs (about 760k faults in
   the models suite) and once per few pages reading its inputs. One madvise per buffer maps them
   all at once; a kernel without it refuses the advice, and the pages fault in as before. */
static void prefault(const void *p, size_t bytes, int advice)
{
    if (!p || !bytes) return;
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE), start = (uintptr_t)p & ~(page - 1);
    madvise((void *)start, (uintptr_t)p + bytes - start, advice);
}

static void prefault_io(const impl_t *impl, const problem_t *p, const void **in, void **out)
{
    size_t item = (size_t)impl->dtype->itemsize;
    for (int i = 0; i < p->op->n_inputs; i++) prefault(in[i], (size_t)tensor_numel(&p->in[i]) * item, MADV_POPULATE_READ);
    for (int o = 0; o < p->op->n_outputs; o++)
        if (!p->out_skipped[o]) prefault(out[o], (size_t)shape_numel(&p->out_shape[o]) * item, MADV_POPULATE_WRITE);
}

/* in a child: a fault must kill it by its signal, so the parent can name it; drop the handlers a
   sanitizer (or anything else) installed, which would turn a SIGSEGV into an exit status */
static void default_fault_signals(void)
{
    const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t k = 0; k < sizeof faults / sizeof faults[0]; k++) signal(faults[k], SIG_DFL);
}

exec_status impl_exec(impl_kernel_fn fn, const impl_t *impl, const problem_t *p, const void **in, void **out,
                      const conform_exec *ex, const exec_policy *policy, int *code)
{
    *code = 0;
    if (!policy->isolate) {
        *code = fn(impl, p, in, out, ex);
        return *code ? EXEC_KERNEL_ERROR : EXEC_OK;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) { /* no process to spare: run in place rather than not at all */
        *code = fn(impl, p, in, out, ex);
        return *code ? EXEC_KERNEL_ERROR : EXEC_OK;
    }
    if (pid == 0) {
        default_fault_signals();
        prefault_io(impl, p, in, out);
        /* inputs are read-only to the kernel: a write through them is its crash, not the parent's */
        for (int i = 0; i < p->op->n_inputs; i++) guarded_seal(in[i]);
        /* the child writes the outputs into shared memory and leaves without atexit work */
        int rc = fn(impl, p, in, out, ex);
        _exit(rc == 0 ? 0 : (rc & 0x7f) | 0x80);
    }
    int status = 0;
    if (wait_child(pid, policy, &status)) return EXEC_TIMEOUT;
    if (WIFSIGNALED(status)) {
        *code = WTERMSIG(status);
        return EXEC_CRASHED;
    }
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 255;
    if (rc == 0) return EXEC_OK;
    *code = rc & 0x80 ? (int)(signed char)(rc | 0x80) : rc; /* the kernel's negative codes survive */
    return EXEC_KERNEL_ERROR;
}

/* ---- a plugin's first calls, tried in a child ---------------------------------------------- */

/* what conform calls on a plugin in its own process, not in a case's child */
typedef struct {
    char stage[160]; /* the call under way */
    int done;
} probe_state;

static void probe_calls(const char *path, const dtype_desc *dtype, probe_state *ps)
{
    snprintf(ps->stage, sizeof ps->stage, "loading it (dlopen runs its constructors)");
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    const conform_plugin *(*entry)(void) = NULL;
    const char *(*version)(void) = NULL;
    if (h) {
        *(void **)&entry = dlsym(h, "conform_plugin_entry");
        *(void **)&version = dlsym(h, CONFORM_PLUGIN_VERSION_SYMBOL);
    }
    snprintf(ps->stage, sizeof ps->stage, "conform_plugin_entry() (and the struct it returns)");
    const conform_plugin *pl = entry ? entry() : NULL;
    volatile size_t sink = pl && pl->name ? strlen(pl->name) : 0; /* the reports print it */
    snprintf(ps->stage, sizeof ps->stage, "%s()", CONFORM_PLUGIN_VERSION_SYMBOL);
    const char *v = version ? version() : NULL;
    sink += v ? strlen(v) : 0;
    (void)sink;
    const conform_plugin_v2 *v2 = pl && pl->abi_version == CONFORM_PLUGIN_ABI_V2 ? (const conform_plugin_v2 *)pl : NULL;
    for (int k = 0; pl && conform_ops[k]; k++) {
        const char *op = conform_ops[k]->name;
        snprintf(ps->stage, sizeof ps->stage, "supports(\"%s\"%s%s)", op, v2 ? ", " : "", v2 ? dtype->name : "");
        if (v2 && v2->supports) v2->supports(op, dtype->id);
        else if (pl->abi_version == CONFORM_PLUGIN_ABI_V1 && pl->supports) pl->supports(op);
    }
    ps->done = 1;
}

/* conform calls a plugin's constructors, entry, version and supports in its own process, where a
   crash, an exit or a hang would end the run with no report: tried first in a child, a plugin
   failing there is refused (the call named) before anything runs. 0, or -1 with err. */
#define PROBE_TIMEOUT_S 120.0
static int plugin_probe(const char *path, const dtype_desc *dtype, char *err, size_t errlen)
{
    probe_state *ps = mmap(NULL, sizeof *ps, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (ps == MAP_FAILED) return 0; /* no memory to share: load it untried, as before */
    memset(ps, 0, sizeof *ps);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        default_fault_signals();
        probe_calls(path, dtype, ps);
        _exit(0);
    }
    int status = 0, rc = 0;
    exec_policy policy = {1, PROBE_TIMEOUT_S, NULL};
    if (pid < 0) rc = 0; /* no process to spare: load it untried */
    else if (wait_child(pid, &policy, &status)) {
        snprintf(err, errlen, "plugin %s: %s did not return within %.0f s", path, ps->stage, PROBE_TIMEOUT_S);
        rc = -1;
    } else if (WIFSIGNALED(status) || !ps->done) {
        char how[96];
        if (WIFSIGNALED(status)) snprintf(how, sizeof how, "crashed (signal %d, %s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
        else snprintf(how, sizeof how, "ended the process (exit status %d)", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        snprintf(err, errlen, "plugin %s: %s %s; conform calls it in its own process, before any case, so the plugin "
                 "is refused", path, ps->stage, how);
        rc = -1;
    }
    munmap(ps, sizeof *ps);
    return rc;
}

exec_status impl_isolated_io(impl_io_fn fn, void *ctx, const exec_policy *policy, char *msg, size_t msglen)
{
    typedef struct {
        exec_status st;
        char msg[CONFORM_ERR_LEN];
    } io_result;
    io_result *r = policy->isolate ? mmap(NULL, sizeof *r, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0)
                                   : MAP_FAILED;
    if (r == MAP_FAILED) return fn(ctx, msg, msglen); /* not isolated, or no memory to share: in place */
    r->st = EXEC_CRASHED;
    r->msg[0] = '\0';
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        r->st = fn(ctx, r->msg, sizeof r->msg);
        _exit(0);
    }
    if (pid < 0) { /* no process to spare: read in place rather than not at all */
        munmap(r, sizeof *r);
        return fn(ctx, msg, msglen);
    }
    int status = 0;
    exec_status st = wait_child(pid, policy, &status) ? EXEC_TIMEOUT : r->st;
    if (st == EXEC_TIMEOUT)
        snprintf(msg, msglen, "no file read within %.0f s%s%s", policy->timeout_s, r->msg[0] ? ": stalled at " : "", r->msg);
    else if (st == EXEC_CRASHED)
        snprintf(msg, msglen, "the process reading the files died (status %d)%s%s", status, r->msg[0] ? " at " : "", r->msg);
    else
        snprintf(msg, msglen, "%s", r->msg);
    munmap(r, sizeof *r);
    return st;
}
