#include "guarded.h"

#include <string.h>

#include "bigbuf.h"

/* a signalling NaN, repeated: arithmetic that reads it returns it quieted (0x7fe0dead), so a kernel
   that accumulates past its output (g[at] += v) changes the guard; a quiet NaN would come back
   bit for bit and hide it (tests/test_guard.c) */
static const uint32_t guard_bits = 0x7fa0deadu;

static unsigned char guard_byte(int64_t i) { return (unsigned char)(guard_bits >> (8 * (i & 3))); }

/* layout: [GUARD_BYTES][n elements][GUARD_BYTES], a big buffer (kept for the next case) */
static unsigned char *alloc_raw(int64_t n, const dtype_desc *dt)
{
    return bigbuf_alloc((size_t)(n * dt->itemsize + 2 * GUARD_BYTES), 0, BIGBUF_SHARED);
}

void *guarded_alloc(int64_t n, const dtype_desc *dt)
{
    unsigned char *raw = alloc_raw(n, dt);
    if (!raw) return NULL;
    const int64_t body = n * dt->itemsize;
    for (int64_t i = 0; i < GUARD_BYTES; i++) raw[i] = raw[GUARD_BYTES + body + i] = guard_byte(i);
    unsigned char nan[8];
    dtype_poison(dt->id, nan); /* once, then copied; a NaN no reference gives: an element left so was never written */
    unsigned char *body_at = raw + GUARD_BYTES;
    if (dt->itemsize == 4) { /* float32's: a copy of a constant size, not a memcpy call per element */
        for (int64_t i = 0; i < n; i++) memcpy(body_at + 4 * i, nan, 4);
    } else
        for (int64_t i = 0; i < n; i++) memcpy(body_at + i * dt->itemsize, nan, (size_t)dt->itemsize);
    return body_at;
}

void *guarded_alloc_input(int64_t n, const dtype_desc *dt)
{
    unsigned char *raw = alloc_raw(n, dt);
    if (!raw) return NULL;
    const double v = GUARD_INPUT_VALUE;
    unsigned char enc[8];
    dtype_encode(dt->id, &v, enc, 1);
    const int64_t body = n * dt->itemsize, k = GUARD_BYTES / dt->itemsize; /* whole elements: 256 is a multiple */
    for (int64_t i = 0; i < k; i++) {
        memcpy(raw + i * dt->itemsize, enc, (size_t)dt->itemsize);
        memcpy(raw + GUARD_BYTES + body + i * dt->itemsize, enc, (size_t)dt->itemsize);
    }
    return raw + GUARD_BYTES;
}

int guarded_check(const void *buf, int64_t n, const dtype_desc *dt, int64_t *bad_offset)
{
    const unsigned char *raw = (const unsigned char *)buf - GUARD_BYTES;
    int64_t body = n * dt->itemsize;
    for (int64_t i = 0; i < GUARD_BYTES; i++) {
        if (raw[i] != guard_byte(i)) { /* before the buffer: a negative element offset */
            int64_t before = GUARD_BYTES - i;
            *bad_offset = -((before + dt->itemsize - 1) / dt->itemsize);
            return 0;
        }
    }
    for (int64_t i = 0; i < GUARD_BYTES; i++)
        if (raw[GUARD_BYTES + body + i] != guard_byte(i)) {
            *bad_offset = n + i / dt->itemsize;
            return 0;
        }
    return 1;
}

void guarded_seal(const void *buf)
{
    if (buf) bigbuf_seal((const unsigned char *)buf - GUARD_BYTES);
}

void guarded_free(void *buf)
{
    if (buf) bigbuf_free((unsigned char *)buf - GUARD_BYTES);
}
