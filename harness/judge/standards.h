/* Named precision standards of the Ascend and PyTorch ecosystems, judged beside (never instead of)
 * the derived per-element bound. Each is a pure function of the golden (double), the values under
 * test, optionally a second implementation's values, and the dtype. docs/standards.md gives each
 * formula, its numbers and their source. */
#ifndef CONFORM_STANDARDS_H
#define CONFORM_STANDARDS_H

#include <cJSON.h>
#include <stddef.h>
#include <stdint.h>

#include "dtype.h"

/* The dtype a standard judges: the dtype under test (dtype.h); a standard has numbers per dtype. */
typedef struct {
    const double *golden; /* the double reference */
    const double *actual; /* the implementation under test, its values exactly */
    const double *bench;  /* a second implementation (commercial-ratio); NULL: none */
    int64_t n;
    conform_dtype dtype;
    /* float32 outputs as the implementation wrote them, read in place of actual / bench when
       those are NULL (no decoded copy of a big output) */
    const float *actual_f32, *bench_f32;
    /* 0 (the default): blocks of elements in the CPU's vector unit where it has AVX2, with results
       bit for bit those of the element loops; 1: the element loops only (a test compares the two) */
    int scalar_only;
} std_input;

#define STD_MAX_FIGURES 13

typedef struct {
    const char *name;
    double value;
} std_figure;

typedef struct {
    int defined;       /* the standard defines numbers for this dtype */
    int passed;        /* judged and passed (or not defined: nothing to fail) */
    const char *level; /* commercial-ratio: the highest level reached, "L2".."L0" or "none" */
    int n_fig;
    std_figure fig[STD_MAX_FIGURES];
    char note[160];
} std_result;

typedef struct {
    const char *name;
    const char *doc; /* where its formula, numbers and source are written */
    void (*evaluate)(const std_input *in, std_result *r);
} precision_standard;

#define N_STANDARDS 5
extern const precision_standard conform_standards[N_STANDARDS];

/* The index of a standard by name, or -1. */
int standard_index(const char *name);
/* "a,b,..." -> bit mask of standards; -1 with err naming the unknown one and the valid names. */
int standards_parse_list(const char *list, char *err, size_t errlen);
void standards_evaluate_all(const std_input *in, std_result *out);
cJSON *std_result_json(const std_result *r);

#endif
