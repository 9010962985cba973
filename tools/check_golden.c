/* check_golden: the fast golden (op->reference) against the plain one (op->plain, reference/plain/)
 * on every case of some suites: values and the four bound arrays bitwise equal, a NaN matching any
 * NaN (harness/cmd/check_golden.h). Inputs are built and rounded to float32 as `conform run` builds
 * them. Prints each difference (the first element that differs, and how many), then per op the
 * cases compared and both goldens' wall time.
 *
 *   build/check_golden [--seed S] [--threads N] [--filter PATTERN] suite.json ...
 *   build/check_golden --ops      every op of the table: "plain", "exempt" (temporary) or "missing"
 *
 * Exit 0 when every case of every op is equal; 1 when one differs or an op without an exemption
 * has no plain golden; 2 on a usage or suite error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_golden.h"
#include "suite.h"

enum { MAX_OPS = 64 };

typedef struct {
    int equal, differ, exempt, missing, errors;
    double fast_s, plain_s;
} op_tally;

static op_tally tally[MAX_OPS];

static int op_slot(const op_desc *op)
{
    for (int i = 0; conform_ops[i] && i < MAX_OPS; i++)
        if (!strcmp(conform_ops[i]->name, op->name)) return i;
    return MAX_OPS - 1;
}

/* one built problem: both goldens compared, its op's tally kept */
static void check_case(const case_t *c, const problem_t *p)
{
    op_tally *t = &tally[op_slot(p->op)];
    char why[CONFORM_ERR_LEN];
    double secs[2] = {0, 0};
    int64_t n_diff;
    switch (golden_check_problem(p, &n_diff, secs, why, sizeof why)) {
    case GOLDEN_EQUAL: t->equal++; break;
    case GOLDEN_DIFFERS: t->differ++; printf("DIFFERS %s: %s (%lld elements in all)\n", c->id, why, (long long)n_diff); break;
    case GOLDEN_NO_PLAIN: t->missing++; break;
    case GOLDEN_ERROR: t->errors++; printf("ERROR %s: %s\n", c->id, why); break;
    }
    t->fast_s += secs[0];
    t->plain_s += secs[1];
    fflush(stdout);
}

static int check_suite(const char *path, int seed_set, uint64_t seed, const char *filter)
{
    suite_t s;
    char err[CONFORM_ERR_LEN];
    if (suite_load(path, &s, err, sizeof err)) {
        fprintf(stderr, "check_golden: %s\n", err);
        return 2;
    }
    const uint64_t run_seed = seed_set ? seed : s.seed;
    for (int i = 0; i < s.n_cases; i++) {
        const case_t *c = &s.cases[i];
        problem_t p;
        if ((filter && !case_matches(c, filter)) || case_expect_error(c)) continue;
        if (!c->op->plain && golden_plain_exempt(c->op->name)) { /* not even built: nothing to compare */
            tally[op_slot(c->op)].exempt++;
            continue;
        }
        int rc = case_build(c, case_seed(c, run_seed), &p, err, sizeof err);
        if (!rc) {
            for (int k = 0; k < p.op->n_inputs; k++) dtype_round_array(CONFORM_DTYPE_FLOAT32, p.in[k].data, tensor_numel(&p.in[k]));
            rc = p.op->validate(&p, err, sizeof err);
        }
        if (!rc) check_case(c, &p); /* a case the harness refuses has no golden to compare */
        problem_free(&p);
    }
    printf("check_golden: %s seed %llu done\n", path, (unsigned long long)run_seed);
    suite_free(&s);
    return 0;
}

/* the table's ops and whether each has a plain golden (tools/check_ops.py reads this) */
static int list_ops(void)
{
    for (int i = 0; conform_ops[i]; i++)
        printf("%s %s\n", conform_ops[i]->name,
               conform_ops[i]->plain ? "plain" : golden_plain_exempt(conform_ops[i]->name) ? "exempt" : "missing");
    return 0;
}

/* per op: cases equal, differing, exempt, without a plain golden; 1 when any is not equal */
static int summary(void)
{
    int bad = 0, equal = 0, differ = 0, exempt = 0, missing = 0;
    for (int i = 0; conform_ops[i] && i < MAX_OPS; i++) {
        const op_tally *t = &tally[i];
        const char *name = conform_ops[i]->name;
        if (t->exempt) printf("  %-26s %5d cases EXEMPT: no plain golden yet (temporary list, check_golden.c)\n", name, t->exempt);
        if (t->missing) printf("  %-26s %5d cases FAIL: no plain golden\n", name, t->missing);
        if (t->equal + t->differ + t->errors)
            printf("  %-26s %5d cases: %d equal, %d differ, %d errors (fast %.2f s, plain %.2f s)\n", name,
                   t->equal + t->differ + t->errors, t->equal, t->differ, t->errors, t->fast_s, t->plain_s);
        bad |= t->missing || t->differ || t->errors;
        equal += t->equal;
        differ += t->differ + t->errors;
        exempt += t->exempt;
        missing += t->missing;
    }
    printf("check_golden: %d cases bitwise equal, %d differ, %d without a plain golden, %d exempt (temporary): %s\n",
           equal, differ, missing, exempt, bad ? "FAILED" : "the fast golden equals the plain one");
    return bad;
}

int main(int argc, char **argv)
{
    int seed_set = 0, rc = 0, n_suites = 0;
    uint64_t seed = 0;
    const char *filter = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--ops")) return list_ops();
        if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
            seed = strtoull(argv[++i], NULL, 10);
            seed_set = 1;
        } else if (!strcmp(argv[i], "--threads") && i + 1 < argc) {
            ref_set_threads(atoi(argv[++i]));
        } else if (!strcmp(argv[i], "--filter") && i + 1 < argc) {
            filter = argv[++i];
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: check_golden [--seed S] [--threads N] [--filter PATTERN] suite.json ... | --ops\n");
            return 2;
        } else {
            rc |= check_suite(argv[i], seed_set, seed, filter);
            n_suites++;
        }
    }
    if (!n_suites) {
        fprintf(stderr, "check_golden: no suite given\n");
        return 2;
    }
    return rc ? rc : summary();
}
