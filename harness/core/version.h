/* The tool's version (the Makefile reads it from here: the one place it is set) and the report
 * schema, which every report carries and --rerun, merge and gate check. */
#ifndef CONFORM_VERSION_H
#define CONFORM_VERSION_H

#define CONFORM_VERSION "0.1.0"
#define CONFORM_REPORT_SCHEMA "conform-report"
#define CONFORM_REPORT_SCHEMA_VERSION 1

#endif
