/* conform: reference-plus-optimized conformance harness for bilinear-sampling operators. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "help.h"
#include "report.h"

static const struct {
    const char *name;
    int (*run)(int, char **);
} dispatch[] = {{"list", cmd_list},   {"run", cmd_run},     {"eval", cmd_eval},   {"bench", cmd_bench},
                {"gate", cmd_gate},   {"verify", cmd_verify}, {"merge", cmd_merge}, {"check", cmd_check},
                {"export", cmd_export}, {"hunt", cmd_hunt}};

static int is_help(const char *a) { return !strcmp(a, "--help") || !strcmp(a, "-h"); }

/* An idle OpenMP thread polls for a while before it sleeps (libgomp: 300000 polls, about a
 * millisecond); on a shared core that time is taken from whatever else runs there, the team's own
 * late thread included. conform's threads wait passively unless the caller chose a policy. libgomp
 * reads it when it loads, so the program starts itself again once with it set (where it cannot, it
 * runs as it is). Under valgrind set the policy yourself: the new image would run outside it. */
static void passive_waits(char **argv)
{
    if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT") || setenv("OMP_WAIT_POLICY", "passive", 1)) return;
    fflush(NULL);
    execv("/proc/self/exe", argv);
}

int main(int argc, char **argv)
{
    passive_waits(argv);
    /* past a file-size limit a write fails with EFBIG, which every writer reports (exit 2),
       instead of SIGXFSZ ending the process with a half-written file */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2) {
        cli_print_usage(stderr);
        return EXIT_USAGE;
    }
    if (is_help(argv[1]) || (!strcmp(argv[1], "help") && argc == 2)) {
        cli_print_usage(stdout);
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("conform %s\n", CONFORM_VERSION);
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "help")) { /* conform help CMD */
        const cli_command *c = cli_command_find(argv[2]);
        return c ? cli_print_help(c, stdout) : cli_unknown_command(argv[2]);
    }
    const cli_command *c = cli_command_find(argv[1]);
    if (!c) return cli_unknown_command(argv[1]);
    for (int i = 2; i < argc; i++) /* conform CMD ... --help */
        if (is_help(argv[i])) return cli_print_help(c, stdout);
    for (size_t k = 0; k < sizeof dispatch / sizeof dispatch[0]; k++)
        if (!strcmp(dispatch[k].name, argv[1])) return dispatch[k].run(argc, argv);
    return cli_unknown_command(argv[1]);
}
