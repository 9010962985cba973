/* f32_grid_bilinear_fwd, AVX-512: 16 channels a step, the four taps chained by FMAs; the taps of
 * the point D ahead are asked for (the packed input is read at random, from beyond L2). */
#include "opt_internal.h"

#include <immintrin.h>

void f32_grid_bilinear_fwd_ukernel__avx512(size_t npts, const f32_grid_pt *pts, size_t cs, ptrdiff_t next_row,
                                           const float *in, float *out)
{
    const size_t D = 4;
    for (size_t k = 0; k < npts; k++) {
        const f32_grid_pt pt = pts[k];
        if (k + D < npts) {
            const char *a = (const char *)(in + (ptrdiff_t)cs * pts[k + D].off), *b = a + next_row * (ptrdiff_t)sizeof(float);
            for (size_t o = 0; o < 2 * cs * sizeof(float); o += 64) {
                _mm_prefetch(a + o, _MM_HINT_T0);
                _mm_prefetch(b + o, _MM_HINT_T0);
            }
        }
        float w[4];
        f32_grid_pt_weights(&pt, w);
        const __m512 w0 = _mm512_set1_ps(w[0]), w1 = _mm512_set1_ps(w[1]), w2 = _mm512_set1_ps(w[2]), w3 = _mm512_set1_ps(w[3]);
        const float *v0 = in + (ptrdiff_t)cs * pt.off, *v1 = v0 + cs, *v2 = v0 + next_row, *v3 = v2 + cs;
        float *r = out + cs * (size_t)pt.q;
        for (size_t c = 0; c < cs; c += 16) {
            __m512 a = _mm512_mul_ps(w0, _mm512_loadu_ps(v0 + c));
            a = _mm512_fmadd_ps(w1, _mm512_loadu_ps(v1 + c), a);
            a = _mm512_fmadd_ps(w2, _mm512_loadu_ps(v2 + c), a);
            _mm512_storeu_ps(r + c, _mm512_fmadd_ps(w3, _mm512_loadu_ps(v3 + c), a));
        }
    }
}
