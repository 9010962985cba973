build2/tests/test_cli.o: tests/test_cli.c tests/scratch.h \
 harness/core/cli.h harness/core/op.h /usr/include/cjson/cJSON.h \
 optimized/conform_opt.h reference/conform_ref.h harness/core/tensor.h \
 harness/core/npy.h harness/core/dtype.h harness/conform_plugin.h \
 harness/report/report.h
tests/scratch.h:
harness/core/cli.h:
harness/core/op.h:
/usr/include/cjson/cJSON.h:
optimized/conform_opt.h:
reference/conform_ref.h:
harness/core/tensor.h:
harness/core/npy.h:
harness/core/dtype.h:
harness/conform_plugin.h:
harness/report/report.h:
