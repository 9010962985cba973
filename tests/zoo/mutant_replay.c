/* Replays the recorded calls of a suite (tests/zoo/mutant_record.c, format mutant_calls.h)
 * against a generated mutant (zoo_mutant_entry) and the bug-free kernels (zoo_clean_entry) on
 * the same inputs, and prints one line per output of each call:
 *     <call> <op> <output> <elements> <elements whose bits differ> <max |difference|> <max |bug-free value|> <guard>
 * guard is 1 when the mutant wrote into the 64 floats around an output (a write past it).
 * Each call runs under alarm(seconds); a crash or hang ends the process after the lines of the
 * calls before it, so tools/zoo_mutants.py knows which call did it.
 * usage: mutant_replay CALLS SECONDS; mutant_replay --shapes CALLS prints each call's output shapes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conform_plugin.h"
#include "mutant_calls.h"

const conform_plugin *zoo_mutant_entry(void);
const conform_plugin *zoo_clean_entry(void);

enum { GUARD = 64, MAX_T = 16 };
static const unsigned char *cur, *end;

static void need(size_t n)
{
    if ((size_t)(end - cur) < n) {
        fprintf(stderr, "mutant_replay: the record ends inside a call\n");
        exit(2);
    }
}
static int64_t get_i(void)
{
    int64_t v;
    need(sizeof v);
    memcpy(&v, cur, sizeof v);
    cur += sizeof v;
    return v;
}
static const void *get_bytes(size_t n)
{
    need(n);
    const void *p = cur;
    cur += n;
    return p;
}
static char *get_s(void)
{
    int64_t n = get_i();
    if (n < 0) return NULL;
    char *s = malloc((size_t)n + 1);
    memcpy(s, get_bytes((size_t)n), (size_t)n);
    s[n] = 0;
    return s;
}
static int64_t get_dims(const char **name, int *rank, int64_t **dims)
{
    *name = get_s();
    *rank = (int)get_i();
    *dims = malloc(sizeof(int64_t) * (size_t)(*rank + 1));
    memcpy(*dims, get_bytes(sizeof(int64_t) * (size_t)*rank), sizeof(int64_t) * (size_t)*rank);
    int64_t n = 1;
    for (int d = 0; d < *rank; d++) n *= (*dims)[d];
    return n;
}

/* a buffer of n floats with GUARD floats of a pattern on each side */
static float *guarded(int64_t n, const float *init)
{
    float *b = malloc(sizeof(float) * (size_t)(n + 2 * GUARD));
    for (int k = 0; k < GUARD; k++) b[k] = b[n + GUARD + k] = -1234.5f;
    memcpy(b + GUARD, init, sizeof(float) * (size_t)n);
    return b + GUARD;
}
static int guard_broken(const float *b, int64_t n)
{
    for (int k = 1; k <= GUARD; k++)
        if (b[-k] != -1234.5f || b[n + k - 1] != -1234.5f) return 1;
    return 0;
}

static void compare(int call, const char *op, const conform_plugin_output *m, const conform_plugin_output *c, int64_t n)
{
    int64_t differ = 0;
    double max_diff = 0, scale = 0;
    for (int64_t i = 0; i < n; i++) {
        float a = m->data[i], b = c->data[i];
        if (isfinite(b) && fabs(b) > scale) scale = fabs(b);
        if (!memcmp(&a, &b, sizeof a) || (isnan(a) && isnan(b))) continue;
        differ++;
        double d = isfinite(a) && isfinite(b) ? fabs((double)a - (double)b) : INFINITY;
        if (d > max_diff) max_diff = d;
    }
    printf("%d %s %s %lld %lld %.9g %.9g %d\n", call, op, m->name, (long long)n, (long long)differ, max_diff, scale,
           guard_broken(m->data, n));
}

/* shapes_only: print the outputs' shapes of the call as a JSON list instead of running it */
static void replay_one(int call, unsigned seconds, int shapes_only)
{
    if (memcmp(get_bytes(4), ZOO_CALL_MAGIC, 4)) {
        fprintf(stderr, "mutant_replay: call %d does not start with " ZOO_CALL_MAGIC "\n", call);
        exit(2);
    }
    char *op = get_s();
    int na = (int)get_i(), ni, no;
    conform_plugin_attr a[64];
    if (na > 64) exit(2);
    for (int k = 0; k < na; k++) {
        a[k].name = get_s();
        a[k].kind = (conform_attr_kind)get_i();
        a[k].i = get_i();
        memcpy(&a[k].f, get_bytes(sizeof a[k].f), sizeof a[k].f);
        a[k].s = get_s();
        int64_t n = get_i();
        a[k].n = n < 0 ? 0 : (int)n;
        a[k].list = n < 0 ? NULL : get_bytes(sizeof(int64_t) * (size_t)n);
    }
    conform_plugin_input in[MAX_T];
    if ((ni = (int)get_i()) > MAX_T) exit(2);
    for (int k = 0; k < ni; k++) {
        int64_t n = get_dims(&in[k].name, &in[k].rank, (int64_t **)&in[k].dims);
        in[k].data = get_i() ? get_bytes(sizeof(float) * (size_t)n) : NULL;
    }
    conform_plugin_output om[MAX_T], oc[MAX_T];
    int64_t sizes[MAX_T];
    if ((no = (int)get_i()) > MAX_T) exit(2);
    for (int k = 0; k < no; k++) {
        sizes[k] = get_dims(&om[k].name, &om[k].rank, (int64_t **)&om[k].dims);
        oc[k] = om[k];
        const float *init = get_i() ? get_bytes(sizeof(float) * (size_t)sizes[k]) : NULL;
        om[k].data = init ? guarded(sizes[k], init) : NULL;
        oc[k].data = init ? guarded(sizes[k], init) : NULL;
    }
    if (shapes_only) {
        printf("[");
        for (int k = 0; k < no; k++) {
            printf("%s[", k ? ", " : "");
            for (int d = 0; d < om[k].rank; d++) printf("%s%lld", d ? ", " : "", (long long)om[k].dims[d]);
            printf("]");
        }
        printf("]\n");
        return;
    }
    alarm(seconds);
    int rm = zoo_mutant_entry()->run(op, na, a, ni, in, no, om);
    alarm(0);
    int rc = zoo_clean_entry()->run(op, na, a, ni, in, no, oc);
    if (rm != rc) printf("%d %s status %d %d\n", call, op, rm, rc);
    else
        for (int k = 0; k < no; k++)
            if (om[k].data) compare(call, op, &om[k], &oc[k], sizes[k]);
    fflush(stdout);
    /* the record's own memory is not freed: the process is short and its inputs are borrowed */
    for (int k = 0; k < no; k++) {
        if (om[k].data) free(om[k].data - GUARD);
        if (oc[k].data) free(oc[k].data - GUARD);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: mutant_replay CALLS SECONDS | mutant_replay --shapes CALLS\n");
        return 2;
    }
    int shapes_only = !strcmp(argv[1], "--shapes");
    const char *path = shapes_only ? argv[2] : argv[1];
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return 2;
    }
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *all = malloc((size_t)size + 1);
    if (fread(all, 1, (size_t)size, f) != (size_t)size) return 2;
    fclose(f);
    cur = all;
    end = all + size;
    for (int call = 0; cur < end; call++) replay_one(call, shapes_only ? 0 : (unsigned)atoi(argv[2]), shapes_only);
    return 0;
}
