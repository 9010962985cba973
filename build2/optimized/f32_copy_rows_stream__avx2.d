build2/optimized/f32_copy_rows_stream__avx2.o: \
 optimized/f32_copy_rows_stream__avx2.c optimized/opt_internal.h \
 optimized/conform_opt.h
optimized/opt_internal.h:
optimized/conform_opt.h:
