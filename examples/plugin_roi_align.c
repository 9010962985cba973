/* An example conform plugin: plain float32 roi_align and roi_align_v2_backward, written the way a
 * kernel author would start. Build (make builds it as build/plugins/plugin_roi_align.so):
 *     cc -O2 -fPIC -shared -I<conform>/harness plugin_roi_align.c -o plugin_roi_align.so -lm
 * and judge it:
 *     build/conform run cases/conformance.json --impl plugin:build/plugins/plugin_roi_align.so
 * Every other op is reported "not_implemented". */
#include <math.h>
#include <string.h>

#include "conform_plugin.h"

/* The kernel's arithmetic type: float here; plugin_roi_align_v2.c also builds it in double. */
#ifndef EXAMPLE_REAL
#define EXAMPLE_REAL float
#endif
typedef EXAMPLE_REAL real;

static const conform_plugin_attr *attr(int n, const conform_plugin_attr *a, const char *name)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(a[i].name, name)) return &a[i];
    return NULL;
}

typedef struct {
    int64_t B, C, H, W, K, PH, PW, sr;
    real s;
    int aligned;
    real end_plus;  /* 1 for roi_end_mode 1: the roi ends at (x2 + 1, y2 + 1) */
} params;

/* one sample of the RoIAlign bilinear rule: up to 4 (index, weight) pairs; 0 when empty */
static int bilinear(int64_t H, int64_t W, real y, real x, int64_t idx[4], real w[4])
{
    if (!(y >= -1 && y <= (real)H && x >= -1 && x <= (real)W)) return 0;
    if (y <= 0) y = 0;
    if (x <= 0) x = 0;
    int64_t y0 = (int64_t)y, x0 = (int64_t)x, y1, x1;
    if (y0 >= H - 1) { y0 = y1 = H - 1; y = (real)y0; } else y1 = y0 + 1;
    if (x0 >= W - 1) { x0 = x1 = W - 1; x = (real)x0; } else x1 = x0 + 1;
    real ly = y - (real)y0, lx = x - (real)x0, hy = 1 - ly, hx = 1 - lx;
    idx[0] = y0 * W + x0; w[0] = hy * hx;
    idx[1] = y0 * W + x1; w[1] = hy * lx;
    idx[2] = y1 * W + x0; w[2] = ly * hx;
    idx[3] = y1 * W + x1; w[3] = ly * lx;
    return 4;
}

/* forward (grad == NULL) or backward over all rois */
static void roi_align(const params *p, const real *rois, const real *in, real *out, real *grad_in, const real *grad_out)
{
    real off = p->aligned ? (real)0.5 : 0;
    for (int64_t k = 0; k < p->K; k++) {
        const real *r = rois + 5 * k;
        double bf = floor((double)r[0]);
        int valid = isfinite(bf) && bf >= 0 && bf < (double)p->B;
        int64_t b = valid ? (int64_t)bf : 0;
        real sx = r[1] * p->s - off, sy = r[2] * p->s - off;
        real rw = (r[3] + p->end_plus) * p->s - off - sx, rh = (r[4] + p->end_plus) * p->s - off - sy;
        if (!p->aligned) { if (rw < 1) rw = 1; if (rh < 1) rh = 1; }
        real bh = rh / (real)p->PH, bw = rw / (real)p->PW;
        real qh = (real)ceil(rh / (real)p->PH), qw = (real)ceil(rw / (real)p->PW);
        int64_t gh = p->sr > 0 ? p->sr : (isfinite(qh) && qh > 0 ? (int64_t)qh : 0);
        int64_t gw = p->sr > 0 ? p->sr : (isfinite(qw) && qw > 0 ? (int64_t)qw : 0);
        real count = gh * gw > 1 ? (real)(gh * gw) : 1;
        for (int64_t c = 0; c < p->C; c++)
            for (int64_t ph = 0; ph < p->PH; ph++)
                for (int64_t pw = 0; pw < p->PW; pw++) {
                    int64_t o = ((k * p->C + c) * p->PH + ph) * p->PW + pw;
                    const real *plane = in ? in + (b * p->C + c) * p->H * p->W : NULL;
                    real *gplane = grad_in ? grad_in + (b * p->C + c) * p->H * p->W : NULL;
                    real acc = 0;
                    for (int64_t iy = 0; valid && iy < gh; iy++)
                        for (int64_t ix = 0; ix < gw; ix++) {
                            real y = sy + (real)ph * bh + ((real)iy + (real)0.5) * bh / (real)gh;
                            real x = sx + (real)pw * bw + ((real)ix + (real)0.5) * bw / (real)gw;
                            int64_t idx[4];
                            real w[4];
                            int n = bilinear(p->H, p->W, y, x, idx, w);
                            for (int t = 0; t < n; t++) {
                                if (plane) acc += w[t] * plane[idx[t]];
                                if (gplane) gplane[idx[t]] += grad_out[o] * w[t] / count;
                            }
                        }
                    if (out) out[o] = acc / count;
                }
    }
}

/* The attributes both ops share (the ABI 2 example reuses this). */
static void roi_params_from_attrs(int na, const conform_plugin_attr *a, params *p)
{
    p->s = (real)attr(na, a, "spatial_scale")->f;
    p->sr = attr(na, a, "sampling_ratio")->i;
    p->aligned = (int)attr(na, a, "aligned")->i;
    /* Ascend's roi_end_mode, when given: 0 and 1 unaligned (1 with the end pixel counted in), 2 and 3
       aligned; -1 or absent (an older harness): aligned decides */
    const conform_plugin_attr *mode = attr(na, a, "roi_end_mode");
    if (mode && mode->i >= 0) p->aligned = mode->i >= 2;
    p->end_plus = mode && mode->i == 1 ? (real)1 : 0;
}

#ifndef CONFORM_EXAMPLE_KERNEL_ONLY /* plugin_roi_align_v2.c takes the kernel alone */
static int supports(const char *op)
{
    return !strcmp(op, "roi_align") || !strcmp(op, "roi_align_v2_backward");
}

static int run(const char *op, int na, const conform_plugin_attr *a, int ni, const conform_plugin_input *in, int no,
               conform_plugin_output *out)
{
    (void)ni;
    (void)no;
    params p;
    roi_params_from_attrs(na, a, &p);
    p.K = in[1].dims[0];
    if (!strcmp(op, "roi_align")) {
        p.B = in[0].dims[0]; p.C = in[0].dims[1]; p.H = in[0].dims[2]; p.W = in[0].dims[3];
        p.PH = attr(na, a, "pooled_h")->i;
        p.PW = attr(na, a, "pooled_w")->i;
        roi_align(&p, in[1].data, in[0].data, out[0].data, NULL, NULL);
        return 0;
    }
    const conform_plugin_attr *shape = attr(na, a, "input_shape");
    p.B = shape->list[0]; p.C = shape->list[1]; p.H = shape->list[2]; p.W = shape->list[3];
    p.PH = attr(na, a, "pooled_height")->i;
    p.PW = attr(na, a, "pooled_width")->i;
    memset(out[0].data, 0, sizeof(float) * (size_t)(p.B * p.C * p.H * p.W));
    roi_align(&p, in[1].data, NULL, NULL, out[0].data, in[0].data);
    return 0;
}

#ifndef CONFORM_EXAMPLE_NO_ENTRY /* the test plugins reuse this file with an entry of their own */
static const conform_plugin plugin = {CONFORM_PLUGIN_ABI_V1, "example plain roi_align", supports, run};

const conform_plugin *conform_plugin_entry(void) { return &plugin; }

/* optional: shown in every report's "what ran" */
const char *conform_plugin_version(void) { return "example 1.0 (plain C, ABI 1)"; }
#endif
#endif
