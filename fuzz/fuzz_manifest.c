/* libFuzzer target: an export manifest (`--impl dir:DIR`, a device directory's untrusted index)
 * as arbitrary JSON text. Once per process, DIR gets a real export of eight small cases with
 * conform's outputs, and hostile entries a mutated path may name: a FIFO, a directory, a symlink
 * to /dev/zero, a symlink leaving DIR, a symlink loop, an oversized file. Each input is written as
 * DIR/manifest.json, opened, and the cases it names are read as a run reads them (in place: a read
 * that blocks here is a finding, since the checks before every read must refuse what could block).
 * Seeds: fuzz/corpus/manifest (the export's own manifest and variants naming the hostile files). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "impl.h"
#include "runner.h"
#include "suite.h"

#define FUZZ_FILTER "smoke/fwd_grid"

static char dir[64];
static suite_t suite;

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd)) fprintf(stderr, "fuzz_manifest: could not remove %s\n", dir);
}

/* the export and its hostile neighbours; 0 when ready */
static int prepare(void)
{
    snprintf(dir, sizeof dir, "/tmp/conform-fuzz-manifest-%d", (int)getpid());
    atexit(remove_dir);
    char err[CONFORM_ERR_LEN], path[128];
    const char *argv[] = {"conform", "export", "cases/smoke.json", "--filter", FUZZ_FILTER, "--out", dir, "--outputs",
                          "optimized", "--threads", "1"};
    FILE *quiet = freopen("/dev/null", "w", stdout);
    int rc = cmd_export(11, (char **)argv);
    (void)quiet;
    if (rc || suite_load("cases/smoke.json", &suite, err, sizeof err)) return -1;
    snprintf(path, sizeof path, "%s/fifo.npy", dir);
    if (mkfifo(path, 0600)) return -1;
    snprintf(path, sizeof path, "%s/dir.npy", dir);
    if (mkdir(path, 0700)) return -1;
    snprintf(path, sizeof path, "%s/zero.npy", dir);
    if (symlink("/dev/zero", path)) return -1;
    snprintf(path, sizeof path, "%s/out.npy", dir);
    if (symlink("/etc/passwd", path)) return -1;
    snprintf(path, sizeof path, "%s/loop.npy", dir);
    if (symlink("loop.npy", path)) return -1;
    snprintf(path, sizeof path, "%s/big.npy", dir);
    FILE *f = fopen(path, "wb");
    if (!f || fseek(f, 1L << 30, SEEK_SET) || fputc(0, f) == EOF || fclose(f)) return -1; /* sparse: no disk used */
    return 0;
}

/* the cases of the filter as a run reads them from the directory */
static void read_cases(const impl_t *impl)
{
    uint64_t seed = 0;
    impl_pinned_seed(impl, &seed);
    const exec_policy in_place = {0, 0, NULL};
    const conform_exec ex = {CONFORM_ISA_SCALAR, 1};
    for (int i = 0; i < suite.n_cases; i++) {
        const case_t *c = &suite.cases[i];
        if (strncmp(c->id, FUZZ_FILTER, strlen(FUZZ_FILTER))) continue;
        problem_t p;
        char err[CONFORM_ERR_LEN];
        int code;
        void *out[CONFORM_MAX_TENSORS] = {0};
        if (!case_build(c, case_seed(c, seed), &p, err, sizeof err) &&
            impl_inputs(impl, c, &p, &in_place, err, sizeof err) == EXEC_OK && !c->op->validate(&p, err, sizeof err)) {
            int ok = 1;
            for (int o = 0; o < p.op->n_outputs; o++) ok &= (out[o] = guarded_alloc(shape_numel(&p.out_shape[o]), impl->dtype)) != NULL;
            if (ok) (void)impl_outputs(impl, c, &p, out, &ex, &in_place, &code, err, sizeof err);
            for (int o = 0; o < p.op->n_outputs; o++) guarded_free(out[o]);
        }
        problem_free(&p);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int ready = -2;
    if (ready == -2) ready = prepare();
    if (ready) abort(); /* a broken setup must not pass as a clean run */
    conform_memory_budget = 64.0 * 1048576.0;
    conform_sample_budget = 1 << 20;
    char path[128], spec[128], err[CONFORM_ERR_LEN];
    snprintf(path, sizeof path, "%s/manifest.json", dir);
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    impl_t impl;
    snprintf(spec, sizeof spec, "dir:%s", dir);
    if (impl_open(spec, NULL, &impl, err, sizeof err)) return 0;
    read_cases(&impl);
    impl_close(&impl);
    return 0;
}
