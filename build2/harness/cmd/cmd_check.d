build2/harness/cmd/cmd_check.o: harness/cmd/cmd_check.c \
 harness/core/cli.h harness/core/op.h /usr/include/cjson/cJSON.h \
 optimized/conform_opt.h reference/conform_ref.h harness/core/tensor.h \
 harness/core/npy.h harness/core/dtype.h harness/conform_plugin.h \
 harness/report/report.h harness/judge/runner.h harness/judge/compare.h \
 harness/core/op.h harness/impl/impl.h harness/core/dtype.h \
 harness/core/suite.h harness/judge/standards.h \
 harness/judge/standards_run.h harness/judge/runner.h \
 harness/judge/verify.h
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
harness/judge/runner.h:
harness/judge/compare.h:
harness/core/op.h:
harness/impl/impl.h:
harness/core/dtype.h:
harness/core/suite.h:
harness/judge/standards.h:
harness/judge/standards_run.h:
harness/judge/runner.h:
harness/judge/verify.h:
