build2/tests/test_standards_reports.o: tests/test_standards_reports.c \
 harness/core/cli.h harness/core/op.h /usr/include/cjson/cJSON.h \
 optimized/conform_opt.h reference/conform_ref.h harness/core/tensor.h \
 harness/core/npy.h harness/core/dtype.h harness/conform_plugin.h \
 harness/report/report.h tests/scratch.h tests/test_files.h \
 harness/judge/standards.h
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
tests/scratch.h:
tests/test_files.h:
harness/judge/standards.h:
