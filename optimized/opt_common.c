/* Scaffolding shared by the optimized drivers: aligned buffers, size checks, work-unit sizing and
 * adaptive sample counts. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "opt_internal.h"

void *conform_alloc_floats(size_t n)
{
    size_t bytes = (n ? n : 1) * sizeof(float);
    bytes = (bytes + 63) & ~(size_t)63; /* whole cache lines: vector tails never share one */
    return aligned_alloc(64, bytes);
}

int conform_sizes_ok(int64_t a, int64_t b, int64_t cc)
{
    const size_t big = SIZE_MAX / 4 / 64;
    return (size_t)a <= big / (size_t)cc && (size_t)b <= big / (size_t)cc;
}

int64_t conform_pick_chunk(int64_t C, int64_t HW, int64_t batches, int nt, int64_t budget, int64_t forced)
{
    const int64_t c16 = (C + 15) / 16 * 16;
    int64_t cc;
    if (forced > 0) {
        cc = (forced + 15) / 16 * 16;
    } else {
        cc = 16 * (budget / (HW * 64) > 1 ? budget / (HW * 64) : 1);
        if (cc > c16) cc = c16;
        /* enough units to keep every thread busy, when the thread count may shape them */
        while (nt > 0 && cc > 16 && batches * ((C + cc - 1) / cc) < 2 * (int64_t)nt) cc -= 16;
    }
    if (cc > c16) cc = c16;
    if (cc >= C) cc = C;
    return cc;
}

int64_t conform_adaptive_count(float q)
{
    if (!isfinite(q)) return 0;
    if (q > 1e9f) return 1000000000; /* as the reference; the harness refuses larger ones */
    const float c = ceilf(q);
    return c >= 1.0f ? (int64_t)c : 0;
}
