/* The zoo of faulty kernels: one line per bug, the only place the zoo is listed.
 *
 *   ZOO_BUG(id, op, what the kernel does wrong, the bug class in the field and where it was seen)
 *
 * tests/zoo/zoo_kernels.c is built once per line with -DZOO_BUG_ID=ZOO_<id> (build/zoo/<id>.so)
 * and once without a bug (build/zoo/none.so); tools/zoo.py reads this table, runs the default
 * suite against every build and requires each bug to fail on its own op only. Every string is a
 * plain C string literal without escapes, on the line of its ZOO_BUG (tools/zoo.py parses them).
 *
 *   ZOO_HIDDEN(id, why no case can catch it)
 *
 * marks a bug that only changes elements the tolerance model calls ambiguous, by the flip its
 * ambiguity term allows: the zoo reports it as hidden (and says so once a case catches it)
 * instead of dropping it or loosening anything. */
#ifndef ZOO_HIDDEN
#define ZOO_HIDDEN(id, why)
#endif

/* roi_align */
ZOO_BUG(ra_aligned_ignored, "roi_align", "the half-pixel offset of aligned=true is never applied", "legacy RoIAlign without the aligned option (torchvision < 0.6, detectron2 ROIAlign aligned=False)")
ZOO_BUG(ra_adaptive_floor, "roi_align", "adaptive sample count floor(bin) instead of ceil(bin)", "adaptive sampling_ratio=0 count (ops.md 1); rounding the wrong way")
ZOO_BUG(ra_batch_rounded, "roi_align", "batch index rounded half away from zero instead of floored", "batch index rule differs between implementations (ops.md 10: truncate, floor, round half even)")
ZOO_BUG(ra_no_min_size, "roi_align", "unaligned rois not enlarged to at least 1x1", "the max(roi size, 1) of aligned=false (torchvision, mmcv) forgotten")
ZOO_BUG(ra_bounds_exclusive, "roi_align", "samples exactly on y=-1, y=H, x=-1, x=W treated as outside", "rule A's inclusive bounds (ops.md A) written as strict comparisons")
ZOO_BUG(ra_empty_reads_origin, "roi_align", "an out-of-window sample adds 0 * F[0, 0] of its plane instead of nothing, so a NaN at pixel (0, 0) spreads to every bin with such a sample", "torchvision, mmcv and detectron2 CPU RoIAlign precompute an empty sample as position 0 with weight 0 (ops.md 10)")
ZOO_BUG(ra_nan_size_fmax, "roi_align", "unaligned roi size clamped with fmaxf, so a NaN size becomes 1 and samples", "max(size, 1) written with fmaxf, which drops NaN (C fmax), where std::max keeps it (torchvision)")

/* roi_align_v2_backward */
ZOO_BUG(rb_pooled_swapped, "roi_align_v2_backward", "pooled_height and pooled_width swapped", "torch_npu ROIAlign backward passes output_size swapped (ops.md 10); right only for square outputs")
ZOO_BUG(rb_count_not_divided, "roi_align_v2_backward", "gradient not divided by the sample count", "the 1/count of the adjoint dropped in a hand-written backward")
ZOO_BUG(rb_batch_truncated, "roi_align_v2_backward", "batch index truncated toward zero instead of floored (a roi at -0.5 lands on image 0)", "torchvision and mmcv cast the batch index to int (ops.md 10)")
ZOO_BUG(rb_oob_batch_clamped, "roi_align_v2_backward", "an out-of-range batch index clamped into [0, B) instead of skipping the roi", "range checks of the batch index differ between implementations (ops.md 10)")

/* roi_align_rotated */
ZOO_BUG(rr_clockwise_inverted, "roi_align_rotated", "clockwise inverted: theta = angle when clockwise, -angle otherwise", "clockwise attribute of mmcv/Ascend RoIAlignRotated (ops.md 3) read the wrong way")
ZOO_BUG(rr_rois_n6, "roi_align_rotated", "NHWC rois [6,n] read as [n,6]", "RoiAlignRotatedGrad README [n,6] versus the kernel's [6,n] layout (ops.md 3, 10)")
ZOO_BUG(rr_angle_degrees, "roi_align_rotated", "angle read in degrees instead of radians", "detectron2 ROIAlignRotated takes degrees, mmcv and Ascend radians (ops.md 3)")
ZOO_BUG(rr_coords_f16, "roi_align_rotated", "sample coordinates computed in float16", "float16 kernels that keep positions in the data type (Ascend fp16 paths)")

ZOO_BUG(rr_strict_y_lo, "roi_align_rotated", "window test y > -1 (strict) where rule A has y >= -1", "a one-character variant of rule A's inclusive bounds (it passed every rotated case before the cases of exact positions at angle 0)")
ZOO_BUG(rr_strict_y_hi, "roi_align_rotated", "window test y < H (strict) where rule A has y <= H", "a one-character variant of rule A's inclusive bounds")
ZOO_BUG(rr_strict_x_lo, "roi_align_rotated", "window test x > -1 (strict) where rule A has x >= -1", "a one-character variant of rule A's inclusive bounds")
ZOO_BUG(rr_strict_x_hi, "roi_align_rotated", "window test x < W (strict) where rule A has x <= W", "a one-character variant of rule A's inclusive bounds")

/* roi_align_rotated_grad */
ZOO_BUG(rg_strict_y_lo, "roi_align_rotated_grad", "window test y > -1 (strict) where rule A has y >= -1", "a one-character variant of rule A's inclusive bounds")
ZOO_BUG(rg_strict_y_hi, "roi_align_rotated_grad", "window test y < H (strict) where rule A has y <= H", "a one-character variant of rule A's inclusive bounds")
ZOO_BUG(rg_strict_x_lo, "roi_align_rotated_grad", "window test x > -1 (strict) where rule A has x >= -1", "a one-character variant of rule A's inclusive bounds")
ZOO_BUG(rg_strict_x_hi, "roi_align_rotated_grad", "window test x < W (strict) where rule A has x <= W", "a one-character variant of rule A's inclusive bounds")
ZOO_BUG(rg_pooled_swapped, "roi_align_rotated_grad", "pooled_h and pooled_w swapped", "mmcv NPU adapter passes pooled_h and pooled_w swapped to RoiAlignRotatedGrad (ops.md 10)")
ZOO_BUG(rg_nhwc_ignored, "roi_align_rotated_grad", "y_grad written with NCHW strides when data_format is NHWC", "layout handled in the forward and forgotten in the backward")
ZOO_BUG(rg_batch_rounded_even, "roi_align_rotated_grad", "batch index rounded half to even instead of floored", "the Ascend rotated kernel rounds the batch index half to even (ops.md 3, 10)")
ZOO_BUG(rg_clockwise_ignored, "roi_align_rotated_grad", "clockwise ignored in the backward (always counter-clockwise)", "an attribute the forward honours and the backward drops")

/* grid_sampler_2d */
ZOO_BUG(gf_align_corners_flipped, "grid_sampler_2d", "align_corners read inverted", "align_corners default changed in PyTorch 1.3; callers and kernels disagree on it")
ZOO_BUG(gf_padding_swapped, "grid_sampler_2d", "padding modes border and reflection swapped", "padding_mode enum order differs between APIs (aclnn, PyTorch, ONNX strings)")
ZOO_BUG(gf_reflect_once, "grid_sampler_2d", "reflection folded once instead of repeatedly", "coordinates beyond one span reflected a single time")
ZOO_BUG(gf_taps_padded_f32, "grid_sampler_2d", "bilinear border and reflection pad the tap indices and weight them by x1 - x, x - x0 of the unpadded float32 coordinate", "float32 weights of an unclipped coordinate: 0 or 2 past 2^24, values outside the plane's range")
ZOO_BUG(gf_nearest_half_away, "grid_sampler_2d", "nearest rounds half away from zero instead of half to even", "PyTorch rounds with nearbyint; round() differs on ties")

/* grid_sampler_2d_backward */
ZOO_BUG(gb_grid_grad_no_mult, "grid_sampler_2d_backward", "grid gradient without its coordinate multiplier (S-1)/2 or S/2", "the unnormalize derivative of spec 7.1 dropped")
ZOO_BUG(gb_border_grad_at_clip, "grid_sampler_2d_backward", "nonzero grid gradient at the border clip points i = 0 and i = S-1", "PyTorch issue 23925 (border padding gradient at the clip points)")
ZOO_BUG(gb_input_grad_f16_atomic, "grid_sampler_2d_backward", "input_grad accumulated in float16 (atomic adds in the data type)", "float16 atomic scatter-add of a grid sampler backward")
ZOO_BUG(gb_grid_grad_xy_swapped, "grid_sampler_2d_backward", "grid_grad x and y components swapped", "grid[...,0] is x (width), an easy pair to swap")

/* deformable_offsets */
ZOO_BUG(df_xy_swapped, "deformable_offsets", "x and y offsets swapped", "torchvision interleaves (dy, dx), DeformableOffsets stores x first (ops.md 5)")
ZOO_BUG(df_corner_clamped_read, "deformable_offsets", "a corner outside the plane reads its pixel clamped onto the plane times weight 0 instead of V = 0, so a NaN at a border pixel spreads", "deformable kernels that clamp corner indices and zero the weight instead of testing each corner (ops.md 10)")
ZOO_BUG(df_taps_dropped_edge, "deformable_offsets", "bilinear taps of the last row and column dropped (far corner tested against H-1, W-1)", "off-by-one bounds test of the bottom and right corners")
ZOO_BUG(df_ksize_swapped, "deformable_offsets", "ksize read as [kw, kh]", "mmcv's deformable conv passed kernel size in the wrong order")
ZOO_BUG(df_pads_order, "deformable_offsets", "pads read as [left, right, top, bottom]", "mmcv's deformable conv passed padding in the wrong order")
ZOO_BUG(df_strides_format_ignored, "deformable_offsets", "strides and dilations always read at the NCHW entries [2], [3]", "data_format of the attribute lists ignored (ops.md 5)")
ZOO_BUG(df_coords_f16, "deformable_offsets", "sample coordinates computed in float16", "float16 kernels that keep positions in the data type")

/* deformable_offsets_grad */
ZOO_BUG(dg_mask_ignored_offsets, "deformable_offsets_grad", "mask ignored in the x and y offset gradients", "the modulation factor dropped from the coordinate gradient")
ZOO_BUG(dg_window_open, "deformable_offsets_grad", "offset gradients kept on the window lines py = -1, H and px = -1, W", "torchvision's one-sided gradient there (ops.md 6, 10)")
ZOO_BUG(dg_grad_x_f16_atomic, "deformable_offsets_grad", "grad_x accumulated in float16 (atomic adds in the data type)", "float16 atomic scatter-add of a deformable backward")
ZOO_BUG(dg_dilations_swapped, "deformable_offsets_grad", "dilations of H and W swapped", "mmcv's deformable conv argument order: non-square dilations")
