/* The options of every command with their defaults (help.c): help, usage and "did you mean". */
#ifndef CONFORM_HELP_H
#define CONFORM_HELP_H

#include <stdio.h>

typedef struct {
    const char *name; /* --threads */
    const char *arg;  /* N; NULL for a flag */
    const char *def;  /* the default, as a reader needs it */
    const char *text;
} cli_option;

typedef struct {
    const char *name, *synopsis, *summary;
    const cli_option *opts; /* ends with a NULL name */
} cli_command;

const cli_command *cli_commands(void); /* ends with a NULL name */
const cli_command *cli_command_find(const char *name);
const cli_option *cli_option_find(const cli_command *c, const char *name);
void cli_print_usage(FILE *f);
int cli_print_help(const cli_command *c, FILE *f);
/* usage errors (exit 2): an option the command does not have (with the nearest one), or a known
 * option without its value or with a malformed one (value: the next argument, or NULL); an unknown
 * command or op; a value not among those allowed. Each echoes what it refused. */
int cli_unknown_option(const char *cmd, const char *opt, const char *value);
int cli_unknown_op(const char *where, const char *name);
int cli_unknown_command(const char *name);
int cli_bad_value(const char *opt, const char *value, const char *allowed);
/* An option of cmd that takes one value, given twice in argv, is a usage error naming both values
 * (never a silent last value); options that gather (--attr, --input, --shape, --actual, a
 * repeatable --op) may repeat. EXIT_OK or EXIT_USAGE after the message. */
int cli_once(const char *cmd, int argc, char **argv);

#endif
