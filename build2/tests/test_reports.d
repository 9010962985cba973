build2/tests/test_reports.o: tests/test_reports.c tests/scratch.h \
 tests/test_files.h harness/report/report.h /usr/include/cjson/cJSON.h \
 harness/core/cli.h harness/core/op.h optimized/conform_opt.h \
 reference/conform_ref.h harness/core/tensor.h harness/judge/compare.h \
 harness/core/op.h
tests/scratch.h:
tests/test_files.h:
harness/report/report.h:
/usr/include/cjson/cJSON.h:
harness/core/cli.h:
harness/core/op.h:
optimized/conform_opt.h:
reference/conform_ref.h:
harness/core/tensor.h:
harness/judge/compare.h:
harness/core/op.h:
