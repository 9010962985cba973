build2/harness/report/report_formats.o: harness/report/report_formats.c \
 harness/judge/compare.h harness/core/op.h /usr/include/cjson/cJSON.h \
 optimized/conform_opt.h reference/conform_ref.h harness/core/tensor.h \
 harness/core/dtype.h harness/conform_plugin.h harness/report/report.h \
 harness/report/report_buf.h
harness/judge/compare.h:
harness/core/op.h:
/usr/include/cjson/cJSON.h:
optimized/conform_opt.h:
reference/conform_ref.h:
harness/core/tensor.h:
harness/core/dtype.h:
harness/conform_plugin.h:
harness/report/report.h:
harness/report/report_buf.h:
