#include "eval_buffers.h"

#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "help.h"

void buffers_free(buffers *b)
{
    for (int i = 0; i < CONFORM_MAX_TENSORS; i++) {
        free(b->ref[i]);
        free(b->opt[i]);
        free(b->fin[i]);
    }
}

/* zeroed, 64-byte aligned as a framework's tensors are (PyTorch's CPU allocator aligns to 64):
 * the optimized kernels stream whole cache lines where the layout allows */
static void *alloc_aligned_zero(size_t bytes)
{
    void *q = NULL;
    bytes = bytes ? bytes : 1;
    if (posix_memalign(&q, 64, bytes)) return NULL;
    memset(q, 0, bytes);
    return q;
}

int buffers_alloc(const problem_t *p, buffers *b)
{
    memset(b, 0, sizeof *b);
    for (int o = 0; o < p->op->n_outputs; o++) {
        size_t n = (size_t)shape_numel(&p->out_shape[o]);
        b->ref[o] = calloc(n ? n : 1, sizeof(double));
        b->opt[o] = alloc_aligned_zero(n * sizeof(float));
        if (!b->ref[o] || !b->opt[o]) return -1;
    }
    for (int i = 0; i < p->op->n_inputs; i++) {
        int64_t n = tensor_numel(&p->in[i]);
        b->fin[i] = alloc_aligned_zero((size_t)n * sizeof(float));
        if (!b->fin[i]) return -1;
        for (int64_t j = 0; j < n; j++) b->fin[i][j] = (float)p->in[i].data[j];
    }
    return 0;
}

int run_impl(const problem_t *p, int reference, buffers *b, const conform_exec *ex)
{
    if (reference) {
        p->op->reference(p, b->ref, NULL);
        return 0;
    }
    return p->op->optimized(p, (const float **)b->fin, b->opt, ex);
}

int parse_impl(const char *v, int *impl)
{
    if (v && !strcmp(v, "reference")) *impl = 1;
    else if (v && !strcmp(v, "optimized")) *impl = 2;
    else if (v && !strcmp(v, "both")) *impl = 3;
    else return -1;
    return 0;
}

int eval_parse(int argc, char **argv, const char *cmd, const char *usage, int seed, eval_args *e, eval_option take,
               void *ctx)
{
    memset(e, 0, sizeof *e);
    e->a.seed = seed;
    e->ex = (conform_exec){CONFORM_ISA_AUTO, 0};
    if (argc < 3 || argv[2][0] == '-') return usage_error("%s: usage: %s", cmd, usage);
    if (!(e->op = op_find(argv[2]))) return cli_unknown_op(cmd, argv[2]);
    if (cli_once(cmd, argc, argv)) return EXIT_USAGE;
    for (int i = 3; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int t = problem_args_take(&e->a, argc, argv, &i);
        if (t < 0) return EXIT_USAGE;
        if (t) continue;
        if (!strcmp(o, "--threads")) { if (parse_threads_arg(v, &e->ex)) return EXIT_USAGE; i++; }
        else if (!strcmp(o, "--isa")) { if (parse_isa_arg(v, &e->ex)) return EXIT_USAGE; i++; }
        else if ((t = take(ctx, o, v, &i)) < 0) return EXIT_USAGE;
        else if (!t) return cli_unknown_option(cmd, o, v);
    }
    return EXIT_OK;
}

int eval_problem(eval_args *e, problem_t *p)
{
    if (resolve_isa(&e->ex)) return EXIT_USAGE;
    ref_set_threads(e->ex.threads); /* the reference's too */
    int rc = problem_from_args(e->op, &e->a, p);
    if (rc) problem_free(p);
    return rc;
}
