/* A faulty ABI-2 plugin: the v2 example with a classic field bug, `aligned` ignored (always the
 * legacy half-pixel-less rule), so the tests can show a bug is caught at every dtype. Built in
 * float (float32, float16, bfloat16) and in double (float64), like the example. */
#include <stdlib.h>
#include <string.h>

#define CONFORM_EXAMPLE_NO_ENTRY
#include "../../examples/plugin_roi_align_v2.c"

static int faulty_run(const char *op, int na, const conform_plugin_attr *a, int ni, const conform_tensor_in *in, int no,
                      conform_tensor_out *out)
{
    conform_plugin_attr copy[64];
    if (na > 64) return -1;
    memcpy(copy, a, sizeof *a * (size_t)na);
    for (int i = 0; i < na; i++)
        if (!strcmp(copy[i].name, "aligned")) copy[i].i = 0;
    return run_v2(op, na, copy, ni, in, no, out);
}

static const conform_plugin_v2 faulty = {CONFORM_PLUGIN_ABI_V2, "faulty v2 plugin (ignores aligned)", supports_v2, faulty_run};

const conform_plugin *conform_plugin_entry(void) { return (const conform_plugin *)&faulty; }
