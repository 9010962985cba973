/* The power of a suite: how many of the zoo's known bug classes (docs/zoo.md) it catches, as
 * measured by `make zoo-docs` into docs/zoo_power.json and committed. A run attaches the
 * measurement of every suite it ran, so its reports say what a pass of that suite is worth. */
#ifndef CONFORM_ZOO_POWER_H
#define CONFORM_ZOO_POWER_H

#include <cJSON.h>

#include "suite.h"

#define ZOO_POWER_FILE "docs/zoo_power.json"

/* Adds report["suite_power"]: one entry per suite of the run that power_path (a measurement
 * object, or an array of them) has measured; nothing when the file is absent or unreadable. */
void zoo_power_attach(cJSON *report, const suite_t *suites, int n_suites, const char *power_path);

#endif
