/* conform eval: one op on given inputs, outputs as .npy. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "eval_buffers.h"
#include "help.h"
#include "npy.h"
#include "report.h"
#include "runner.h"

typedef struct {
    int impl;
    const char *dir;
} eval_opts;

static int eval_option_of(void *ctx, const char *o, const char *v, int *i)
{
    eval_opts *x = ctx;
    if (!strcmp(o, "--impl")) {
        if (parse_impl(v, &x->impl) || x->impl == 3) {
            cli_bad_value("--impl", v, "reference, optimized");
            return -1;
        }
    } else if (!strcmp(o, "--output-dir") && v) x->dir = v;
    else return 0;
    ++*i;
    return 1;
}

int cmd_eval(int argc, char **argv)
{
    eval_args e;
    eval_opts x = {0, NULL};
    int rc = eval_parse(argc, argv, "eval", "conform eval OP --impl reference|optimized ...", 0, &e, eval_option_of, &x);
    if (rc) return rc;
    const op_desc *op = e.op;
    int impl = x.impl;
    const char *dir = x.dir;
    if (!impl) return usage_error("eval: --impl reference|optimized is required");
    if (!dir) return usage_error("eval: --output-dir DIR is required");
    if (e.a.n_shape) return usage_error("eval: inputs come from files (--input NAME=FILE.npy)");
    problem_t p;
    if ((rc = eval_problem(&e, &p))) return rc;
    conform_exec ex = e.ex;
    buffers b;
    char err[CONFORM_ERR_LEN];
    if (buffers_alloc(&p, &b)) { rc = usage_error("eval: out of memory"); goto out; }
    if (run_impl(&p, impl == 1, &b, &ex)) { rc = usage_error("eval: the optimized kernel failed"); goto out; }
    if (mkdir_p(dir, err, sizeof err)) { rc = usage_error("%s", err); goto out; }
    for (int o = 0; o < op->n_outputs; o++) {
        if (p.out_skipped[o]) continue;
        char path[1200];
        snprintf(path, sizeof path, "%s/%s.npy", dir, op->outputs[o].name);
        int w = impl == 1 ? npy_write_f64(path, &p.out_shape[o], b.ref[o], err, sizeof err)
                          : npy_write_f32(path, &p.out_shape[o], b.opt[o], err, sizeof err);
        if (w) { rc = usage_error("%s", err); goto out; }
        printf("%s\n", path);
    }
out:
    buffers_free(&b);
    problem_free(&p);
    return rc;
}
