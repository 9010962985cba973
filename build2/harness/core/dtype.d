build2/harness/core/dtype.o: harness/core/dtype.c harness/core/dtype.h \
 harness/conform_plugin.h
harness/core/dtype.h:
harness/conform_plugin.h:
