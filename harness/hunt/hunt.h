/* conform hunt: problems drawn from an op's shape and attribute space and from the suites' own
 * edge generators, judged through the one judging path (runner.h), every failure shrunk to the
 * smallest case that still fails the same way, written as a suite entry `conform run` replays.
 *
 * A problem is drawn as a sketch: the op's dims (B, C, H, W, K, ...), attributes and generator
 * knobs ("gen"), and a seed. An op's hunt_desc (ops/<family>/hunt_<family>.c) turns dims into
 * shapes; everything else is generic. Shrinking runs in two levels: the sketch (dims down,
 * attributes to their defaults, knobs dropped, a few seeds per step), then the case with its
 * inputs written out as exact data (indices dropped along the op's axes, values rounded toward
 * small integers and short dyadics). */
#ifndef CONFORM_HUNT_H
#define CONFORM_HUNT_H

#include <stdint.h>

#include <cJSON.h>

#include "op.h"

#define HUNT_MAX_DIMS 10
#define HUNT_MAX_AXES 8

/* One dim of an op's problems: drawn mostly in [lo, small], sometimes up to big. */
typedef struct {
    const char *name;
    int64_t lo, small, big;
} hunt_dim;

/* An axis a case with exact data can lose an index along: the inputs that have it (input name,
 * axis), and the attribute that sizes it (an int, or entry attr_idx of an int list), if any. */
typedef struct {
    const char *name;
    int n_loc;
    struct {
        const char *input;
        int axis;
    } loc[3];
    const char *attr;
    int attr_idx; /* -1: attr is an int */
} hunt_axis;

struct hunt_desc {
    const hunt_dim *dims;
    int n_dims;
    /* c's "shapes" (and the attributes sized by dims: pooled sizes, input_shape, ksize) from dims
       d, in dims order, reading the other attributes of c; -1 when they give no valid problem */
    int (*shapes)(const int64_t *d, cJSON *c);
    /* the axes of case c that can lose an index; their count (at most HUNT_MAX_AXES) */
    int (*axes)(const cJSON *c, hunt_axis *ax);
};

/* ---- helpers for the op files ----------------------------------------------------------- */
/* c["attrs"][name] as an int (an int list's entry idx when idx >= 0; a "1,2,3,4" text as well),
   else def */
int64_t hunt_attr_int(const cJSON *c, const char *name, int idx, int64_t def);
/* sets c["shapes"][input] to the n dims */
void hunt_set_shape(cJSON *c, const char *input, int n, const int64_t *dims);
/* sets c["attrs"][name] to an int, or to an int list of n */
void hunt_set_attr_int(cJSON *c, const char *name, int64_t v);
void hunt_set_attr_list(cJSON *c, const char *name, int n, const int64_t *v);

/* ---- the hunt ----------------------------------------------------------------------------- */
typedef struct {
    const char *op_name, *impl_spec, *runner, *out_path, *dtype_name;
    const char *runner_repro; /* dir: the runner the repro lines name (NULL: runner), when runner relays */
    const char *baseline; /* optimized or plugin:: a failure counts only where this passes */
    const char *waivers_path; /* --waivers: a failure a waiver's "when" covers is waived, not found */
    double seconds;   /* 0: until cases */
    long long cases;  /* 0: until seconds */
    uint64_t seed;
    int isolate;      /* -1: the kind's default (plugins yes, optimized no) */
    double timeout_s;
    int max_found;    /* stop after this many distinct failures */
    int batch;        /* dir: cases per exported round */
    int quiet;
    int finite;       /* no NaN or infinity in the inputs */
    int threads;
    int isa;          /* conform_isa: --isa, as run takes it (CONFORM_ISA_AUTO: the best here) */
} hunt_opts;

/* Runs the hunt; EXIT_OK (nothing found), EXIT_FAIL (found, written to out_path), EXIT_USAGE. */
int hunt_run(const hunt_opts *o);
/* FOUND suites combined into out without duplicates; EXIT_OK or EXIT_USAGE. */
int hunt_combine(const char *const *paths, int n, const char *out);

#endif
