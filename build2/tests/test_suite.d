build2/tests/test_suite.o: tests/test_suite.c harness/core/suite.h \
 harness/core/op.h /usr/include/cjson/cJSON.h optimized/conform_opt.h \
 reference/conform_ref.h harness/core/tensor.h
harness/core/suite.h:
harness/core/op.h:
/usr/include/cjson/cJSON.h:
optimized/conform_opt.h:
reference/conform_ref.h:
harness/core/tensor.h:
