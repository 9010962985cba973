#include "impl.h"

#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

int impl_open(const char *spec, impl_t *impl, char *err, size_t errlen)
{
    memset(impl, 0, sizeof *impl);
    if (!strcmp(spec, "optimized")) return 0;
    if (strncmp(spec, "plugin:", 7)) {
        snprintf(err, errlen, "--impl takes optimized or plugin:PATH.so, got '%s'", spec);
        return -1;
    }
    impl->is_plugin = 1;
    snprintf(impl->path, sizeof impl->path, "%s", spec + 7);
    /* a bare name would make dlopen search the library path: insist on a file */
    char path[600];
    snprintf(path, sizeof path, "%s%s", strchr(impl->path, '/') ? "" : "./", impl->path);
    impl->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!impl->handle) {
        snprintf(err, errlen, "plugin %s: cannot load (%s)", impl->path, dlerror());
        return -1;
    }
    const conform_plugin *(*entry)(void);
    *(void **)&entry = dlsym(impl->handle, "conform_plugin_entry");
    impl->plugin = entry ? entry() : NULL;
    if (!impl->plugin) {
        snprintf(err, errlen, "plugin %s: no conform_plugin_entry() returning a plugin (see conform_plugin.h)", impl->path);
        impl_close(impl);
        return -1;
    }
    if (impl->plugin->abi_version != CONFORM_PLUGIN_ABI_VERSION || !impl->plugin->supports || !impl->plugin->run) {
        snprintf(err, errlen, "plugin %s: ABI version %d, this conform speaks %d (and needs supports and run)", impl->path,
                 impl->plugin->abi_version, CONFORM_PLUGIN_ABI_VERSION);
        impl_close(impl);
        return -1;
    }
    return 0;
}

void impl_close(impl_t *impl)
{
    if (impl->handle) dlclose(impl->handle);
    impl->handle = NULL;
    impl->plugin = NULL;
}

const char *impl_name(const impl_t *impl)
{
    if (!impl->is_plugin) return "optimized";
    return impl->plugin && impl->plugin->name ? impl->plugin->name : impl->path;
}

int impl_supports(const impl_t *impl, const op_desc *op)
{
    return !impl->is_plugin || impl->plugin->supports(op->name);
}

int impl_run(const impl_t *impl, const problem_t *p, const float **in, float **out, const conform_exec *ex)
{
    const op_desc *op = p->op;
    if (!impl->is_plugin) return op->optimized(p, in, out, ex);
    conform_plugin_attr attrs[CONFORM_MAX_ATTRS];
    conform_plugin_input ins[CONFORM_MAX_TENSORS];
    conform_plugin_output outs[CONFORM_MAX_TENSORS];
    for (int a = 0; a < op->n_attrs; a++) {
        const attr_value *v = &p->attr[a];
        attrs[a] = (conform_plugin_attr){op->attrs[a].name, (conform_attr_kind)v->kind, v->i, v->f, v->s, v->n, v->list};
    }
    for (int i = 0; i < op->n_inputs; i++)
        ins[i] = (conform_plugin_input){op->inputs[i].name, p->in[i].shape.rank, p->in[i].shape.dims, in[i]};
    for (int o = 0; o < op->n_outputs; o++)
        outs[o] = (conform_plugin_output){op->outputs[o].name, p->out_shape[o].rank, p->out_shape[o].dims,
                                          p->out_skipped[o] ? NULL : out[o]};
    return impl->plugin->run(op->name, op->n_attrs, attrs, op->n_inputs, ins, op->n_outputs, outs);
}

exec_status impl_exec(const impl_t *impl, const problem_t *p, const float **in, float **out, const conform_exec *ex,
                      const exec_policy *policy, int *code)
{
    *code = 0;
    if (!policy->isolate) {
        *code = impl_run(impl, p, in, out, ex);
        return *code ? EXEC_KERNEL_ERROR : EXEC_OK;
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) { /* no process to spare: run in place rather than not at all */
        *code = impl_run(impl, p, in, out, ex);
        return *code ? EXEC_KERNEL_ERROR : EXEC_OK;
    }
    if (pid == 0) {
        /* a fault must kill the child by its signal, so the parent can name it: drop handlers a
           sanitizer (or anything else) installed */
        const int faults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
        for (size_t k = 0; k < sizeof faults / sizeof faults[0]; k++) signal(faults[k], SIG_DFL);
        /* the child writes the outputs into shared memory and leaves without atexit work */
        int rc = impl_run(impl, p, in, out, ex);
        _exit(rc == 0 ? 0 : (rc & 0x7f) | 0x80);
    }
    struct timespec start, now, nap = {0, 200000};
    clock_gettime(CLOCK_MONOTONIC, &start);
    int status = 0;
    for (;;) {
        pid_t w = waitpid(pid, &status, WNOHANG);
        if (w == pid) break;
        if (w < 0 && errno != EINTR) return EXEC_CRASHED;
        clock_gettime(CLOCK_MONOTONIC, &now);
        double el = (double)(now.tv_sec - start.tv_sec) + 1e-9 * (double)(now.tv_nsec - start.tv_nsec);
        if ((policy->timeout_s > 0 && el > policy->timeout_s) || (policy->stop && *policy->stop)) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            return EXEC_TIMEOUT;
        }
        nanosleep(&nap, NULL);
        if (nap.tv_nsec < 20000000) nap.tv_nsec *= 2; /* poll fast for short kernels, gently for long */
    }
    if (WIFSIGNALED(status)) {
        *code = WTERMSIG(status);
        return EXEC_CRASHED;
    }
    int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 255;
    if (rc == 0) return EXEC_OK;
    *code = rc & 0x80 ? (int)(signed char)(rc | 0x80) : rc; /* the kernel's negative codes survive */
    return EXEC_KERNEL_ERROR;
}
