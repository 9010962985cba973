build2/optimized/f32_transpose__scalar.o: \
 optimized/f32_transpose__scalar.c optimized/opt_internal.h \
 optimized/conform_opt.h
optimized/opt_internal.h:
optimized/conform_opt.h:
