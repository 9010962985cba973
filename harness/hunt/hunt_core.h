/* The hunt's own pieces, shared by hunt.c (the search), hunt_shrink.c and hunt_util.c. */
#ifndef CONFORM_HUNT_CORE_H
#define CONFORM_HUNT_CORE_H

#include <gsl/gsl_rng.h>

#include "hunt.h"
#include "runner.h"

/* what a judged case did: a finding when it counts against the implementation (not a refusal of
   the drawn problem by validation, not a case the dtype cannot express) */
typedef struct {
    int finding;
    case_status status;
    unsigned mask; /* outputs beyond their tolerance (or all zero, or written outside) */
} hunt_sig;

/* a drawn problem before its inputs exist */
typedef struct {
    int64_t d[HUNT_MAX_DIMS];
    cJSON *attrs, *gen;
    uint64_t seed;
    cJSON *exact; /* the drawn case with exact data, some values set to edges; NULL: drawn from knobs */
} hunt_sketch;

typedef struct {
    const hunt_opts *o;
    const op_desc *op;
    impl_t impl;
    run_env env;
    int dir_mode;
    int is_optimized;          /* --impl optimized: --isa picks its SIMD level */
    char tmp[512];             /* dir: the rounds' work directory */
    char exe[1024];            /* this program, for the rounds' exports */
    cJSON *tmpl;               /* the default suite's cases of the op: [{"attrs", "gen"}, ...] */
    gsl_rng *rng;
    long long tried, steps, rounds, raw_failures;
    double t0, first_fail_s, last_progress;
    cJSON *found;              /* the distinct minimal cases */
    int dup_streak;
    long long judged;
    double t_ref, t_impl;      /* seconds in the reference and in the implementation */
    case_result last;          /* the result of the case hunt_judge returned */
    int has_last;
    int impl_opened;
    impl_t base;               /* --baseline: a failure counts only where it passes */
    run_env base_env;
    int has_base;
    long long shared;          /* failures the baseline shares, not counted */
    long long not_impl;        /* cases the implementation does not provide (dir: declared unsupported) */
    long long runner_skips;    /* dir: cases the runner declined with a reason, not counted */
    cJSON *waivers;            /* --waivers: the file; waiver[]: its entries with a "when" for this op */
    const cJSON *waiver[64];
    int n_waivers;
    uint64_t allowed;          /* the waivers whose "when" held on the drawn case being shrunk */
    int shrinking;             /* a shrink step may not make another waiver's "when" hold */
    cJSON *waived;             /* the distinct minimal cases a waiver covers */
    long long n_waived;        /* failures waived (each shrunk first) */
} hunt_t;

/* hunt.c */
int hunt_interrupted(void); /* SIGINT or SIGTERM: finish nothing more */
void hunt_progress(hunt_t *h, int force);
/* judges n cases (case seeds seeds[i]) into sig[i]; dir: one exported round. With want, stops at
   (and returns) the first whose signature matches it; without, judges all and returns the first
   finding. -1: none; -2: the round could not run (a message was printed). */
int hunt_judge(hunt_t *h, cJSON *const *cases, const uint64_t *seeds, int n, const hunt_sig *want, hunt_sig *sig);
/* the case of a sketch (a new object), or NULL when its dims give no valid problem */
cJSON *hunt_sketch_case(const hunt_t *h, const hunt_sketch *s);
int hunt_same(const hunt_sig *a, const hunt_sig *b);

/* hunt_shrink.c: the minimal case (a new object with exact data) of a failing sketch */
cJSON *hunt_shrink(hunt_t *h, hunt_sketch *s, const hunt_sig *sig);

/* hunt_waive.c: --waivers (docs/hunt.md, "Waivers") */
/* loads the waivers of path whose "when" names this op and that hold at dtype; EXIT_USAGE on a bad file */
int hunt_waivers_load(hunt_t *h, const char *path, const char *dtype);
/* the waivers (bit i: waiver[i]) whose "when" holds on case c with exact data */
uint64_t hunt_waivers_holding(const hunt_t *h, const cJSON *c);
/* the same for a case spec (a sketch's case or one with data), its inputs built from seed */
uint64_t hunt_waivers_holding_spec(const hunt_t *h, const cJSON *spec, uint64_t seed);
/* the waiver that covers the failure r (signature sig) of the minimal case c, or NULL */
const cJSON *hunt_waiver_for(const hunt_t *h, const cJSON *c, const case_result *r, const hunt_sig *sig);

/* hunt_util.c */
/* the case with its inputs, built from seed, written out as exact data (a new object); NULL when
   it cannot be built (err says why) */
cJSON *hunt_materialize(const op_desc *op, const cJSON *spec, uint64_t seed, char *err, size_t errlen);
/* a flat numeric array with "nan", "inf", "-inf" for the non-finite values */
cJSON *hunt_data_json(const double *v, int64_t n);
/* the flat values of a "data" array into a new buffer (*n of them); NULL when it is none */
double *hunt_data_read(const cJSON *data, int64_t *n);
/* the case's identity: its shapes, attributes and data, without its name, as one string (free) */
char *hunt_key(const cJSON *c);
/* 64-bit FNV-1a of a string */
uint64_t hunt_hash(const char *s);
/* found cases to path as a suite conform run replays, the waived ones (if any) beside it */
int hunt_write_found(const cJSON *found, const cJSON *waived, uint64_t seed, const char *path);
/* appends c to found unless an equal case is there; 1 when added */
int hunt_add_found(cJSON *found, cJSON *c);

#endif
