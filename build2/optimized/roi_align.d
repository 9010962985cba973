build2/optimized/roi_align.o: optimized/roi_align.c \
 optimized/opt_internal.h optimized/conform_opt.h
optimized/opt_internal.h:
optimized/conform_opt.h:
