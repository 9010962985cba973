/* conform plugin ABI: let conform judge your own kernels.
 *
 * Build a shared library that defines conform_plugin_entry() and returns a conform_plugin whose
 * abi_version is CONFORM_PLUGIN_ABI_VERSION (or a conform_plugin_v2 declaring CONFORM_PLUGIN_ABI_V2,
 * for tensors of every dtype), then run any suite against it:
 *     build/conform run cases/conformance.json --impl plugin:./libmykernels.so
 * Cases of ops the plugin does not support are reported "not_implemented", not failed.
 *
 * Tensors are float32, C order, in the op's documented order (`conform list` prints the names of
 * inputs, outputs and attributes). The harness validates every problem first: a plugin receives
 * only valid input. Output buffers are uninitialised (poisoned with NaN): write every element,
 * and nothing outside them (guard bands around every buffer are checked; a read past an input
 * returns 0.25, so an over-read that is used fails the same way every run). A plugin runs in a
 * child process with a time limit: a crash or a hang is reported for that case and the suite
 * goes on. Results should not depend on anything but the inputs.
 *
 * Versioning: a change to any struct or signature here adds a new version; conform keeps
 * accepting the older ones and refuses any other version with a message naming both. */
#ifndef CONFORM_PLUGIN_H
#define CONFORM_PLUGIN_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CONFORM_PLUGIN_ABI_V1 1
#define CONFORM_PLUGIN_ABI_V2 2
/* What a `conform_plugin` (the float32 ABI 1 struct) declares: kept at 1 so that a version-1
   plugin recompiled against this header stays version 1 (a plugin claiming 2 with the version-1
   structs would be handed conform_tensor_in and crash). A conform_plugin_v2 declares
   CONFORM_PLUGIN_ABI_V2. */
#define CONFORM_PLUGIN_ABI_VERSION CONFORM_PLUGIN_ABI_V1

typedef enum {
    CONFORM_DTYPE_FLOAT32 = 0,
    CONFORM_DTYPE_FLOAT16 = 1,
    CONFORM_DTYPE_BFLOAT16 = 2, /* top 16 bits of the float32 pattern */
    CONFORM_DTYPE_FLOAT64 = 3
} conform_dtype;

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

/* ABI version 1: float32 only */
typedef struct {
    int abi_version;          /* CONFORM_PLUGIN_ABI_V1 */
    const char *name;         /* shown in reports */
    /* 1 if the plugin implements op (conform's op name, e.g. "roi_align"), else 0 */
    int (*supports)(const char *op);
    /* Computes op; 0 on success, anything else is reported as a kernel error for the case. */
    int (*run)(const char *op, int n_attrs, const conform_plugin_attr *attrs, int n_inputs,
               const conform_plugin_input *inputs, int n_outputs, conform_plugin_output *outputs);
} conform_plugin;

/* ABI version 2: tensors carry a dtype */
typedef struct {
    const char *name;
    int rank;
    const int64_t *dims;
    conform_dtype dtype;
    const void *data;
} conform_tensor_in;

typedef struct {
    const char *name;
    int rank;
    const int64_t *dims;
    conform_dtype dtype;
    void *data;    /* NULL when the op was asked not to compute this output (output_mask) */
} conform_tensor_out;

typedef struct {
    int abi_version;          /* CONFORM_PLUGIN_ABI_V2 */
    const char *name;
    /* 1 if the plugin implements op at dtype, else 0 (the case is reported not_implemented) */
    int (*supports)(const char *op, conform_dtype dtype);
    int (*run)(const char *op, int n_attrs, const conform_plugin_attr *attrs, int n_inputs,
               const conform_tensor_in *inputs, int n_outputs, conform_tensor_out *outputs);
} conform_plugin_v2;

/* Optional, for every ABI version: what the plugin is beyond its name (its version, the library
 * or toolkit it calls, a stand-in if it is one), shown in every report ("what ran"):
 *     const char *conform_plugin_version(void) { return "mykernels 1.2 (CANN 8.0.RC3)"; }
 * A plugin without it still loads; its reports then carry its name only. */
#define CONFORM_PLUGIN_VERSION_SYMBOL "conform_plugin_version"
const char *conform_plugin_version(void);

/* The one symbol conform needs. It returns a pointer to a conform_plugin (version 1) or a
 * conform_plugin_v2 (version 2); conform reads abi_version first, then the rest. A version-2
 * plugin casts: return (const conform_plugin *)&my_v2_plugin; */
const conform_plugin *conform_plugin_entry(void);

#ifdef __cplusplus
}
#endif

#endif
