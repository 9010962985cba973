build2/optimized/f32_grid_bilinear_keys__avx512.o: \
 optimized/f32_grid_bilinear_keys__avx512.c optimized/opt_internal.h \
 optimized/conform_opt.h
optimized/opt_internal.h:
optimized/conform_opt.h:
