build2/harness/ops/roi_align/verify_roi_end_mode.o: \
 harness/ops/roi_align/verify_roi_end_mode.c harness/core/fill.h \
 /usr/include/cjson/cJSON.h harness/core/tensor.h harness/judge/verify.h \
 harness/core/op.h optimized/conform_opt.h reference/conform_ref.h
harness/core/fill.h:
/usr/include/cjson/cJSON.h:
harness/core/tensor.h:
harness/judge/verify.h:
harness/core/op.h:
optimized/conform_opt.h:
reference/conform_ref.h:
