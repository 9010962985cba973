/* Internal declarations of the optimized kernels: ISA resolution and the microkernels.
 *
 * Microkernels follow the XNNPACK naming <dtype>_<op>[_<dir>]_ukernel__<isa> (dir fwd or bwd where
 * the kernel serves one direction; layout helpers such as transpose have none); each family has
 * one signature, implemented once per ISA in optimized/ukernels/<dtype>_<op>[_<dir>]__<isa>.c. The __avx2 files are
 * compiled with -mavx2 -mfma, the __avx512 files with -mavx512f/bw/dq/vl -mfma; nothing outside
 * them may use those instructions. Every kernel handles any channel count (masked tails). Each
 * signature is written once, as DECLARE_<DTYPE>_<OP>_UKERNEL_FUNCTION(fn) (XNNPACK's style): the
 * table's function-pointer type and every ISA's prototype are made from it. */
#ifndef CONFORM_OPT_INTERNAL_H
#define CONFORM_OPT_INTERNAL_H

#include "conform_opt.h"

#include <stddef.h>
#include <stdint.h>

/* Resolves ex->isa (NULL or CONFORM_ISA_AUTO: the best available) to a concrete ISA.
 * Returns CONFORM_OK or CONFORM_E_ISA. The only place an ISA is chosen. */
int conform_opt_resolve_isa(const conform_exec *ex, conform_isa *isa);

/* Separable bilinear bin over a channels-last (NHWC) plane:
 *   out[j] = sum_{r < nr} sum_{c < nc} (wy[r] * wx[c]) * in[roff[r] + coff[c] + j],  j < channels
 * (the weight is rounded to float as wy[r] * wx[c]; taps are summed in (r, c) order, one fused
 * multiply-add per tap in the SIMD kernels). nr == 0 or nc == 0 writes zeros. */
#define DECLARE_F32_BILERP_BIN_FWD_UKERNEL_FUNCTION(fn) void fn(size_t channels, size_t nr, \
    const int64_t *roff, const float *wy, size_t nc, const int64_t *coff, const float *wx, const float *in, \
    float *out)
typedef DECLARE_F32_BILERP_BIN_FWD_UKERNEL_FUNCTION((*f32_bilerp_bin_fwd_fn));
DECLARE_F32_BILERP_BIN_FWD_UKERNEL_FUNCTION(f32_bilerp_bin_fwd_ukernel__scalar);
DECLARE_F32_BILERP_BIN_FWD_UKERNEL_FUNCTION(f32_bilerp_bin_fwd_ukernel__avx2);
DECLARE_F32_BILERP_BIN_FWD_UKERNEL_FUNCTION(f32_bilerp_bin_fwd_ukernel__avx512);

/* Adjoint of f32_bilerp_bin_fwd: scatter-add of one bin's gradient vector into an NHWC plane,
 *   io[roff[r] + coff[c] + j] += (wy[r] * wx[c]) * g[j],  in (r, c) order.
 * The (r, c) taps of one call must address distinct pixels. */
#define DECLARE_F32_BILERP_BIN_BWD_UKERNEL_FUNCTION(fn) void fn(size_t channels, size_t nr, \
    const int64_t *roff, const float *wy, size_t nc, const int64_t *coff, const float *wx, const float *g, \
    float *io)
typedef DECLARE_F32_BILERP_BIN_BWD_UKERNEL_FUNCTION((*f32_bilerp_bin_bwd_fn));
DECLARE_F32_BILERP_BIN_BWD_UKERNEL_FUNCTION(f32_bilerp_bin_bwd_ukernel__scalar);
DECLARE_F32_BILERP_BIN_BWD_UKERNEL_FUNCTION(f32_bilerp_bin_bwd_ukernel__avx2);
DECLARE_F32_BILERP_BIN_BWD_UKERNEL_FUNCTION(f32_bilerp_bin_bwd_ukernel__avx512);

/* Scatter of one pooled row of a roi (the backward of a separable bin row, one read-modify-write
 * per touched pixel instead of one per bin and tap): column i < ncol of the row's bins has the
 * contributions e in [cs[i], cs[i + 1]) (bin gradient vector at g + goff[e], column weight cw[e]);
 *   T_i[j] = sum_e cw[e] * g[goff[e] + j]                   (e ascending, from 0)
 *   io[roff[r] + coff[i] + j] += wy[r] * T_i[j]              (i, then r ascending; j < channels)
 * FMAs in the SIMD kernels. Pixels (r, i) may repeat (they are then added one after the other). */
#define DECLARE_F32_BILERP_ROW_BWD_UKERNEL_FUNCTION(fn) void fn(size_t channels, size_t nr, \
    const int64_t *roff, const float *wy, size_t ncol, const int64_t *coff, const size_t *cs, \
    const int64_t *goff, const float *cw, const float *g, float *io)
typedef DECLARE_F32_BILERP_ROW_BWD_UKERNEL_FUNCTION((*f32_bilerp_row_bwd_fn));
DECLARE_F32_BILERP_ROW_BWD_UKERNEL_FUNCTION(f32_bilerp_row_bwd_ukernel__scalar);
DECLARE_F32_BILERP_ROW_BWD_UKERNEL_FUNCTION(f32_bilerp_row_bwd_ukernel__avx2);
DECLARE_F32_BILERP_ROW_BWD_UKERNEL_FUNCTION(f32_bilerp_row_bwd_ukernel__avx512);

/* 2-D transpose: dst[j * dst_stride + i] = src[i * src_stride + j] for i < rows, j < cols. */
#define DECLARE_F32_TRANSPOSE_UKERNEL_FUNCTION(fn) void fn(size_t rows, size_t cols, const float *src, \
    size_t src_stride, float *dst, size_t dst_stride)
typedef DECLARE_F32_TRANSPOSE_UKERNEL_FUNCTION((*f32_transpose_fn));
DECLARE_F32_TRANSPOSE_UKERNEL_FUNCTION(f32_transpose_ukernel__scalar);
DECLARE_F32_TRANSPOSE_UKERNEL_FUNCTION(f32_transpose_ukernel__avx2);
DECLARE_F32_TRANSPOSE_UKERNEL_FUNCTION(f32_transpose_ukernel__avx512);

/* Tuning knob for tests and benchmarks: channels per work unit (rounded to a multiple of 16);
 * 0 (the default) picks it from the plane size. Not thread-safe; set it before calling. */
extern int64_t conform_opt_roi_align_chunk;

/* Same knob for roi_align_rotated (channels per work unit; 0: from the plane size). */
extern int64_t conform_opt_roi_align_rotated_chunk;

/* Deformable sampling of one channel vector (spec 5), four corner vectors (corners outside the
 * plane point at a zero vector):
 *   out[j] = w[0]*v[0][j] + w[1]*v[1][j] + w[2]*v[2][j] + w[3]*v[3][j],  j < channels
 * (w already holds mask * corner weight; taps added in corner order, FMA in the SIMD kernels). */
#define DECLARE_F32_DEFORM_FWD_UKERNEL_FUNCTION(fn) void fn(size_t channels, const float *const *v, \
    const float *w, float *out)
typedef DECLARE_F32_DEFORM_FWD_UKERNEL_FUNCTION((*f32_deform_fwd_fn));
/* (the SIMD kernels stream out when it starts a 64-byte line and channels is a multiple of 16: the
 * caller runs stream_fence before its region ends) */
DECLARE_F32_DEFORM_FWD_UKERNEL_FUNCTION(f32_deform_fwd_ukernel__scalar);
DECLARE_F32_DEFORM_FWD_UKERNEL_FUNCTION(f32_deform_fwd_ukernel__avx2);
DECLARE_F32_DEFORM_FWD_UKERNEL_FUNCTION(f32_deform_fwd_ukernel__avx512);

/* Backward of one sample over a channel vector (spec 6): the four corners' read-modify-writes
 *   io[k][j] += wg[k] * g[j]            (wg = mask * corner weight; io[k] distinct or a sink)
 * and the three channel sums of the offset gradients, cf = {hh, lh, hw, lw}:
 *   acc[0] = sum_j g[j] * (hh*(v1-v0) + lh*(v3-v2))                       (x offset, / mask)
 *   acc[1] = sum_j g[j] * (hw*(v2-v0) + lw*(v3-v1))                       (y offset, / mask)
 *   acc[2] = sum_j g[j] * (hh*(hw*v0 + lw*v1) + lh*(hw*v2 + lw*v3))       (mask)
 * with v = the corner vectors (zero vector outside the plane). The lane order of the sums is
 * fixed per ISA, so results do not depend on threads. */
#define DECLARE_F32_DEFORM_BWD_UKERNEL_FUNCTION(fn) void fn(size_t channels, const float *g, \
    const float *const *v, float *const *io, const float *wg, const float *cf, float *acc)
typedef DECLARE_F32_DEFORM_BWD_UKERNEL_FUNCTION((*f32_deform_bwd_fn));
DECLARE_F32_DEFORM_BWD_UKERNEL_FUNCTION(f32_deform_bwd_ukernel__scalar);
DECLARE_F32_DEFORM_BWD_UKERNEL_FUNCTION(f32_deform_bwd_ukernel__avx2);
DECLARE_F32_DEFORM_BWD_UKERNEL_FUNCTION(f32_deform_bwd_ukernel__avx512);

/* Backward of one grid-sampler point over a channels-last plane, taps (r, c) of a separable
 * stencil with weights wy[r] * wx[c]:
 *   io[roff[r] + coff[c] + j] += (wy[r] * wx[c]) * g[j]                      (io != NULL)
 *   gxy[0] = sum_j g[j] * sum_{r,c} (wy[r] * dwx[c]) * in[roff[r] + coff[c] + j]  (gxy != NULL)
 *   gxy[1] = sum_j g[j] * sum_{r,c} (dwy[r] * wx[c]) * in[roff[r] + coff[c] + j]
 * Taps are taken in (r, c) order; taps addressing the same pixel are added one after the other.
 * nr <= 4, nc <= 4; nr == 0 or nc == 0 gives gxy = 0 and leaves io alone. */
#define DECLARE_F32_GRID_BWD_UKERNEL_FUNCTION(fn) void fn(size_t channels, size_t nr, const int64_t *roff, \
    const float *wy, const float *dwy, size_t nc, const int64_t *coff, const float *wx, const float *dwx, \
    const float *in, const float *g, float *io, float *gxy)
typedef DECLARE_F32_GRID_BWD_UKERNEL_FUNCTION((*f32_grid_bwd_fn));
DECLARE_F32_GRID_BWD_UKERNEL_FUNCTION(f32_grid_bwd_ukernel__scalar);
DECLARE_F32_GRID_BWD_UKERNEL_FUNCTION(f32_grid_bwd_ukernel__avx2);
DECLARE_F32_GRID_BWD_UKERNEL_FUNCTION(f32_grid_bwd_ukernel__avx512);

/* Tuning knob of the grid sampler for tests and benchmarks: channels per work unit (rounded up to
 * a multiple of 16); 0 (the default) picks it from the plane size. Not thread-safe. */
extern int64_t conform_opt_grid_sampler_chunk;

/* Bilinear grid-sampler backward over channels-last rows ([column][cs] buffers, cs a multiple of
 * 16, channel lanes a point does not have hold zeros): a point whose four taps are all inside
 * the plane is pts[k] = {off = x0, q = its index in grad_output, lx, ly = the fractions}; its taps
 * t = (y0, x0), (y0, x0+1), (y0+1, x0), (y0+1, x0+1) lie in the caller's rows r0 = buf (row y0)
 * and r1 = buf + next_row (row y0 + 1), the same step for in and io, with weights
 * w = ((1-ly)(1-lx), (1-ly) lx, ly (1-lx), ly lx), each rounded once. For every point k in order,
 * with g = go[cs q .. cs q + cs):
 *   io[row_t + cs x_t + c] += w_t * g[c]                 c < cs           (io != NULL)
 *   acc[4k + t] = sum_c g[c] * in[row_t + cs x_t + c]                              (acc != NULL)
 * The channel sum's order is fixed per ISA; the caller applies the coordinate-derivative weights
 * once per point. */
typedef struct {
    int32_t off, q;
    float lx, ly;
} f32_grid_pt;

/* the weights w above, the one place every ISA's bilinear grid kernels take them from (the same
 * products, so the same bits) */
static inline void f32_grid_pt_weights(const f32_grid_pt *pt, float w[4])
{
    const float ax = 1.0f - pt->lx, ay = 1.0f - pt->ly;
    w[0] = ay * ax;
    w[1] = ay * pt->lx;
    w[2] = pt->ly * ax;
    w[3] = pt->ly * pt->lx;
}
#define DECLARE_F32_GRID_BILINEAR_BWD_UKERNEL_FUNCTION(fn) void fn(size_t npts, const f32_grid_pt *pts, \
    size_t cs, ptrdiff_t next_row, const float *go, const float *in, float *io, float *acc)
typedef DECLARE_F32_GRID_BILINEAR_BWD_UKERNEL_FUNCTION((*f32_grid_bilinear_bwd_fn));
DECLARE_F32_GRID_BILINEAR_BWD_UKERNEL_FUNCTION(f32_grid_bilinear_bwd_ukernel__scalar);
DECLARE_F32_GRID_BILINEAR_BWD_UKERNEL_FUNCTION(f32_grid_bilinear_bwd_ukernel__avx2);
DECLARE_F32_GRID_BILINEAR_BWD_UKERNEL_FUNCTION(f32_grid_bilinear_bwd_ukernel__avx512);

/* Bilinear grid-sampler forward over a channels-last plane ([pixel][cs], cs a multiple of 16): a
 * point whose four taps are inside is pts[k] = {off = y0 W + x0, q = its output slot, lx, ly};
 * with the weights of f32_grid_bilinear_bwd and the taps at in + cs off, + cs, + next_row,
 * + next_row + cs:
 *   out[cs q + c] = ((w_0 v_0 + w_1 v_1) + w_2 v_2) + w_3 v_3      c < cs (FMAs where the ISA has them)
 */
#define DECLARE_F32_GRID_BILINEAR_FWD_UKERNEL_FUNCTION(fn) void fn(size_t npts, const f32_grid_pt *pts, \
    size_t cs, ptrdiff_t next_row, const float *in, float *out)
typedef DECLARE_F32_GRID_BILINEAR_FWD_UKERNEL_FUNCTION((*f32_grid_bilinear_fwd_fn));
DECLARE_F32_GRID_BILINEAR_FWD_UKERNEL_FUNCTION(f32_grid_bilinear_fwd_ukernel__scalar);
DECLARE_F32_GRID_BILINEAR_FWD_UKERNEL_FUNCTION(f32_grid_bilinear_fwd_ukernel__avx2);
DECLARE_F32_GRID_BILINEAR_FWD_UKERNEL_FUNCTION(f32_grid_bilinear_fwd_ukernel__avx512);

/* Tap lists of one rotated roi whose bins have at most 4 samples (gh * gw <= 4): for bin
 * i = ph PW + pw, its samples in (iy, ix) order, each sample's four corners in the order
 * (y0,x0), (y0,x1), (y1,x0), (y1,x1) with weights (wy wx) inv_count, the positions in the float32
 * operations of roi_align_rotated.c's comment; a sample outside [-1, H] x [-1, W] (or NaN) adds
 * nothing. Corners of the same pixel merge in order of appearance (the first one's slot, weights
 * summed left to right), except that weight-0 corners form their own class (one tap, never merged
 * into a positive one). Writes taps [starts[i] - base, starts[i + 1] - base) of bin i as pixel
 * index pix (y W + x) and weight w; returns the tap count (at most 16 PH PW); pix and w must have
 * room for 16 PH PW + 16 entries (the SIMD variant stores whole vectors past the last tap). All
 * ISAs give the same taps, in the same order, with the same bits. */
typedef struct {
    float Cy, Cx, Hr, Wr, bin_h, bin_w, cos_t, sin_t, inv_count;
    int32_t gh, gw, PH, PW;
    int64_t H, W; /* the few-sample kernels need H W < 2^30 (their int32 pixel keys) */
} f32_rotated_roi;
/* The four corners of one rotated sample at in-roi offsets (yy, xx), in the float32 operations
 * of roi_align_rotated.c's comment: 0 when it lies outside [-1, H] x [-1, W] (or is NaN), else 1
 * with pix = the corners' pixel indices in the order (y0,x0), (y0,x1), (y1,x0), (y1,x1) and
 * w = (wy wx) inv_count. Shared by the tap builders of every sample count. */
static inline int f32_rotated_corners(float yy, float xx, const f32_rotated_roi *g, int64_t pix[4], float w[4])
{
    const int64_t H = g->H, W = g->W;
    float y = yy * g->cos_t - xx * g->sin_t + g->Cy;
    float x = yy * g->sin_t + xx * g->cos_t + g->Cx;
    if (!(y >= -1.0f && y <= (float)H && x >= -1.0f && x <= (float)W)) return 0; /* NaN too */
    if (y <= 0.0f) y = 0.0f;
    if (x <= 0.0f) x = 0.0f;
    int64_t y0 = (int64_t)y, x0 = (int64_t)x, y1, x1;
    if (y0 >= H - 1) { y0 = y1 = H - 1; y = (float)y0; } else y1 = y0 + 1;
    if (x0 >= W - 1) { x0 = x1 = W - 1; x = (float)x0; } else x1 = x0 + 1;
    const float ly = y - (float)y0, lx = x - (float)x0, hy = 1.0f - ly, hx = 1.0f - lx;
    pix[0] = y0 * W + x0;
    pix[1] = y0 * W + x1;
    pix[2] = y1 * W + x0;
    pix[3] = y1 * W + x1;
    w[0] = hy * hx * g->inv_count;
    w[1] = hy * lx * g->inv_count;
    w[2] = ly * hx * g->inv_count;
    w[3] = ly * lx * g->inv_count;
    return 1;
}
#define DECLARE_F32_ROTATED_TAPS_UKERNEL_FUNCTION(fn) size_t fn(const f32_rotated_roi *g, size_t base, \
    size_t *starts, int32_t *pix, float *w)
typedef DECLARE_F32_ROTATED_TAPS_UKERNEL_FUNCTION((*f32_rotated_taps_fn));
DECLARE_F32_ROTATED_TAPS_UKERNEL_FUNCTION(f32_rotated_taps_ukernel__scalar);
DECLARE_F32_ROTATED_TAPS_UKERNEL_FUNCTION(f32_rotated_taps_ukernel__avx512);
/* (AVX2 uses the portable kernel: the merge needs AVX-512's conflict detection) */

/* Keys of the bilinear backward's point table under zeros padding: for q < n, with (gx, gy) =
 * grid[2q], grid[2q + 1] and ix, iy unnormalized as section 7.1 (align_corners: (g + 1) / 2 (S - 1),
 * else ((g + 1) S - 1) / 2, in that order of float32 operations), a point is in-plane iff
 * 0 <= ix < W - 1 and 0 <= iy < H - 1 (all four taps inside; NaN is not). Then
 *   key[q] = y0 xb + (x0 >> xshift), x0[q] = x0 = (int) ix, lx[q] = ix - x0, ly[q] = iy - y0,
 * else key[q] = -1 and the others as for ix = iy = 0. All ISAs give the same bits. */
typedef struct {
    float w, h, wm1, hm1; /* W, H, W - 1, H - 1 */
    int align_corners;
    int32_t xb, xshift;
} f32_grid_keys_params;
#define DECLARE_F32_GRID_BILINEAR_KEYS_UKERNEL_FUNCTION(fn) void fn(size_t n, const float *grid, \
    const f32_grid_keys_params *kp, int32_t *key, int32_t *x0, float *lx, float *ly)
typedef DECLARE_F32_GRID_BILINEAR_KEYS_UKERNEL_FUNCTION((*f32_grid_bilinear_keys_fn));
DECLARE_F32_GRID_BILINEAR_KEYS_UKERNEL_FUNCTION(f32_grid_bilinear_keys_ukernel__scalar);
DECLARE_F32_GRID_BILINEAR_KEYS_UKERNEL_FUNCTION(f32_grid_bilinear_keys_ukernel__avx2);
DECLARE_F32_GRID_BILINEAR_KEYS_UKERNEL_FUNCTION(f32_grid_bilinear_keys_ukernel__avx512);

/* Row copy dst[r * dst_stride + j] = src[r * src_stride + j] (r < rows, j < n) for an output
 * written once and not read back soon: streaming stores where a row is aligned (no read for
 * ownership of the destination), plain stores elsewhere. */
#define DECLARE_F32_COPY_ROWS_STREAM_UKERNEL_FUNCTION(fn) void fn(size_t rows, size_t n, const float *src, \
    size_t src_stride, float *dst, size_t dst_stride)
typedef DECLARE_F32_COPY_ROWS_STREAM_UKERNEL_FUNCTION((*f32_copy_rows_stream_fn));
DECLARE_F32_COPY_ROWS_STREAM_UKERNEL_FUNCTION(f32_copy_rows_stream_ukernel__scalar);
DECLARE_F32_COPY_ROWS_STREAM_UKERNEL_FUNCTION(f32_copy_rows_stream_ukernel__avx2);
DECLARE_F32_COPY_ROWS_STREAM_UKERNEL_FUNCTION(f32_copy_rows_stream_ukernel__avx512);

/* f32_transpose (same contract) for a destination written once and not read back soon:
 * streaming stores of whole destination lines when dst_stride is a multiple of 16 floats,
 * plain stores elsewhere. */
DECLARE_F32_TRANSPOSE_UKERNEL_FUNCTION(f32_transpose_stream_ukernel__scalar);
DECLARE_F32_TRANSPOSE_UKERNEL_FUNCTION(f32_transpose_stream_ukernel__avx2);
/* (AVX-512 dispatches to the AVX2 kernel, as f32_transpose) */
/* f32_transpose_stream that also zeroes the rows x cols elements of src it read: an accumulator
 * written out and cleared for its next use in one visit, while its lines are in L1 */
#define DECLARE_F32_TRANSPOSE_ZERO_UKERNEL_FUNCTION(fn) void fn(size_t rows, size_t cols, float *src, \
    size_t src_stride, float *dst, size_t dst_stride)
typedef DECLARE_F32_TRANSPOSE_ZERO_UKERNEL_FUNCTION((*f32_transpose_zero_fn));
DECLARE_F32_TRANSPOSE_ZERO_UKERNEL_FUNCTION(f32_transpose_stream_zero_ukernel__scalar);
DECLARE_F32_TRANSPOSE_ZERO_UKERNEL_FUNCTION(f32_transpose_stream_zero_ukernel__avx2);

/* Orders the streaming stores of the kernels called before it (the SIMD kernels that stream
 * without fencing themselves say so); AVX-512 takes the AVX2 one. */
#define DECLARE_F32_STREAM_FENCE_UKERNEL_FUNCTION(fn) void fn(void)
typedef DECLARE_F32_STREAM_FENCE_UKERNEL_FUNCTION((*f32_stream_fence_fn));
DECLARE_F32_STREAM_FENCE_UKERNEL_FUNCTION(f32_stream_fence_ukernel__scalar);
DECLARE_F32_STREAM_FENCE_UKERNEL_FUNCTION(f32_stream_fence_ukernel__avx2);

/* Every microkernel of one ISA: the one table the drivers take their kernels from (isa.c).
 * Where a wider variant would not be faster the table names the narrower one. */
typedef struct {
    f32_bilerp_bin_fwd_fn bilerp_bin_fwd;
    f32_bilerp_bin_bwd_fn bilerp_bin_bwd;
    f32_bilerp_row_bwd_fn bilerp_row_bwd;
    f32_transpose_fn transpose;
    f32_transpose_fn transpose_stream;
    f32_transpose_zero_fn transpose_stream_zero;
    f32_copy_rows_stream_fn copy_rows_stream;
    f32_rotated_taps_fn rotated_taps;
    f32_grid_bwd_fn grid_bwd;
    f32_grid_bilinear_bwd_fn grid_bilinear_bwd;
    f32_grid_bilinear_keys_fn grid_bilinear_keys;
    f32_grid_bilinear_fwd_fn grid_bilinear_fwd;
    f32_deform_fwd_fn deform_fwd;
    f32_stream_fence_fn stream_fence;
    f32_deform_bwd_fn deform_bwd;
} conform_ukernels;
const conform_ukernels *conform_ukernels_for(conform_isa isa);

/* ---- driver scaffolding (opt_common.c) ---------------------------------------------------- */

/* Scratch buffers (scratch.c), kept across calls so that a call does not fault in fresh pages:
 * bytes on whole 64-byte cache lines, 64-byte aligned, uninitialized (a reused one holds an older
 * call's data); NULL when out of memory. Free them with conform_scratch_free only. */
void *conform_scratch_alloc(size_t bytes);
void conform_scratch_free(void *p);
/* p (NULL: none) grown to bytes, its contents kept (as realloc); NULL when out of memory, p then
 * unchanged */
void *conform_scratch_realloc(void *p, size_t bytes);
/* bytes the cache holds between calls (tests) */
size_t conform_opt_scratch_kept(void);
/* Tests: every kept block's bytes set to byte (a kernel must not depend on what an older call
 * left there), and the smallest block kept (default 64 KiB; 0 keeps every one). Not thread-safe;
 * set the knob before calling. */
void conform_scratch_poison(unsigned char byte);
/* (a knob of the process-wide scratch cache, as the cache itself is: the kernels' public API takes
   no context to carry it, and only a test moves it) */
extern size_t conform_opt_scratch_keep_min;

/* n floats of scratch (conform_scratch_alloc: free with conform_scratch_free) */
void *conform_alloc_floats(size_t n);
/* a * cc and b * cc floats (times a vector of 64 bytes of slack) fit in size_t */
int conform_sizes_ok(int64_t a, int64_t b, int64_t cc);
/* Channels per work unit: a multiple of 16 (units never share a cache line), one plane slice of
 * about budget bytes, and, when nt > 0, about 4 units (batches x chunks) a thread, so a thread
 * slowed by another process takes fewer of them;
 * forced > 0 overrides (tests and tuning). nt <= 0: independent of the thread count. */
int64_t conform_pick_chunk(int64_t C, int64_t HW, int64_t batches, int nt, int64_t budget, int64_t forced);
/* ceil(q) of an adaptive sample count; 0 when q is not finite or rounds to less than 1 */
int64_t conform_adaptive_count(float q);
/* the thread count of a call: ex->threads, or OpenMP's default */
int conform_threads(const conform_exec *ex);
/* Every thread's buffers, allocated on the calling thread before a parallel region: bytes[i] for
 * buffer i of each of nt threads (0: NULL), scratch (uninitialized); thread t's buffer i is [t nbuf + i].
 * NULL when out of memory (then nothing is held). Nothing inside the region then waits for
 * another thread to arrive: a worker on a core another process holds may start a scheduler slice
 * late, and a team barrier after each thread's own allocation made every call wait for it. */
void **conform_thread_bufs(int nt, int nbuf, const size_t *bytes);
void conform_thread_bufs_free(void **b, int nt, int nbuf);

/* A thread's arena of per-roi tap tables (the roi drivers): taps off / w [0, n), table starts
 * [0, ns), scratch buffers; tables are appended, so an index stays valid as the arena grows. A roi's tables are
 * arena a of the team from start s (a < 0: the roi samples nothing). */
typedef struct {
    int64_t *off;
    float *w;
    size_t n, cap;
    size_t *starts;
    size_t ns, caps;
} conform_tap_arena;
typedef struct {
    int a;
    size_t s;
} conform_tab_ref;
void conform_arena_free(conform_tap_arena *a);
/* room for `taps` more taps and `starts` more starts (capacities doubled); 0 or -1 (no memory) */
/* the parallel tap arrays off and w (*cap entries each, scratch buffers) grown to hold need,
 * doubling from first; 0, or -1 when out of memory (both arrays stay valid) */
int conform_grow_taps(int64_t **off, float **w, size_t *cap, size_t need, size_t first);
int conform_arena_reserve(conform_tap_arena *a, size_t taps, size_t starts);

/* What both roi drivers (roi_align, roi_align_rotated) keep for a call: the dimensions, the rois
 * sorted by batch (order[bstart[b] .. bstart[b + 1]), ascending k), the team's tap arenas and
 * each roi's tables (ref[k].a < 0: the roi samples nothing), the channel chunking (cc channels a
 * unit, nchunks a batch) and the team's failure flag. */
typedef struct {
    int64_t B, C, H, W, K, PH, PW, P, HW;
    int nt;
    int64_t *order, *bstart;
    conform_tap_arena *arenas; /* nt */
    conform_tab_ref *ref;      /* K */
    int64_t cc, nchunks;
    int err;
} conform_roi_call;
/* Dimensions (a negative B or K as 0), thread count and allocations, every roi "nothing
 * sampled" until its tables are built. CONFORM_OK, or CONFORM_E_NOMEM with nothing held. */
int conform_roi_call_init(conform_roi_call *r, int64_t B, int64_t C, int64_t H, int64_t W, int64_t K, int64_t PH,
                          int64_t PW, const conform_exec *ex);
void conform_roi_call_free(conform_roi_call *r);
/* Any thread: the call failed (no memory); read back after the team's barrier. */
void conform_roi_call_fail(conform_roi_call *r);
/* Rois grouped by batch, stable in k: batch[k] (an int64 every stride bytes; < 0 skipped) and
 * bstart, B + 2 zeroed entries, give order[bstart[b] .. bstart[b + 1]) for batch b. */
void conform_sort_by_batch(int64_t K, int64_t B, const int64_t *batch, size_t stride, int64_t *order, int64_t *bstart);

#endif
