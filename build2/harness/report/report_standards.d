build2/harness/report/report_standards.o: \
 harness/report/report_standards.c harness/report/report.h \
 /usr/include/cjson/cJSON.h harness/judge/standards.h \
 harness/report/report_buf.h
harness/report/report.h:
/usr/include/cjson/cJSON.h:
harness/judge/standards.h:
harness/report/report_buf.h:
