/* roi_align forward / backward drivers: parameter handling, per-roi sample tables, threading and
 * dispatch to the per-ISA microkernels.
 *
 * Algorithm. Rule A is separable: a sample's validity is valid(y) && valid(x) and its corner
 * weights are products of a y factor and an x factor, so a bin's weight on pixel (r, c) is
 * Wy[ph][r] * Wx[pw][c] with Wy[ph][r] = (1/count) * sum of the y factors landing on row r over the
 * bin's valid y samples (likewise Wx). Per roi the drivers build once per call
 * (the threads share the tables), for every ph the list of
 * distinct rows with their summed weights (1/count folded in) and for every pw the list of
 * distinct columns: a bin then is nr x nc taps (typically 2..4 x 2..4 instead of gh*gw*4), each
 * one multiply-add of a contiguous channel vector in a channels-last plane.
 * Sample positions are computed in float32 exactly in the spec's order:
 *   y = (sy + ph*bin_h) + ((iy + 0.5f) * bin_h) / gh.
 * Zero weights are kept as taps of their own (so a non-finite input propagates like the plain rule
 * does: 0 * inf is NaN, which a zero merged into a nonzero weight would lose).
 *
 * Work units are (batch b, chunk of cc channels; cc a multiple of 16 unless C is smaller, picked
 * so the plane is about L2-sized: 64 forward / 128 backward at 64x64). The unit transposes its
 * [n][H*W] slice of the NCHW input into a thread-private [H*W][cc] plane, then runs every roi of
 * batch b on it, writing each roi's [PH*PW][n] tile back as [n][PH*PW] into the output.
 * Backward is the mirror image: zeroed private plane, scatter-add of every roi of batch b in roi
 * order, one transpose back into grad_input (written exactly once, no atomics). A roi is
 * scattered a pooled row at a time: each column the row's bins touch first sums its bins'
 * gradients (weighted by their column weights) in registers, then takes one read-modify-write
 * per row of the bin row (before: one per bin and tap, about 1.8 times as many at the bench
 * shape, and the stores bounded the kernel). Each output element is therefore computed by one
 * thread with a fixed summation order (roi, pooled row, column, row), identical for any thread
 * count and any chunking. */
#include "opt_internal.h"

#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

int64_t conform_opt_roi_align_chunk = 0;


/* ---- per-roi geometry ------------------------------------------------------------------- */

typedef struct {
    int64_t b;          /* -1: roi skipped */
    float sy, sx, bin_h, bin_w;
    int64_t gh, gw;     /* samples per bin per axis; 0 on either axis: the roi samples nothing */
    float inv_count;
} roi_geom;

static roi_geom roi_geometry(const f32_roi_align_params *p, const float *roi)
{
    roi_geom g;
    memset(&g, 0, sizeof g);
    g.b = -1;
    const double bf = floor((double)roi[0]);
    if (!(isfinite(bf) && bf >= 0.0 && bf < (double)p->B)) return g;
    g.b = (int64_t)bf;
    const float s = p->spatial_scale, off = p->aligned ? 0.5f : 0.0f;
    g.sx = roi[1] * s - off;
    g.sy = roi[2] * s - off;
    /* roi_end_mode 1: add the end pixel before scaling, as the Ascend ROIAlign kernel does */
    const float x2 = p->end_plus_one ? roi[3] + 1.0f : roi[3], y2 = p->end_plus_one ? roi[4] + 1.0f : roi[4];
    const float ex = x2 * s - off, ey = y2 * s - off;
    float rw = ex - g.sx, rh = ey - g.sy;
    if (!p->aligned) {
        /* max(r, 1) keeping NaN (torchvision's std::max order): a NaN extent samples nothing */
        if (rw < 1.0f) rw = 1.0f;
        if (rh < 1.0f) rh = 1.0f;
    }
    g.bin_h = rh / (float)p->pooled_h;
    g.bin_w = rw / (float)p->pooled_w;
    const int adaptive = p->sampling_ratio <= 0;
    g.gh = adaptive ? conform_adaptive_count(rh / (float)p->pooled_h) : p->sampling_ratio;
    g.gw = adaptive ? conform_adaptive_count(rw / (float)p->pooled_w) : p->sampling_ratio;
    if (g.gh < 0) g.gh = 0;
    if (g.gw < 0) g.gw = 0;
    g.inv_count = (g.gh > 0 && g.gw > 0) ? 1.0f / (float)((double)g.gh * (double)g.gw) : 1.0f;
    return g;
}

/* ---- per-axis tap tables ---------------------------------------------------------------- */

typedef struct {
    int64_t *off;  /* element offset of the row (or column) in the channels-last plane */
    float *w;      /* summed weight */
    size_t n, cap;
    size_t *start; /* segment of pooled index i: [start[i], start[i+1]) */
    size_t cap_start;
} axis_tab;

static void axis_free(axis_tab *t)
{
    conform_scratch_free(t->off);
    conform_scratch_free(t->w);
    free(t->start);
    memset(t, 0, sizeof *t);
}

static int axis_reserve(axis_tab *t, size_t need)
{
    return need <= t->cap ? 0 : conform_grow_taps(&t->off, &t->w, &t->cap, need, 64);
}

/* position of sample i of the bin starting at base (spec order, float32) */
static inline float sample_pos(float base, float bin, int64_t i, float gf)
{
    return base + ((float)i + 0.5f) * bin / gf;
}

/* first i in [0, n) with pred(pos(i)) true (n if none); pred is monotone false -> true.
 * mode 0: pos >= t, 1: pos > t, 2: pos <= t, 3: pos < t */
static int64_t first_true(float base, float bin, float gf, int64_t n, float t, int mode)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        const int64_t mid = lo + (hi - lo) / 2;
        const float v = sample_pos(base, bin, mid, gf);
        const int ok = mode == 0 ? v >= t : mode == 1 ? v > t : mode == 2 ? v <= t : v < t;
        if (ok) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

static inline void axis_push(axis_tab *t, size_t seg, int64_t idx, float w)
{
    /* A weight of 0 (rule A's corner at ly = 0, and the clamped sample's second corner on the same
       row) stays its own tap: merged into a nonzero weight it would vanish, and 0 * inf is NaN
       (ops.md 10), so an infinite pixel there must give NaN, as the spec's four corners do. Zero
       and nonzero taps merge among themselves. Positions are monotone in the sample index, so a
       repeated row is among the last entries: its weight and its zero weight, of two rows. */
    for (size_t k = 1; k <= 4 && t->n >= seg + k; k++)
        if (t->off[t->n - k] == idx && (t->w[t->n - k] == 0.0f) == (w == 0.0f)) {
            t->w[t->n - k] += w;
            return;
        }
    t->off[t->n] = idx;
    t->w[t->n] = w;
    t->n++;
}

/* Builds the tap lists of the P bins of one axis: start, bin size, g samples per bin, plane
 * extent L, element stride of one step along the axis, weight scale. Returns 0 or -1 (no memory). */
static int axis_build(axis_tab *t, float start, float bin, int64_t g, int64_t P, int64_t L,
                      int64_t stride, float scale)
{
    if ((size_t)P + 1 > t->cap_start) {
        size_t *s = realloc(t->start, ((size_t)P + 1) * sizeof *s);
        if (!s) return -1;
        t->start = s;
        t->cap_start = (size_t)P + 1;
    }
    t->n = 0;
    const int finite = isfinite(start) && isfinite(bin);
    const float gf = (float)g, Lf = (float)L;
    for (int64_t i = 0; i < P; i++) {
        const size_t seg = t->n;
        t->start[i] = seg;
        if (!finite || g <= 0) continue;
        const float base = start + (float)i * bin;
        int64_t lo = 0, hi = g;
        if (g > 64) { /* only the samples inside [-1, L] matter: find them by bisection */
            if (bin >= 0.0f) {
                lo = first_true(base, bin, gf, g, -1.0f, 0);
                hi = first_true(base, bin, gf, g, Lf, 1);
            } else {
                lo = first_true(base, bin, gf, g, Lf, 2);
                hi = first_true(base, bin, gf, g, -1.0f, 3);
            }
        }
        for (int64_t s = lo; s < hi; s++) {
            float y = sample_pos(base, bin, s, gf);
            if (!(y >= -1.0f && y <= Lf)) continue;
            if (y <= 0.0f) y = 0.0f;
            int64_t y0 = (int64_t)y, y1;
            if (y0 >= L - 1) {
                y0 = y1 = L - 1;
                y = (float)y0;
            } else {
                y1 = y0 + 1;
            }
            const float ly = y - (float)y0, hy = 1.0f - ly;
            if (axis_reserve(t, t->n + 2)) return -1;
            axis_push(t, seg, y0, hy);
            axis_push(t, seg, y1, ly);
        }
        for (size_t e = seg; e < t->n; e++) {
            t->off[e] *= stride;
            t->w[e] *= scale;
        }
    }
    t->start[P] = t->n;
    return 0;
}

/* ---- per-roi tables, built once per call ------------------------------------------------ */

/* Each thread appends the tables of the rois it builds to its own arena. The tables of roi k are
 * arena[ref[k].a]: starts[ref[k].s .. +PH] (rows of ph: [starts[s+ph], starts[s+ph+1])) and
 * starts[ref[k].s+PH+1 .. +PW] (columns), indexing off / w. ref[k].a < 0: nothing sampled. */
typedef conform_tap_arena arena;

static int arena_append(arena *a, const axis_tab *ty, size_t PH, const axis_tab *tx, size_t PW,
                        size_t *s_out)
{
    const size_t ne = ty->n + tx->n, ns = PH + PW + 2;
    if (conform_arena_reserve(a, ne, ns)) return -1;
    if (ty->n) {
        memcpy(a->off + a->n, ty->off, ty->n * sizeof *a->off);
        memcpy(a->w + a->n, ty->w, ty->n * sizeof *a->w);
    }
    for (size_t i = 0; i <= PH; i++) a->starts[a->ns + i] = a->n + ty->start[i];
    a->n += ty->n;
    if (tx->n) {
        memcpy(a->off + a->n, tx->off, tx->n * sizeof *a->off);
        memcpy(a->w + a->n, tx->w, tx->n * sizeof *a->w);
    }
    for (size_t i = 0; i <= PW; i++) a->starts[a->ns + PH + 1 + i] = a->n + tx->start[i];
    a->n += tx->n;
    *s_out = a->ns;
    a->ns += ns;
    return 0;
}

/* ---- shared driver scaffolding ---------------------------------------------------------- */

typedef struct {
    const f32_roi_align_params *p;
    conform_ukernels kn;
    conform_roi_call r; /* dimensions, batch order, arenas, tables, chunking, failure */
    roi_geom *geo;
} call_ctx;

/* The columns of a roi's bins for the backward (f32_bilerp_row_bwd): distinct columns coff[i],
 * each with its contributions [cs[i], cs[i + 1]) in bin order: bin pw's gradient at goff = pw cc,
 * weight cw. */
typedef struct {
    int64_t *coff, *goff;
    float *cw;
    size_t *cs, *slot;
    size_t ncol, cap;
} col_tab;

static void cols_free(col_tab *t)
{
    free(t->coff);
    free(t->goff);
    free(t->cw);
    free(t->cs);
    free(t->slot);
    memset(t, 0, sizeof *t);
}

static int cols_reserve(col_tab *t, size_t n)
{
    if (n <= t->cap) return 0;
    const size_t cap = n < 64 ? 64 : 2 * n;
    int64_t *coff = realloc(t->coff, cap * sizeof *coff);
    if (coff) t->coff = coff;
    int64_t *goff = realloc(t->goff, cap * sizeof *goff);
    if (goff) t->goff = goff;
    float *cw = realloc(t->cw, cap * sizeof *cw);
    if (cw) t->cw = cw;
    size_t *cs = realloc(t->cs, (cap + 1) * sizeof *cs);
    if (cs) t->cs = cs;
    size_t *slot = realloc(t->slot, cap * sizeof *slot);
    if (slot) t->slot = slot;
    if (!coff || !goff || !cw || !cs || !slot) return -1;
    t->cap = cap;
    return 0;
}

/* Groups the column taps [xs[0], xs[PW]) of a roi by column. A bin's columns are distinct and
 * monotone, and a later bin starts at most one column back, so a column seen before is one of the
 * last two (anything else becomes a new entry: a repeated column costs a store, never a value). */
static int cols_build(col_tab *t, const int64_t *off, const float *w, const size_t *xs, int64_t PW, int64_t cc)
{
    const size_t e0 = xs[0], ne = xs[PW] - e0;
    if (cols_reserve(t, ne > 0 ? ne : 1)) return -1;
    size_t n = 0;
    for (size_t e = e0; e < e0 + ne; e++) {
        size_t i = n;
        if (n > 0 && t->coff[n - 1] == off[e]) i = n - 1;
        else if (n > 1 && t->coff[n - 2] == off[e]) i = n - 2;
        if (i == n) {
            t->coff[n] = off[e];
            t->cs[n++] = 0;
        }
        t->slot[e - e0] = i;
        t->cs[i]++;
    }
    size_t sum = 0; /* counts -> starts; cs[i] is then the next free entry of column i */
    for (size_t i = 0; i < n; i++) {
        const size_t c = t->cs[i];
        t->cs[i] = sum;
        sum += c;
    }
    for (int64_t pw = 0; pw < PW; pw++)
        for (size_t e = xs[pw]; e < xs[pw + 1]; e++) {
            const size_t k = t->cs[t->slot[e - e0]]++;
            t->goff[k] = pw * cc;
            t->cw[k] = w[e];
        }
    for (size_t i = n; i > 0; i--) t->cs[i] = t->cs[i - 1]; /* back to starts */
    t->cs[0] = 0;
    t->ncol = n;
    return 0;
}

typedef struct {
    float *plane; /* [H*W][cc] channels-last slice */
    float *tile;  /* [PH*PW][cc] */
    float *out;   /* forward: [cc][PH*PW], the tile transposed before its streaming copy */
    axis_tab ty, tx;
    col_tab cols;
} thread_ws;

static void ws_free(thread_ws *w)
{
    conform_scratch_free(w->plane);
    conform_scratch_free(w->tile);
    conform_scratch_free(w->out);
    axis_free(&w->ty);
    axis_free(&w->tx);
    cols_free(&w->cols);
}

static void ctx_free(call_ctx *x)
{
    conform_roi_call_free(&x->r);
    free(x->geo);
}

/* Geometry, batch sort, buffers; sample == 0: nothing can be sampled (every roi is skipped).
 * Returns CONFORM_OK or CONFORM_E_NOMEM (then x is freed). */
static int ctx_init(call_ctx *x, const f32_roi_align_params *p, const float *rois,
                    const conform_exec *ex, conform_isa isa, int sample)
{
    memset(x, 0, sizeof *x);
    x->p = p;
    x->kn = *conform_ukernels_for(isa);
    if (conform_roi_call_init(&x->r, p->B, p->C, p->H, p->W, p->K, p->pooled_h, p->pooled_w, ex))
        return CONFORM_E_NOMEM;
    x->geo = malloc((size_t)(x->r.K > 0 ? x->r.K : 1) * sizeof *x->geo);
    if (!x->geo) {
        ctx_free(x);
        return CONFORM_E_NOMEM;
    }
    for (int64_t k = 0; k < x->r.K; k++) {
        x->geo[k] = roi_geometry(p, rois + 5 * k);
        if (!sample) x->geo[k].b = -1;
    }
    conform_sort_by_batch(x->r.K, x->r.B, &x->geo[0].b, sizeof x->geo[0], x->r.order, x->r.bstart);
    return CONFORM_OK;
}

static void ws_free_all(thread_ws *ws, int nt)
{
    for (int t = 0; t < nt; t++) ws_free(&ws[t]);
    free(ws);
}

/* On the calling thread, before the parallel region: every roi's tap tables (all in arena 0;
 * they depend on the chunk cc through the plane strides) and one workspace per thread. Nothing in
 * the region then waits for another thread to arrive: with one core held by another process a
 * worker may start a scheduler slice late, and the barrier that ended a parallel table build made
 * every call wait for it (roi_align_v2_backward t2/t1 1.57 median, 1.90 worst, with core 0 busy).
 * The tables are about 2.5% of a 1-thread call at the bench shape (perf samples of axis_build).
 * Returns 0, or -1 when out of memory (the workspaces are then freed, *wsp NULL). */
static int ctx_prepare(call_ctx *x, thread_ws **wsp)
{
    const size_t plane_n = (size_t)x->r.HW * (size_t)x->r.cc, tile_n = (size_t)x->r.P * (size_t)x->r.cc;
    thread_ws *ws = calloc((size_t)x->r.nt, sizeof *ws), tabs;
    memset(&tabs, 0, sizeof tabs);
    int failed = !ws;
    for (int t = 0; !failed && t < x->r.nt; t++) {
        ws[t].plane = conform_alloc_floats(plane_n);
        ws[t].tile = conform_alloc_floats(tile_n);
        ws[t].out = conform_alloc_floats(tile_n);
        failed = !ws[t].plane || !ws[t].tile || !ws[t].out;
    }
    for (int64_t k = 0; !failed && k < x->r.K; k++) {
        const roi_geom *g = &x->geo[k];
        if (g->b < 0 || g->gh <= 0 || g->gw <= 0) continue;
        failed = axis_build(&tabs.ty, g->sy, g->bin_h, g->gh, x->r.PH, x->r.H, x->r.W * x->r.cc, g->inv_count) ||
                 axis_build(&tabs.tx, g->sx, g->bin_w, g->gw, x->r.PW, x->r.W, x->r.cc, 1.0f) ||
                 arena_append(&x->r.arenas[0], &tabs.ty, (size_t)x->r.PH, &tabs.tx, (size_t)x->r.PW, &x->r.ref[k].s);
        x->r.ref[k].a = 0;
    }
    ws_free(&tabs);
    if (failed && ws) ws_free_all(ws, x->r.nt);
    *wsp = failed ? NULL : ws;
    return failed ? -1 : 0;
}

/* ---- forward ---------------------------------------------------------------------------- */

/* Roi k's bins over the n channels of the thread's transposed plane, written to its n*P output
 * floats at dst */
static void fwd_roi_chunk(const call_ctx *x, thread_ws *ws, int64_t k, int64_t n, float *dst)
{
    const int64_t P = x->r.P, PH = x->r.PH, PW = x->r.PW, cc = x->r.cc;
    if (x->r.ref[k].a < 0) { /* no samples */
        memset(dst, 0, (size_t)n * P * sizeof(float));
        return;
    }
    const arena *a = &x->r.arenas[x->r.ref[k].a];
    const size_t *ys = a->starts + x->r.ref[k].s, *xs = ys + PH + 1;
    for (int64_t ph = 0; ph < PH; ph++) {
        const size_t r0 = ys[ph], nr = ys[ph + 1] - r0;
        for (int64_t pw = 0; pw < PW; pw++) {
            const size_t q0 = xs[pw], nc = xs[pw + 1] - q0;
            x->kn.bilerp_bin_fwd((size_t)n, nr, a->off + r0, a->w + r0, nc, a->off + q0, a->w + q0, ws->plane,
                                 ws->tile + (size_t)(ph * PW + pw) * cc);
        }
    }
    /* the output block of this roi and chunk is n*P contiguous floats: transposed in cache, then
       streamed out whole (a direct transpose's unaligned P-float rows paid a read for ownership
       of every output line: 12.8 MB more at the bench shape) */
    x->kn.transpose((size_t)P, (size_t)n, ws->tile, (size_t)cc, ws->out, (size_t)P);
    x->kn.copy_rows_stream(1, (size_t)(n * P), ws->out, 0, dst, 0);
}

int f32_roi_align_fwd(const f32_roi_align_params *p, const float *input, const float *rois,
                      float *output, const conform_exec *ex)
{
    conform_isa isa;
    if (conform_opt_resolve_isa(ex, &isa) != CONFORM_OK) return CONFORM_E_ISA;
    if (p->K <= 0 || p->C <= 0 || p->pooled_h <= 0 || p->pooled_w <= 0) return CONFORM_OK;
    call_ctx x;
    if (ctx_init(&x, p, rois, ex, isa, p->H > 0 && p->W > 0)) return CONFORM_E_NOMEM;
    const int64_t C = x.r.C, P = x.r.P, HW = x.r.HW;
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
    x.r.cc = nb > 0 ? conform_pick_chunk(C, HW, nb, x.r.nt, 1 << 20, conform_opt_roi_align_chunk) : 1;
    x.r.nchunks = (C + x.r.cc - 1) / x.r.cc;
    const int64_t units = nb * x.r.nchunks, cc = x.r.cc;
    if (nb > 0 && !conform_sizes_ok(HW, P, cc)) {
        free(batches);
        ctx_free(&x);
        return CONFORM_E_NOMEM;
    }
    const size_t out_roi = (size_t)C * (size_t)P;

    thread_ws *wss;
    if (ctx_prepare(&x, &wss)) { /* out of memory: nothing is written */
        free(batches);
        ctx_free(&x);
        return CONFORM_E_NOMEM;
    }
#pragma omp parallel num_threads(x.r.nt)
    {
        thread_ws *ws = &wss[omp_get_thread_num()];
        /* skipped rois (and rois of an empty plane) output zeros */
#pragma omp for schedule(dynamic, 8) nowait
        for (int64_t k = 0; k < x.r.K; k++)
            if (x.geo[k].b < 0) memset(output + (size_t)k * out_roi, 0, out_roi * sizeof(float));

        /* nowait: the region's end is the one place a thread waits for the others (a second
           barrier made a worker on a busy core get a scheduler slice once more per call) */
#pragma omp for schedule(dynamic, 1) nowait
        for (int64_t u = 0; u < units; u++) {
            /* batch-minor order: concurrent units work on different rois when B > 1 */
            const int64_t b = batches[u % nb], c0 = (u / nb) * cc;
            const int64_t n = C - c0 < cc ? C - c0 : cc;
            x.kn.transpose((size_t)n, (size_t)HW, input + ((size_t)b * C + c0) * HW, (size_t)HW, ws->plane,
                    (size_t)cc);
            for (int64_t i = x.r.bstart[b]; i < x.r.bstart[b + 1]; i++) {
                const int64_t k = x.r.order[i];
                float *dst = output + (size_t)k * out_roi + (size_t)c0 * P;
                fwd_roi_chunk(&x, ws, k, n, dst);
            }
        }
    }
    ws_free_all(wss, x.r.nt);
    free(batches);
    const int err = x.r.err;
    ctx_free(&x);
    return err ? CONFORM_E_NOMEM : CONFORM_OK;
}

/* ---- backward --------------------------------------------------------------------------- */

int f32_roi_align_bwd(const f32_roi_align_params *p, const float *grad_output, const float *rois,
                      float *grad_input, const conform_exec *ex)
{
    conform_isa isa;
    if (conform_opt_resolve_isa(ex, &isa) != CONFORM_OK) return CONFORM_E_ISA;
    if (p->B <= 0 || p->C <= 0 || p->H <= 0 || p->W <= 0) return CONFORM_OK; /* no elements */
    call_ctx x;
    if (ctx_init(&x, p, rois, ex, isa, p->K > 0 && p->pooled_h > 0 && p->pooled_w > 0))
        return CONFORM_E_NOMEM;
    const int64_t C = x.r.C, P = x.r.P, HW = x.r.HW, PH = x.r.PH, PW = x.r.PW;
    x.r.cc = conform_pick_chunk(C, HW, x.r.B, x.r.nt, 2 << 20, conform_opt_roi_align_chunk);
    x.r.nchunks = (C + x.r.cc - 1) / x.r.cc;
    const int64_t units = x.r.B * x.r.nchunks, cc = x.r.cc;
    if (!conform_sizes_ok(HW, P > 0 ? P : 1, cc)) {
        ctx_free(&x);
        return CONFORM_E_NOMEM;
    }

    thread_ws *wss;
    if (ctx_prepare(&x, &wss)) { /* out of memory: nothing is written */
        ctx_free(&x);
        return CONFORM_E_NOMEM;
    }
#pragma omp parallel num_threads(x.r.nt)
    {
        thread_ws *ws = &wss[omp_get_thread_num()];
        int zeroed = 0;
#pragma omp for schedule(dynamic, 1) nowait /* the region's end is the one wait (see the forward) */
        for (int64_t u = 0; u < units; u++) {
            const int64_t b = u / x.r.nchunks, c0 = (u % x.r.nchunks) * cc;
            const int64_t n = C - c0 < cc ? C - c0 : cc;
            float *dst = grad_input + ((size_t)b * C + c0) * HW;
            int any = 0;
            for (int64_t i = x.r.bstart[b]; i < x.r.bstart[b + 1] && !any; i++) any = x.r.ref[x.r.order[i]].a >= 0;
            if (!any) { /* nothing lands in this slice */
                memset(dst, 0, (size_t)n * HW * sizeof(float));
                continue;
            }
            if (!zeroed) { /* once: each unit's streaming transpose out clears what it read */
                memset(ws->plane, 0, (size_t)HW * (size_t)cc * sizeof(float));
                zeroed = 1;
            }
            for (int64_t i = x.r.bstart[b]; i < x.r.bstart[b + 1]; i++) {
                const int64_t k = x.r.order[i];
                if (x.r.ref[k].a < 0) continue;
                const arena *a = &x.r.arenas[x.r.ref[k].a];
                const size_t *ys = a->starts + x.r.ref[k].s, *xs = ys + PH + 1;
                if (cols_build(&ws->cols, a->off, a->w, xs, PW, cc)) {
                    conform_roi_call_fail(&x.r); /* the caller reports it; the output is not used */
                    break;
                }
                x.kn.transpose((size_t)n, (size_t)P, grad_output + ((size_t)k * C + c0) * P, (size_t)P,
                        ws->tile, (size_t)cc);
                const col_tab *ct = &ws->cols;
                /* the next roi's gradient block (n*P contiguous floats), asked for a share per
                   pooled row while this one scatters: the transpose in then finds it in cache */
                const char *nx = NULL;
                size_t nx_lines = 0, nx_done = 0;
                if (i + 1 < x.r.bstart[b + 1]) {
                    nx = (const char *)(grad_output + ((size_t)x.r.order[i + 1] * C + c0) * P);
                    nx_lines = ((size_t)n * P * sizeof(float) + 63) / 64;
                }
                for (int64_t ph = 0; ph < PH; ph++) {
                    for (size_t e = nx_lines * (size_t)(ph + 1) / (size_t)PH; nx_done < e; nx_done++)
                        __builtin_prefetch(nx + 64 * nx_done, 0, 3);
                    const size_t r0 = ys[ph], nr = ys[ph + 1] - r0;
                    if (!nr) continue;
                    x.kn.bilerp_row_bwd((size_t)n, nr, a->off + r0, a->w + r0, ct->ncol, ct->coff, ct->cs, ct->goff,
                                        ct->cw, ws->tile + (size_t)(ph * PW) * cc, ws->plane);
                }
            }
            x.kn.transpose_stream_zero((size_t)HW, (size_t)n, ws->plane, (size_t)cc, dst, (size_t)HW);
        }
    }
    ws_free_all(wss, x.r.nt);
    const int err = x.r.err;
    ctx_free(&x);
    return err ? CONFORM_E_NOMEM : CONFORM_OK;
}
