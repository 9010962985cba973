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

int cmd_eval(int argc, char **argv)
{
    if (argc < 3 || argv[2][0] == '-') return usage_error("eval: usage: conform eval OP --impl reference|optimized ...");
    const op_desc *op = op_find(argv[2]);
    if (!op) return cli_unknown_op("eval", argv[2]);
    problem_args a;
    memset(&a, 0, sizeof a);
    conform_exec ex = {CONFORM_ISA_AUTO, 0};
    int impl = 0;
    const char *dir = NULL;
    for (int i = 3; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int t = problem_args_take(&a, argc, argv, &i);
        if (t < 0) return EXIT_USAGE;
        if (t) continue;
        if (!strcmp(o, "--impl")) { if (parse_impl(v, &impl) || impl == 3) return cli_bad_value("--impl", v, "reference, optimized"); i++; }
        else if (!strcmp(o, "--output-dir") && v) { dir = v; i++; }
        else if (!strcmp(o, "--threads")) { if (parse_threads_arg(v, &ex)) return EXIT_USAGE; i++; }
        else if (!strcmp(o, "--isa")) { if (parse_isa_arg(v, &ex)) return EXIT_USAGE; i++; }
        else return cli_unknown_option("eval", o, v);
    }
    if (!impl) return usage_error("eval: --impl reference|optimized is required");
    if (!dir) return usage_error("eval: --output-dir DIR is required");
    if (a.n_shape) return usage_error("eval: inputs come from files (--input NAME=FILE.npy)");
    if (resolve_isa(&ex)) return EXIT_USAGE;
    ref_set_threads(ex.threads); /* the reference's too */
    problem_t p;
    int rc = problem_from_args(op, &a, &p);
    if (rc) { problem_free(&p); return rc; }
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
