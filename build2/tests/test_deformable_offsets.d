build2/tests/test_deformable_offsets.o: tests/test_deformable_offsets.c \
 tests/ref_check.h harness/judge/compare.h harness/core/op.h \
 /usr/include/cjson/cJSON.h optimized/conform_opt.h \
 reference/conform_ref.h harness/core/tensor.h harness/judge/verify.h
tests/ref_check.h:
harness/judge/compare.h:
harness/core/op.h:
/usr/include/cjson/cJSON.h:
optimized/conform_opt.h:
reference/conform_ref.h:
harness/core/tensor.h:
harness/judge/verify.h:
