build2/tests/test_roi_align_rotated.o: tests/test_roi_align_rotated.c \
 tests/ref_check.h harness/judge/compare.h harness/core/op.h \
 /usr/include/cjson/cJSON.h optimized/conform_opt.h \
 reference/conform_ref.h harness/core/tensor.h optimized/opt_internal.h \
 optimized/conform_opt.h harness/judge/verify.h
tests/ref_check.h:
harness/judge/compare.h:
harness/core/op.h:
/usr/include/cjson/cJSON.h:
optimized/conform_opt.h:
reference/conform_ref.h:
harness/core/tensor.h:
optimized/opt_internal.h:
optimized/conform_opt.h:
harness/judge/verify.h:
