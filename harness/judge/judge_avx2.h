#ifndef CONFORM_JUDGE_AVX2_H
#define CONFORM_JUDGE_AVX2_H
/* The judge's AVX2 blocks (compare.c, standards.c) in one place: where the compiler can target
   AVX2 per function, JUDGE_AVX2 is defined and the blocks run where judge_use_avx2() says so;
   elsewhere the element loops do all the work. The helpers are IEEE operations only, so a lane's
   number is the element loop's: the choice moves no result, which is why it is not --isa's (that
   one picks the kernels under test). The CPU is asked in one place, optimized/isa.c. */
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#include <math.h>

#include "conform_opt.h"

#define JUDGE_AVX2 1
#define AVX2 __attribute__((target("avx2")))
#define AVX2_INLINE static inline __attribute__((target("avx2"), always_inline))

/* The judge's one choice: the vector blocks unless the caller asks for the element loops alone
   (scalar_only, the tests comparing the two), where isa.c finds AVX2 */
static inline int judge_use_avx2(int scalar_only) { return !scalar_only && conform_isa_available(CONFORM_ISA_AVX2); }

AVX2_INLINE __m256d vabs(__m256d x) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), x); }

/* all ones in the lanes of x that are finite */
AVX2_INLINE __m256d finite_mask(__m256d x) { return _mm256_cmp_pd(vabs(x), _mm256_set1_pd(INFINITY), _CMP_LT_OQ); }
#endif

#endif
