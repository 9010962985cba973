build2/harness/ops/roi_align_rotated/op_roi_align_rotated.o: \
 harness/ops/roi_align_rotated/op_roi_align_rotated.c harness/core/fill.h \
 /usr/include/cjson/cJSON.h harness/core/tensor.h harness/core/op.h \
 optimized/conform_opt.h reference/conform_ref.h
harness/core/fill.h:
/usr/include/cjson/cJSON.h:
harness/core/tensor.h:
harness/core/op.h:
optimized/conform_opt.h:
reference/conform_ref.h:
