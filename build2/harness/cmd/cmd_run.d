build2/harness/cmd/cmd_run.o: harness/cmd/cmd_run.c harness/core/cli.h \
 harness/core/op.h /usr/include/cjson/cJSON.h optimized/conform_opt.h \
 reference/conform_ref.h harness/core/tensor.h harness/impl/jobs.h \
 harness/judge/runner.h harness/judge/compare.h harness/core/op.h \
 harness/impl/impl.h harness/conform_plugin.h harness/core/dtype.h \
 harness/core/suite.h harness/judge/standards.h harness/report/report.h \
 harness/core/select.h harness/core/suite.h harness/judge/standards.h \
 harness/judge/verify.h harness/report/zoo_power.h
harness/core/cli.h:
harness/core/op.h:
/usr/include/cjson/cJSON.h:
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
harness/report/report.h:
harness/core/select.h:
harness/core/suite.h:
harness/judge/standards.h:
harness/judge/verify.h:
harness/report/zoo_power.h:
