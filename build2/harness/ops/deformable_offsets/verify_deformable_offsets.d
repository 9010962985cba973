build2/harness/ops/deformable_offsets/verify_deformable_offsets.o: \
 harness/ops/deformable_offsets/verify_deformable_offsets.c \
 harness/core/fill.h /usr/include/cjson/cJSON.h harness/core/tensor.h \
 harness/judge/verify.h harness/core/op.h optimized/conform_opt.h \
 reference/conform_ref.h
harness/core/fill.h:
/usr/include/cjson/cJSON.h:
harness/core/tensor.h:
harness/judge/verify.h:
harness/core/op.h:
optimized/conform_opt.h:
reference/conform_ref.h:
