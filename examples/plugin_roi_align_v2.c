/* An example plugin of ABI version 2 (tensors carry a dtype): the kernel of plugin_roi_align.c
 * at every dtype. make builds it twice:
 *   plugin_roi_align_v2.so      EXAMPLE_REAL=float: float32, float16 and bfloat16. 16-bit data is
 *                               widened to float32, computed in float32 and stored rounded to the
 *                               dtype (to nearest, ties to even), as accelerators commonly do;
 *   plugin_roi_align_v2_f64.so  EXAMPLE_REAL=double: float64.
 * Judge it at a dtype with
 *     build/conform run cases/smoke.json --impl plugin:build/plugins/plugin_roi_align_v2.so --dtype float16 */
#include <stdlib.h>
#include <string.h>

#define CONFORM_EXAMPLE_KERNEL_ONLY
#include "plugin_roi_align.c"

/* ---- 16-bit formats (a plugin links nothing of conform's, so it brings its own) ---- */

static float half_to_float(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    float v = e == 0 ? ldexpf((float)m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexpf((float)(m | 0x400), e - 25);
    return h >> 15 ? -v : v;
}

static uint16_t float_to_half(float f)
{
    uint16_t sign = signbit(f) ? 0x8000 : 0;
    if (isnan(f)) return 0x7e00;
    double a = fabs((double)f);
    if (a == 0) return sign;
    int e = ilogb(a) < -14 ? -14 : ilogb(a);
    double q = ldexp(1.0, e - 10), r = rint(a / q) * q; /* one rounding, ties to even */
    if (r > 65504.0) return sign | 0x7c00;
    if (r < ldexp(1.0, -14)) return sign | (uint16_t)(r * 16777216.0); /* subnormal */
    e = ilogb(r);
    return sign | (uint16_t)((e + 15) << 10) | (uint16_t)(ldexp(r, 10 - e) - 1024.0);
}

static float bf16_to_float(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static uint16_t float_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if (isnan(f)) return 0x7fc0;
    u += 0x7fff + ((u >> 16) & 1); /* round to nearest, ties to even */
    return (uint16_t)(u >> 16);
}

/* ---- tensors in and out of the kernel's type ---- */

static int64_t numel(int rank, const int64_t *dims)
{
    int64_t n = 1;
    for (int d = 0; d < rank; d++) n *= dims[d];
    return n;
}

static real *widen(const conform_tensor_in *t)
{
    int64_t n = numel(t->rank, t->dims);
    real *v = malloc(sizeof(real) * (size_t)(n ? n : 1));
    for (int64_t i = 0; v && i < n; i++) {
        switch (t->dtype) {
        case CONFORM_DTYPE_FLOAT16: v[i] = (real)half_to_float(((const uint16_t *)t->data)[i]); break;
        case CONFORM_DTYPE_BFLOAT16: v[i] = (real)bf16_to_float(((const uint16_t *)t->data)[i]); break;
        case CONFORM_DTYPE_FLOAT64: v[i] = (real)((const double *)t->data)[i]; break;
        default: v[i] = (real)((const float *)t->data)[i]; break;
        }
    }
    return v;
}

static void store(const real *v, conform_tensor_out *t)
{
    int64_t n = numel(t->rank, t->dims);
    for (int64_t i = 0; i < n; i++) {
        switch (t->dtype) {
        case CONFORM_DTYPE_FLOAT16: ((uint16_t *)t->data)[i] = float_to_half((float)v[i]); break;
        case CONFORM_DTYPE_BFLOAT16: ((uint16_t *)t->data)[i] = float_to_bf16((float)v[i]); break;
        case CONFORM_DTYPE_FLOAT64: ((double *)t->data)[i] = (double)v[i]; break;
        default: ((float *)t->data)[i] = (float)v[i]; break;
        }
    }
}

static int supports_v2(const char *op, conform_dtype dtype)
{
    int mine = sizeof(real) == sizeof(double) ? dtype == CONFORM_DTYPE_FLOAT64 : dtype != CONFORM_DTYPE_FLOAT64;
    return mine && (!strcmp(op, "roi_align") || !strcmp(op, "roi_align_v2_backward"));
}

static int run_v2(const char *op, int na, const conform_plugin_attr *a, int ni, const conform_tensor_in *in, int no,
                  conform_tensor_out *out)
{
    params p;
    p.s = (real)attr(na, a, "spatial_scale")->f;
    p.sr = attr(na, a, "sampling_ratio")->i;
    p.aligned = (int)attr(na, a, "aligned")->i;
    p.K = in[1].dims[0];
    int fwd = !strcmp(op, "roi_align");
    if (fwd) {
        p.B = in[0].dims[0]; p.C = in[0].dims[1]; p.H = in[0].dims[2]; p.W = in[0].dims[3];
        p.PH = attr(na, a, "pooled_h")->i;
        p.PW = attr(na, a, "pooled_w")->i;
    } else {
        const conform_plugin_attr *shape = attr(na, a, "input_shape");
        p.B = shape->list[0]; p.C = shape->list[1]; p.H = shape->list[2]; p.W = shape->list[3];
        p.PH = attr(na, a, "pooled_height")->i;
        p.PW = attr(na, a, "pooled_width")->i;
    }
    real *x = widen(&in[0]), *rois = widen(&in[1]);
    int64_t n = numel(out[0].rank, out[0].dims);
    real *y = calloc((size_t)(n ? n : 1), sizeof(real)); /* the backward accumulates into zeros */
    if (!x || !rois || !y) {
        free(x); free(rois); free(y);
        return -2; /* CONFORM_E_NOMEM */
    }
    if (fwd) roi_align(&p, rois, x, y, NULL, NULL);
    else roi_align(&p, rois, NULL, NULL, y, x);
    store(y, &out[0]);
    free(x); free(rois); free(y);
    return 0;
}

#ifndef CONFORM_EXAMPLE_NO_ENTRY /* the test plugins reuse this file with an entry of their own */
static const conform_plugin_v2 plugin_v2 = {CONFORM_PLUGIN_ABI_V2, "example roi_align, ABI 2", supports_v2, run_v2};

const conform_plugin *conform_plugin_entry(void) { return (const conform_plugin *)&plugin_v2; }
#endif
