/* roi_align_rotated forward / backward drivers: per-roi sample tables, threading and dispatch to
 * the per-ISA microkernels.
 *
 * Algorithm. A rotated bin is not separable (y and x both depend on both roi axes), so per roi the
 * drivers build, when a unit first needs it (roi_table; NCHW and backward share it across the
 * team, the NHWC forward builds it in its one unit), a tap list per bin: the distinct
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
 * Work units are (batch b, chunk of cc channels; batch-minor, so that concurrent units build the
 * tables of different rois); the NHWC forward, which needs no plane, uses groups of 8 batch-sorted
 * rois over all channels instead. Workspaces and table room are allocated before the parallel
 * region, which has no barrier but its end (see ws_setup). Backward is the mirror image: each unit
 * owns the y_grad slice of (b, chunk): it scatters into a zeroed private plane and transposes
 * (NCHW) or copies (NHWC) it back once. Every output element is computed by one thread in a fixed
 * order (roi, bin, tap), and every copy of a roi's tables is the same: identical for any thread
 * count and chunking, no atomics on the outputs. */
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

/* ---- per-roi tap tables ------------------------------------------------------------------ */

/* A thread appends the tables of the rois it builds to an arena: its own (published to the
 * team, see roi_table) or a private one. */
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

/* A roi's tables: the taps of bin i are off / w [starts[i], starts[i + 1]). */
typedef struct {
    const int64_t *off;
    const float *w;
    const size_t *starts;
} roi_tab;

enum { TAB_NONE, TAB_BUILDING, TAB_READY };

typedef struct {
    const f32_roi_align_rotated_params *p;
    const float *rois;
    conform_ukernels kn;
    conform_roi_call r; /* dimensions, batch order, arenas (each thread's published tables), failure */
    roi_geom *geo;
    roi_tab *tabs; /* K: roi k's published tables, valid once state[k] is TAB_READY */
    int *state;    /* K: TAB_NONE, TAB_BUILDING (a thread builds it), TAB_READY */
    int64_t stride; /* pixel stride of the planes the taps address: cc (NCHW) or C (NHWC) */
} call_ctx;

typedef struct {
    float *plane; /* NCHW only: [H*W][cc] channels-last slice */
    float *tile;  /* NCHW only: [PH*PW][cc] */
    float *out;   /* NCHW only: [cc][PH*PW], the tile transposed before its streaming copy */
    dedupe d;
    arena tmp; /* a roi's tables this thread does not publish: rebuilt at each use */
} thread_ws;

static int samples(const roi_geom *g) { return g->b >= 0 && g->gh > 0 && g->gw > 0; }

/* taps one roi's tables may take (roi_build reserves no more): 16 a bin in the few-sample kernel */
static double tap_bound(const roi_geom *g, int64_t P)
{
    const double n = (double)g->gh * (double)g->gw;
    return n <= 4.0 ? 16.0 * (double)P + 16.0 : 4.0 * (double)P * n;
}

static void ws_free(thread_ws *w)
{
    conform_scratch_free(w->plane);
    conform_scratch_free(w->tile);
    conform_scratch_free(w->out);
    free(w->d.stamp_pos);
    free(w->d.stamp_zero);
    free(w->d.slot);
    free(w->d.pix);
    conform_arena_free(&w->tmp);
}

static void ws_free_all(thread_ws *ws, int nt)
{
    for (int t = 0; ws && t < nt; t++) ws_free(&ws[t]);
    free(ws);
}

static void ctx_free(call_ctx *x)
{
    conform_roi_call_free(&x->r);
    free(x->geo);
    free(x->tabs);
    free(x->state);
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
    const size_t K1 = (size_t)(x->r.K > 0 ? x->r.K : 1);
    x->geo = malloc(K1 * sizeof *x->geo);
    x->tabs = malloc(K1 * sizeof *x->tabs);
    x->state = calloc(K1, sizeof *x->state); /* TAB_NONE */
    if (!x->geo || !x->tabs || !x->state) {
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

/* On the calling thread, before the parallel region: every thread's workspace, and (share) room
 * in its arena for every table it may publish, so that a published table never moves. The
 * tables themselves are built inside the units (roi_table), never behind a barrier: with one
 * core held by another process, a worker that waits for its scheduler slice held up every call
 * at the barrier that ended a parallel table build (a worker on the busy core passed it up to
 * 4.4 ms late, against calls of 3 ms). Returns 0, or -1 when out of memory (nothing held). */
static int ws_setup(call_ctx *x, thread_ws **wsp, int private_plane, int out_tile, int share)
{
    double taps = 0, starts = 0;
    int more = 0; /* a roi with more than 4 samples a bin: the general builder's dedupe */
    for (int64_t k = 0; k < x->r.K; k++) {
        const roi_geom *g = &x->geo[k];
        if (!samples(g)) continue;
        taps += tap_bound(g, x->r.P);
        starts += (double)x->r.P + 1.0;
        more |= (double)g->gh * (double)g->gw > 4.0;
    }
    /* the few-sample kernel's pixel indices and merge keys (pixel + H W) fit int32 */
    const int pix = x->r.HW > 0 && x->r.HW < INT32_MAX / 2 && x->r.P > 0 && x->r.P <= INT32_MAX / 16;
    more |= !pix;
    const double cap = (double)(1 << 22);
    thread_ws *ws = calloc((size_t)x->r.nt, sizeof *ws);
    int failed = !ws;
    const size_t hw = (size_t)(x->r.HW > 0 ? x->r.HW : 1);
    for (int t = 0; !failed && t < x->r.nt; t++) {
        thread_ws *w = &ws[t];
        if (private_plane) {
            w->plane = conform_alloc_floats((size_t)x->r.HW * (size_t)x->r.cc);
            w->tile = conform_alloc_floats((size_t)x->r.P * (size_t)x->r.cc);
            w->out = out_tile ? conform_alloc_floats((size_t)x->r.P * (size_t)x->r.cc) : NULL;
            failed = !w->plane || !w->tile || (out_tile && !w->out);
        }
        if (pix) {
            w->d.pix = malloc(((size_t)x->r.P * 16 + 16) * sizeof(int32_t));
            failed |= !w->d.pix;
        }
        if (more) {
            w->d.stamp_pos = calloc(hw, sizeof(int64_t));
            w->d.stamp_zero = calloc(hw, sizeof(int64_t));
            w->d.slot = malloc(hw * sizeof(int64_t));
            failed |= !w->d.stamp_pos || !w->d.stamp_zero || !w->d.slot;
        }
        /* an upper bound (4 taps a sample): it reserves address space, pages are touched as
           taps are written; past the cap a roi is built for each use instead (roi_table) */
        if (!failed && share && taps > 0)
            failed = conform_arena_reserve(&x->r.arenas[t], (size_t)(taps < cap ? taps : cap),
                                           (size_t)(starts < cap ? starts : cap));
    }
    if (failed) {
        ws_free_all(ws, x->r.nt);
        ws = NULL;
    }
    *wsp = ws;
    return failed ? -1 : 0;
}

/* Builds roi k's tables into a, the pointers into t. 0 or -1 (no memory). */
static int build_into(call_ctx *x, thread_ws *w, arena *a, int64_t k, roi_tab *t)
{
    size_t s0;
    if (roi_build(a, &w->d, &x->kn, &x->geo[k], x->r.PH, x->r.PW, x->r.H, x->r.W, x->stride, &s0)) return -1;
    *t = (roi_tab){a->off, a->w, a->starts + s0};
    return 0;
}

/* Roi k's tables for the calling thread: the published ones when ready; else built now, and
 * published (share) when this thread claims the roi and its arena holds the roi's bound without
 * growing. A roi another thread is building is awaited for at most ~20 us, then built again in
 * the thread's own buffer: a thread never waits for one that another process may have
 * descheduled. Every copy has the same taps in the same order: the results do not depend on
 * which thread built what. Returns 0, or -1 (no memory). */
static int roi_table(call_ctx *x, thread_ws *w, int tid, int64_t k, int share, roi_tab *t)
{
    if (share) {
        int s = __atomic_load_n(&x->state[k], __ATOMIC_ACQUIRE);
        arena *own = &x->r.arenas[tid];
        const double room = (double)(own->cap - own->n), room_s = (double)(own->caps - own->ns);
        if (s == TAB_NONE && room >= tap_bound(&x->geo[k], x->r.P) && room_s >= (double)x->r.P + 1.0 &&
            __atomic_compare_exchange_n(&x->state[k], &s, TAB_BUILDING, 0, __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)) {
            if (build_into(x, w, own, k, &x->tabs[k])) return -1; /* stays TAB_BUILDING: others build it */
            __atomic_store_n(&x->state[k], TAB_READY, __ATOMIC_RELEASE);
            *t = x->tabs[k];
            return 0;
        }
        for (const double t0 = omp_get_wtime(); s == TAB_BUILDING && omp_get_wtime() - t0 < 20e-6;)
            s = __atomic_load_n(&x->state[k], __ATOMIC_ACQUIRE);
        if (s == TAB_READY) {
            *t = x->tabs[k];
            return 0;
        }
    }
    w->tmp.n = w->tmp.ns = 0;
    return build_into(x, w, &w->tmp, k, t);
}

/* ---- forward ---------------------------------------------------------------------------- */

/* NHWC: rois order[i0 .. i1) over all channels, read from the caller's tensor in place; each roi
 * is used by this unit only, so its tables are built into the thread's own buffer. */
static int fwd_unit_nhwc(call_ctx *x, thread_ws *w, int tid, const float *x_in, float *y, int64_t i0, int64_t i1)
{
    const int64_t C = x->r.C, P = x->r.P;
    for (int64_t i = i0; i < i1; i++) {
        const int64_t k = x->r.order[i];
        if (!samples(&x->geo[k])) continue; /* zeroed */
        roi_tab t;
        if (roi_table(x, w, tid, k, 0, &t)) return -1;
        const float *plane = x_in + (size_t)x->geo[k].b * (size_t)x->r.HW * (size_t)C;
        for (int64_t q = 0; q < P; q++)
            x->kn.bilerp_bin_fwd((size_t)C, 1, row_off, row_w, t.starts[q + 1] - t.starts[q], t.off + t.starts[q],
                                 t.w + t.starts[q], plane, y + ((size_t)k * P + q) * C);
    }
    return 0;
}

/* NCHW: channels [c0, c0 + n) of batch b, transposed into the thread's plane */
static int fwd_unit_nchw(call_ctx *x, thread_ws *w, int tid, const float *x_in, float *y, int64_t b, int64_t c0)
{
    const int64_t C = x->r.C, P = x->r.P, HW = x->r.HW, cc = x->r.cc, n = C - c0 < cc ? C - c0 : cc;
    x->kn.transpose((size_t)n, (size_t)HW, x_in + ((size_t)b * C + c0) * HW, (size_t)HW, w->plane, (size_t)cc);
    for (int64_t i = x->r.bstart[b]; i < x->r.bstart[b + 1]; i++) {
        const int64_t k = x->r.order[i];
        if (!samples(&x->geo[k])) continue; /* zeroed */
        roi_tab t;
        if (roi_table(x, w, tid, k, 1, &t)) return -1;
        for (int64_t q = 0; q < P; q++)
            x->kn.bilerp_bin_fwd((size_t)n, 1, row_off, row_w, t.starts[q + 1] - t.starts[q], t.off + t.starts[q],
                                 t.w + t.starts[q], w->plane, w->tile + (size_t)q * cc);
        /* y's block of this roi and chunk is n*P contiguous floats: transposed in cache, then
           streamed out whole (the unaligned P-float rows of a direct transpose paid a read for
           ownership of every y line) */
        x->kn.transpose((size_t)P, (size_t)n, w->tile, (size_t)cc, w->out, (size_t)P);
        x->kn.copy_rows_stream(1, (size_t)(n * P), w->out, 0, y + ((size_t)k * C + c0) * P, 0);
    }
    return 0;
}

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
    thread_ws *wss = NULL;
    nb = 0;
    for (int64_t b = 0; batches && b < x.r.B; b++)
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
    if (!batches || (nb > 0 && !conform_sizes_ok(HW, P, nhwc ? C : cc)) ||
        ws_setup(&x, &wss, !nhwc && nb > 0, !nhwc && nb > 0, !nhwc)) { /* nothing is written */
        free(batches);
        ctx_free(&x);
        return CONFORM_E_NOMEM;
    }
    const size_t out_roi = (size_t)C * (size_t)P;

#pragma omp parallel num_threads(x.r.nt)
    {
        const int tid = omp_get_thread_num();
        thread_ws *w = &wss[tid];
        /* rois without samples (skipped, empty plane, no sample count) output zeros */
#pragma omp for schedule(dynamic, 8) nowait
        for (int64_t k = 0; k < x.r.K; k++)
            if (!samples(&x.geo[k])) memset(y + (size_t)k * out_roi, 0, out_roi * sizeof(float));
        /* nowait: the region's end is the one place a thread waits for the others */
#pragma omp for schedule(dynamic, 1) nowait
        for (int64_t u = 0; u < units; u++) {
            /* NCHW batch-minor: concurrent units work on (and build the tables of) different rois */
            const int fail = nhwc ? fwd_unit_nhwc(&x, w, tid, x_in, y, u * group, (u + 1) * group < nk ? (u + 1) * group : nk)
                                  : fwd_unit_nchw(&x, w, tid, x_in, y, batches[u % nb], (u / nb) * cc);
            if (fail) conform_roi_call_fail(&x.r); /* the caller reports it; y is not used */
        }
    }
    ws_free_all(wss, x.r.nt);
    free(batches);
    const int err = x.r.err;
    ctx_free(&x);
    return err ? CONFORM_E_NOMEM : CONFORM_OK;
}

/* ---- backward --------------------------------------------------------------------------- */

/* Prefetches lines [*done, lines * (q + 1) / P) of the next roi's gradient rows at nx (NHWC: row
 * r is pixel r's n channels, C apart; NCHW: n*P contiguous floats), a share per bin */
static void prefetch_share(const char *nx, size_t lines, size_t *done, int64_t q, int64_t P, int nhwc, int64_t n,
                           int64_t C)
{
    for (size_t e = lines * (size_t)(q + 1) / (size_t)P; *done < e; (*done)++) {
        if (nhwc)
            for (size_t o = 0; o < (size_t)n * sizeof(float); o += 64)
                __builtin_prefetch(nx + *done * (size_t)C * sizeof(float) + o, 0, 3);
        else
            __builtin_prefetch(nx + 64 * *done, 0, 3);
    }
}

/* The slice (batch b, channels [c0, c0 + n)) of y_grad: every roi of b scattered in roi order
 * into the thread's zeroed plane, then written out once. */
static int bwd_unit(call_ctx *x, thread_ws *w, int tid, const float *x_grad, float *y_grad, int64_t b, int64_t c0)
{
    const int64_t C = x->r.C, P = x->r.P, HW = x->r.HW, cc = x->r.cc, n = C - c0 < cc ? C - c0 : cc;
    const int nhwc = x->p->nhwc;
    int any = 0;
    for (int64_t i = x->r.bstart[b]; i < x->r.bstart[b + 1] && !any; i++) any = samples(&x->geo[x->r.order[i]]);
    /* the slice this unit owns: NCHW [n][HW] contiguous, NHWC HW pixels of n channels */
    float *dst = nhwc ? y_grad + (size_t)b * HW * C + c0 : y_grad + ((size_t)b * C + c0) * HW;
    if (!any) {
        if (nhwc)
            for (int64_t r = 0; r < HW; r++) memset(dst + (size_t)r * C, 0, (size_t)n * sizeof(float));
        else
            memset(dst, 0, (size_t)n * HW * sizeof(float));
        return 0;
    }
    /* a private plane even for NHWC: scattering straight into y_grad (pixel stride C, 1 KiB
       at C = 256) hits 4K aliasing between taps 4 pixels apart and ran ~2.5x slower */
    for (int64_t r = 0; r < HW; r++) memset(w->plane + (size_t)r * cc, 0, (size_t)n * sizeof(float));
    for (int64_t i = x->r.bstart[b]; i < x->r.bstart[b + 1]; i++) {
        const int64_t k = x->r.order[i];
        if (!samples(&x->geo[k])) continue;
        roi_tab t;
        if (roi_table(x, w, tid, k, 1, &t)) return -1;
        /* the roi's gradient rows go through the tile in both layouts: read straight from
           x_grad (NHWC) every bin started with a cache miss its stores waited for */
        if (!nhwc)
            x->kn.transpose((size_t)n, (size_t)P, x_grad + ((size_t)k * C + c0) * P, (size_t)P, w->tile, (size_t)cc);
        else
            for (int64_t q = 0; q < P; q++)
                memcpy(w->tile + (size_t)q * cc, x_grad + ((size_t)k * P + q) * C + c0, (size_t)n * sizeof(float));
        /* the next roi's gradient rows, asked for a share per bin while this one scatters */
        const char *nx = NULL;
        size_t nx_lines = 0, nx_done = 0;
        if (i + 1 < x->r.bstart[b + 1]) {
            const int64_t k2 = x->r.order[i + 1];
            nx = (const char *)(nhwc ? x_grad + (size_t)k2 * P * C + c0 : x_grad + ((size_t)k2 * C + c0) * P);
            nx_lines = nhwc ? (size_t)P : ((size_t)n * P * sizeof(float) + 63) / 64;
        }
        for (int64_t q = 0; q < P; q++) {
            prefetch_share(nx, nx_lines, &nx_done, q, P, nhwc, n, C);
            const size_t nt = t.starts[q + 1] - t.starts[q];
            if (nt)
                x->kn.bilerp_bin_bwd((size_t)n, 1, row_off, row_w, nt, t.off + t.starts[q], t.w + t.starts[q],
                                     w->tile + (size_t)q * cc, w->plane);
        }
    }
    if (!nhwc) /* streaming: y_grad's slice is written once, its read for ownership skipped */
        x->kn.transpose_stream((size_t)HW, (size_t)n, w->plane, (size_t)cc, dst, (size_t)HW);
    else /* streaming: y_grad is not read back here, and skipping its read for ownership saves a
            third of this copy's memory traffic */
        x->kn.copy_rows_stream((size_t)HW, (size_t)n, w->plane, (size_t)cc, dst, (size_t)C);
    return 0;
}

int f32_roi_align_rotated_bwd(const f32_roi_align_rotated_params *p, const float *x_grad, const float *rois,
                              float *y_grad, const conform_exec *ex)
{
    conform_isa isa;
    if (conform_opt_resolve_isa(ex, &isa) != CONFORM_OK) return CONFORM_E_ISA;
    if (p->B <= 0 || p->C <= 0 || p->H <= 0 || p->W <= 0) return CONFORM_OK; /* no elements */
    call_ctx x;
    if (ctx_init(&x, p, rois, ex, isa, p->K > 0 && p->pooled_h > 0 && p->pooled_w > 0)) return CONFORM_E_NOMEM;
    x.r.cc = conform_pick_chunk(x.r.C, x.r.HW, x.r.B, x.r.nt, 2 << 20, conform_opt_roi_align_rotated_chunk);
    x.r.nchunks = (x.r.C + x.r.cc - 1) / x.r.cc;
    x.stride = x.r.cc; /* both layouts scatter into a private plane (see bwd_unit) */
    const int64_t B = x.r.B, units = B * x.r.nchunks, cc = x.r.cc;
    thread_ws *wss = NULL;
    if (!conform_sizes_ok(x.r.HW, x.r.P > 0 ? x.r.P : 1, cc) || ws_setup(&x, &wss, 1, 0, 1)) {
        ctx_free(&x); /* nothing is written */
        return CONFORM_E_NOMEM;
    }

#pragma omp parallel num_threads(x.r.nt)
    {
        const int tid = omp_get_thread_num();
        /* batch-minor: concurrent units build the tables of different rois; nowait: the region's
           end is the one place a thread waits for the others */
#pragma omp for schedule(dynamic, 1) nowait
        for (int64_t u = 0; u < units; u++)
            if (bwd_unit(&x, &wss[tid], tid, x_grad, y_grad, u % B, (u / B) * cc))
                conform_roi_call_fail(&x.r); /* the caller reports it; y_grad is not used */
    }
    ws_free_all(wss, x.r.nt);
    const int err = x.r.err;
    ctx_free(&x);
    return err ? CONFORM_E_NOMEM : CONFORM_OK;
}
