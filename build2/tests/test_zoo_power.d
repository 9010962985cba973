build2/tests/test_zoo_power.o: tests/test_zoo_power.c \
 harness/report/report.h /usr/include/cjson/cJSON.h tests/scratch.h \
 harness/core/suite.h harness/core/op.h optimized/conform_opt.h \
 reference/conform_ref.h harness/core/tensor.h harness/report/zoo_power.h
harness/report/report.h:
/usr/include/cjson/cJSON.h:
tests/scratch.h:
harness/core/suite.h:
harness/core/op.h:
optimized/conform_opt.h:
reference/conform_ref.h:
harness/core/tensor.h:
harness/report/zoo_power.h:
