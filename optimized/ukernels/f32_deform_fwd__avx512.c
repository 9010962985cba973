/* f32_deform_fwd, AVX-512: 16 channels per step, masked tail. y is written once and never read
 * back: when out starts a 64-byte line and the channels fill whole lines, streaming stores (no
 * read for ownership of y, the bulk of the op's traffic); the caller fences (stream_fence). */
#include "opt_internal.h"

#include <immintrin.h>
#include <stdint.h>

void f32_deform_fwd_ukernel__avx512(size_t channels, const float *const *v, const float *w, float *out)
{
    const float *v0 = v[0], *v1 = v[1], *v2 = v[2], *v3 = v[3];
    const __m512 w0 = _mm512_set1_ps(w[0]), w1 = _mm512_set1_ps(w[1]);
    const __m512 w2 = _mm512_set1_ps(w[2]), w3 = _mm512_set1_ps(w[3]);
    if (!((uintptr_t)out & 63) && !(channels & 15)) {
        for (size_t j = 0; j < channels; j += 16) {
            __m512 a = _mm512_mul_ps(w0, _mm512_loadu_ps(v0 + j));
            a = _mm512_fmadd_ps(w1, _mm512_loadu_ps(v1 + j), a);
            a = _mm512_fmadd_ps(w2, _mm512_loadu_ps(v2 + j), a);
            a = _mm512_fmadd_ps(w3, _mm512_loadu_ps(v3 + j), a);
            _mm512_stream_ps(out + j, a);
        }
        return;
    }
    for (size_t j = 0; j < channels; j += 16) {
        const size_t n = channels - j < 16 ? channels - j : 16;
        const __mmask16 m = _cvtu32_mask16((uint32_t)((1u << n) - 1u));
        __m512 a = _mm512_mul_ps(w0, _mm512_maskz_loadu_ps(m, v0 + j));
        a = _mm512_fmadd_ps(w1, _mm512_maskz_loadu_ps(m, v1 + j), a);
        a = _mm512_fmadd_ps(w2, _mm512_maskz_loadu_ps(m, v2 + j), a);
        a = _mm512_fmadd_ps(w3, _mm512_maskz_loadu_ps(m, v3 + j), a);
        _mm512_mask_storeu_ps(out + j, m, a);
    }
}
