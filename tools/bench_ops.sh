# The make bench problems, one `run OP ARGS...` line each; the caller defines run (tools/bench.sh
# prints timings against the floor, tools/bench_contention.sh the cost of contention). Sourced.
# OPS="op1 op2" (exact names) runs only those lines, for iterating on one kernel.
# bench_args = the arguments without their --impl VALUE: for a caller that runs one impl of every
# problem (some lines below give "--impl both", and conform refuses an option given twice)
without_impl() {
    bench_args=()
    local a skip=0
    for a in "$@"; do
        if ((skip)); then skip=0; continue; fi
        if [ "$a" = --impl ]; then skip=1; continue; fi
        bench_args+=("$a")
    done
}

bench_ops() {
    run() {
        if [ -n "${OPS:-}" ] && [[ " $OPS " != *" $1 "* ]]; then return 0; fi
        run_one "$@"
    }
    echo "# roi_align family: B=2 C=256 64x64, K=256 rois 8..80 px, scale 0.25, 7x7, sampling_ratio 2, aligned"
    rois='{"rois": {"size": [8, 80], "image": [256, 256]}, "boxes": {"size": [8, 80], "image": [256, 256]}}'
    run roi_align --shape input=2,256,64,64 --shape rois=256,5 --gen "$rois" \
        --attr pooled_h=7 --attr pooled_w=7 --attr spatial_scale=0.25 --attr sampling_ratio=2 --attr aligned=true
    run roi_align_v2_backward --shape grad_output=256,256,7,7 --shape boxes=256,5 --gen "$rois" \
        --attr input_shape=2,256,64,64 --attr pooled_height=7 --attr pooled_width=7 --attr spatial_scale=0.25 \
        --attr sampling_ratio=2 --attr aligned=true

    echo "# roi_align_rotated family: B=2 C=256 64x64, 256 rois 8..80 px at random angles, scale 0.25, 7x7, sampling_ratio 2, aligned"
    rrois='{"rois": {"size": [8, 80], "image": [256, 256], "angle": [-3.1416, 3.1416]}}'
    for fmt in NCHW NHWC; do
        if [ "$fmt" = NCHW ]; then xs=2,256,64,64; gs=256,256,7,7; rs=256,6; ys=2,256,64,64; else xs=2,64,64,256; gs=256,7,7,256; rs=6,256; ys=2,64,64,256; fi
        run roi_align_rotated --shape x=$xs --shape rois=$rs --gen "$rrois" --attr data_format=$fmt \
            --attr pooled_h=7 --attr pooled_w=7 --attr spatial_scale=0.25 --attr sampling_ratio=2 --attr aligned=true
        run roi_align_rotated_grad --shape x_grad=$gs --shape rois=$rs --gen "$rrois" --attr data_format=$fmt \
            --attr y_grad_shape=$ys --attr pooled_h=7 --attr pooled_w=7 --attr spatial_scale=0.25 \
            --attr sampling_ratio=2 --attr aligned=true
    done
    echo "# deformable_offsets family: N=2 64x64 C=64, 3x3, stride 1, pad 1, dilation 1, 1 group (offsets uniform +-2, masks 0..1)"
    run deformable_offsets --shape x=2,64,64,64 --shape offsets=2,64,64,27 --attr ksize=3,3 --attr pads=1,1,1,1 --impl both
    run deformable_offsets_grad --shape grad=2,192,192,64 --shape x=2,64,64,64 --shape offsets=2,64,64,27 \
        --attr ksize=3,3 --attr pads=1,1,1,1 --impl both
    echo "# grid sampler: N=8 C=64 128x128 input, 128x128 grid uniform in [-1,1], bilinear, zeros, align_corners false"
    run grid_sampler_2d --shape input=8,64,128,128 --shape grid=8,128,128,2 --gen '{"grid": {"lo": -1, "hi": 1}}' \
        --attr interpolation_mode=0 --attr padding_mode=0 --attr align_corners=false
    run grid_sampler_2d_backward --shape grad_output=8,64,128,128 --shape input=8,64,128,128 --shape grid=8,128,128,2 \
        --gen '{"grid": {"lo": -1, "hi": 1}}' --attr interpolation_mode=0 --attr padding_mode=0 --attr align_corners=false \
        --attr output_mask=1,1
}
