build2/tests/test_npy.o: tests/test_npy.c harness/core/npy.h \
 harness/core/dtype.h harness/conform_plugin.h harness/core/tensor.h
harness/core/npy.h:
harness/core/dtype.h:
harness/conform_plugin.h:
harness/core/tensor.h:
