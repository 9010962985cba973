build2/optimized/f32_deform_bwd__scalar.o: \
 optimized/f32_deform_bwd__scalar.c optimized/opt_internal.h \
 optimized/conform_opt.h
optimized/opt_internal.h:
optimized/conform_opt.h:
