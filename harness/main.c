/* conform: reference-plus-optimized conformance harness for bilinear-sampling operators. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "help.h"
#include "report.h"

static const struct {
    const char *name;
    int (*run)(int, char **);
} dispatch[] = {{"list", cmd_list},   {"run", cmd_run},     {"eval", cmd_eval},   {"bench", cmd_bench},
                {"gate", cmd_gate},   {"verify", cmd_verify}, {"merge", cmd_merge}, {"check", cmd_check},
                {"export", cmd_export}};

static int is_help(const char *a) { return !strcmp(a, "--help") || !strcmp(a, "-h"); }

int main(int argc, char **argv)
{
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
