/* The drivers' per-call buffers (a scratchpad kept across calls).
 *
 * Freed at the end of every call, buffers of a few MiB went back to the kernel (glibc maps them
 * apart, or trims the heap top) and the next call faulted every page in again, zeroed by the
 * kernel: grid_sampler_2d at 2 threads faulted about 8.6 MiB a call, a millisecond or more of
 * system time, more than a second thread saved. Kept here instead, the next call that asks for
 * the same sizes gets the same pages back. */
#include "opt_internal.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HEADER 64                   /* keeps the buffer on whole 64-byte lines */
#define MAGIC 0x7363726174636821ull
/* Below this, malloc's own free lists serve a request again without new pages: not kept. */
size_t conform_opt_scratch_keep_min = (size_t)64 << 10;
/* At most this much is kept between calls: every make bench problem's buffers at up to 4
 * threads (grid_sampler_2d_backward, the largest, about 9 MiB a thread) fit, while a huge
 * models-suite case keeps no more than this of its buffers after it returns. */
#define KEEP_CAP ((size_t)64 << 20)
#define SLOTS 32

typedef struct {
    uint64_t magic;
    size_t bytes; /* usable bytes after the header (a multiple of 64) */
} header;

typedef struct {
    unsigned char *base;
    size_t bytes;
    uint64_t used; /* when it was given back (least recently given back goes first) */
} kept_block;

/* Taken with a try-lock only: a call that finds the cache busy (another thread's call, or a
 * thread of this one in a region) allocates or frees directly, as before the cache, and never
 * waits for a thread another process may have descheduled. A child forked while the lock was
 * held keeps it held and simply never uses the cache. Blocks in the cache belong to no call:
 * one is removed before it is handed out, so no buffer serves two calls. */
static atomic_flag busy = ATOMIC_FLAG_INIT;
static kept_block kept[SLOTS];
static int n_kept;
static size_t kept_bytes;
static uint64_t ticks;

static int lock_try(void) { return !atomic_flag_test_and_set_explicit(&busy, memory_order_acquire); }
static void unlock(void) { atomic_flag_clear_explicit(&busy, memory_order_release); }

/* the smallest kept block holding bytes and at most twice as big (a small request does not take
 * a big block a later request of this call would need), removed from the cache; NULL if none */
static unsigned char *take_locked(size_t bytes)
{
    int best = -1;
    for (int k = 0; k < n_kept; k++)
        if (kept[k].bytes >= bytes && kept[k].bytes / 2 <= bytes && (best < 0 || kept[k].bytes < kept[best].bytes))
            best = k;
    if (best < 0) return NULL;
    unsigned char *base = kept[best].base;
    kept_bytes -= kept[best].bytes;
    kept[best] = kept[--n_kept];
    return base;
}

void *conform_scratch_alloc(size_t bytes)
{
    if (bytes > SIZE_MAX - 2 * HEADER) return NULL;
    bytes = (bytes + HEADER - 1) & ~(size_t)(HEADER - 1);
    if (!bytes) bytes = HEADER;
    unsigned char *base = NULL;
    if (bytes >= conform_opt_scratch_keep_min && lock_try()) {
        base = take_locked(bytes);
        unlock();
    }
    if (base) bytes = ((header *)base)->bytes; /* a reused block keeps its own size */
    else if (!(base = aligned_alloc(HEADER, bytes + HEADER))) return NULL;
    *(header *)base = (header){MAGIC, bytes};
    return base + HEADER;
}

/* base into the cache, evicting the least recently given back blocks into out (at most SLOTS)
 * until it fits; returns how many were evicted, or -1 when base itself is not kept */
static int keep_locked(unsigned char *base, size_t bytes, unsigned char **out)
{
    int n_out = 0;
    while (n_kept == SLOTS || kept_bytes + bytes > KEEP_CAP) {
        int old = 0;
        for (int k = 1; k < n_kept; k++)
            if (kept[k].used < kept[old].used) old = k;
        out[n_out++] = kept[old].base;
        kept_bytes -= kept[old].bytes;
        kept[old] = kept[--n_kept];
    }
    kept[n_kept++] = (kept_block){base, bytes, ++ticks};
    kept_bytes += bytes;
    return n_out;
}

void conform_scratch_free(void *p)
{
    if (!p) return;
    unsigned char *base = (unsigned char *)p - HEADER;
    const header h = *(const header *)base;
    if (h.magic != MAGIC) abort(); /* not a scratch buffer: a bug to stop at, not memory to corrupt */
    if (h.bytes < conform_opt_scratch_keep_min || h.bytes > KEEP_CAP || !lock_try()) {
        free(base);
        return;
    }
    unsigned char *evicted[SLOTS];
    const int n = keep_locked(base, h.bytes, evicted);
    unlock();
    for (int k = 0; k < n; k++) free(evicted[k]); /* outside the lock: unmapping takes a while */
}

void *conform_scratch_realloc(void *p, size_t bytes)
{
    if (!p) return conform_scratch_alloc(bytes);
    const size_t have = ((const header *)((unsigned char *)p - HEADER))->bytes;
    if (bytes <= have) return p;
    void *q = conform_scratch_alloc(bytes);
    if (!q) return NULL;
    memcpy(q, p, have);
    conform_scratch_free(p);
    return q;
}

void conform_opt_scratch_release(void)
{
    unsigned char *all[SLOTS];
    int n = 0;
    /* held for a few list operations at a time; in a child forked while another thread held it,
       it is never released: give up after a bounded wait and keep the blocks (memory, not a hang) */
    for (int tries = 0; !lock_try(); tries++) {
        if (tries == 100000) return;
        sched_yield();
    }
    for (; n_kept > 0; n++) all[n] = kept[--n_kept].base;
    kept_bytes = 0;
    unlock();
    for (int k = 0; k < n; k++) free(all[k]);
}

size_t conform_opt_scratch_kept(void)
{
    size_t b = 0;
    if (lock_try()) {
        b = kept_bytes;
        unlock();
    }
    return b;
}

void conform_scratch_poison(unsigned char byte)
{
    while (!lock_try()) sched_yield();
    for (int k = 0; k < n_kept; k++) memset(kept[k].base + HEADER, byte, kept[k].bytes);
    unlock();
}
