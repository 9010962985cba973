build2/optimized/roi_align_rotated.o: optimized/roi_align_rotated.c \
 optimized/opt_internal.h optimized/conform_opt.h
optimized/opt_internal.h:
optimized/conform_opt.h:
