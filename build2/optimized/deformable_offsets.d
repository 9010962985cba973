build2/optimized/deformable_offsets.o: optimized/deformable_offsets.c \
 optimized/opt_internal.h optimized/conform_opt.h
optimized/opt_internal.h:
optimized/conform_opt.h:
