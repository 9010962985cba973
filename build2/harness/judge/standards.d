build2/harness/judge/standards.o: harness/judge/standards.c \
 harness/judge/standards.h /usr/include/cjson/cJSON.h \
 harness/core/dtype.h harness/conform_plugin.h
harness/judge/standards.h:
/usr/include/cjson/cJSON.h:
harness/core/dtype.h:
harness/conform_plugin.h:
