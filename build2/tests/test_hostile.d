build2/tests/test_hostile.o: tests/test_hostile.c tests/scratch.h \
 tests/sigterm_run.h harness/core/cli.h harness/core/op.h \
 /usr/include/cjson/cJSON.h optimized/conform_opt.h \
 reference/conform_ref.h harness/core/tensor.h tests/test_files.h \
 harness/report/report.h harness/core/suite.h harness/core/npy.h \
 harness/core/dtype.h harness/conform_plugin.h harness/judge/runner.h \
 harness/judge/compare.h harness/core/op.h harness/impl/impl.h \
 harness/core/dtype.h harness/judge/standards.h
tests/scratch.h:
tests/sigterm_run.h:
harness/core/cli.h:
harness/core/op.h:
/usr/include/cjson/cJSON.h:
optimized/conform_opt.h:
reference/conform_ref.h:
harness/core/tensor.h:
tests/test_files.h:
harness/report/report.h:
harness/core/suite.h:
harness/core/npy.h:
harness/core/dtype.h:
harness/conform_plugin.h:
harness/judge/runner.h:
harness/judge/compare.h:
harness/core/op.h:
harness/impl/impl.h:
harness/core/dtype.h:
harness/judge/standards.h:
