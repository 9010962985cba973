build2/tests/test_roi_end_mode.o: tests/test_roi_end_mode.c \
 optimized/conform_opt.h reference/conform_ref.h harness/judge/verify.h \
 harness/core/op.h /usr/include/cjson/cJSON.h harness/core/tensor.h
optimized/conform_opt.h:
reference/conform_ref.h:
harness/judge/verify.h:
harness/core/op.h:
/usr/include/cjson/cJSON.h:
harness/core/tensor.h:
