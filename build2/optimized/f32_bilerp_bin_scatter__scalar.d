build2/optimized/f32_bilerp_bin_scatter__scalar.o: \
 optimized/f32_bilerp_bin_scatter__scalar.c optimized/opt_internal.h \
 optimized/conform_opt.h
optimized/opt_internal.h:
optimized/conform_opt.h:
