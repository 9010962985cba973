build2/tests/test_grid_sampler.o: tests/test_grid_sampler.c \
 tests/ref_check.h harness/judge/compare.h harness/core/op.h \
 /usr/include/cjson/cJSON.h optimized/conform_opt.h \
 reference/conform_ref.h harness/core/tensor.h optimized/opt_internal.h \
 optimized/conform_opt.h harness/judge/verify.h
tests/ref_check.h:
harness/judge/compare.h:
harness/core/op.h:
/usr/include/cjson/cJSON.h:
optimized/conform_opt.h:
reference/conform_ref.h:
harness/core/tensor.h:
optimized/opt_internal.h:
optimized/conform_opt.h:
harness/judge/verify.h:
