/* The implementation under test, one kind among several behind one interface (deqp-runner
 * style): conform's own optimized kernels, a user's plugin (both run in a child process, so a
 * crash or a hang is a verdict, not the end of the run), or a directory of outputs a device
 * wrote for an exported suite (impl_dir.c). The runner only talks to impl_*. */
#ifndef CONFORM_IMPL_H
#define CONFORM_IMPL_H

#include <signal.h>

#include <cJSON.h>

#include "conform_plugin.h"
#include "dtype.h"
#include "op.h"
#include "suite.h"

typedef struct impl_kind impl_kind;
typedef struct impl_dir impl_dir; /* impl_dir.c */

typedef struct {
    const impl_kind *kind;
    char spec[600];              /* as given to --impl */
    const char *opt;             /* the option that gave it ("--impl", export's "--outputs"), for messages */
    const dtype_desc *dtype;     /* the precision it computes in */
    char path[512];              /* plugin file or directory */
    void *handle;                /* plugin */
    int abi_version;
    const conform_plugin *plugin;       /* ABI 1 */
    const conform_plugin_v2 *plugin_v2; /* ABI 2 */
    const char *plugin_version;         /* conform_plugin_version(), when the plugin defines it */
    impl_dir *dir;
} impl_t;

typedef enum {
    EXEC_OK,
    EXEC_KERNEL_ERROR, /* *code: the kernel's return code */
    EXEC_CRASHED,      /* *code: the signal */
    EXEC_TIMEOUT,
    EXEC_MISSING,      /* an output was never produced (a device wrote no file): msg names it */
    EXEC_BAD_OUTPUT,   /* an output is unreadable or of the wrong shape, dtype or size: msg says */
    EXEC_REFUSED       /* a file of the implementation breaks a rule (a path leaving its directory):
                          msg names the path and the rule */
} exec_status;

typedef struct {
    int isolate;      /* run in a child process */
    double timeout_s; /* per case, isolated runs only */
    volatile sig_atomic_t *stop; /* when set (by a signal handler), an isolated run is abandoned */
} exec_policy;

struct impl_kind {
    const char *prefix; /* what --impl starts with: "optimized", "plugin:", "dir:" */
    const char *usage;  /* "plugin:PATH.so" */
    /* arg: the text after the prefix; dtype: --dtype, NULL when not given. Sets impl->dtype. */
    int (*open)(impl_t *impl, const char *arg, const dtype_desc *dtype, char *err, size_t errlen);
    void (*close)(impl_t *impl);
    const char *(*name)(const impl_t *impl);
    int (*supports)(const impl_t *impl, const op_desc *op);
    /* Where a case's inputs come from: NULL keeps the generated ones (rounded to the dtype);
       otherwise replaces p's inputs (read under the policy's timeout), or returns why it cannot
       with err (EXEC_TIMEOUT: the reads stalled). */
    exec_status (*inputs)(const impl_t *impl, const case_t *c, problem_t *p, const exec_policy *policy, char *err,
                          size_t errlen);
    /* The outputs at impl->dtype into out[o] (numel * itemsize bytes each; p->out_skipped says
       which the op was asked not to compute). */
    exec_status (*outputs)(const impl_t *impl, const case_t *c, const problem_t *p, void **out, const conform_exec *ex,
                           const exec_policy *policy, int *code, char *msg, size_t msglen);
    /* the run seed the kind is bound to (dir: the export's); NULL or 0: none */
    int (*pinned_seed)(const impl_t *impl, uint64_t *seed);
    /* why op cannot run at all (dir: the runner declared it unsupported on its device), or NULL */
    const char *(*why_not)(const impl_t *impl, const op_desc *op);
    /* what ran, for the reports (a new object the caller owns): name, version, device, calls */
    cJSON *(*provenance)(const impl_t *impl);
};

extern const impl_kind impl_kind_optimized, impl_kind_plugin, impl_kind_dir;

/* "optimized", "plugin:PATH.so" or "dir:DIR"; dtype: --dtype or NULL. 0 ok, -1 with err
 * (unknown kind, unloadable, no entry, ABI mismatch, dtype the kind cannot compute in). */
int impl_open(const char *spec, const dtype_desc *dtype, impl_t *impl, char *err, size_t errlen);
/* impl_open for a spec given by option opt: its messages name opt, never an --impl not given */
int impl_open_as(const char *opt, const char *spec, const dtype_desc *dtype, impl_t *impl, char *err, size_t errlen);
void impl_close(impl_t *impl);
const char *impl_name(const impl_t *impl);
int impl_supports(const impl_t *impl, const op_desc *op);
/* Why the implementation cannot run op (dir: the runner's declared reason), or NULL. */
const char *impl_why_not(const impl_t *impl, const op_desc *op);
/* What ran, as an object for report.json's "runner" (the caller owns it): kind, name, version,
 * and for dir: everything DIR/runner.json records but its per-case list. */
cJSON *impl_provenance(const impl_t *impl);
exec_status impl_inputs(const impl_t *impl, const case_t *c, problem_t *p, const exec_policy *policy, char *err,
                        size_t errlen);
exec_status impl_outputs(const impl_t *impl, const case_t *c, const problem_t *p, void **out, const conform_exec *ex,
                         const exec_policy *policy, int *code, char *msg, size_t msglen);
/* The run seed a kind pins (dir: the export's), or 0 when it has none. */
int impl_pinned_seed(const impl_t *impl, uint64_t *seed);

/* dir: the export's cases (id -> manifest entry), the selection a run of it judges; and the
 * manifest itself. NULL for the other kinds. */
const cJSON *impl_dir_held(const impl_t *impl);
const cJSON *impl_dir_manifest(const impl_t *impl);

/* For the kernel kinds: runs fn in a child process (or in place) with outputs in shared memory; the
   inputs are bigbuf buffers (run_kernel's), sealed read-only in the child. */
typedef int (*impl_kernel_fn)(const impl_t *impl, const problem_t *p, const void **in, void **out, const conform_exec *ex);
exec_status impl_exec(impl_kernel_fn fn, const impl_t *impl, const problem_t *p, const void **in, void **out,
                      const conform_exec *ex, const exec_policy *policy, int *code);

/* Reads of an implementation's files (a device directory on a network file system may stall, for
 * ever): fn runs in a child process under the policy's timeout when it isolates, in place when not.
 * fn's status and msg come back through shared memory; its other results must be written to
 * shared memory too. A stall is EXEC_TIMEOUT, msg naming what fn said it was reading. */
typedef exec_status (*impl_io_fn)(void *ctx, char *msg, size_t msglen);
exec_status impl_isolated_io(impl_io_fn fn, void *ctx, const exec_policy *policy, char *msg, size_t msglen);

#endif
