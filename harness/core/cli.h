/* Command-line pieces shared by the subcommands. Exit codes: 0 ok / all passed, 1 conformance
 * failure or regression, 2 bad usage or bad input. */
#ifndef CONFORM_CLI_H
#define CONFORM_CLI_H

#include "op.h"

#define EXIT_OK 0
#define EXIT_FAIL 1
#define EXIT_USAGE 2

int cmd_list(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_gate(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_hunt(int argc, char **argv);

/* Prints "conform: <msg>" on stderr and returns EXIT_USAGE. */
int usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* --isa and --threads values */
int parse_isa_arg(const char *v, conform_exec *ex);
int parse_threads_arg(const char *v, conform_exec *ex);
int parse_int_arg(const char *opt, const char *v, long long lo, long long hi, long long *out);
/* Checks the ISA is available here; resolves AUTO. 0 ok, else EXIT_USAGE after a message. */
int resolve_isa(conform_exec *ex);

/* A problem from --attr NAME=VALUE, --input NAME=FILE.npy and --shape NAME=d0,d1,... (inputs not
 * given as files are generated with the op's default generator and seed). Validated. */
typedef struct {
    const char *attr[64];
    int n_attr;
    const char *input[16];
    int n_input;
    const char *shape[16];
    int n_shape;
    unsigned long seed;
    const char *gen; /* --gen JSON: the suite's "gen" object for generated inputs */
    int wide16;      /* npy_read_ex mode for --input files (check --dtype float16/bfloat16) */
} problem_args;
/* Takes argv[*i] (and its value) when it is --attr/--input/--shape/--seed/--gen; 1 taken, 0 not, -1 error. */
int problem_args_take(problem_args *a, int argc, char **argv, int *i);
int problem_from_args(const op_desc *op, const problem_args *a, problem_t *p);

#endif
