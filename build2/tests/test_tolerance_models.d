build2/tests/test_tolerance_models.o: tests/test_tolerance_models.c \
 tests/ref_check.h harness/judge/compare.h harness/core/op.h \
 /usr/include/cjson/cJSON.h optimized/conform_opt.h \
 reference/conform_ref.h harness/core/tensor.h harness/core/dtype.h \
 harness/conform_plugin.h
tests/ref_check.h:
harness/judge/compare.h:
harness/core/op.h:
/usr/include/cjson/cJSON.h:
optimized/conform_opt.h:
reference/conform_ref.h:
harness/core/tensor.h:
harness/core/dtype.h:
harness/conform_plugin.h:
