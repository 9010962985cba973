build2/tests/test_devflow.o: tests/test_devflow.c tests/scratch.h \
 tests/test_files.h harness/report/report.h /usr/include/cjson/cJSON.h \
 harness/core/cli.h harness/core/op.h optimized/conform_opt.h \
 reference/conform_ref.h harness/core/tensor.h harness/core/dtype.h \
 harness/conform_plugin.h harness/impl/impl.h harness/core/op.h \
 harness/core/suite.h harness/core/npy.h harness/core/dtype.h
tests/scratch.h:
tests/test_files.h:
harness/report/report.h:
/usr/include/cjson/cJSON.h:
harness/core/cli.h:
harness/core/op.h:
optimized/conform_opt.h:
reference/conform_ref.h:
harness/core/tensor.h:
harness/core/dtype.h:
harness/conform_plugin.h:
harness/impl/impl.h:
harness/core/op.h:
harness/core/suite.h:
harness/core/npy.h:
harness/core/dtype.h:
