build2/harness/impl/impl_dir.o: harness/impl/impl_dir.c \
 harness/core/export.h harness/impl/impl.h harness/conform_plugin.h \
 harness/core/dtype.h harness/core/op.h /usr/include/cjson/cJSON.h \
 optimized/conform_opt.h reference/conform_ref.h harness/core/tensor.h \
 harness/core/suite.h harness/core/op.h harness/core/npy.h \
 harness/core/dtype.h harness/report/report.h
harness/core/export.h:
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
harness/core/npy.h:
harness/core/dtype.h:
harness/report/report.h:
