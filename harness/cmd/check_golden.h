/* The fast golden held to the plain one: for a built problem, op->reference (reference/, the fast
 * golden) and op->plain (reference/plain/, the spec's straight loops) must give the same values and
 * the same four bound arrays, bit for bit (tools/check_golden.c runs it over suites; make
 * check-golden, make check-golden-full; docs/architecture.md "The plain golden"). */
#ifndef CONFORM_CHECK_GOLDEN_H
#define CONFORM_CHECK_GOLDEN_H

#include <stddef.h>

#include "op.h"

/* TEMPORARY: ops whose plain golden has not landed yet. check-golden and check-ops report them
 * "exempt (no plain golden yet)" instead of failing; the list is emptied, and this removed, as
 * each family's plain golden is merged. Every other op without a plain golden fails. */
int golden_plain_exempt(const char *op_name);

typedef enum {
    GOLDEN_EQUAL,    /* every value and bound bitwise the same (a NaN matches any NaN) */
    GOLDEN_DIFFERS,  /* why says where first, and by how much */
    GOLDEN_NO_PLAIN, /* op->plain is NULL */
    GOLDEN_ERROR     /* could not run (out of memory); why says so */
} golden_result;

/* Runs both goldens of p (validated, outputs sized) into zeroed buffers, each output with its four
 * bound arrays at pos_rel_err = k_pos * 2^-24 (as judge.c computes the golden), and compares them.
 * The fast golden runs on ref_get_threads() threads, the plain one on its own single loop.
 * *n_diff: the elements that differ, all arrays together; secs: the fast and the plain golden's
 * wall seconds (each may be NULL). */
golden_result golden_check_problem(const problem_t *p, int64_t *n_diff, double secs[2], char *why, size_t len);

#endif
