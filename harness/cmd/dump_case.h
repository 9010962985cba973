/* --dump-failures DIR (run and check): a failing case in one folder, judged again from it alone. */
#ifndef CONFORM_DUMP_CASE_H
#define CONFORM_DUMP_CASE_H

#include "judge.h"
#include "runner.h"

/* The folder of case id under dir (its id with every character but [A-Za-z0-9._=,+-] as '_'). */
void dump_folder(const char *dir, const char *id, char *buf, size_t len);
/* Writes DIR/<folder>/: input_<name>.npy (at the dtype, as judged), golden_<out>.npy (float64),
 * and where the implementation gave outputs (got[o] decoded, NULL where none) output_<out>.npy
 * (at the dtype), tol_<out>.npy (each element's tolerance, widened where it is ambiguous) and
 * err_over_tol_<out>.npy; attrs.json, case.json (id, op, dtype, seed, status, message, files),
 * repro.sh (a `conform check` on the folder's files, from any directory) and repro.txt (the same
 * line with absolute paths). 0, or -1 with err. */
int dump_case(const char *dir, const char *id, const problem_t *p, const judge_ref *j, const double *const *got,
              const case_result *r, char *err, size_t errlen);
/* run_env's hook: dump_case, a failure to write said on stderr (the verdict stands) */
void dump_case_hook(const char *dir, const case_t *c, const problem_t *p, const judge_ref *j, const double *const *got,
                    const case_result *r);
/* Removes a folder dump_case wrote (a failure a waiver covers is not one to look at). */
void dump_remove(const char *dir, const char *id);

#endif
