/* The report documents: one report object, four files (report_formats.c, report_runner.c,
 * report_standards.c). */
#ifndef CONFORM_REPORT_H
#define CONFORM_REPORT_H

#include <cJSON.h>
#include <stddef.h>
#include <stdio.h>

#include "version.h"

/* the files: written whole or not at all, read back (core/fsio.h) */
#include "fsio.h"

/* ---- report documents (report_formats.c) ------------------------------------------------ */

/* A new report object: schema, command, isa, threads, and empty suites/proofs/cases lists. */
cJSON *report_new(const char *command, const char *isa, int threads);
/* The precision under test: "dtype", and the unit roundoff of every tolerance model. */
void report_set_dtype(cJSON *report, const char *dtype, double u);
/* Recomputes "summary" and "ops" from "cases", "proofs" and "stale_waivers". */
void report_summarize(cJSON *report);
/* 1 when nothing failed or errored and every proof held */
int report_all_passed(const cJSON *report);
/* Writes report.json, report.md, junit.xml and report.html into dir, each atomically. */
int report_write_all(const cJSON *report, const char *dir, char *err, size_t errlen);
void report_print_summary(const cJSON *report, FILE *f);
char *report_markdown(const cJSON *report);
char *report_junit(const cJSON *report);
char *report_html(const cJSON *report);

/* ---- the named standards in a report (report_standards.c) --------------------------------------- */

/* Per op and in the summary: cases passing each standard of those judged; "gated_on". */
void report_standards_summarize(cJSON *report);
/* --gate-on: "gated_on" the names in mask, and each case's "gate_status" from those standards. */
void report_apply_gate(cJSON *report, int mask);
int report_gated(const cJSON *report);
/* The named standards a case fails, comma-separated ("none", or "not judged"). */
void report_case_standards_failed(const cJSON *c, char *buf, size_t len);
char *report_standards_markdown(const cJSON *report);
/* "what ran" (report.json's "runner", report_runner.c): a summary line and each op the runner
   declared unsupported with its reason; a report.md / report.html section; JUnit <property> lines.
   The char * ones are malloc'd (NULL when the report has no runner). */
void report_runner_summary(const cJSON *report, FILE *f);
char *report_runner_markdown(const cJSON *report);
char *report_runner_html(const cJSON *report);
char *report_runner_junit(const cJSON *report);
char *report_standards_html(const cJSON *report);
/* the cases a named standard and the derived bound disagree on, as a collapsed section */
char *report_disagreements(const cJSON *report, int html);

#endif
