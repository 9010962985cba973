build2/harness/impl/jobs.o: harness/impl/jobs.c harness/impl/jobs.h \
 harness/judge/runner.h harness/judge/compare.h harness/core/op.h \
 /usr/include/cjson/cJSON.h optimized/conform_opt.h \
 reference/conform_ref.h harness/core/tensor.h harness/impl/impl.h \
 harness/conform_plugin.h harness/core/dtype.h harness/core/suite.h \
 harness/core/op.h harness/judge/standards.h
harness/impl/jobs.h:
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
