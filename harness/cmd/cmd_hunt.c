/* conform hunt: search an op's problem space for failures and shrink each (harness/hunt/). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "help.h"
#include "hunt.h"

#define MAX_COMBINE 256

static int take_value(hunt_opts *o, const char *a, const char *v)
{
    long long n;
    if (!strcmp(a, "--impl")) o->impl_spec = v;
    else if (!strcmp(a, "--runner")) o->runner = v;
    else if (!strcmp(a, "--runner-repro")) o->runner_repro = v;
    else if (!strcmp(a, "--baseline")) o->baseline = v;
    else if (!strcmp(a, "--out")) o->out_path = v;
    else if (!strcmp(a, "--waivers")) o->waivers_path = v;
    else if (!strcmp(a, "--dtype")) o->dtype_name = v;
    else if (!strcmp(a, "--isa")) {
        conform_exec ex = {CONFORM_ISA_AUTO, 0};
        if (parse_isa_arg(v, &ex)) return EXIT_USAGE;
        o->isa = ex.isa;
    } else if (!strcmp(a, "--seconds")) {
        if (parse_int_arg(a, v, 1, 86400 * 7, &n)) return EXIT_USAGE;
        o->seconds = (double)n;
    } else if (!strcmp(a, "--cases")) { if (parse_int_arg(a, v, 1, 1LL << 40, &o->cases)) return EXIT_USAGE; }
    else if (!strcmp(a, "--seed")) {
        if (parse_int_arg(a, v, 0, 4294967295LL, &n)) return EXIT_USAGE;
        o->seed = (uint64_t)n;
    } else if (!strcmp(a, "--timeout")) {
        if (parse_int_arg(a, v, 1, 86400, &n)) return EXIT_USAGE;
        o->timeout_s = (double)n;
    } else if (!strcmp(a, "--max-found")) {
        if (parse_int_arg(a, v, 1, 100000, &n)) return EXIT_USAGE;
        o->max_found = (int)n;
    } else if (!strcmp(a, "--batch")) {
        if (parse_int_arg(a, v, 1, 256, &n)) return EXIT_USAGE;
        o->batch = (int)n;
    } else if (!strcmp(a, "--threads")) {
        if (parse_int_arg(a, v, 1, 1024, &n)) return EXIT_USAGE;
        o->threads = (int)n;
    } else return -1;
    return EXIT_OK;
}

static int parse_hunt(int argc, char **argv, hunt_opts *o, const char **combine, int *n_combine)
{
    *o = (hunt_opts){.impl_spec = "optimized", .out_path = "FOUND.json", .seed = 1, .isolate = -1, .timeout_s = 10,
                     .max_found = 20, .batch = 64, .isa = CONFORM_ISA_AUTO};
    int comb = 0;
    for (int i = 2; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--isolate")) o->isolate = 1;
        else if (!strcmp(a, "--no-isolate")) o->isolate = 0;
        else if (!strcmp(a, "--quiet")) o->quiet = 1;
        else if (!strcmp(a, "--finite")) o->finite = 1;
        else if (!strcmp(a, "--combine")) comb = 1;
        else if (a[0] == '-') {
            int rc = v ? take_value(o, a, v) : -1;
            if (rc < 0) return cli_unknown_option("hunt", a, v);
            if (rc) return rc;
            i++;
        } else if (comb) {
            if (*n_combine == MAX_COMBINE) return usage_error("hunt --combine: at most %d files", MAX_COMBINE);
            combine[(*n_combine)++] = a;
        } else if (o->op_name) return usage_error("hunt: one op at a time (got '%s' and '%s')", o->op_name, a);
        else o->op_name = a;
    }
    if (comb && !*n_combine) return usage_error("hunt --combine: name the FOUND.json files to combine");
    if (comb && o->op_name) return usage_error("hunt --combine takes files, not an op ('%s')", o->op_name);
    if (comb) return EXIT_OK;
    if (!o->op_name) return usage_error("hunt: name the op to hunt (see `conform list`), e.g. conform hunt roi_align --seconds 10");
    if (o->seconds > 0 && o->cases > 0) return usage_error("hunt: --seconds or --cases, not both");
    if (o->seconds <= 0 && o->cases <= 0) o->seconds = 60;
    return EXIT_OK;
}

int cmd_hunt(int argc, char **argv)
{
    hunt_opts o;
    const char *combine[MAX_COMBINE];
    int n_combine = 0;
    if (cli_once("hunt", argc, argv)) return EXIT_USAGE;
    int rc = parse_hunt(argc, argv, &o, combine, &n_combine);
    if (rc) return rc;
    if (n_combine) return hunt_combine(combine, n_combine, o.out_path);
    return hunt_run(&o);
}
