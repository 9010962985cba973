build2/harness/impl/impl.o: harness/impl/impl.c harness/impl/impl.h \
 harness/conform_plugin.h harness/core/dtype.h harness/core/op.h \
 /usr/include/cjson/cJSON.h optimized/conform_opt.h \
 reference/conform_ref.h harness/core/tensor.h harness/core/suite.h \
 harness/core/op.h
harness/impl/impl.h:
harness/conform_plugin.h:
harness/core/dtype.h:
harness/core/op.h:
/usr/include/cjson/cJSON.h:
optimized/conform_opt.h:
reference/conform_ref.h:
harness/core/tensor.h:
harness/core/suite.h:
harness/core/op.h:
