/* Running one case on both paths and judging it; its JSON for the report. */
#ifndef CONFORM_RUNNER_H
#define CONFORM_RUNNER_H

#include "judge.h"
#include "guarded.h"
#include "impl.h"
#include "standards.h"
#include "status.h"
#include "suite.h"

/* A case's status: status.h */
typedef struct {
    case_status status;
    char message[CONFORM_ERR_LEN];
    uint64_t seed;
    int n_out;
    output_result out[CONFORM_MAX_TENSORS];
    double time_ref_s, time_opt_s;
} case_result;

typedef struct {
    conform_exec ex;
    const impl_t *impl;
    exec_policy policy;
    int ref_threads; /* the golden's threads (0: ex.threads); its numbers are the same for any count */
    /* --dump-failures: called for a failing case whose golden was computed, with the outputs
       decoded (got[o] NULL where the implementation gave none); NULL: nothing dumped */
    const char *dump_dir;
    void (*dump)(const char *dir, const case_t *c, const problem_t *p, const judge_ref *j, const double *const *got,
                 const case_result *r);
} run_env;

void run_case(const case_t *c, uint64_t seed, const run_env *env, case_result *r);
void case_result_free(case_result *r);
/* The report object of a case. repro: the one command line that reruns it. */
cJSON *case_result_json(const case_t *c, const case_result *r, const char *repro);
double now_seconds(void);

#endif
