build2/harness/core/npy.o: harness/core/npy.c harness/core/npy.h \
 harness/core/dtype.h harness/conform_plugin.h harness/core/tensor.h
harness/core/npy.h:
harness/core/dtype.h:
harness/conform_plugin.h:
harness/core/tensor.h:
