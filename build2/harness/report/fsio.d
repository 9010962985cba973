build2/harness/report/fsio.o: harness/report/fsio.c \
 harness/report/report.h /usr/include/cjson/cJSON.h
harness/report/report.h:
/usr/include/cjson/cJSON.h:
