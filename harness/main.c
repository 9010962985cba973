/* conform: reference-plus-optimized conformance harness for bilinear-sampling operators. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "report.h"

static const char usage[] =
    "usage: conform COMMAND [options]\n"
    "  list [--json]                       the ops, their tensors and attributes\n"
    "  run [SUITE.json ...] [--filter PATTERN] [--seed N] [--threads N] [--isa auto|scalar|avx2|avx512]\n"
    "      [--report-dir DIR] [--op OP]... [--shard I/N] [--waivers FILE] [--rerun REPORT [--status S,...]]\n"
    "      [--golden-dir DIR] [--list] [--quiet] [--impl optimized|plugin:PATH.so|dir:DIR]\n"
    "      [--dtype float32|float16|bfloat16|float64]\n"
    "                                      run suites (default cases/conformance.json) on both paths\n"
    "  export [SUITE.json ...] --out DIR [--dtype ...] [--filter P] [--op OP]... [--shard I/N] [--seed N]\n"
    "      [--outputs optimized|plugin:PATH.so]\n"
    "                                      the cases' inputs as .npy and a manifest, for a device to\n"
    "                                      run; judge its outputs with run --impl dir:DIR\n"
    "  eval OP --impl reference|optimized [--attr NAME=VALUE]... --input NAME=FILE.npy... --output-dir DIR\n"
    "      [--threads N] [--isa ...]       one op on given inputs; outputs as DIR/<name>.npy\n"
    "  bench OP [--attr NAME=VALUE]... (--input NAME=FILE.npy | --shape NAME=d0,d1,...)... [--seed N] [--gen JSON]\n"
    "      [--repeat N] [--threads N] [--isa ...] [--impl reference|optimized|both]\n"
    "                                      timings as one JSON object per implementation\n"
    "  gate --baseline FILE --current FILE [--update]\n"
    "                                      regression gate between two reports (conformance or bench);\n"
    "                                      --update makes the current report the baseline\n"
    "  merge --report-dir OUT DIR...       shard reports combined into one, in every format\n"
    "  check OP [--attr NAME=VALUE]... --input NAME=FILE.npy... --actual NAME=FILE.npy...\n"
    "      [--dtype float32|float16|bfloat16|float64] [--report-dir DIR]\n"
    "                                      judge outputs computed elsewhere against the reference\n"
    "  verify [--op OP] [--golden-dir DIR] [--report-dir DIR]\n"
    "                                      prove the references: adjoint, finite difference,\n"
    "                                      metamorphic and golden checks\n"
    "exit codes: 0 success, 1 conformance failure or regression, 2 bad usage or input\n";

int main(int argc, char **argv)
{
    /* past a file-size limit a write fails with EFBIG, which every writer reports (exit 2),
       instead of SIGXFSZ ending the process with a half-written file */
    signal(SIGXFSZ, SIG_IGN);
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? EXIT_USAGE : EXIT_OK;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("conform %s\n", CONFORM_VERSION);
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "list")) return cmd_list(argc, argv);
    if (!strcmp(argv[1], "run")) return cmd_run(argc, argv);
    if (!strcmp(argv[1], "eval")) return cmd_eval(argc, argv);
    if (!strcmp(argv[1], "bench")) return cmd_bench(argc, argv);
    if (!strcmp(argv[1], "gate")) return cmd_gate(argc, argv);
    if (!strcmp(argv[1], "verify")) return cmd_verify(argc, argv);
    if (!strcmp(argv[1], "merge")) return cmd_merge(argc, argv);
    if (!strcmp(argv[1], "check")) return cmd_check(argc, argv);
    if (!strcmp(argv[1], "export")) return cmd_export(argc, argv);
    fprintf(stderr, "conform: unknown command '%s'\n%s", argv[1], usage);
    return EXIT_USAGE;
}
