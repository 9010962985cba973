/* f32_grid_bwd, AVX2 + FMA: 8 channels per vector, a masked tail; the grid-gradient partial sums
 * stay in two vector accumulators until one horizontal sum at the end. */
#include "opt_internal.h"

#include <immintrin.h>

static const int32_t mask_table[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

static float hsum(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

void f32_grid_bwd_ukernel__avx2(size_t channels, size_t nr, const int64_t *roff, const float *wy,
                                const float *dwy, size_t nc, const int64_t *coff, const float *wx,
                                const float *dwx, const float *in, const float *g, float *io,
                                float *gxy)
{
    int64_t off[16];
    float w[16], wdx[16], wdy[16];
    size_t nt = 0;
    for (size_t r = 0; r < nr; r++)
        for (size_t c = 0; c < nc; c++, nt++) {
            off[nt] = roff[r] + coff[c];
            w[nt] = wy[r] * wx[c];
            wdx[nt] = wy[r] * dwx[c];
            wdy[nt] = dwy[r] * wx[c];
        }
    __m256 px = _mm256_setzero_ps(), py = _mm256_setzero_ps();
    for (size_t j = 0; j < channels; j += 8) {
        const size_t n = channels - j < 8 ? channels - j : 8;
        const __m256i m = _mm256_loadu_si256((const __m256i *)(mask_table + 8 - n));
        const __m256 gv = _mm256_maskload_ps(g + j, m);
        if (io)
            for (size_t t = 0; t < nt; t++) {
                float *q = io + off[t] + j;
                _mm256_maskstore_ps(q, m, _mm256_fmadd_ps(_mm256_set1_ps(w[t]), gv, _mm256_maskload_ps(q, m)));
            }
        if (gxy) {
            __m256 ax = _mm256_setzero_ps(), ay = _mm256_setzero_ps();
            for (size_t t = 0; t < nt; t++) {
                const __m256 v = _mm256_maskload_ps(in + off[t] + j, m);
                ax = _mm256_fmadd_ps(_mm256_set1_ps(wdx[t]), v, ax);
                ay = _mm256_fmadd_ps(_mm256_set1_ps(wdy[t]), v, ay);
            }
            px = _mm256_fmadd_ps(ax, gv, px);
            py = _mm256_fmadd_ps(ay, gv, py);
        }
    }
    if (gxy) {
        gxy[0] = hsum(px);
        gxy[1] = hsum(py);
    }
}
