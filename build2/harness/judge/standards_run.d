build2/harness/judge/standards_run.o: harness/judge/standards_run.c \
 harness/judge/standards_run.h harness/judge/runner.h \
 harness/judge/compare.h harness/core/op.h /usr/include/cjson/cJSON.h \
 optimized/conform_opt.h reference/conform_ref.h harness/core/tensor.h \
 harness/impl/impl.h harness/conform_plugin.h harness/core/dtype.h \
 harness/core/suite.h harness/core/op.h harness/judge/standards.h
harness/judge/standards_run.h:
harness/judge/runner.h:
harness/judge/compare.h:
harness/core/op.h:
/usr/include/cjson/cJSON.h:
optimized/conform_opt.h:
reference/conform_ref.h:
harness/core/tensor.h:
harness/impl/impl.h:
harness/conform_plugin.h:
harness/core/dtype.h:
harness/core/suite.h:
harness/core/op.h:
harness/judge/standards.h:
