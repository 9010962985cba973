/* Test plugins: the example plugin with one fault each, chosen at build time with -DFAULT=...
 *   WRONG     roi_align_v2_backward off by 1e-3 relative (wrong in one op only)
 *   CRASH     roi_align dies on SIGSEGV, roi_align_v2_backward aborts
 *   HANG      roi_align never returns
 *   OVERFLOW  roi_align writes one element past its output
 *   ABI       declares an ABI version this conform does not speak
 *   SUPPORTS  supports("grid_sampler_2d") dies on SIGSEGV (a call conform makes in its own process)
 *   UNWRITTEN roi_align leaves every element it computes as NaN unwritten (what the buffer held)
 *   SCRIBBLE  roi_align writes into its input, 64 bytes before its first element (const cast away)
 *   OVERREAD  roi_align adds the element just past its input x to its first output element */
#include <signal.h>
#include <stdlib.h>

#define CONFORM_EXAMPLE_NO_ENTRY
#include "../../examples/plugin_roi_align.c"

static int faulty_run(const char *op, int na, const conform_plugin_attr *a, int ni, const conform_plugin_input *in,
                      int no, conform_plugin_output *out)
{
    int fwd = !strcmp(op, "roi_align");
    (void)fwd;
#if FAULT == 1 /* CRASH */
    if (fwd) raise(SIGSEGV);
    else abort();
#elif FAULT == 7 /* SCRIBBLE */
    if (fwd) ((float *)in[0].data)[-16] = 1.0f;
#elif FAULT == 2 /* HANG */
    if (fwd) for (volatile int forever = 1; forever;) {}
#endif
    int64_t n = 1;
    for (int d = 0; d < out[0].rank; d++) n *= out[0].dims[d];
#if FAULT == 6 /* UNWRITTEN: computed aside, then only the numbers copied */
    if (fwd) {
        float *mine = malloc(sizeof(float) * (size_t)(n + 1)), *theirs = out[0].data;
        if (!mine) return 1;
        out[0].data = mine;
        int rc6 = run(op, na, a, ni, in, no, out);
        out[0].data = theirs;
        for (int64_t i = 0; i < n; i++)
            if (mine[i] == mine[i]) theirs[i] = mine[i];
        free(mine);
        return rc6;
    }
#endif
    int rc = run(op, na, a, ni, in, no, out);
#if FAULT == 0 /* WRONG */
    if (!fwd)
        for (int64_t i = 0; i < n; i++) out[0].data[i] *= 1.001f;
#elif FAULT == 3 /* OVERFLOW */
    if (fwd) out[0].data[n] = 0.0f;
#elif FAULT == 8 /* OVERREAD */
    int64_t nx = 1;
    for (int d = 0; d < in[0].rank; d++) nx *= in[0].dims[d];
    if (fwd && n > 0) out[0].data[0] += in[0].data[nx];
#endif
    return rc;
}

#if FAULT == 5 /* SUPPORTS */
static int faulty_supports(const char *op)
{
    if (!strcmp(op, "grid_sampler_2d")) raise(SIGSEGV);
    return supports(op);
}
#define supports faulty_supports
#endif

#if FAULT == 4 /* ABI */
static const conform_plugin faulty = {CONFORM_PLUGIN_ABI_VERSION + 98, "faulty test plugin", supports, faulty_run};
#else
static const conform_plugin faulty = {CONFORM_PLUGIN_ABI_V1, "faulty test plugin", supports, faulty_run};
#endif

const conform_plugin *conform_plugin_entry(void) { return &faulty; }
