build2/tests/test_compare.o: tests/test_compare.c harness/judge/compare.h \
 harness/core/op.h /usr/include/cjson/cJSON.h optimized/conform_opt.h \
 reference/conform_ref.h harness/core/tensor.h
harness/judge/compare.h:
harness/core/op.h:
/usr/include/cjson/cJSON.h:
optimized/conform_opt.h:
reference/conform_ref.h:
harness/core/tensor.h:
