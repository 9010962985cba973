build2/tests/test_tolerance_caps.o: tests/test_tolerance_caps.c \
 harness/judge/compare.h harness/core/op.h /usr/include/cjson/cJSON.h \
 optimized/conform_opt.h reference/conform_ref.h harness/core/tensor.h \
 tests/ref_check.h
harness/judge/compare.h:
harness/core/op.h:
/usr/include/cjson/cJSON.h:
optimized/conform_opt.h:
reference/conform_ref.h:
harness/core/tensor.h:
tests/ref_check.h:
