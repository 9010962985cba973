build2/tests/test_check.o: tests/test_check.c tests/scratch.h \
 harness/core/cli.h harness/core/op.h /usr/include/cjson/cJSON.h \
 optimized/conform_opt.h reference/conform_ref.h harness/core/tensor.h \
 harness/judge/compare.h harness/core/op.h harness/core/npy.h \
 harness/core/dtype.h harness/conform_plugin.h harness/core/suite.h
tests/scratch.h:
harness/core/cli.h:
harness/core/op.h:
/usr/include/cjson/cJSON.h:
optimized/conform_opt.h:
reference/conform_ref.h:
harness/core/tensor.h:
harness/judge/compare.h:
harness/core/op.h:
harness/core/npy.h:
harness/core/dtype.h:
harness/conform_plugin.h:
harness/core/suite.h:
