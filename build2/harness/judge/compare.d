build2/harness/judge/compare.o: harness/judge/compare.c \
 harness/judge/compare.h harness/core/op.h /usr/include/cjson/cJSON.h \
 optimized/conform_opt.h reference/conform_ref.h harness/core/tensor.h \
 harness/core/dtype.h harness/conform_plugin.h
harness/judge/compare.h:
harness/core/op.h:
/usr/include/cjson/cJSON.h:
optimized/conform_opt.h:
reference/conform_ref.h:
harness/core/tensor.h:
harness/core/dtype.h:
harness/conform_plugin.h:
