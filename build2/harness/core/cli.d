build2/harness/core/cli.o: harness/core/cli.c harness/core/cli.h \
 harness/core/op.h /usr/include/cjson/cJSON.h optimized/conform_opt.h \
 reference/conform_ref.h harness/core/tensor.h harness/core/fill.h \
 harness/core/npy.h harness/core/dtype.h harness/conform_plugin.h
harness/core/cli.h:
harness/core/op.h:
/usr/include/cjson/cJSON.h:
optimized/conform_opt.h:
reference/conform_ref.h:
harness/core/tensor.h:
harness/core/fill.h:
harness/core/npy.h:
harness/core/dtype.h:
harness/conform_plugin.h:
