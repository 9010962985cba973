build2/harness/ops/grid_sampler/verify_grid_sampler.o: \
 harness/ops/grid_sampler/verify_grid_sampler.c harness/core/fill.h \
 /usr/include/cjson/cJSON.h harness/core/tensor.h harness/judge/verify.h \
 harness/core/op.h optimized/conform_opt.h reference/conform_ref.h
harness/core/fill.h:
/usr/include/cjson/cJSON.h:
harness/core/tensor.h:
harness/judge/verify.h:
harness/core/op.h:
optimized/conform_opt.h:
reference/conform_ref.h:
