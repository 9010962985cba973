/* f32_deform_fwd, AVX2 + FMA: 16 channels per pass, then 8, then a masked tail; streaming stores
 * when out starts a 64-byte line and the channels fill whole lines (as the AVX-512 kernel). */
#include "opt_internal.h"

#include <immintrin.h>
#include <stdint.h>

static const int32_t mask_table[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

void f32_deform_fwd_ukernel__avx2(size_t channels, const float *const *v, const float *w, float *out)
{
    const float *v0 = v[0], *v1 = v[1], *v2 = v[2], *v3 = v[3];
    const __m256 w0 = _mm256_set1_ps(w[0]), w1 = _mm256_set1_ps(w[1]);
    const __m256 w2 = _mm256_set1_ps(w[2]), w3 = _mm256_set1_ps(w[3]);
    size_t j = 0;
    if (!((uintptr_t)out & 63) && !(channels & 15)) {
        for (; j < channels; j += 16) {
            __m256 a = _mm256_mul_ps(w0, _mm256_loadu_ps(v0 + j));
            __m256 b = _mm256_mul_ps(w0, _mm256_loadu_ps(v0 + j + 8));
            a = _mm256_fmadd_ps(w1, _mm256_loadu_ps(v1 + j), a);
            b = _mm256_fmadd_ps(w1, _mm256_loadu_ps(v1 + j + 8), b);
            a = _mm256_fmadd_ps(w2, _mm256_loadu_ps(v2 + j), a);
            b = _mm256_fmadd_ps(w2, _mm256_loadu_ps(v2 + j + 8), b);
            a = _mm256_fmadd_ps(w3, _mm256_loadu_ps(v3 + j), a);
            b = _mm256_fmadd_ps(w3, _mm256_loadu_ps(v3 + j + 8), b);
            _mm256_stream_ps(out + j, a);
            _mm256_stream_ps(out + j + 8, b);
        }
        return;
    }
    for (; j + 16 <= channels; j += 16) {
        __m256 a = _mm256_mul_ps(w0, _mm256_loadu_ps(v0 + j));
        __m256 b = _mm256_mul_ps(w0, _mm256_loadu_ps(v0 + j + 8));
        a = _mm256_fmadd_ps(w1, _mm256_loadu_ps(v1 + j), a);
        b = _mm256_fmadd_ps(w1, _mm256_loadu_ps(v1 + j + 8), b);
        a = _mm256_fmadd_ps(w2, _mm256_loadu_ps(v2 + j), a);
        b = _mm256_fmadd_ps(w2, _mm256_loadu_ps(v2 + j + 8), b);
        a = _mm256_fmadd_ps(w3, _mm256_loadu_ps(v3 + j), a);
        b = _mm256_fmadd_ps(w3, _mm256_loadu_ps(v3 + j + 8), b);
        _mm256_storeu_ps(out + j, a);
        _mm256_storeu_ps(out + j + 8, b);
    }
    for (; j + 8 <= channels; j += 8) {
        __m256 a = _mm256_mul_ps(w0, _mm256_loadu_ps(v0 + j));
        a = _mm256_fmadd_ps(w1, _mm256_loadu_ps(v1 + j), a);
        a = _mm256_fmadd_ps(w2, _mm256_loadu_ps(v2 + j), a);
        a = _mm256_fmadd_ps(w3, _mm256_loadu_ps(v3 + j), a);
        _mm256_storeu_ps(out + j, a);
    }
    if (j < channels) {
        const __m256i m = _mm256_loadu_si256((const __m256i *)(mask_table + 8 - (channels - j)));
        __m256 a = _mm256_mul_ps(w0, _mm256_maskload_ps(v0 + j, m));
        a = _mm256_fmadd_ps(w1, _mm256_maskload_ps(v1 + j, m), a);
        a = _mm256_fmadd_ps(w2, _mm256_maskload_ps(v2 + j, m), a);
        a = _mm256_fmadd_ps(w3, _mm256_maskload_ps(v3 + j, m), a);
        _mm256_maskstore_ps(out + j, m, a);
    }
}
