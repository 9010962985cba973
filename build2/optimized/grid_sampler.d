build2/optimized/grid_sampler.o: optimized/grid_sampler.c \
 optimized/opt_internal.h optimized/conform_opt.h
optimized/opt_internal.h:
optimized/conform_opt.h:
