build2/tests/test_verify.o: tests/test_verify.c harness/judge/verify.h \
 harness/core/op.h /usr/include/cjson/cJSON.h optimized/conform_opt.h \
 reference/conform_ref.h harness/core/tensor.h
harness/judge/verify.h:
harness/core/op.h:
/usr/include/cjson/cJSON.h:
optimized/conform_opt.h:
reference/conform_ref.h:
harness/core/tensor.h:
