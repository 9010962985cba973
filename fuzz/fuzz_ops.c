/* libFuzzer target: every op's validation, then its reference (with bounds) and its optimized
 * kernels (scalar and the best ISA) on tiny shapes with arbitrary attribute values and raw
 * float bits (NaN, Inf, huge) as data. The first byte picks the op from the table. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "judge.h"
#include "op.h"

typedef struct {
    const uint8_t *d;
    size_t n, i;
} bytes_t;

static unsigned take(bytes_t *b) { return b->i < b->n ? b->d[b->i++] : 0; }

static float take_float(bytes_t *b)
{
    uint32_t u = take(b) | take(b) << 8 | take(b) << 16 | (uint32_t)take(b) << 24;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static void set_attr(problem_t *p, int a, bytes_t *b)
{
    static const char *const strings[] = {"NCHW", "NHWC", "", "nhwc", "NCHWX"};
    const attr_spec *spec = &p->op->attrs[a];
    char text[256], err[CONFORM_ERR_LEN];
    unsigned sel = take(b);
    if (sel < 32 && spec->def) return; /* often keep the default */
    switch (spec->kind) {
    case ATTR_INT: snprintf(text, sizeof text, "%d", (int)(take(b) % 12) - 2); break;
    case ATTR_BOOL: snprintf(text, sizeof text, "%s", take(b) & 1 ? "true" : "false"); break;
    case ATTR_STRING: snprintf(text, sizeof text, "%s", strings[take(b) % 5]); break;
    case ATTR_FLOAT: {
        unsigned k = take(b);
        float f = k < 128 ? (float)(k % 9) * 0.25f : take_float(b);
        snprintf(text, sizeof text, "%.9g", (double)f);
        break;
    }
    case ATTR_INT_LIST: {
        unsigned len = take(b) % 6;
        size_t used = 0;
        text[0] = '\0';
        for (unsigned i = 0; i < len; i++)
            used += (size_t)snprintf(text + used, sizeof text - used, i ? ",%d" : "%d", (int)(take(b) % 9) - 1);
        if (!len) snprintf(text, sizeof text, "1");
        break;
    }
    }
    (void)problem_set_attr_text(p, spec->name, text, err, sizeof err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bytes_t b = {data, size, 0};
    conform_sample_budget = 1 << 20; /* a fuzz input may not buy seconds of work */
    int n_ops = 0;
    while (conform_ops[n_ops]) n_ops++;
    const op_desc *op = conform_ops[take(&b) % n_ops];
    problem_t p;
    problem_init(&p, op);
    char err[CONFORM_ERR_LEN];
    for (int a = 0; a < op->n_attrs; a++) set_attr(&p, a, &b);
    if (problem_finish_attrs(&p, err, sizeof err)) goto out;
    for (int i = 0; i < op->n_inputs; i++) {
        int rank = (int)(take(&b) % 5) + 1;
        p.in[i].shape.rank = rank;
        for (int d = 0; d < rank; d++) p.in[i].shape.dims[d] = take(&b) % 7;
    }
    if (op->validate(&p, err, sizeof err)) goto out;
    for (int i = 0; i < op->n_inputs; i++) {
        if (tensor_alloc(&p.in[i], &p.in[i].shape)) goto out;
        for (int64_t k = 0; k < tensor_numel(&p.in[i]); k++) {
            unsigned mode = take(&b);
            p.in[i].data[k] = mode < 200 ? (double)(float)((int)(mode % 41) - 20) * 0.5 : (double)take_float(&b);
        }
    }
    if (op->validate(&p, err, sizeof err)) goto out;
    judge_ref j; /* the reference and its bounds as run computes them (judge.h) */
    if (judge_ref_alloc(&p, DTYPE_FLOAT32, &j)) goto out;
    float *got[CONFORM_MAX_TENSORS] = {0}, *fin[CONFORM_MAX_TENSORS] = {0};
    for (int o = 0; o < op->n_outputs; o++) got[o] = calloc((size_t)shape_numel(&p.out_shape[o]) + 1, sizeof(float));
    for (int i = 0; i < op->n_inputs; i++) {
        int64_t n = tensor_numel(&p.in[i]);
        fin[i] = calloc((size_t)n + 1, sizeof(float));
        for (int64_t k = 0; k < n; k++) fin[i][k] = (float)p.in[i].data[k];
    }
    judge_ref_compute(&p, &j);
    conform_exec scalar = {CONFORM_ISA_SCALAR, 1}, best = {CONFORM_ISA_AUTO, 1};
    (void)op->optimized(&p, (const float **)fin, got, &scalar);
    (void)op->optimized(&p, (const float **)fin, got, &best);
    judge_ref_free(&j);
    for (int o = 0; o < CONFORM_MAX_TENSORS; o++) {
        free(got[o]);
        free(fin[o]);
    }
out:
    problem_free(&p);
    return 0;
}
