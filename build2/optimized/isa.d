build2/optimized/isa.o: optimized/isa.c optimized/opt_internal.h \
 optimized/conform_opt.h
optimized/opt_internal.h:
optimized/conform_opt.h:
