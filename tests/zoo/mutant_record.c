/* The bug-free zoo kernels as a plugin that also appends every call to $ZOO_MUTANT_RECORD
 * (format: mutant_calls.h), so that tools/zoo_mutants.py can replay the default suite's calls
 * against each mutant without running the suite's golden again ($ZOO_MUTANT_RECORD/<op>.bin). Linked with the kernels compiled
 * with -Dconform_plugin_entry=zoo_mutant_entry. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conform_plugin.h"
#include "mutant_calls.h"

const conform_plugin *zoo_mutant_entry(void);

static void put_i(FILE *f, int64_t v) { fwrite(&v, sizeof v, 1, f); }
static void put_s(FILE *f, const char *s)
{
    put_i(f, s ? (int64_t)strlen(s) : -1);
    if (s) fwrite(s, 1, strlen(s), f);
}
static int64_t count(int rank, const int64_t *dims)
{
    int64_t n = 1;
    for (int d = 0; d < rank; d++) n *= dims[d];
    return n;
}
static void put_dims(FILE *f, const char *name, int rank, const int64_t *dims)
{
    put_s(f, name);
    put_i(f, rank);
    fwrite(dims, sizeof *dims, (size_t)rank, f);
}

static void record(const char *op, int n_attrs, const conform_plugin_attr *a, int n_inputs, const conform_plugin_input *in,
                   int n_outputs, const conform_plugin_output *out)
{
    const char *dir = getenv("ZOO_MUTANT_RECORD"); /* a directory: one file per op */
    char path[4096];
    if (!dir || snprintf(path, sizeof path, "%s/%s.bin", dir, op) >= (int)sizeof path) return;
    FILE *f = fopen(path, "ab");
    if (!f) return;
    fwrite(ZOO_CALL_MAGIC, 1, 4, f);
    put_s(f, op);
    put_i(f, n_attrs);
    for (int k = 0; k < n_attrs; k++) {
        put_s(f, a[k].name);
        put_i(f, a[k].kind);
        put_i(f, a[k].i);
        fwrite(&a[k].f, sizeof a[k].f, 1, f);
        put_s(f, a[k].s);
        put_i(f, a[k].list ? a[k].n : -1);
        if (a[k].list) fwrite(a[k].list, sizeof *a[k].list, (size_t)a[k].n, f);
    }
    put_i(f, n_inputs);
    for (int k = 0; k < n_inputs; k++) {
        put_dims(f, in[k].name, in[k].rank, in[k].dims);
        put_i(f, in[k].data != NULL);
        if (in[k].data) fwrite(in[k].data, sizeof(float), (size_t)count(in[k].rank, in[k].dims), f);
    }
    put_i(f, n_outputs);
    for (int k = 0; k < n_outputs; k++) {
        put_dims(f, out[k].name, out[k].rank, out[k].dims);
        put_i(f, out[k].data != NULL);
        if (out[k].data) fwrite(out[k].data, sizeof(float), (size_t)count(out[k].rank, out[k].dims), f);
    }
    fclose(f);
}

static int supports(const char *op) { return zoo_mutant_entry()->supports(op); }

static int run(const char *op, int n_attrs, const conform_plugin_attr *attrs, int n_inputs,
               const conform_plugin_input *inputs, int n_outputs, conform_plugin_output *outputs)
{
    record(op, n_attrs, attrs, n_inputs, inputs, n_outputs, outputs); /* before: the contents handed in */
    return zoo_mutant_entry()->run(op, n_attrs, attrs, n_inputs, inputs, n_outputs, outputs);
}

static const conform_plugin plugin = {CONFORM_PLUGIN_ABI_V1, "conform zoo: recording the suite's calls", supports, run};

const conform_plugin *conform_plugin_entry(void) { return &plugin; }
