build2/harness/core/select.o: harness/core/select.c harness/core/select.h \
 harness/core/suite.h harness/core/op.h /usr/include/cjson/cJSON.h \
 optimized/conform_opt.h reference/conform_ref.h harness/core/tensor.h \
 harness/core/cli.h harness/report/report.h
harness/core/select.h:
harness/core/suite.h:
harness/core/op.h:
/usr/include/cjson/cJSON.h:
optimized/conform_opt.h:
reference/conform_ref.h:
harness/core/tensor.h:
harness/core/cli.h:
harness/report/report.h:
