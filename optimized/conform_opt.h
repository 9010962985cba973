/* conform optimized kernels: float32, SIMD (scalar / AVX2+FMA / AVX-512) chosen at run time,
 * OpenMP threads. Plain C API, linkable without the harness.
 *
 * Callers validate shapes and attributes first (the harness does); the kernels assume valid
 * parameters. Backward kernels zero their outputs themselves. Results do not depend on the
 * thread count: no atomics, every output element is summed in a fixed order. */
#ifndef CONFORM_OPT_H
#define CONFORM_OPT_H

#include <stddef.h>
#include <stdint.h>

#define CONFORM_OPT_VERSION 1

typedef enum {
    CONFORM_ISA_AUTO = -1, /* the best the CPU has */
    CONFORM_ISA_SCALAR = 0,
    CONFORM_ISA_AVX2 = 1, /* AVX2 + FMA */
    CONFORM_ISA_AVX512 = 2, /* AVX-512 F/BW/DQ/VL */
    CONFORM_ISA_COUNT = 3
} conform_isa;

int conform_isa_available(conform_isa isa); /* 1 when this CPU (and OS) runs it */
conform_isa conform_isa_best(void);
const char *conform_isa_name(conform_isa isa);         /* "scalar", "avx2", "avx512", "auto" */
int conform_isa_parse(const char *name, conform_isa *isa); /* 0 ok, -1 unknown name */

typedef struct {
    conform_isa isa; /* CONFORM_ISA_AUTO picks the best; an unavailable one is an error */
    int threads;     /* <= 0: OpenMP's default */
} conform_exec;

/* The kernels keep their per-call buffers for the next call (at most 64 MiB between calls): this
 * frees them, e.g. between tasks that need the memory. Safe to call at any time. */
void conform_opt_scratch_release(void);

/* Status of every kernel: 0 ok, -1 the requested ISA is not available, -2 out of memory. */
#define CONFORM_OK 0
#define CONFORM_E_ISA (-1)
#define CONFORM_E_NOMEM (-2)

typedef struct {
    int64_t B, C, H, W; /* feature map [B, C, H, W] */
    int64_t K;          /* rois [K, 5] */
    int64_t pooled_h, pooled_w;
    float spatial_scale;
    int64_t sampling_ratio;
    int aligned;
    int end_plus_one; /* roi_end_mode 1: ends at (x2 + 1, y2 + 1), computed as (x2 + 1) * scale */
} f32_roi_align_params;

/* output [K, C, pooled_h, pooled_w] */
int f32_roi_align_fwd(const f32_roi_align_params *p, const float *input, const float *rois,
                      float *output, const conform_exec *ex);
/* grad_input [B, C, H, W] from grad_output [K, C, pooled_h, pooled_w] */
int f32_roi_align_bwd(const f32_roi_align_params *p, const float *grad_output, const float *rois,
                      float *grad_input, const conform_exec *ex);

/* roi_align_rotated (spec 3) and roi_align_rotated_grad (spec 4). nhwc = 0: features [B, C, H, W],
 * per-roi tensors [K, C, pooled_h, pooled_w], rois [K, 6]; nhwc = 1: features [B, H, W, C], per-roi
 * tensors [K, pooled_h, pooled_w, C], rois [6, K]. Roi fields (batch, cx, cy, w, h, angle in radians). */
typedef struct {
    int64_t B, C, H, W;
    int64_t K;
    int64_t pooled_h, pooled_w;
    float spatial_scale;
    int64_t sampling_ratio;
    int aligned, clockwise, nhwc;
} f32_roi_align_rotated_params;

/* y (per-roi layout) from x (feature layout) */
int f32_roi_align_rotated_fwd(const f32_roi_align_rotated_params *p, const float *x, const float *rois,
                              float *y, const conform_exec *ex);
/* y_grad (feature layout) from x_grad (per-roi layout) */
int f32_roi_align_rotated_bwd(const f32_roi_align_rotated_params *p, const float *x_grad, const float *rois,
                              float *y_grad, const conform_exec *ex);

/* deformable_offsets (spec 5) / deformable_offsets_grad (spec 6), NHWC:
 * x [N, H, W, C], offsets [N, Ho, Wo, 3*dg*kh*kw], y / grad [N, Ho*kh, Wo*kw, C]. */
typedef struct {
    int64_t N, H, W, C;
    int64_t kh, kw, sh, sw, dh, dw;
    int64_t pt, pb, pl, pr;
    int64_t dg;
    int64_t Ho, Wo;
} f32_deformable_params;

int f32_deformable_offsets_fwd(const f32_deformable_params *p, const float *x, const float *offsets, float *y,
                               const conform_exec *ex);
/* grad_x [N, H, W, C], grad_offsets [N, Ho, Wo, 3*dg*kh*kw] */
int f32_deformable_offsets_bwd(const f32_deformable_params *p, const float *grad, const float *x,
                               const float *offsets, float *grad_x, float *grad_offsets, const conform_exec *ex);

/* grid_sampler_2d (spec 7) and grid_sampler_2d_backward. */
typedef struct {
    int64_t N, C, H, W;     /* input [N, C, H, W] */
    int64_t Ho, Wo;         /* grid [N, Ho, Wo, 2] */
    int interpolation_mode; /* 0 bilinear, 1 nearest, 2 bicubic */
    int padding_mode;       /* 0 zeros, 1 border, 2 reflection */
    int align_corners;
    int output_mask[2];     /* backward: compute input_grad, compute grid_grad */
} f32_grid_sampler_params;

/* output [N, C, Ho, Wo] */
int f32_grid_sampler_2d_fwd(const f32_grid_sampler_params *p, const float *input, const float *grid,
                            float *output, const conform_exec *ex);
/* input_grad [N, C, H, W], grid_grad [N, Ho, Wo, 2]; an output whose output_mask flag is 0 is not
 * touched (its pointer may be NULL). */
int f32_grid_sampler_2d_bwd(const f32_grid_sampler_params *p, const float *grad_output,
                            const float *input, const float *grid, float *input_grad,
                            float *grid_grad, const conform_exec *ex);

#endif
