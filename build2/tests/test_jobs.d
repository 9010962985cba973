build2/tests/test_jobs.o: tests/test_jobs.c tests/scratch.h \
 tests/test_files.h harness/report/report.h /usr/include/cjson/cJSON.h \
 tests/sigterm_run.h harness/core/cli.h harness/core/op.h \
 optimized/conform_opt.h reference/conform_ref.h harness/core/tensor.h \
 harness/impl/jobs.h harness/judge/runner.h harness/judge/compare.h \
 harness/core/op.h harness/impl/impl.h harness/conform_plugin.h \
 harness/core/dtype.h harness/core/suite.h harness/judge/standards.h
tests/scratch.h:
tests/test_files.h:
harness/report/report.h:
/usr/include/cjson/cJSON.h:
tests/sigterm_run.h:
harness/core/cli.h:
harness/core/op.h:
optimized/conform_opt.h:
reference/conform_ref.h:
harness/core/tensor.h:
harness/impl/jobs.h:
harness/judge/runner.h:
harness/judge/compare.h:
harness/core/op.h:
harness/impl/impl.h:
harness/conform_plugin.h:
harness/core/dtype.h:
harness/core/suite.h:
harness/judge/standards.h:
