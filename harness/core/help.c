/* Every command's options, in one table: `conform help CMD`, `conform CMD --help`, the global
 * usage and the nearest-option suggestion all read it, and tests/test_help.c keeps it in step with
 * what each command accepts and with docs/cli.md. */
#include "help.h"

#include <stdio.h>
#include <string.h>

#include "cli.h"

#define END {NULL, NULL, NULL, NULL}
#define ISA {"--isa", "auto|scalar|avx2|avx512", "auto (the best this CPU has)", "SIMD level of the optimized kernels"}
#define MAX_MEMORY {"--max-memory", "MiB", "half the machine's memory", "refuse a case whose tensors would exceed it, with its sizes"}
#define MAX_SAMPLES {"--max-samples", "N", "2^28", "refuse a case whose rois need more sample evaluations"}
#define GATE_ON {"--gate-on", "NAME[,NAME]", "none (the derived bound decides)", "named precision standards that decide the verdict"}
#define ATTR {"--attr", "NAME=VALUE", "the op's defaults (conform list)", "an attribute: integer, float, true/false, string or comma list"}
#define INPUT {"--input", "NAME=FILE.npy", "none", "an input tensor, little-endian float32 or float64, C order"}
#define SELECT_OPTS                                                                                                      \
    {"--filter", "PATTERN", "every case", "a glob over case ids (* or ?), else an id, an id prefix or an op name"},     \
    {"--op", "OP", "every op", "only this op's cases (repeatable)"},                                                   \
    {"--shard", "I/N", "CI_NODE_INDEX/CI_NODE_TOTAL or SLURM_ARRAY_TASK_*, else 1/1", "the I-th of N parts, by a hash of the id"}, \
    {"--seed", "N", "the suite's seed", "the run seed; each case's seed mixes it with the case id"}

static const cli_option run_opts[] = {
    SELECT_OPTS,
    {"--impl", "optimized|plugin:PATH.so|dir:DIR", "optimized", "the implementation under test"},
    {"--dtype", "float32|float16|bfloat16|float64", "the implementation's own (float32; a dir: its export's)",
     "the precision the implementation computes in"},
    {"--threads", "N", "cores / jobs", "threads per case (the golden's: every core unless given)"},
    {"--jobs", "N", "cores / threads, as many as fit in --max-memory", "cases run at once, each in a worker process"},
    ISA,
    {"--report-dir", "DIR", "reports/latest", "where report.json, report.md, report.html and junit.xml go"},
    {"--waivers", "FILE", "cases/waivers.json when present", "known failures, each with a reason and a link"},
    {"--dump-failures", "DIR", "none", "each failing case's inputs, golden, output, tol and err/tol in DIR/<case>/, with a repro.sh"},
    {"--rerun", "REPORT.json", "none", "only the cases that report gave a status in --status"},
    {"--status", "S,...", "failed,error", "the statuses --rerun reruns"},
    GATE_ON,
    {"--golden-dir", "DIR", "cases/golden of the data directory", "the golden vectors of the proofs"},
    {"--timeout", "S", "120", "a case running longer is a timeout"},
    {"--no-isolate", NULL, "off (each case in a child process)", "run the implementation in-process"},
    MAX_MEMORY,
    MAX_SAMPLES,
    {"--list", NULL, "off", "print the selected case ids and run nothing"},
    {"--quiet", NULL, "off", "no per-failure lines, no progress line"},
    {"--no-proofs", NULL, "off (the proofs of every op run)", "skip the reference proofs (conform verify runs them): for many runs of one build"},
    END};

static const cli_option export_opts[] = {
    {"--out", "DIR", "required", "where manifest.json and the inputs go"},
    {"--dtype", "float32|float16|bfloat16|float64", "float32", "the dtype of the files"},
    SELECT_OPTS,
    {"--outputs", "optimized|plugin:PATH.so", "none", "also write that implementation's outputs where a device would"},
    {"--threads", "N", "all cores", "threads of --outputs"},
    ISA,
    END};

static const cli_option eval_opts[] = {
    {"--impl", "reference|optimized", "required", "which path computes"},
    ATTR,
    INPUT,
    {"--output-dir", "DIR", "required", "where DIR/<output>.npy go (float64 reference, float32 optimized)"},
    {"--threads", "N", "all cores", "threads of either path"},
    ISA,
    MAX_MEMORY,
    MAX_SAMPLES,
    END};

static const cli_option check_opts[] = {
    ATTR,
    INPUT,
    {"--actual", "NAME=FILE.npy|FILE.bin", "required, one per output", "an output computed elsewhere"},
    {"--dtype", "float32|float16|bfloat16|float64", "float32, or float16 for a '<f2' actual, or what a _float16-style suffix of a .bin names",
     "the precision the outputs were computed in"},
    {"--report-dir", "DIR", "none (no report files)", "write report.json, .md, .html and junit.xml there"},
    {"--dump-failures", "DIR", "none", "a failing call's inputs, golden, output, tol and err/tol in DIR/check_OP/, with a repro.sh"},
    GATE_ON,
    {"--threads", "N", "all cores", "threads of the reference"},
    MAX_MEMORY,
    MAX_SAMPLES,
    END};

static const cli_option bench_opts[] = {
    ATTR,
    INPUT,
    {"--shape", "NAME=d0,d1,...", "none", "an input generated at this shape instead of read"},
    {"--gen", "JSON", "the op's default generator", "a suite's \"gen\" object for generated inputs"},
    {"--seed", "N", "1", "seed of generated inputs"},
    {"--impl", "reference|optimized|both", "both", "which paths to time"},
    {"--repeat", "N", "10", "timed repetitions"},
    {"--threads", "N", "all cores", "threads"},
    ISA,
    {"--append", "BENCH.json", "none", "collect the results into a bench file for gate"},
    MAX_MEMORY,
    MAX_SAMPLES,
    END};

static const cli_option gate_opts[] = {
    {"--baseline", "FILE", "required", "the baseline report or bench file"},
    {"--current", "FILE", "required", "the report or bench file to judge"},
    {"--update", NULL, "off", "make the current file the new baseline (also the first one, where none is)"},
    END};

static const cli_option merge_opts[] = {
    {"--report-dir", "OUT", "required", "where the merged reports go (the shards' report directories follow)"},
    END};

static const cli_option verify_opts[] = {
    {"--op", "OP", "every op", "prove only this op's reference"},
    {"--golden-dir", "DIR", "cases/golden of the data directory", "the golden vectors"},
    {"--report-dir", "DIR", "none", "also write the proofs as DIR/verify.json"},
    END};

static const cli_option list_opts[] = {
    {"--json", NULL, "off", "machine-readable"},
    END};

static const cli_option hunt_opts[] = {
    {"--impl", "optimized|plugin:PATH.so|dir:DIR", "optimized", "what is hunted; dir:DIR: each round is exported under DIR and run by --runner"},
    {"--runner", "CMD", "none", "dir: the device's command for each round, {dir} replaced by the round's export"},
    {"--runner-repro", "CMD", "--runner", "dir: the runner the repro lines name (a relaying runner's real command)"},
    {"--baseline", "optimized|plugin:PATH.so", "none", "a failure counts only where this implementation passes"},
    {"--waivers", "FILE", "none", "a find whose minimal case a waiver's \"when\" holds on is waived, not found"},
    ISA,
    {"--seconds", "N", "60 (unless --cases)", "how long to hunt"},
    {"--cases", "N", "none", "how many problems to draw instead"},
    {"--seed", "N", "1", "the draws and the shrinking follow from it"},
    {"--dtype", "float32|float16|bfloat16|float64", "the implementation's own", "the precision hunted"},
    {"--out", "FOUND.json", "FOUND.json", "the distinct minimal failures, a suite that run replays"},
    {"--combine", NULL, "off", "combine the FOUND files that follow into --out, duplicates removed"},
    {"--max-found", "N", "20", "stop after this many distinct failures"},
    {"--batch", "N", "64", "dir: problems per exported round"},
    {"--timeout", "SECONDS", "10", "per case when isolated: a hang past it is a finding"},
    {"--isolate", NULL, "plugins", "run each case in a child process (a crash is a finding)"},
    {"--no-isolate", NULL, "optimized", "run in process"},
    {"--threads", "N", "1", "threads of the kernels (small problems: one is fastest)"},
    {"--finite", NULL, "off", "no NaN or infinity among the drawn inputs"},
    {"--quiet", NULL, "off", "no progress line, only findings and the summary"},
    END};

static const cli_command commands[] = {
    {"run", "[SUITE.json ...] [options]", "run suites (default cases/conformance.json) and judge the implementation", run_opts},
    {"check", "OP --attr NAME=VALUE... --input NAME=FILE.npy... --actual NAME=FILE... [options]",
     "judge outputs computed elsewhere against the reference", check_opts},
    {"export", "[SUITE.json ...] --out DIR [options]",
     "the cases' inputs as .npy and a manifest, for a device to run; judge with run --impl dir:DIR", export_opts},
    {"eval", "OP --impl reference|optimized --input NAME=FILE.npy... --output-dir DIR [options]",
     "one op on given inputs; outputs as DIR/<name>.npy", eval_opts},
    {"bench", "OP (--input NAME=FILE.npy | --shape NAME=dims)... [options]", "timings as one JSON object per implementation",
     bench_opts},
    {"gate", "--baseline FILE --current FILE [--update]", "regression gate between two reports or bench files", gate_opts},
    {"merge", "--report-dir OUT DIR...", "shard reports combined into one, in every format", merge_opts},
    {"verify", "[options]", "prove the references: adjoint, finite difference, metamorphic, golden", verify_opts},
    {"hunt", "OP [--impl IMPL] [--seconds N | --cases N] [--seed S] [--out FOUND.json] [options]",
     "search the op's problems for failures and shrink each to a minimal case", hunt_opts},
    {"list", "[--json]", "the ops, their tensors and attributes", list_opts},
    {NULL, NULL, NULL, NULL}};

const cli_command *cli_commands(void) { return commands; }

const cli_command *cli_command_find(const char *name)
{
    for (const cli_command *c = commands; name && c->name; c++)
        if (!strcmp(c->name, name)) return c;
    return NULL;
}

const cli_option *cli_option_find(const cli_command *c, const char *name)
{
    for (const cli_option *o = c ? c->opts : NULL; o && o->name; o++)
        if (!strcmp(o->name, name)) return o;
    return NULL;
}

void cli_print_usage(FILE *f)
{
    fputs("usage: conform COMMAND [options]\n\ncommands:\n", f);
    for (const cli_command *c = commands; c->name; c++) fprintf(f, "  %-8s %s\n", c->name, c->summary);
    fputs("\n`conform help COMMAND` or `conform COMMAND --help`: every option with its default.\n"
          "data (suites, golden vectors, waivers): $CONFORM_DATA, else ../share/conform beside the binary\n"
          "exit codes: 0 success, 1 conformance failure or regression, 2 bad usage or input\n",
          f);
}

int cli_print_help(const cli_command *c, FILE *f)
{
    fprintf(f, "usage: conform %s %s\n  %s\n\noptions:\n", c->name, c->synopsis, c->summary);
    for (const cli_option *o = c->opts; o->name; o++) {
        char head[96];
        snprintf(head, sizeof head, "%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
        fprintf(f, "  %s\n      %s; default: %s\n", head, o->text, o->def);
    }
    return EXIT_OK;
}

/* edit distance, for "did you mean" */
static size_t distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b), row[64];
    if (la >= 63 || lb >= 63) return 99;
    for (size_t j = 0; j <= lb; j++) row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j], best = diag + (a[i - 1] != b[j - 1]);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            diag = up;
            row[j] = best;
        }
    }
    return row[lb];
}

/* the nearest of n names, if near enough to be a typo */
static const char *nearest(const char *word, const char *const *names, int n)
{
    const char *best = NULL;
    size_t bd = 99;
    for (int i = 0; i < n; i++) {
        size_t d = distance(word, names[i]);
        if (d < bd) { bd = d; best = names[i]; }
    }
    return bd <= (strlen(word) > 9 ? 3 : 2) ? best : NULL;
}

#define MAX_NAMES 64
static int option_names(const cli_command *c, const char **names)
{
    int n = 0;
    for (const cli_option *o = c ? c->opts : NULL; o && o->name && n < MAX_NAMES; o++) names[n++] = o->name;
    return n;
}

int cli_unknown_option(const char *cmd, const char *opt, const char *value)
{
    const cli_command *c = cli_command_find(cmd);
    const cli_option *o = cli_option_find(c, opt);
    if (o && value) /* a known option whose value is not of its form */
        return usage_error("%s: %s takes %s, got '%s' (conform help %s)", cmd, opt, o->arg ? o->arg : "no value", value, cmd);
    if (o) return usage_error("%s: %s takes %s, got nothing (conform help %s)", cmd, opt, o->arg ? o->arg : "no value", cmd);
    const char *names[MAX_NAMES];
    const char *near = nearest(opt, names, option_names(c, names));
    if (near) return usage_error("%s: unknown option '%s'; did you mean %s? (conform help %s)", cmd, opt, near, cmd);
    return usage_error("%s: unknown option '%s' (conform help %s lists them)", cmd, opt, cmd);
}

int cli_unknown_command(const char *name)
{
    const char *names[MAX_NAMES];
    int n = 0;
    for (const cli_command *c = commands; c->name; c++) names[n++] = c->name;
    const char *near = nearest(name ? name : "", names, n);
    if (near) return usage_error("unknown command '%s'; did you mean %s? (conform --help)", name, near);
    return usage_error("unknown command '%s' (conform --help lists them)", name ? name : "");
}

int cli_unknown_op(const char *where, const char *name)
{
    const char *names[MAX_NAMES];
    char all[1024] = "";
    int n = 0;
    for (; conform_ops[n] && n < MAX_NAMES; n++) {
        names[n] = conform_ops[n]->name;
        snprintf(all + strlen(all), sizeof all - strlen(all), "%s%s", n ? ", " : "", names[n]);
    }
    const char *near = nearest(name, names, n);
    if (near) return usage_error("%s: unknown op '%s'; did you mean %s? (ops: %s)", where, name, near, all);
    return usage_error("%s: unknown op '%s' (ops: %s)", where, name, all);
}

/* options that gather: each gives one more attribute, input, shape, output or op */
static int repeatable(const cli_option *o)
{
    static const char *const gather[] = {"--attr", "--input", "--shape", "--actual"};
    for (size_t k = 0; k < sizeof gather / sizeof gather[0]; k++)
        if (!strcmp(o->name, gather[k])) return 1;
    return strstr(o->text, "(repeatable)") != NULL;
}

int cli_once(const char *cmd, int argc, char **argv)
{
    const cli_command *c = cli_command_find(cmd);
    const char *first[MAX_NAMES] = {0};
    for (int i = 2; c && i < argc; i++) {
        const cli_option *o = cli_option_find(c, argv[i]);
        if (!o || !o->arg || i + 1 >= argc) continue; /* a positional, a flag, or a value left to the parser */
        int k = (int)(o - c->opts);
        if (k < MAX_NAMES && !repeatable(o)) {
            if (first[k])
                return usage_error("%s: option %s given twice (%s %s, after %s %s); it takes one value", cmd, o->name,
                                   o->name, argv[i + 1], o->name, first[k]);
            first[k] = argv[i + 1];
        }
        i++; /* its value, whatever it looks like, is no option */
    }
    return EXIT_OK;
}

int cli_bad_value(const char *opt, const char *value, const char *allowed)
{
    return usage_error("%s: '%s' is not one of %s", opt, value ? value : "", allowed);
}
