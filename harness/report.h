/* Report files: written whole or not at all (temporary file, then rename). */
#ifndef CONFORM_REPORT_H
#define CONFORM_REPORT_H

#include <cJSON.h>
#include <stddef.h>

#define CONFORM_REPORT_SCHEMA "conform-report"
#define CONFORM_REPORT_SCHEMA_VERSION 1
#define CONFORM_VERSION "0.1.0"

int mkdir_p(const char *dir, char *err, size_t errlen);
int write_text_atomic(const char *path, const char *text, char *err, size_t errlen);
int write_json_atomic(const char *path, const cJSON *j, char *err, size_t errlen);
/* Parses a JSON file; NULL with err set. */
cJSON *read_json_file(const char *path, char *err, size_t errlen);
/* A command line as one shell-safe string. */
void command_line(int argc, char **argv, char *buf, size_t len);
/* A single shell word, quoted when it needs to be. */
const char *shell_quote(const char *s, char *buf, size_t len);

#endif
