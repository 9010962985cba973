/* Do reads overlap with arithmetic? The microbenchmark behind the "where the time goes" figures
 * in docs/ops/grid_sampler_2d_backward.md (not built by `make`; AVX-512 machines only):
 *
 *   cc -O2 -mavx512f -fopenmp -Wall -Wextra -Werror tools/overlap_bench.c -o overlap_bench
 *   ./overlap_bench PATTERN PLANES RUN_BYTES THREADS FMA_ROUNDS
 *
 * Each thread reads its own 16 MB (256 planes of 64 KiB, a 128x128 float plane each), rotating
 * over four such regions so that nothing is cached. For every 64-byte line read it runs
 * FMA_ROUNDS rounds of 4 independent FMA chains. Patterns:
 *   0  one sequential stream (PLANES, RUN_BYTES unused)
 *   1  PLANES planes in turn, RUN_BYTES from each, copied into a cache-resident stage (how a
 *      transpose to channels-last must read: 64 planes x 2048 bytes for 4 input rows)
 *   2  the arithmetic alone
 * Prints the fastest of 12 repetitions. Compare pattern 2 with FMA_ROUNDS > 0 and a pattern
 * with FMA_ROUNDS 0 against the same pattern with FMA_ROUNDS > 0: if the reads overlap, the
 * combined time is the larger of the two; if not, their sum or more. */
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PLANE_FLOATS = 16384, NPLANES = 256, STAGE_FLOATS = 1 << 18 };

static int fma_rounds;
static volatile float sink;

static __m512 rounds(__m512 a, __m512 b)
{
    for (int i = 0; i < fma_rounds; i++) a = _mm512_fmadd_ps(a, b, b);
    return a;
}

static float run(int pattern, size_t planes, size_t run_bytes, const float *base, float *stage)
{
    __m512 a0 = _mm512_set1_ps(0.5f), a1 = a0, a2 = a0, a3 = a0, s = _mm512_setzero_ps();
    const __m512 b = _mm512_set1_ps(0.25f);
    if (pattern == 0) {
        for (size_t i = 0; i < (size_t)PLANE_FLOATS * NPLANES; i += 16) {
            s = _mm512_add_ps(s, _mm512_load_ps(base + i));
            a0 = rounds(a0, b), a1 = rounds(a1, b), a2 = rounds(a2, b), a3 = rounds(a3, b);
        }
    } else if (pattern == 1) {
        const size_t run = run_bytes / sizeof(float);
        for (size_t g = 0; g + planes <= NPLANES; g += planes)
            for (size_t j = 0; j < PLANE_FLOATS; j += run)
                for (size_t p = 0; p < planes; p++) {
                    const float *src = base + (g + p) * PLANE_FLOATS + j;
                    float *d = stage + p * (run + 16); /* padded: stage rows do not share sets */
                    for (size_t k = 0; k < run; k += 16) {
                        _mm512_store_ps(d + k, _mm512_load_ps(src + k));
                        a0 = rounds(a0, b), a1 = rounds(a1, b), a2 = rounds(a2, b), a3 = rounds(a3, b);
                    }
                }
        s = _mm512_load_ps(stage);
    } else {
        for (size_t i = 0; i < (size_t)PLANE_FLOATS * NPLANES; i += 16)
            a0 = rounds(a0, b), a1 = rounds(a1, b), a2 = rounds(a2, b), a3 = rounds(a3, b);
    }
    s = _mm512_add_ps(s, _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)));
    return _mm512_reduce_add_ps(s);
}

int main(int argc, char **argv)
{
    if (argc != 6) {
        fprintf(stderr, "usage: overlap_bench PATTERN PLANES RUN_BYTES THREADS FMA_ROUNDS\n");
        return 2;
    }
    const int pattern = atoi(argv[1]), threads = atoi(argv[4]);
    const size_t planes = (size_t)atoi(argv[2]), run_bytes = (size_t)atoi(argv[3]);
    fma_rounds = atoi(argv[5]);
    if (pattern < 0 || pattern > 2 || threads < 1 || fma_rounds < 0 ||
        (pattern == 1 && (planes < 1 || planes > NPLANES || run_bytes < 64 || run_bytes % 64 ||
                          PLANE_FLOATS * sizeof(float) % run_bytes || planes * (run_bytes / 4 + 16) > STAGE_FLOATS))) {
        fprintf(stderr, "overlap_bench: bad arguments (pattern 0-2; pattern 1: 1-256 planes, a run a multiple "
                        "of 64 bytes dividing 64 KiB, planes x run at most 1 MiB)\n");
        return 2;
    }
    const size_t region = (size_t)PLANE_FLOATS * NPLANES; /* floats a thread reads */
    float *mem = aligned_alloc(64, (size_t)threads * 4 * region * sizeof(float));
    float *stages = aligned_alloc(64, (size_t)threads * STAGE_FLOATS * sizeof(float));
    if (!mem || !stages) {
        fprintf(stderr, "overlap_bench: out of memory\n");
        return 2;
    }
    memset(mem, 1, (size_t)threads * 4 * region * sizeof(float));
    memset(stages, 0, (size_t)threads * STAGE_FLOATS * sizeof(float));
    double best = 1e30;
    float sum = 0.0f;
    for (int rep = 0; rep < 12; rep++) {
        const double t0 = omp_get_wtime();
#pragma omp parallel num_threads(threads) reduction(+ : sum)
        {
            const int t = omp_get_thread_num();
            sum += run(pattern, planes, run_bytes, mem + ((size_t)t * 4 + (size_t)(rep % 4)) * region,
                       stages + (size_t)t * STAGE_FLOATS);
        }
        const double dt = omp_get_wtime() - t0;
        best = dt < best ? dt : best;
    }
    sink = sum; /* the results stay live, so no loop is optimized away */
    printf("pattern %d, %zu planes, runs of %zu bytes, %d threads, %d FMA rounds: %.3f ms", pattern, planes,
           run_bytes, threads, fma_rounds, best * 1e3);
    if (pattern != 2) printf(" (%.1f GB/s a thread)", (double)region * sizeof(float) / best / 1e9);
    printf("\n");
    free(mem);
    free(stages);
    return 0;
}
