build2/optimized/f32_transpose_stream__avx2.o: \
 optimized/f32_transpose_stream__avx2.c optimized/opt_internal.h \
 optimized/conform_opt.h optimized/tile8x8__avx2.h
optimized/opt_internal.h:
optimized/conform_opt.h:
optimized/tile8x8__avx2.h:
