build2/harness/core/fill.o: harness/core/fill.c harness/core/fill.h \
 /usr/include/cjson/cJSON.h harness/core/tensor.h
harness/core/fill.h:
/usr/include/cjson/cJSON.h:
harness/core/tensor.h:
