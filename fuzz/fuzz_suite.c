/* libFuzzer target: the suite parser and case construction (grids, generators, validation) on
 * arbitrary JSON text, under a small memory budget. */
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "suite.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0]) snprintf(path, sizeof path, "/tmp/conform-fuzz-suite-%d.json", (int)getpid());
    conform_memory_budget = 64.0 * 1048576.0;
    conform_sample_budget = 1 << 20;
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    suite_t s;
    char err[CONFORM_ERR_LEN];
    if (suite_load(path, &s, err, sizeof err)) return 0;
    for (int c = 0; c < s.n_cases && c < 8; c++) {
        problem_t p;
        if (case_build(&s.cases[c], 1, &p, err, sizeof err) == 0) (void)s.cases[c].op->validate(&p, err, sizeof err);
        problem_free(&p);
    }
    suite_free(&s);
    return 0;
}
