/* A case's status: one enum, one name table, one rule for what counts against a run. Reports
 * carry the name; everything that reads a report back parses it here rather than comparing
 * strings of its own. tools/zoo.py asks `conform list --statuses` for the same table. */
#ifndef CONFORM_STATUS_H
#define CONFORM_STATUS_H

/* in report order (the summary's counts, the columns of the tables):
 *   passed  every output element within its tolerance (ambiguous ones within the widened one),
 *           guard bands intact, expected values matched, or refused as the case expected
 *   failed  an element beyond its tolerance, a non-finite mismatch, an all-zero output, a write
 *           outside an output, a reference off the case's expected values, or an input accepted
 *           that the case expected to be refused
 *   error   the case could not be run: refused by validation unexpectedly, or a kernel error
 *   waived  a failure a waiver file names as a known divergence (its own status is kept beside)
 *   crashed the implementation died on a signal (SIGSEGV, SIGBUS, SIGFPE, abort, ...)
 *   timeout the implementation gave no result within the per-case time limit
 *   not_implemented  an implementation that does not provide the op (neither a pass nor a failure)
 *   missing an output the implementation never produced (dir: no file where the manifest says)
 *   not_applicable  the case cannot be expressed at the dtype under test: a finite input overflows
 *           it (1e9 or 2^24 at float16 becomes inf, so a case about huge finite coordinates would
 *           test infinite ones); neither a pass nor a failure, the message names the input */
typedef enum {
    CASE_PASSED,
    CASE_FAILED,
    CASE_ERROR,
    CASE_WAIVED,
    CASE_CRASHED,
    CASE_TIMEOUT,
    CASE_NOT_IMPLEMENTED,
    CASE_MISSING,
    CASE_NOT_APPLICABLE,
    CASE_N_STATUS
} case_status;

/* How a status counts: a pass, a failure of the implementation (a wrong answer or none), an
 * error (the case could not be run), or neither (skipped: waived, not implemented, not applicable). The
 * reports' "failed" columns and JUnit <failure> are STATUS_FAIL, "error" is STATUS_ERROR. */
typedef enum { STATUS_PASS, STATUS_FAIL, STATUS_ERROR, STATUS_SKIP } status_kind;

const char *status_name(case_status s);
/* the status a report names; a name that is none of them reads as CASE_ERROR */
case_status status_parse(const char *name);
/* 1 when name is a status */
int status_known(const char *name);
status_kind status_kind_of(case_status s);
/* the one failure predicate: the case counts against the run (STATUS_FAIL or STATUS_ERROR) */
int status_fails(case_status s);

#endif
