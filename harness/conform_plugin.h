/* conform plugin ABI: let conform judge your own kernels.
 *
 * Build a shared library that defines conform_plugin_entry() and returns a conform_plugin whose
 * abi_version is CONFORM_PLUGIN_ABI_VERSION, then run any suite against it:
 *     build/conform run cases/conformance.json --impl plugin:./libmykernels.so
 * Cases of ops the plugin does not support are reported "not_implemented", not failed.
 *
 * Tensors are float32, C order, in the op's documented order (`conform list` prints the names of
 * inputs, outputs and attributes). The harness validates every problem first: a plugin receives
 * only valid input. Output buffers are uninitialised (poisoned with NaN): write every element,
 * and nothing outside them (guard bands around every buffer are checked). A plugin runs in a
 * child process with a time limit: a crash or a hang is reported for that case and the suite
 * goes on. Results should not depend on anything but the inputs.
 *
 * Versioning: a change to any struct or signature here bumps CONFORM_PLUGIN_ABI_VERSION; conform
 * refuses a plugin of another version with a message naming both. */
#ifndef CONFORM_PLUGIN_H
#define CONFORM_PLUGIN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CONFORM_PLUGIN_ABI_VERSION 1

typedef enum {
    CONFORM_ATTR_INT = 0,
    CONFORM_ATTR_FLOAT = 1,
    CONFORM_ATTR_BOOL = 2,
    CONFORM_ATTR_STRING = 3,
    CONFORM_ATTR_INT_LIST = 4
} conform_attr_kind;

typedef struct {
    const char *name;
    conform_attr_kind kind;
    int64_t i;            /* INT, BOOL (0 or 1) */
    double f;             /* FLOAT */
    const char *s;        /* STRING */
    int n;                /* INT_LIST: number of entries */
    const int64_t *list;  /* INT_LIST */
} conform_plugin_attr;

typedef struct {
    const char *name;
    int rank;
    const int64_t *dims;
    const float *data;
} conform_plugin_input;

typedef struct {
    const char *name;
    int rank;
    const int64_t *dims;
    float *data;   /* NULL when the op was asked not to compute this output (output_mask) */
} conform_plugin_output;

typedef struct {
    int abi_version;          /* CONFORM_PLUGIN_ABI_VERSION */
    const char *name;         /* shown in reports */
    /* 1 if the plugin implements op (conform's op name, e.g. "roi_align"), else 0 */
    int (*supports)(const char *op);
    /* Computes op; 0 on success, anything else is reported as a kernel error for the case. */
    int (*run)(const char *op, int n_attrs, const conform_plugin_attr *attrs, int n_inputs,
               const conform_plugin_input *inputs, int n_outputs, conform_plugin_output *outputs);
} conform_plugin;

/* The one symbol conform looks up. */
const conform_plugin *conform_plugin_entry(void);

#ifdef __cplusplus
}
#endif

#endif
