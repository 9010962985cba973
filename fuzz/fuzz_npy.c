/* libFuzzer target: the .npy reader on arbitrary bytes, in every dtype mode. */
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

#include "npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0]) snprintf(path, sizeof path, "/tmp/conform-fuzz-npy-%d.npy", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f) return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    for (int mode = 0; mode <= NPY_BF16_AS_U2; mode++) {
        tensor_t t;
        char err[512];
        if (npy_read_ex(path, &t, mode, err, sizeof err) == 0) tensor_free(&t);
    }
    return 0;
}
