"""The models suite (cases/models.json): the shapes published networks run these ops at.

The default suite uses small shapes so that it finishes in seconds; the bugs that reach users often
live at real sizes: tails of 256-channel vectors, a thousand rois over several images, FPN levels of
an 800x1333 image, BEV-sized grid sampling, work split across threads, memory. Each case's name says
the model and the layer; its "source" field gives the numbers and where they come from. Run it with
`make models` (every core, `conform run --jobs`); it is not part of `make test`.

Shared numbers:
  * COCO inputs are resized to 800 x 1333 and padded to a multiple of 32 (detectron2
    SIZE_DIVISIBILITY = 32 for FPN; mmdetection Pad size_divisor=32): 800 x 1344. FPN levels P2-P5
    at strides 4, 8, 16, 32: 200x336, 100x168, 50x84, 25x42, 256 channels (FPN out_channels).
  * Mask R-CNN R50-FPN: box head RoIAlign 7x7, mask head 14x14, 512 sampled rois per image in
    training (detectron2 ROI_HEADS.BATCH_SIZE_PER_IMAGE, mmdet rcnn sampler num=512), 1000
    proposals per image at test (detectron2 POST_NMS_TOPK_TEST), 25% positives (mask head in
    training: 128 per image), 100 detections per image at test. detectron2 uses ROIAlignV2
    (aligned=True) with POOLER_SAMPLING_RATIO 0; mmdetection's v1 configs sampling_ratio=2. Rois go
    to level floor(4 + log2(sqrt(wh)/224)) clamped to 2..5 (FPN paper, eq. 1): P2 holds boxes up to
    112 px, P3 112-224, P4 224-448, P5 larger.
  * Oriented R-CNN R50-FPN (mmrotate configs): RoIAlignRotated out_size=7, sample_num=2,
    clockwise=True, featmap_strides [4, 8, 16, 32], DOTA crops of 1024 x 1024 (P2 256x256).
  * DCNv2 in ResNet-50 stages c3-c5 (mmdetection dcn configs stage_with_dcn=(False, True, True,
    True)): the 3x3 conv of each bottleneck, deformable_groups 1, modulated; mid channels 128, 256,
    512 at strides 8, 16, 32 of 800 x 1344: 100x168, 50x84, 25x42; the first block of a stage has
    stride 2 on the 3x3 conv (pytorch style), reading the previous stride's map.
  * RAFT: features and correlation at 1/8 resolution, 256-channel feature maps; FlyingChairs crops
    368 x 496 (46 x 62 at 1/8); the correlation lookup samples a (2r+1)^2 = 9x9 window (r = 4) of
    the [H*W, 1, H, W] correlation volume with align_corners=True.
  * BEVFormer (base): 6 cameras, 900 x 1600 images padded to 928 x 1600, 256 channels (_dim_),
    a 200 x 200 BEV grid (bev_h_, bev_w_); image level at stride 8: 116 x 200.
"""
from suites import deformable_offsets as dfo
from suites import grid_sampler as gs
from suites import roi_align as ra
from suites import roi_align_rotated as rar

C = 256
COCO = [800, 1344]
FPN = {2: [200, 336], 3: [100, 168], 4: [50, 84], 5: [25, 42]}
# roi sizes in image pixels that FPN eq. 1 sends to each level
LEVEL_ROIS = {2: [16, 112], 3: [112, 224], 4: [224, 448], 5: [448, 800]}

MASK_RCNN = ("Mask R-CNN R50-FPN (detectron2 / mmdetection configs): 800x1344 padded COCO input, FPN level "
             "P{lvl} {h}x{w} at stride {s}, 256 channels; rois of {lo}-{hi} px (FPN eq. 1 level {lvl}); {what}")


def mask_rcnn(head, direction, lvl, k, batch, ph, sr, what, repeat=None):
    h, w = FPN[lvl]
    s = 2 ** lvl
    lo, hi = LEVEL_ROIS[lvl]
    attrs = {"spatial_scale": 1.0 / s, "sampling_ratio": sr, "aligned": True}
    rois = {"image": COCO, "size": [lo, hi]}
    name = "maskrcnn_{}_p{}_{}_sr{}".format(head, lvl, direction, sr)
    src = MASK_RCNN.format(lvl=lvl, h=h, w=w, s=s, lo=lo, hi=hi, what=what)
    if direction == "fwd":
        return ra.roi_align(name, [batch, C, h, w], k, dict(attrs, pooled_h=ph, pooled_w=ph), {"rois": rois},
                            repeat=repeat, source=src)
    return ra.roi_bwd(name, [batch, C, h, w], k, ph, ph, attrs, {"boxes": rois}, repeat=repeat, source=src)


def roi_align_cases():
    out = []
    for sr in (0, 2):
        out.append(mask_rcnn("box", "fwd", 2, 1000, 1, 7, sr, "box head 7x7, 1000 test proposals of one image"))
        out.append(mask_rcnn("box", "bwd", 2, 1024, 2, 7, sr, "box head 7x7, 2 images x 512 sampled training rois"))
        out.append(mask_rcnn("mask", "fwd", 2, 100, 1, 14, sr, "mask head 14x14, 100 test detections"))
        out.append(mask_rcnn("mask", "bwd", 2, 256, 2, 14, sr, "mask head 14x14, 2 images x 128 positive rois"))
    for lvl in (3, 4, 5):
        out.append(mask_rcnn("box", "fwd", lvl, 512, 2, 7, 0, "box head 7x7, 2 images' rois of this level"))
        out.append(mask_rcnn("box", "bwd", lvl, 512, 2, 7, 0, "box head 7x7, 2 images' rois of this level"))
    return out


ORIENTED = ("Oriented R-CNN R50-FPN (mmrotate config): RoIAlignRotated out_size 7, sample_num 2, aligned, "
            "clockwise={cw} (the config's True, and the other convention), DOTA 1024x1024 crop, level P2 256x256 "
            "at stride 4, 256 channels, 2 images x 512 sampled rois of 16-112 px, {fmt}")


def rotated_cases():
    out = []
    for cw in (True, False):
        attrs = {"spatial_scale": 0.25, "sampling_ratio": 2, "aligned": True, "clockwise": cw}
        rois = {"image": [1024, 1024], "size": [16, 112]}
        for fmt in ("NCHW", "NHWC"):
            tag = "orientedrcnn_p2_{}_cw{}".format(fmt.lower(), int(cw))
            src = ORIENTED.format(cw=cw, fmt=fmt)
            out.append(rar.rot_fwd(tag + "_fwd", [2, C, 256, 256], 1024, dict(attrs, pooled_h=7, pooled_w=7),
                                   {"rois": rois}, fmt=fmt, source=src))
            out.append(rar.rot_grad(tag + "_grad", [2, C, 256, 256], 1024, 7, 7, attrs, {"rois": rois}, fmt=fmt,
                                    source=src))
    return out


DCN = ("DCNv2 in ResNet-50 stage {st} (mmdetection dcn configs): 3x3 modulated deformable conv of the "
       "bottleneck, deformable_groups 1, {c} channels, input {h}x{w}, stride {s}, pad 1, batch 2, "
       "800x1344 COCO input; offsets within +-4 px")


def deformable_cases():
    out = []
    for st, c, (h, w), s in (("c3", 128, (100, 168), 1), ("c3 first block", 128, (200, 336), 2),
                             ("c4", 256, (50, 84), 1), ("c5", 512, (25, 42), 1)):
        attrs = dfo.A(3, 3, s=(s, s), pads=(1, 1, 1, 1))
        name = "dcnv2_r50_{}{}".format(st.split()[0], "_stride2" if s == 2 else "")
        src = DCN.format(st=st, c=c, h=h, w=w, s=s)
        offsets = {"spread": 4.0}
        out.append(dfo.fwd(name + "_fwd", [2, h, w, c], attrs, {"offsets": offsets}, source=src))
        out.append(dfo.bwd(name + "_grad", [2, h, w, c], attrs, {"offsets": offsets}, source=src))
    return out


BILINEAR = {"interpolation_mode": 0, "align_corners": False}


def grid_pair(name, shape, ho, wo, attrs, grid_gen, src, repeat=None):
    return [gs.fwd(name + "_fwd", shape, ho, wo, attrs, {"grid": grid_gen}, repeat=repeat, source=src),
            gs.bwd(name + "_bwd", shape, ho, wo, attrs, {"grid": grid_gen}, repeat=repeat, source=src)]


def grid_cases():
    out = []
    # a spatial transformer in front of an ImageNet classifier: an affine warp close to identity
    out += grid_pair("stn_imagenet_zeros", [32, 3, 224, 224], 224, 224, dict(BILINEAR, padding_mode=0),
                     {"base": "identity", "lo": -0.15, "hi": 0.15},
                     "spatial transformer (Jaderberg et al. 2015) on 224x224 RGB, batch 32: identity grid plus "
                     "up to 15% displacement, bilinear, zeros padding", repeat=2)
    # RAFT's correlation lookup: 9x9 windows of the [H*W, 1, H, W] volume at 1/8 of 368x496
    out += grid_pair("raft_corr_lookup_chairs", [46 * 62, 1, 46, 62], 9, 9,
                     {"interpolation_mode": 0, "padding_mode": 0, "align_corners": True},
                     {"lo": -1.1, "hi": 1.1},
                     "RAFT correlation lookup (radius 4: 9x9 points) in the level-0 correlation volume "
                     "[46*62, 1, 46, 62] of a FlyingChairs 368x496 pair at 1/8, bilinear, zeros, align_corners")
    # optical-flow warping of 256-channel features at 1/8 of a Sintel frame (436x1024 padded to 440x1024)
    for pad, pname in ((0, "zeros"), (1, "border")):
        out += grid_pair("flow_warp_sintel_" + pname, [4, C, 55, 128], 55, 128, dict(BILINEAR, padding_mode=pad),
                         {"base": "identity", "lo": -0.3, "hi": 0.3},
                         "optical-flow feature warping at RAFT's 1/8 resolution of Sintel 440x1024 (55x128), 256 "
                         "channels, batch 4: identity grid plus a flow of up to 30% of the frame, bilinear, "
                         + pname + " padding")
    return out


def bev_cases():
    out = []
    # BEVFormer-like: a 200x200 BEV grid projected into each camera's stride-8 feature map
    for pad, pname in ((0, "zeros"), (1, "border")):
        out += grid_pair("bev_6cam_" + pname, [6, C, 116, 200], 200, 200, dict(BILINEAR, padding_mode=pad),
                         {"lo": -1.3, "hi": 1.3},
                         "BEVFormer-like camera-to-BEV sampling: 6 cameras' 256-channel stride-8 maps 116x200 "
                         "(900x1600 padded to 928x1600) sampled at 200x200 BEV points per camera, spread over the "
                         "image and 15% beyond it, unordered as projected points are, bilinear, " + pname + " padding")
    return out


def cases():
    # the longest first, the shortest last: with --jobs the run does not end on one long case alone
    return bev_cases() + roi_align_cases() + rotated_cases() + deformable_cases() + grid_cases()
