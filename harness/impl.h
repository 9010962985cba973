/* The implementation under test: conform's own optimized kernels or a user's plugin, run in a
 * child process (isolation) so a crash or a hang is a verdict, not the end of the run. */
#ifndef CONFORM_IMPL_H
#define CONFORM_IMPL_H

#include <signal.h>

#include "conform_plugin.h"
#include "op.h"

typedef struct {
    int is_plugin;
    char path[512];
    void *handle;
    const conform_plugin *plugin;
} impl_t;

/* "optimized" or "plugin:PATH.so"; 0 ok, -1 with err (unloadable, no entry, ABI mismatch). */
int impl_open(const char *spec, impl_t *impl, char *err, size_t errlen);
void impl_close(impl_t *impl);
const char *impl_name(const impl_t *impl);
int impl_supports(const impl_t *impl, const op_desc *op);
/* Runs op on float32 inputs into outputs (out[o] NULL when skipped). 0 ok, else an error code. */
int impl_run(const impl_t *impl, const problem_t *p, const float **in, float **out, const conform_exec *ex);

typedef enum { EXEC_OK, EXEC_KERNEL_ERROR, EXEC_CRASHED, EXEC_TIMEOUT } exec_status;

typedef struct {
    int isolate;      /* run in a child process */
    double timeout_s; /* per case, isolated runs only */
    volatile sig_atomic_t *stop; /* when set (by a signal handler), an isolated run is abandoned */
} exec_policy;

/* Runs impl with outputs in buffers the caller allocated with guarded_alloc_shared (so a child
 * can write them). *code: the kernel's return code or the signal number. */
exec_status impl_exec(const impl_t *impl, const problem_t *p, const float **in, float **out, const conform_exec *ex,
                      const exec_policy *policy, int *code);

#endif
