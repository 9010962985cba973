/* Help for every command, usage errors that echo what they refused, and the option lists of the
 * help, docs/cli.md and README.md kept in step. Runs the built binary (beside this test binary), so
 * main()'s dispatch is what is tested. */
#include <criterion/criterion.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "help.h"
#include "test_files.h"

static char out[1 << 16];

/* runs `conform ARGS` (shell words) with stdout and stderr together in out; its exit code */
static int conform(const char *args)
{
    char exe[PATH_MAX], cmd[PATH_MAX + 1024];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    cr_assert(n > 0);
    exe[n] = '\0';
    *strrchr(exe, '/') = '\0';
    snprintf(cmd, sizeof cmd, "%s/conform %s 2>&1", exe, args);
    FILE *p = popen(cmd, "r");
    cr_assert(p);
    size_t got = fread(out, 1, sizeof out - 1, p);
    out[got] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(help, every_command_has_help_listing_every_option_with_its_default)
{
    for (const cli_command *c = cli_commands(); c->name; c++) {
        char args[128];
        snprintf(args, sizeof args, "%s --help", c->name);
        cr_assert_eq(conform(args), 0, "conform %s", args);
        char copy[sizeof out];
        memcpy(copy, out, sizeof out);
        snprintf(args, sizeof args, "help %s", c->name);
        cr_assert_eq(conform(args), 0);
        cr_assert_str_eq(out, copy, "conform help %s and conform %s --help differ", c->name, c->name);
        for (const cli_option *o = c->opts; o->name; o++) {
            cr_assert(o->def && o->def[0], "%s %s has no default", c->name, o->name);
            char line[128];
            snprintf(line, sizeof line, "\n  %s", o->name);
            cr_assert(strstr(out, line), "conform help %s does not list %s", c->name, o->name);
        }
    }
    cr_assert_eq(conform("--help"), 0);
    for (const cli_command *c = cli_commands(); c->name; c++) cr_assert(strstr(out, c->name), "%s", c->name);
}

/* every option the help lists is one the command accepts: given a value it may refuse, it is never
 * answered with "unknown option" */
Test(help, every_option_listed_is_accepted)
{
    for (const cli_command *c = cli_commands(); c->name; c++)
        for (const cli_option *o = c->opts; o->name; o++) {
            char args[256];
            const char *op = strcmp(c->name, "eval") && strcmp(c->name, "bench") && strcmp(c->name, "check") ? "" : "roi_align ";
            snprintf(args, sizeof args, "%s %s%s%s --no-such-option-here", c->name, op, o->name, o->arg ? " @bad@" : "");
            conform(args);
            cr_assert(!strstr(out, "unknown option '--") || strstr(out, "'--no-such-option-here'"),
                      "conform %s: %s", args, out);
            char own[128];
            snprintf(own, sizeof own, "unknown option '%s'", o->name);
            cr_assert(!strstr(out, own), "conform %s: %s", args, out);
        }
}

Test(help, typos_get_the_nearest_option_or_command)
{
    cr_assert_eq(conform("run --treads 2"), 2);
    cr_assert(strstr(out, "unknown option '--treads'") && strstr(out, "did you mean --threads?"), "%s", out);
    cr_assert_eq(conform("export --otu /tmp/x"), 2);
    cr_assert(strstr(out, "did you mean --out?"), "%s", out);
    cr_assert_eq(conform("chek roi_align"), 2);
    cr_assert(strstr(out, "unknown command 'chek'") && strstr(out, "did you mean check?"), "%s", out);
    cr_assert_eq(conform("check roi_algn"), 2);
    cr_assert(strstr(out, "'roi_algn'") && strstr(out, "did you mean roi_align?"), "%s", out);
    cr_assert_eq(conform("run --frobnicate"), 2);
    cr_assert(strstr(out, "'--frobnicate'") && !strstr(out, "did you mean"), "no suggestion when nothing is near: %s", out);
}

/* a usage error names the option, echoes the value it refused and the values allowed */
Test(help, usage_errors_echo_the_refused_value_and_the_allowed_ones)
{
    static const struct { const char *args, *want[3]; } cases[] = {
        {"eval roi_align --impl gpu", {"--impl", "'gpu'", "reference, optimized"}},
        {"bench roi_align --impl fast", {"--impl", "'fast'", "reference, optimized, both"}},
        {"run --isa neon", {"--isa", "'neon'", "avx2"}},
        {"run --dtype float8", {"--dtype", "'float8'", "bfloat16"}},
        {"export --out /nonexistent/x --dtype half", {"--dtype", "'half'", "float16"}},
        {"run --threads many", {"--threads", "'many'", "[1, 1024]"}},
        {"run --shard 3/2", {"--shard", "'3/2'", "1 <= I <= N"}},
        {"run --op roi_alig", {"--op", "'roi_alig'", "grid_sampler_2d"}},
        {"run --gate-on nosuch", {"--gate-on", "'nosuch'", "torch-assert-close"}},
        {"export --out /nonexistent/x --outputs dir:/x", {"--outputs", "'dir:/x'", "plugin:PATH.so"}},
        {"eval roi_align --attr pooled_h", {"--attr", "'pooled_h'", "NAME=VALUE"}},
        {"run --filter", {"--filter", "got nothing", "PATTERN"}},
        {"run --rerun /nonexistent/report.json --status failed,bogus", {"--status", "'bogus'", "not_implemented"}},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        cr_assert_eq(conform(cases[k].args), 2, "conform %s", cases[k].args);
        for (int w = 0; w < 3; w++)
            cr_assert(strstr(out, cases[k].want[w]), "conform %s: '%s' not in: %s", cases[k].args, cases[k].want[w], out);
    }
}

/* the options of a markdown section: every `--name` token from its heading to the next "## " */
static int doc_has_option(const char *doc, const char *section, const char *opt)
{
    const char *s = strstr(doc, section);
    if (!s) return -1;
    const char *end = strstr(s + 1, "\n## ");
    for (const char *p = strstr(s, opt); p && (!end || p < end); p = strstr(p + 1, opt)) {
        char after = p[strlen(opt)];
        if (!(after == '-' || (after >= 'a' && after <= 'z'))) return 1;
    }
    return 0;
}

static int is_known_option(const char *opt)
{
    for (const cli_command *c = cli_commands(); c->name; c++)
        if (cli_option_find(c, opt)) return 1;
    return !strcmp(opt, "--help") || !strcmp(opt, "--version") || !strcmp(opt, "--dry-run");
}

/* the options a markdown file mentions, each checked against the help */
static void all_mentioned_options_exist(const char *path, const char *doc)
{
    for (const char *p = strstr(doc, "--"); p; p = strstr(p + 2, "--")) {
        if (p > doc && (p[-1] == '-' || p[-1] == '<' || (p[-1] >= 'a' && p[-1] <= 'z'))) continue;
        char opt[64];
        size_t n = 2;
        while (n < sizeof opt - 1 && ((p[n] >= 'a' && p[n] <= 'z') || (p[n] == '-' && p[n + 1] >= 'a' && p[n + 1] <= 'z'))) n++;
        if (n == 2) continue;
        memcpy(opt, p, n);
        opt[n] = '\0';
        /* options of other tools the docs show (the Python tools, conform-torch, pytest, valgrind) come after their name */
        const char *line = p;
        while (line > doc && line[-1] != '\n') line--;
        if (strstr(line, ".py") && strstr(line, ".py") < p) continue;
        if ((strstr(line, "pytest") && strstr(line, "pytest") < p) || (strstr(line, "valgrind") && strstr(line, "valgrind") < p) ||
            (strstr(line, "pkg-config") && strstr(line, "pkg-config") < p) ||
            (strstr(line, "conform-torch") && strstr(line, "conform-torch") < p))
            continue;
        cr_assert(is_known_option(opt), "%s mentions %s, which no command has", path, opt);
    }
}

Test(help, docs_cli_and_readme_list_the_options_the_help_lists)
{
    char *cli = test_slurp("docs/cli.md"), *readme = test_slurp("README.md");
    cr_assert(cli && readme);
    for (const cli_command *c = cli_commands(); c->name; c++) {
        char section[64];
        snprintf(section, sizeof section, "\n## conform %s", c->name);
        cr_assert_neq(doc_has_option(cli, section, "--x"), -1, "docs/cli.md has no section '## conform %s'", c->name);
        for (const cli_option *o = c->opts; o->name; o++)
            cr_assert_eq(doc_has_option(cli, section, o->name), 1, "docs/cli.md's conform %s does not list %s", c->name, o->name);
    }
    all_mentioned_options_exist("docs/cli.md", cli);
    all_mentioned_options_exist("README.md", readme);
    free(cli);
    free(readme);
}
