/* roi_align_rotated forward / backward drivers: per-roi sample tables, threading and dispatch to
 * the per-ISA microkernels.
 *
 * Algorithm. A rotated bin is not separable (y and x both depend on both roi axes), so per roi the
 * drivers build once per call (the threads share the tables) a tap list per bin: the distinct
 * pixels the bin's samples touch with their summed weights, 1/count folded in. cos/sin are
 * computed once per roi, the sample positions in float32 exactly in the spec's order:
 *   yy = (-Hr/2 + ph*bin_h) + ((iy + 0.5f) * bin_h) / gh ;  y = (yy*cos - xx*sin) + Cy.
 * A corner weight that is exactly 0 gets its own tap and is never merged into a positive one, so
 * an infinite pixel read with weight 0 gives NaN exactly as the plain rule's 0 * Inf does.
 * A bin is then one f32_bilerp_bin_fwd call with one row of weight 1 and the taps as columns (the
 * rule-A microkernels compute a general weighted tap sum; 1 * w is exact): each tap one
 * multiply-add of a contiguous channel vector of a channels-last plane.
 *
 * Layouts. NHWC features are channels-last already: the taps address the caller's tensor (pixel
 * stride C) and each bin writes its channel vector straight into y [K, PH, PW, C]. NCHW features
 * are transposed per work unit into a thread-private [H*W][cc] plane and each roi's [PH*PW][n]
 * tile is transposed back into y [K, C, PH, PW], as in roi_align. The tap order, the weights and
 * the per-channel arithmetic are the same in both layouts: the results are bitwise identical up
 * to the permutation. The backward scatters into a private [H*W][cc] plane in both layouts.
 *
 * Work units are (batch b, chunk of cc channels); the NHWC forward, which needs no plane, uses groups
 * of 8 batch-sorted rois over all channels instead. Backward is the mirror image: each unit owns
 * the y_grad slice of (b, chunk): it scatters into a zeroed private plane and transposes (NCHW)
 * or copies (NHWC) it back once. Every output element is computed by
 * one thread in a fixed order (roi, bin, tap): identical for any thread count and chunking, no
 * atomics. */
#include "opt_internal.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

int64_t conform_opt_roi_align_rotated_chunk = 0;


/* the single row of every tap-list call: offset 0, weight 1 */
static const int64_t row_off[1] = {0};
static const float row_w[1] = {1.0f};

/* ---- per-roi geometry ------------------------------------------------------------------- */

typedef struct {
    int64_t b; /* -1: roi skipped */
    float Cy, Cx, Hr, Wr, bin_h, bin_w, cos_t, sin_t;
    int64_t gh, gw; /* samples per bin per axis; 0 on either axis: the roi samples nothing */
    float inv_count;
} roi_geom;

static float roi_field(const f32_roi_align_rotated_params *p, const float *rois, int64_t k, int f)
{
    return p->nhwc ? rois[(int64_t)f * p->K + k] : rois[6 * k + f];
}

static roi_geom roi_geometry(const f32_roi_align_rotated_params *p, const float *rois, int64_t k)
{
    roi_geom g;
    memset(&g, 0, sizeof g);
    g.b = -1;
    const double bf = floor((double)roi_field(p, rois, k, 0));
    if (!(isfinite(bf) && bf >= 0.0 && bf < (double)p->B)) return g;
    g.b = (int64_t)bf;
    const float s = p->spatial_scale, off = p->aligned ? 0.5f : 0.0f;
    g.Cx = roi_field(p, rois, k, 1) * s - off;
    g.Cy = roi_field(p, rois, k, 2) * s - off;
    g.Wr = roi_field(p, rois, k, 3) * s;
    g.Hr = roi_field(p, rois, k, 4) * s;
    if (!p->aligned) { /* max(r, 1) keeping NaN, as the reference */
        if (g.Wr < 1.0f) g.Wr = 1.0f;
        if (g.Hr < 1.0f) g.Hr = 1.0f;
    }
    const float a = roi_field(p, rois, k, 5), theta = p->clockwise ? -a : a;
    g.cos_t = (float)cos((double)theta); /* once per roi; correctly rounded but for rare ties */
    g.sin_t = (float)sin((double)theta);
    g.bin_h = g.Hr / (float)p->pooled_h;
    g.bin_w = g.Wr / (float)p->pooled_w;
    const int adaptive = p->sampling_ratio <= 0;
    g.gh = adaptive ? conform_adaptive_count(g.Hr / (float)p->pooled_h) : p->sampling_ratio;
    g.gw = adaptive ? conform_adaptive_count(g.Wr / (float)p->pooled_w) : p->sampling_ratio;
    g.inv_count = (g.gh > 0 && g.gw > 0) ? 1.0f / (float)((double)g.gh * (double)g.gw) : 1.0f;
    return g;
}

/* ---- per-roi tap tables, built once per call --------------------------------------------- */

/* Each thread appends the tables of the rois it builds to its own arena. The taps of bin i of roi
 * k are off / w [starts[ref[k].s + i], starts[ref[k].s + i + 1]) of arena[ref[k].a];
 * ref[k].a < 0: the roi samples nothing. */
typedef conform_tap_arena arena;

/* Per-thread dedupe of the taps of one bin: stamp[pix] == serial means pixel pix already has a
 * tap in the current bin, at slot[pix] (pos: merged positive weights; zero: a weight-0 tap). */
typedef struct {
    int64_t *stamp_pos, *stamp_zero, *slot;
    int64_t serial;
    int32_t *pix; /* [16 PH PW + 16]: the few-sample kernel's pixel indices */
} dedupe;

static inline void tap_add(arena *a, dedupe *d, int64_t pix, int64_t stride, float w)
{
    if (w == 0.0f) {
        if (d->stamp_zero[pix] == d->serial) return;
        d->stamp_zero[pix] = d->serial;
    } else if (d->stamp_pos[pix] == d->serial) {
        a->w[d->slot[pix]] += w;
        return;
    } else {
        d->stamp_pos[pix] = d->serial;
        d->slot[pix] = (int64_t)a->n;
    }
    a->off[a->n] = pix * stride;
    a->w[a->n] = w;
    a->n++;
}

/* Builds the PH*PW tap lists of one roi into arena a (pixel stride of the planes: stride).
 * Returns 0 or -1 (no memory). */
static int roi_build(arena *a, dedupe *d, const conform_ukernels *kn, const roi_geom *g, int64_t PH, int64_t PW,
                     int64_t H, int64_t W, int64_t stride, size_t *s_out)
{
    const size_t P = (size_t)(PH * PW);
    if (conform_arena_reserve(a, 0, P + 1)) return -1;
    *s_out = a->ns;
    const f32_rotated_roi r = {g->Cy, g->Cx, g->Hr, g->Wr, g->bin_h, g->bin_w, g->cos_t, g->sin_t, g->inv_count,
                               (int32_t)g->gh, (int32_t)g->gw, (int32_t)PH, (int32_t)PW, H, W};
    if (g->gh * g->gw <= 4 && d->pix) { /* at most 16 corners a bin: one vector, merged in registers */
        if (conform_arena_reserve(a, 16 * P + 16, 0)) return -1;
        const size_t n = kn->rotated_taps(&r, a->n, a->starts + a->ns, d->pix, a->w + a->n);
        for (size_t i = 0; i < n; i++) a->off[a->n + i] = (int64_t)d->pix[i] * stride;
        a->n += n;
        a->ns += P + 1;
        return 0;
    }
    if (!d->stamp_pos) { /* the per-pixel dedupe, made the first time a bin has more samples */
        const size_t hw = (size_t)(H * W > 0 ? H * W : 1);
        d->stamp_pos = calloc(hw, sizeof(int64_t));
        d->stamp_zero = calloc(hw, sizeof(int64_t));
        d->slot = malloc(hw * sizeof(int64_t));
        if (!d->stamp_pos || !d->stamp_zero || !d->slot) return -1;
    }
    size_t *starts = NULL;
    const float ghf = (float)g->gh, gwf = (float)g->gw;
    /* the in-bin sample offsets depend on iy / ix only: computed once per roi (the same float
       operations, so the same values), which takes the divisions out of the sample loop */
    enum { NOFF = 64 };
    float oy[NOFF], ox[NOFF];
    const int tab = g->gh <= NOFF && g->gw <= NOFF;
    if (tab) {
        for (int64_t iy = 0; iy < g->gh; iy++) oy[iy] = ((float)iy + 0.5f) * g->bin_h / ghf;
        for (int64_t ix = 0; ix < g->gw; ix++) ox[ix] = ((float)ix + 0.5f) * g->bin_w / gwf;
    }
    for (int64_t ph = 0; ph < PH; ph++)
        for (int64_t pw = 0; pw < PW; pw++) {
            a->starts[a->ns + (size_t)(ph * PW + pw)] = a->n;
            d->serial++;
            const float by = -0.5f * g->Hr + (float)ph * g->bin_h, bx = -0.5f * g->Wr + (float)pw * g->bin_w;
            for (int64_t iy = 0; iy < g->gh; iy++) {
                const float yy = by + (tab ? oy[iy] : ((float)iy + 0.5f) * g->bin_h / ghf);
                if (conform_arena_reserve(a, 4 * (size_t)g->gw, 0)) return -1;
                for (int64_t ix = 0; ix < g->gw; ix++) {
                    const float xx = bx + (tab ? ox[ix] : ((float)ix + 0.5f) * g->bin_w / gwf);
                    int64_t cp[4];
                    float cw[4];
                    if (!f32_rotated_corners(yy, xx, &r, cp, cw)) continue;
                    for (int t = 0; t < 4; t++) tap_add(a, d, cp[t], stride, cw[t]);
                }
            }
        }
    starts = a->starts + a->ns;
    starts[P] = a->n;
    a->ns += P + 1;
    return 0;
}

/* ---- shared driver scaffolding ---------------------------------------------------------- */

typedef struct {
    const f32_roi_align_rotated_params *p;
    const float *rois;
    conform_ukernels kn;
    conform_roi_call r; /* dimensions, batch order, arenas, tables, chunking, failure */
    roi_geom *geo;
    int64_t stride;          /* pixel stride of the planes the taps address: cc (NCHW) or C (NHWC) */
} call_ctx;

typedef struct {
    float *plane; /* NCHW only: [H*W][cc] channels-last slice */
    float *tile;  /* NCHW only: [PH*PW][cc] */
    float *out;   /* NCHW only: [cc][PH*PW], the tile transposed before its streaming copy */
    dedupe d;
} thread_ws;

static void ws_free(thread_ws *w)
{
    conform_scratch_free(w->plane);
    conform_scratch_free(w->tile);
    conform_scratch_free(w->out);
    free(w->d.stamp_pos);
    free(w->d.stamp_zero);
    free(w->d.slot);
    free(w->d.pix);
}

static void ctx_free(call_ctx *x)
{
    conform_roi_call_free(&x->r);
    free(x->geo);
}

/* Geometry, batch sort, buffers; sample == 0: nothing can be sampled (every roi is skipped).
 * Returns CONFORM_OK or CONFORM_E_NOMEM (then x is freed). */
static int ctx_init(call_ctx *x, const f32_roi_align_rotated_params *p, const float *rois,
                    const conform_exec *ex, conform_isa isa, int sample)
{
    memset(x, 0, sizeof *x);
    x->p = p;
    x->rois = rois;
    x->kn = *conform_ukernels_for(isa);
    if (conform_roi_call_init(&x->r, p->B, p->C, p->H, p->W, p->K, p->pooled_h, p->pooled_w, ex))
        return CONFORM_E_NOMEM;
    x->geo = malloc((size_t)(x->r.K > 0 ? x->r.K : 1) * sizeof *x->geo);
    if (!x->geo) {
        ctx_free(x);
        return CONFORM_E_NOMEM;
    }
    for (int64_t k = 0; k < x->r.K; k++) {
        x->geo[k] = roi_geometry(p, rois, k);
        if (!sample) x->geo[k].b = -1;
    }
    conform_sort_by_batch(x->r.K, x->r.B, &x->geo[0].b, sizeof x->geo[0], x->r.order, x->r.bstart);
    return CONFORM_OK;
}

/* Inside the parallel region: every thread allocates its workspace, then the per-roi tables are
 * built (worksharing over rois). */
static void ctx_prepare(call_ctx *x, thread_ws *ws, int private_plane, int out_tile)
{
    int mine = 0;
    memset(ws, 0, sizeof *ws);
    const int tid = omp_get_thread_num();
    if (private_plane) {
        ws->plane = conform_alloc_floats((size_t)x->r.HW * (size_t)x->r.cc);
        ws->tile = conform_alloc_floats((size_t)x->r.P * (size_t)x->r.cc);
        ws->out = out_tile ? conform_alloc_floats((size_t)x->r.P * (size_t)x->r.cc) : NULL;
        if (!ws->plane || !ws->tile || (out_tile && !ws->out)) mine = 1;
    }
    /* the few-sample kernel's pixel indices and merge keys (pixel + H W) fit int32 */
    if (x->r.HW > 0 && x->r.HW < INT32_MAX / 2 && x->r.P > 0 && x->r.P <= INT32_MAX / 16)
        ws->d.pix = malloc(((size_t)x->r.P * 16 + 16) * sizeof(int32_t));
    if (tid >= x->r.nt) mine = 1;
    if (mine) conform_roi_call_fail(&x->r);
    /* a contiguous block of rois per thread, its arena reserved once for the block's upper bound
       (4 taps per sample): growing it by doubling copied it and faulted in fresh pages per step.
       The bound only reserves address space; pages are touched as taps are written. */
    const int64_t team = omp_get_num_threads(); /* may be fewer than nt: every roi in some block */
    const int64_t per = (x->r.K + team - 1) / team, lo = tid * per < x->r.K ? tid * per : x->r.K,
                  hi = lo + per < x->r.K ? lo + per : x->r.K;
    if (!mine) {
        double taps = 0, starts = 0;
        for (int64_t k = lo; k < hi; k++) {
            const roi_geom *g = &x->geo[k];
            if (g->b < 0 || g->gh <= 0 || g->gw <= 0) continue;
            taps += 4.0 * (double)x->r.P * (double)g->gh * (double)g->gw;
            starts += (double)x->r.P + 1.0;
        }
        const double cap = (double)(1 << 22);
        if (conform_arena_reserve(&x->r.arenas[tid], (size_t)(taps < cap ? taps : cap),
                                  (size_t)(starts < cap ? starts : cap))) {
            mine = 1;
            conform_roi_call_fail(&x->r);
        }
    }
    for (int64_t k = lo; k < hi; k++) {
        const roi_geom *g = &x->geo[k];
        if (mine || g->b < 0 || g->gh <= 0 || g->gw <= 0) continue;
        if (roi_build(&x->r.arenas[tid], &ws->d, &x->kn, g, x->r.PH, x->r.PW, x->r.H, x->r.W, x->stride,
                      &x->r.ref[k].s)) {
            mine = 1;
            conform_roi_call_fail(&x->r);
            continue;
        }
        x->r.ref[k].a = tid;
    }
#pragma omp barrier
    /* every table is visible to every thread below */
}

/* ---- forward ---------------------------------------------------------------------------- */

int f32_roi_align_rotated_fwd(const f32_roi_align_rotated_params *p, const float *x_in, const float *rois,
                              float *y, const conform_exec *ex)
{
    conform_isa isa;
    if (conform_opt_resolve_isa(ex, &isa) != CONFORM_OK) return CONFORM_E_ISA;
    if (p->K <= 0 || p->C <= 0 || p->pooled_h <= 0 || p->pooled_w <= 0) return CONFORM_OK;
    call_ctx x;
    if (ctx_init(&x, p, rois, ex, isa, p->H > 0 && p->W > 0)) return CONFORM_E_NOMEM;
    const int64_t C = x.r.C, P = x.r.P, HW = x.r.HW;
    const int nhwc = p->nhwc;
    /* units: (non-empty batch, channel chunk) */
    int64_t nb = 0;
    for (int64_t b = 0; b < x.r.B; b++) nb += x.r.bstart[b + 1] > x.r.bstart[b];
    int64_t *batches = malloc((size_t)(nb > 0 ? nb : 1) * sizeof *batches);
    if (!batches) {
        ctx_free(&x);
        return CONFORM_E_NOMEM;
    }
    nb = 0;
    for (int64_t b = 0; b < x.r.B; b++)
        if (x.r.bstart[b + 1] > x.r.bstart[b]) batches[nb++] = b;
    /* NHWC reads the caller's tensor in place: no plane to amortize, so a unit is a group of
       consecutive rois (batch-sorted, neighbours share cached pixels) over all channels. A
       channel chunk of a 1 KiB-strided plane used only a quarter of the cache sets and split
       each bin into C/cc short passes. */
    x.r.cc = nhwc     ? C
             : nb > 0 ? conform_pick_chunk(C, HW, nb, x.r.nt, 1 << 20, conform_opt_roi_align_rotated_chunk)
                      : 1;
    x.r.nchunks = (C + x.r.cc - 1) / x.r.cc;
    x.stride = nhwc ? C : x.r.cc;
    const int64_t nk = x.r.bstart[x.r.B], group = 8;
    const int64_t units = nhwc ? (nk + group - 1) / group : nb * x.r.nchunks, cc = x.r.cc;
    if (nb > 0 && !conform_sizes_ok(HW, P, nhwc ? C : cc)) {
        free(batches);
        ctx_free(&x);
        return CONFORM_E_NOMEM;
    }
    const size_t out_roi = (size_t)C * (size_t)P;

#pragma omp parallel num_threads(x.r.nt)
    {
        thread_ws ws;
        int64_t units_run = units;
        ctx_prepare(&x, &ws, !nhwc && nb > 0, !nhwc && nb > 0);
        /* after ctx_prepare's barrier err is final and the same for every thread: on failure
           nothing is written */
        int failed;
#pragma omp atomic read
        failed = x.r.err;
        if (failed) units_run = 0;
        /* rois without samples (skipped, empty plane, no sample count) output zeros */
#pragma omp for schedule(dynamic, 8) nowait
        for (int64_t k = 0; k < (failed ? 0 : x.r.K); k++)
            if (x.r.ref[k].a < 0) memset(y + (size_t)k * out_roi, 0, out_roi * sizeof(float));

#pragma omp for schedule(dynamic, 1)
        for (int64_t u = 0; u < units_run; u++) {
            if (nhwc) {
                for (int64_t i = u * group; i < nk && i < (u + 1) * group; i++) {
                    const int64_t k = x.r.order[i];
                    if (x.r.ref[k].a < 0) continue; /* zeroed above */
                    const arena *a = &x.r.arenas[x.r.ref[k].a];
                    const size_t *st = a->starts + x.r.ref[k].s;
                    const float *plane = x_in + (size_t)x.geo[k].b * HW * C;
                    for (int64_t q = 0; q < P; q++)
                        x.kn.bilerp_bin_fwd((size_t)C, 1, row_off, row_w, st[q + 1] - st[q], a->off + st[q], a->w + st[q],
                                        plane, y + ((size_t)k * P + q) * C);
                }
                continue;
            }
            /* batch-minor order: concurrent units work on different rois when B > 1 */
            const int64_t b = batches[u % nb], c0 = (u / nb) * cc;
            const int64_t n = C - c0 < cc ? C - c0 : cc;
            const float *plane = x_in + (size_t)b * HW * C + c0;
            if (!nhwc) {
                x.kn.transpose((size_t)n, (size_t)HW, x_in + ((size_t)b * C + c0) * HW, (size_t)HW, ws.plane,
                               (size_t)cc);
                plane = ws.plane;
            }
            for (int64_t i = x.r.bstart[b]; i < x.r.bstart[b + 1]; i++) {
                const int64_t k = x.r.order[i];
                if (x.r.ref[k].a < 0) continue; /* zeroed above */
                const arena *a = &x.r.arenas[x.r.ref[k].a];
                const size_t *st = a->starts + x.r.ref[k].s;
                for (int64_t q = 0; q < P; q++) {
                    float *dst = nhwc ? y + ((size_t)k * P + q) * C + c0 : ws.tile + (size_t)q * cc;
                    x.kn.bilerp_bin_fwd((size_t)n, 1, row_off, row_w, st[q + 1] - st[q], a->off + st[q], a->w + st[q],
                                    plane, dst);
                }
                if (!nhwc) {
                    /* y's block of this roi and chunk is n*P contiguous floats: transposed in cache,
                       then streamed out whole (the unaligned P-float rows of a direct transpose
                       paid a read for ownership of every y line) */
                    x.kn.transpose((size_t)P, (size_t)n, ws.tile, (size_t)cc, ws.out, (size_t)P);
                    x.kn.copy_rows_stream(1, (size_t)(n * P), ws.out, 0, y + (size_t)k * out_roi + (size_t)c0 * P, 0);
                }
            }
        }
        ws_free(&ws);
    }
    free(batches);
    const int err = x.r.err;
    ctx_free(&x);
    return err ? CONFORM_E_NOMEM : CONFORM_OK;
}

/* ---- backward --------------------------------------------------------------------------- */

int f32_roi_align_rotated_bwd(const f32_roi_align_rotated_params *p, const float *x_grad, const float *rois,
                              float *y_grad, const conform_exec *ex)
{
    conform_isa isa;
    if (conform_opt_resolve_isa(ex, &isa) != CONFORM_OK) return CONFORM_E_ISA;
    if (p->B <= 0 || p->C <= 0 || p->H <= 0 || p->W <= 0) return CONFORM_OK; /* no elements */
    call_ctx x;
    if (ctx_init(&x, p, rois, ex, isa, p->K > 0 && p->pooled_h > 0 && p->pooled_w > 0)) return CONFORM_E_NOMEM;
    const int64_t C = x.r.C, P = x.r.P, HW = x.r.HW;
    const int nhwc = p->nhwc;
    x.r.cc = conform_pick_chunk(C, HW, x.r.B, x.r.nt, 2 << 20, conform_opt_roi_align_rotated_chunk);
    x.r.nchunks = (C + x.r.cc - 1) / x.r.cc;
    x.stride = x.r.cc; /* both layouts scatter into a private plane (see the unit loop) */
    const int64_t units = x.r.B * x.r.nchunks, cc = x.r.cc;
    if (!conform_sizes_ok(HW, P > 0 ? P : 1, cc)) {
        ctx_free(&x);
        return CONFORM_E_NOMEM;
    }

#pragma omp parallel num_threads(x.r.nt)
    {
        thread_ws ws;
        int64_t units_run = units;
        ctx_prepare(&x, &ws, 1, 0);
        int failed;
#pragma omp atomic read
        failed = x.r.err;
        if (failed) units_run = 0;
#pragma omp for schedule(dynamic, 1)
        for (int64_t u = 0; u < units_run; u++) {
            const int64_t b = u / x.r.nchunks, c0 = (u % x.r.nchunks) * cc;
            const int64_t n = C - c0 < cc ? C - c0 : cc;
            int any = 0;
            for (int64_t i = x.r.bstart[b]; i < x.r.bstart[b + 1] && !any; i++) any = x.r.ref[x.r.order[i]].a >= 0;
            /* the slice this unit owns: NCHW [n][HW] contiguous, NHWC HW pixels of n channels */
            float *dst = nhwc ? y_grad + (size_t)b * HW * C + c0 : y_grad + ((size_t)b * C + c0) * HW;
            if (!any) {
                if (nhwc)
                    for (int64_t r = 0; r < HW; r++) memset(dst + (size_t)r * C, 0, (size_t)n * sizeof(float));
                else
                    memset(dst, 0, (size_t)n * HW * sizeof(float));
                continue;
            }
            /* a private plane even for NHWC: scattering straight into y_grad (pixel stride C, 1 KiB
               at C = 256) hits 4K aliasing between taps 4 pixels apart and ran ~2.5x slower */
            for (int64_t r = 0; r < HW; r++) memset(ws.plane + (size_t)r * cc, 0, (size_t)n * sizeof(float));
            float *io = ws.plane;
            for (int64_t i = x.r.bstart[b]; i < x.r.bstart[b + 1]; i++) {
                const int64_t k = x.r.order[i];
                if (x.r.ref[k].a < 0) continue;
                const arena *a = &x.r.arenas[x.r.ref[k].a];
                const size_t *st = a->starts + x.r.ref[k].s;
                /* the roi's gradient rows go through the tile in both layouts: read straight from
                   x_grad (NHWC) every bin started with a cache miss its stores waited for */
                if (!nhwc)
                    x.kn.transpose((size_t)n, (size_t)P, x_grad + ((size_t)k * C + c0) * P, (size_t)P, ws.tile,
                                   (size_t)cc);
                else
                    for (int64_t q = 0; q < P; q++)
                        memcpy(ws.tile + (size_t)q * cc, x_grad + ((size_t)k * P + q) * C + c0,
                               (size_t)n * sizeof(float));
                /* the next roi's gradient rows, asked for a share per bin while this one scatters */
                const char *nx = NULL;
                size_t nx_lines = 0, nx_done = 0;
                if (i + 1 < x.r.bstart[b + 1]) {
                    const int64_t k2 = x.r.order[i + 1];
                    nx = (const char *)(nhwc ? x_grad + (size_t)k2 * P * C + c0 : x_grad + ((size_t)k2 * C + c0) * P);
                    nx_lines = nhwc ? (size_t)P : ((size_t)n * P * sizeof(float) + 63) / 64;
                }
                for (int64_t q = 0; q < P; q++) {
                    for (size_t e = nx_lines * (size_t)(q + 1) / (size_t)P; nx_done < e; nx_done++) {
                        if (nhwc) /* row nx_done: n channels of pixel nx_done */
                            for (size_t o = 0; o < (size_t)n * sizeof(float); o += 64)
                                __builtin_prefetch(nx + nx_done * C * sizeof(float) + o, 0, 3);
                        else
                            __builtin_prefetch(nx + 64 * nx_done, 0, 3);
                    }
                    const size_t nt = st[q + 1] - st[q];
                    if (!nt) continue;
                    const float *g = ws.tile + (size_t)q * cc;
                    x.kn.bilerp_bin_bwd((size_t)n, 1, row_off, row_w, nt, a->off + st[q], a->w + st[q], g, io);
                }
            }
            if (!nhwc) /* streaming: y_grad's slice is written once, its read for ownership skipped */
                x.kn.transpose_stream((size_t)HW, (size_t)n, ws.plane, (size_t)cc, dst, (size_t)HW);
            else /* streaming: y_grad is not read back here, and skipping its read for ownership
                    saves a third of this copy's memory traffic */
                x.kn.copy_rows_stream((size_t)HW, (size_t)n, ws.plane, (size_t)cc, dst, (size_t)C);
        }
        ws_free(&ws);
    }
    const int err = x.r.err;
    ctx_free(&x);
    return err ? CONFORM_E_NOMEM : CONFORM_OK;
}
