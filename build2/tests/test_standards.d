build2/tests/test_standards.o: tests/test_standards.c \
 harness/judge/standards.h /usr/include/cjson/cJSON.h
harness/judge/standards.h:
/usr/include/cjson/cJSON.h:
