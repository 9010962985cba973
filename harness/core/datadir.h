/* Where conform's own data lives (the suites, the golden vectors, the waivers, the zoo's power
 * table), so that the binary works from any directory:
 *   1. $CONFORM_DATA when set;
 *   2. <dir of the binary>/../share/conform (an installed copy: PREFIX/bin/conform);
 *   3. <dir of the binary>/.. when it holds cases/conformance.json (the build tree: build/conform);
 *   4. the current directory.
 * Paths under it keep the repository's layout: cases/..., docs/zoo_power.json. */
#ifndef CONFORM_DATADIR_H
#define CONFORM_DATADIR_H

#include <stddef.h>

const char *conform_data_dir(void);
/* DATA/rel into buf (returns buf); rel as given when the data directory is "." */
const char *conform_data_file(const char *rel, char *buf, size_t n);
/* The program as a repro line names it: BUILD/conform in the source tree, run from its root (build/
 * or build-san/: the folder of the running binary), the binary's own path anywhere else (an
 * installed PREFIX/bin/conform). */
const char *conform_program(void);
/* A data file path as given (a suite, waivers, the zoo power table): itself when it exists or is absolute, else the data
 * directory's file of that name when that exists (`conform run cases/smoke.json` from anywhere). */
const char *conform_suite_path(const char *given, char *buf, size_t n);

#endif
