/* A scratch directory for a test (/tmp/conform-<tag>-XXXXXX), made in setup, removed in teardown. */
#ifndef CONFORM_TESTS_SCRATCH_H
#define CONFORM_TESTS_SCRATCH_H

#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <stdlib.h>

static inline void scratch_make(char *dir, size_t n, const char *tag)
{
    snprintf(dir, n, "/tmp/conform-%s-XXXXXX", tag);
    cr_assert(mkdtemp(dir));
}

/* The usual fixture of a test that runs commands: their tables and messages kept out of the test
 * log (unless CONFORM_TEST_VERBOSE is set), and a fresh scratch directory. */
static inline void scratch_make_quiet(char *dir, size_t n, const char *tag)
{
    if (!getenv("CONFORM_TEST_VERBOSE")) {
        cr_redirect_stdout();
        cr_redirect_stderr();
    }
    scratch_make(dir, n, tag);
}

static inline void scratch_remove(const char *dir)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    cr_assert_eq(system(cmd), 0);
}

#endif
