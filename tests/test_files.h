/* What tests read back: a whole file as a string, a JSON file, a run's report.json. */
#ifndef CONFORM_TESTS_FILES_H
#define CONFORM_TESTS_FILES_H

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>

#include "report.h"

/* the file's bytes, NUL-terminated (free it) */
static inline char *test_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f, "missing %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *s = malloc((size_t)n + 1);
    cr_assert_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = 0;
    fclose(f);
    return s;
}

static inline cJSON *test_json(const char *path)
{
    char err[512];
    cJSON *j = read_json_file(path, err, sizeof err);
    cr_assert(j, "%s", err);
    return j;
}

/* dir/sub/report.json (sub NULL: dir/report.json) */
static inline cJSON *test_report(const char *dir, const char *sub)
{
    char p[600];
    if (sub) snprintf(p, sizeof p, "%s/%s/report.json", dir, sub);
    else snprintf(p, sizeof p, "%s/report.json", dir);
    return test_json(p);
}

#endif
