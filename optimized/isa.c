/* Run-time ISA detection and names, and the microkernel table of each ISA. The only place an ISA
 * is chosen for the kernels, and the one place the CPU is asked (the judge's vector blocks ask it
 * here too: harness/judge/judge_avx2.h). */
#include "opt_internal.h"

#include <string.h>

int conform_isa_available(conform_isa isa)
{
    __builtin_cpu_init();
    switch (isa) {
    case CONFORM_ISA_SCALAR:
        return 1;
    case CONFORM_ISA_AVX2:
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case CONFORM_ISA_AVX512:
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl") &&
               __builtin_cpu_supports("avx512cd") &&
               __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    default:
        return 0;
    }
}

conform_isa conform_isa_best(void)
{
    if (conform_isa_available(CONFORM_ISA_AVX512)) return CONFORM_ISA_AVX512;
    if (conform_isa_available(CONFORM_ISA_AVX2)) return CONFORM_ISA_AVX2;
    return CONFORM_ISA_SCALAR;
}

const char *conform_isa_name(conform_isa isa)
{
    switch (isa) {
    case CONFORM_ISA_AUTO: return "auto";
    case CONFORM_ISA_SCALAR: return "scalar";
    case CONFORM_ISA_AVX2: return "avx2";
    case CONFORM_ISA_AVX512: return "avx512";
    default: return "unknown";
    }
}

int conform_isa_parse(const char *name, conform_isa *isa)
{
    static const conform_isa all[] = {CONFORM_ISA_AUTO, CONFORM_ISA_SCALAR, CONFORM_ISA_AVX2,
                                      CONFORM_ISA_AVX512};
    if (!name) return -1;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (strcmp(name, conform_isa_name(all[i])) == 0) {
            if (isa) *isa = all[i];
            return 0;
        }
    return -1;
}

int conform_opt_resolve_isa(const conform_exec *ex, conform_isa *isa)
{
    conform_isa want = ex ? ex->isa : CONFORM_ISA_AUTO;
    if (want == CONFORM_ISA_AUTO) {
        *isa = conform_isa_best();
        return CONFORM_OK;
    }
    if (want < 0 || want >= CONFORM_ISA_COUNT || !conform_isa_available(want)) return CONFORM_E_ISA;
    *isa = want;
    return CONFORM_OK;
}

static const conform_ukernels ukernels_scalar = {
    .bilerp_bin_fwd = f32_bilerp_bin_fwd_ukernel__scalar,
    .bilerp_bin_bwd = f32_bilerp_bin_bwd_ukernel__scalar,
    .bilerp_row_bwd = f32_bilerp_row_bwd_ukernel__scalar,
    .transpose = f32_transpose_ukernel__scalar,
    .transpose_stream = f32_transpose_stream_ukernel__scalar,
    .transpose_stream_zero = f32_transpose_stream_zero_ukernel__scalar,
    .copy_rows_stream = f32_copy_rows_stream_ukernel__scalar,
    .rotated_taps = f32_rotated_taps_ukernel__scalar,
    .grid_bwd = f32_grid_bwd_ukernel__scalar,
    .grid_bilinear_bwd = f32_grid_bilinear_bwd_ukernel__scalar,
    .grid_bilinear_keys = f32_grid_bilinear_keys_ukernel__scalar,
    .grid_bilinear_fwd = f32_grid_bilinear_fwd_ukernel__scalar,
    .deform_fwd = f32_deform_fwd_ukernel__scalar,
    .stream_fence = f32_stream_fence_ukernel__scalar,
    .deform_bwd = f32_deform_bwd_ukernel__scalar,
};

static const conform_ukernels ukernels_avx2 = {
    .bilerp_bin_fwd = f32_bilerp_bin_fwd_ukernel__avx2,
    .bilerp_bin_bwd = f32_bilerp_bin_bwd_ukernel__avx2,
    .bilerp_row_bwd = f32_bilerp_row_bwd_ukernel__avx2,
    .transpose = f32_transpose_ukernel__avx2,
    .transpose_stream = f32_transpose_stream_ukernel__avx2,
    .transpose_stream_zero = f32_transpose_stream_zero_ukernel__avx2,
    .copy_rows_stream = f32_copy_rows_stream_ukernel__avx2,
    .rotated_taps = f32_rotated_taps_ukernel__scalar, /* the merge needs AVX-512's conflict detection */
    .grid_bwd = f32_grid_bwd_ukernel__avx2,
    .grid_bilinear_bwd = f32_grid_bilinear_bwd_ukernel__avx2,
    .grid_bilinear_keys = f32_grid_bilinear_keys_ukernel__avx2,
    .grid_bilinear_fwd = f32_grid_bilinear_fwd_ukernel__avx2,
    .deform_fwd = f32_deform_fwd_ukernel__avx2,
    .stream_fence = f32_stream_fence_ukernel__avx2,
    .deform_bwd = f32_deform_bwd_ukernel__avx2,
};

static const conform_ukernels ukernels_avx512 = {
    .bilerp_bin_fwd = f32_bilerp_bin_fwd_ukernel__avx512,
    .bilerp_bin_bwd = f32_bilerp_bin_bwd_ukernel__avx512,
    .bilerp_row_bwd = f32_bilerp_row_bwd_ukernel__avx512,
    .transpose = f32_transpose_ukernel__avx512,
    .transpose_stream = f32_transpose_stream_ukernel__avx2, /* likewise */
    .transpose_stream_zero = f32_transpose_stream_zero_ukernel__avx2,
    .copy_rows_stream = f32_copy_rows_stream_ukernel__avx512,
    .rotated_taps = f32_rotated_taps_ukernel__avx512,
    .grid_bwd = f32_grid_bwd_ukernel__avx512,
    .grid_bilinear_bwd = f32_grid_bilinear_bwd_ukernel__avx512,
    .grid_bilinear_keys = f32_grid_bilinear_keys_ukernel__avx512,
    .grid_bilinear_fwd = f32_grid_bilinear_fwd_ukernel__avx512,
    .deform_fwd = f32_deform_fwd_ukernel__avx512,
    .stream_fence = f32_stream_fence_ukernel__avx2, /* the same instruction */
    .deform_bwd = f32_deform_bwd_ukernel__avx512,
};

const conform_ukernels *conform_ukernels_for(conform_isa isa)
{
    switch (isa) {
    case CONFORM_ISA_AVX512: return &ukernels_avx512;
    case CONFORM_ISA_AVX2: return &ukernels_avx2;
    default: return &ukernels_scalar;
    }
}
