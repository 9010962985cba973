/* Calling a subcommand from a test as the command line would (argv NULL-terminated), and the paths
 * of a test's scratch folder: shared by the device-flow, dump and readable-report tests. */
#ifndef TESTS_CMD_ARGV_H
#define TESTS_CMD_ARGV_H

#include <stdio.h>

static inline int argc_of(const char **argv)
{
    int n = 0;
    while (argv[n]) n++;
    return n;
}

#define RUN(...) cmd_run(argc_of((const char *[]){"conform", "run", __VA_ARGS__, NULL}), (char **)(const char *[]){"conform", "run", __VA_ARGS__, NULL})
#define EXPORT(...) cmd_export(argc_of((const char *[]){"conform", "export", __VA_ARGS__, NULL}), (char **)(const char *[]){"conform", "export", __VA_ARGS__, NULL})

/* dir/name, in one of 8 rotating buffers (a call may hold several at once) */
static inline const char *sub_of(const char *dir, const char *name)
{
    static char buf[8][512];
    static int k;
    k = (k + 1) % 8;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

#endif
