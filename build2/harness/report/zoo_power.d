build2/harness/report/zoo_power.o: harness/report/zoo_power.c \
 harness/report/report.h /usr/include/cjson/cJSON.h \
 harness/report/zoo_power.h harness/core/suite.h harness/core/op.h \
 optimized/conform_opt.h reference/conform_ref.h harness/core/tensor.h
harness/report/report.h:
/usr/include/cjson/cJSON.h:
harness/report/zoo_power.h:
harness/core/suite.h:
harness/core/op.h:
optimized/conform_opt.h:
reference/conform_ref.h:
harness/core/tensor.h:
