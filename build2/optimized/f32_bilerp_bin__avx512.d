build2/optimized/f32_bilerp_bin__avx512.o: \
 optimized/f32_bilerp_bin__avx512.c optimized/opt_internal.h \
 optimized/conform_opt.h
optimized/opt_internal.h:
optimized/conform_opt.h:
