build2/tests/test_plugins.o: tests/test_plugins.c tests/scratch.h \
 harness/core/cli.h harness/core/op.h /usr/include/cjson/cJSON.h \
 optimized/conform_opt.h reference/conform_ref.h harness/core/tensor.h \
 harness/report/report.h harness/core/suite.h
tests/scratch.h:
harness/core/cli.h:
harness/core/op.h:
/usr/include/cjson/cJSON.h:
optimized/conform_opt.h:
reference/conform_ref.h:
harness/core/tensor.h:
harness/report/report.h:
harness/core/suite.h:
