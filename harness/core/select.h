/* Which cases a run (or an export) takes: --filter, --op, --rerun and --shard. */
#ifndef CONFORM_SELECT_H
#define CONFORM_SELECT_H

#include "suite.h"

#define MAX_OPS 16

typedef struct {
    const char *filter;
    const char *ops[MAX_OPS];
    int n_ops;
    cJSON *rerun; /* ids to rerun, from a previous report */
    int shard_index, shard_count;
    const cJSON *held; /* a dir: run: the ids its export holds (others are not selected), or NULL */
} selection;

/* --shard I/N; EXIT_USAGE after a message when malformed */
int parse_shard(const char *v, int *index, int *count);
/* GitLab's CI_NODE_INDEX/TOTAL or Slurm's SLURM_ARRAY_TASK_*, when set */
int shard_from_environment(int *index, int *count);
int selected(const selection *s, const case_t *c);
/* --rerun REPORT [--status S,...]: the ids whose status is one of S in that report */
int load_rerun(const char *path, const char *statuses, selection *s);
/* For a selection of the n suites that matches nothing: "; did you mean --filter 'SUITE/...'?"
 * when the filter under a suite's name matches, else the id form with an id that exists. */
void selection_hint(const suite_t *suites, int n, const selection *sel, char *buf, size_t len);

#endif
