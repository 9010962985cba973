build2/harness/core/tensor.o: harness/core/tensor.c harness/core/tensor.h
harness/core/tensor.h:
