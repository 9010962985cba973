#include "guarded.h"

#include <string.h>

#include "bigbuf.h"

/* a signalling NaN, repeated: arithmetic that reads it returns it quieted (0x7fe0dead), so a kernel
   that accumulates past its output (g[at] += v) changes the guard; a quiet NaN would come back
   bit for bit and hide it (tests/test_guard.c) */
static const uint32_t guard_bits = 0x7fa0deadu;

static unsigned char guard_byte(int64_t i) { return (unsigned char)(guard_bits >> (8 * (i & 3))); }

/* layout: [GUARD_BYTES][n elements][GUARD_BYTES], a big buffer (kept for the next case) */
void *guarded_alloc_bands(int64_t n, const dtype_desc *dt)
{
    int64_t body = n * dt->itemsize;
    unsigned char *raw = bigbuf_alloc((size_t)(body + 2 * GUARD_BYTES), 0, BIGBUF_SHARED);
    if (!raw) return NULL;
    for (int64_t i = 0; i < GUARD_BYTES; i++) raw[i] = raw[GUARD_BYTES + body + i] = guard_byte(i);
    return raw + GUARD_BYTES;
}

void *guarded_alloc(int64_t n, const dtype_desc *dt)
{
    unsigned char *body_at = guarded_alloc_bands(n, dt);
    if (!body_at) return NULL;
    unsigned char nan[8];
    dtype_poison(dt->id, nan); /* once, then copied; a NaN no reference gives: an element left so was never written */
    if (dt->itemsize == 4) { /* float32's: a copy of a constant size, not a memcpy call per element */
        for (int64_t i = 0; i < n; i++) memcpy(body_at + 4 * i, nan, 4);
    } else
        for (int64_t i = 0; i < n; i++) memcpy(body_at + i * dt->itemsize, nan, (size_t)dt->itemsize);
    return body_at;
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
