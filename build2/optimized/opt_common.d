build2/optimized/opt_common.o: optimized/opt_common.c \
 optimized/opt_internal.h optimized/conform_opt.h
optimized/opt_internal.h:
optimized/conform_opt.h:
