build2/harness/judge/verify.o: harness/judge/verify.c \
 harness/judge/verify.h harness/core/op.h /usr/include/cjson/cJSON.h \
 optimized/conform_opt.h reference/conform_ref.h harness/core/tensor.h \
 harness/core/cli.h harness/core/op.h harness/core/fill.h \
 harness/report/report.h harness/core/suite.h
harness/judge/verify.h:
harness/core/op.h:
/usr/include/cjson/cJSON.h:
optimized/conform_opt.h:
reference/conform_ref.h:
harness/core/tensor.h:
harness/core/cli.h:
harness/core/op.h:
harness/core/fill.h:
harness/report/report.h:
harness/core/suite.h:
