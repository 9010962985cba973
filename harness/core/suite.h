/* Suites: JSON files of cases and parameter grids, expanded into concrete cases.
 *
 * {"suite": "name", "seed": 1, "cases": [
 *   {"name": "basic", "op": "roi_align",
 *    "shapes": {"input": [2,8,16,16], "rois": [12,5]},
 *    "attrs": {"pooled_h": 7, "pooled_w": 7, "spatial_scale": 0.25},
 *    "gen": {"input": {"dist": "uniform", "lo": -1, "hi": 1}, "rois": {"size": [8, 80]}},
 *    "grid": {"aligned": [true, false], "sampling_ratio": [0, 2], "shape.input": [[1,1,5,7]]},
 *    "repeat": 2,
 *    "expect": {"output": [...]},          exact values the reference must give (1e-12 relative)
 *    "expect_error": "rois must have"}    the case must be refused with this in the message
 * ]}
 */
#ifndef CONFORM_SUITE_H
#define CONFORM_SUITE_H

#include <stdint.h>

#include "dtype.h"
#include "op.h"

typedef struct {
    char id[256];          /* suite/name[/key=value,...][#repeat] */
    const op_desc *op;
    const cJSON *spec;     /* the case object, owned by the suite */
    cJSON *point;          /* this grid point: {"key": value, ...} (owned; may be NULL) */
    int repeat;
    const char *suite_path;
} case_t;

typedef struct {
    char path[512];
    char name[64];
    uint64_t seed;
    cJSON *root;
    case_t *cases;
    int n_cases;
} suite_t;

/* Parses and expands a suite, and checks every case's op, attributes and shapes up front, so a
 * bad suite is refused before anything runs. 0 ok; -1 with err naming the file and the case. */
int suite_load(const char *path, suite_t *s, char *err, size_t errlen);
void suite_free(suite_t *s);
/* 0 when no case id is in two of the n loaded suites (the same suite given twice, or two files of
 * one suite name); else -1 with err naming the id and both files. */
int suites_distinct(const suite_t *suites, int n, char *err, size_t errlen);

/* Attributes and input shapes of a case (no data). 0 ok; -1 with err. */
int case_setup(const case_t *c, problem_t *p, char *err, size_t errlen);
/* case_setup, then allocation and filling with the case's generator and seed. */
int case_build(const case_t *c, uint64_t seed, problem_t *p, char *err, size_t errlen);
/* 1 when a finite input of the built problem overflows dt (rounds to infinity), with why naming the
 * input, the element and its value: the case cannot be expressed at dt (a case about coordinates of
 * 1e9 would test infinite ones, a different rule of the spec), so run reports it not_applicable
 * and export writes no data for it. 0 when every finite input stays finite. */
int case_inputs_overflow(const problem_t *p, const dtype_desc *dt, char *why, size_t len);
/* The seed of a case: the run seed mixed with the case id, so filtering keeps the inputs. */
uint64_t case_seed(const case_t *c, uint64_t run_seed);
/* The case's expect_error text, or NULL. */
const char *case_expect_error(const case_t *c);
/* --filter: a glob (with * or ?) over the id, else the id itself, a prefix of it ending at
 * '/', '#' or '=' boundary, or the op name. */
int case_matches(const case_t *c, const char *pattern);

#endif
