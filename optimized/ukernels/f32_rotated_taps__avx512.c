/* f32_rotated_taps, AVX-512: a bin's 16 corners (4 samples x 4) are the 16 lanes, computed with
 * the portable kernel's operations in its order; the merge finds each lane's earlier twins with
 * vpconflictd, adds the twins into their first lane in lane order (the portable kernel's order)
 * with broadcasts and masked adds (a round trip through memory stalled on store forwarding), and
 * stores the first lanes compressed in a register and stored whole (the compressing store to
 * memory is slow on Zen 4; the 16 lanes may pass the taps' end). */
#include "opt_internal.h"

#include <immintrin.h>

size_t f32_rotated_taps_ukernel__avx512(const f32_rotated_roi *g, size_t base, size_t *starts, int32_t *pix, float *w)
{
    const int32_t H = (int32_t)g->H, W = (int32_t)g->W, HW = H * W, ns = g->gh * g->gw;
    const float ghf = (float)g->gh, gwf = (float)g->gw;
    float oy[4], ox[4], lyy[16], lxx[16];
    int32_t dy[16], dx[16];
    for (int32_t iy = 0; iy < g->gh && iy < 4; iy++) oy[iy] = ((float)iy + 0.5f) * g->bin_h / ghf;
    for (int32_t ix = 0; ix < g->gw && ix < 4; ix++) ox[ix] = ((float)ix + 0.5f) * g->bin_w / gwf;
    for (int l = 0; l < 16; l++) { /* lane l: sample l / 4 in (iy, ix) order, corner l % 4 */
        const int32_t sm = l / 4 < ns ? l / 4 : 0;
        lyy[l] = oy[sm / g->gw];
        lxx[l] = ox[sm % g->gw];
        dy[l] = (l & 2) ? -1 : 0;
        dx[l] = (l & 1) ? -1 : 0;
    }
    const __m512 OY = _mm512_loadu_ps(lyy), OX = _mm512_loadu_ps(lxx);
    const __mmask16 DY = _mm512_test_epi32_mask(_mm512_loadu_si512(dy), _mm512_loadu_si512(dy));
    const __mmask16 DX = _mm512_test_epi32_mask(_mm512_loadu_si512(dx), _mm512_loadu_si512(dx));
    const __mmask16 lanes = (__mmask16)((1u << (4 * ns)) - 1u);
    const __m512 c = _mm512_set1_ps(g->cos_t), s = _mm512_set1_ps(g->sin_t), Cy = _mm512_set1_ps(g->Cy),
                 Cx = _mm512_set1_ps(g->Cx), inv = _mm512_set1_ps(g->inv_count);
    const __m512 m1 = _mm512_set1_ps(-1.0f), Hf = _mm512_set1_ps((float)H), Wf = _mm512_set1_ps((float)W);
    const __m512 zero = _mm512_setzero_ps(), one = _mm512_set1_ps(1.0f);
    const __m512i Hm1 = _mm512_set1_epi32(H - 1), Wm1 = _mm512_set1_epi32(W - 1), Wv = _mm512_set1_epi32(W);
    const __m512i HWv = _mm512_set1_epi32(HW), onei = _mm512_set1_epi32(1);
    const __m512i unique = _mm512_set_epi32(-16, -15, -14, -13, -12, -11, -10, -9, -8, -7, -6, -5, -4, -3, -2, -1);
    size_t n = 0;
    for (int32_t ph = 0; ph < g->PH; ph++)
        for (int32_t pw = 0; pw < g->PW; pw++) {
            starts[ph * g->PW + pw] = base + n;
            const __m512 yy = _mm512_add_ps(_mm512_set1_ps(-0.5f * g->Hr + (float)ph * g->bin_h), OY);
            const __m512 xx = _mm512_add_ps(_mm512_set1_ps(-0.5f * g->Wr + (float)pw * g->bin_w), OX);
            __m512 y = _mm512_add_ps(_mm512_sub_ps(_mm512_mul_ps(yy, c), _mm512_mul_ps(xx, s)), Cy);
            __m512 x = _mm512_add_ps(_mm512_add_ps(_mm512_mul_ps(yy, s), _mm512_mul_ps(xx, c)), Cx);
            const __mmask16 in = lanes & _mm512_cmp_ps_mask(y, m1, _CMP_GE_OQ) & _mm512_cmp_ps_mask(y, Hf, _CMP_LE_OQ) &
                                 _mm512_cmp_ps_mask(x, m1, _CMP_GE_OQ) & _mm512_cmp_ps_mask(x, Wf, _CMP_LE_OQ);
            if (!in) continue;
            y = _mm512_mask_mov_ps(y, _mm512_cmp_ps_mask(y, zero, _CMP_LE_OQ), zero);
            x = _mm512_mask_mov_ps(x, _mm512_cmp_ps_mask(x, zero, _CMP_LE_OQ), zero);
            y = _mm512_maskz_mov_ps(in, y); /* lanes out: anything finite */
            x = _mm512_maskz_mov_ps(in, x);
            __m512i y0 = _mm512_cvttps_epi32(y), x0 = _mm512_cvttps_epi32(x);
            const __mmask16 ye = _mm512_cmpge_epi32_mask(y0, Hm1), xe = _mm512_cmpge_epi32_mask(x0, Wm1);
            y0 = _mm512_mask_mov_epi32(y0, ye, Hm1);
            x0 = _mm512_mask_mov_epi32(x0, xe, Wm1);
            const __m512i y1 = _mm512_mask_mov_epi32(_mm512_add_epi32(y0, onei), ye, Hm1);
            const __m512i x1 = _mm512_mask_mov_epi32(_mm512_add_epi32(x0, onei), xe, Wm1);
            const __m512 y0f = _mm512_cvtepi32_ps(y0), x0f = _mm512_cvtepi32_ps(x0);
            y = _mm512_mask_mov_ps(y, ye, y0f);
            x = _mm512_mask_mov_ps(x, xe, x0f);
            const __m512 ly = _mm512_sub_ps(y, y0f), lx = _mm512_sub_ps(x, x0f);
            const __m512 wy = _mm512_mask_mov_ps(_mm512_sub_ps(one, ly), DY, ly);
            const __m512 wx = _mm512_mask_mov_ps(_mm512_sub_ps(one, lx), DX, lx);
            const __m512 wv = _mm512_mul_ps(_mm512_mul_ps(wy, wx), inv);
            const __m512i p = _mm512_add_epi32(_mm512_mullo_epi32(_mm512_mask_mov_epi32(y0, DY, y1), Wv),
                                               _mm512_mask_mov_epi32(x0, DX, x1));
            /* weight 0: its own class; lanes out: keys no other lane has */
            __m512i key = _mm512_mask_add_epi32(p, _mm512_cmp_ps_mask(wv, zero, _CMP_EQ_OQ), p, HWv);
            key = _mm512_mask_mov_epi32(unique, in, key);
            const __m512i conf = _mm512_conflict_epi32(key);
            const __mmask16 first = in & _mm512_testn_epi32_mask(conf, conf);
            const __mmask16 dup = in & (__mmask16)~first;
            /* each twin, in lane order, added into its first lane: the portable kernel's order */
            __m512 ws = wv;
            for (unsigned m = dup; m; m &= m - 1) {
                const __m512i j = _mm512_set1_epi32(__builtin_ctz(m));
                const __mmask16 to = first & _mm512_cmpeq_epi32_mask(key, _mm512_permutexvar_epi32(j, key));
                ws = _mm512_mask_add_ps(ws, to, ws, _mm512_permutexvar_ps(j, wv));
            }
            _mm512_storeu_ps(w + n, _mm512_maskz_compress_ps(first, ws));
            _mm512_storeu_si512(pix + n, _mm512_maskz_compress_epi32(first, p));
            n += (size_t)__builtin_popcount((unsigned)first);
        }
    starts[g->PH * g->PW] = base + n;
    return n;
}
