#include "bigbuf.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define HEADER 64        /* keeps the buffer 64-byte aligned */
#define SMALL (1 << 20)  /* below this (not shared): malloc, nothing kept */
#define MAX_KEPT 32
#define MAGIC 0x62696762756621ull
#define KEEP_HEAP (256 << 20)

typedef struct {
    uint64_t magic;
    size_t bytes;  /* of the mapping (0: from malloc) */
    bigbuf_kind kind;
} header;

typedef struct {
    unsigned char *base;
    size_t bytes;
    bigbuf_kind kind;
} block;

/* one thread allocates (the harness's): no lock */
static block kept[MAX_KEPT];
static int n_kept;
static size_t kept_bytes, used_bytes;
static double cap_bytes;
static pid_t owner; /* the process that set the cap */

/* A child forked later (an implementation's, or one reading a device's files) forgets what its
   parent kept: blocks not inherited are not there, and it keeps nothing itself. */
static void forget_in_child(void)
{
    if (getpid() == owner) return;
    n_kept = 0;
    kept_bytes = used_bytes = 0;
    cap_bytes = 0;
    owner = getpid();
}

static void drop(int k)
{
    munmap(kept[k].base, kept[k].bytes);
    kept_bytes -= kept[k].bytes;
    kept[k] = kept[--n_kept];
}

/* unmaps the largest kept blocks until in-use + kept + extra fits the cap */
static void trim(size_t extra)
{
    while (n_kept && (double)(used_bytes + kept_bytes + extra) > cap_bytes) {
        int big = 0;
        for (int k = 1; k < n_kept; k++)
            if (kept[k].bytes > kept[big].bytes) big = k;
        drop(big);
    }
}

/* the smallest kept block of the kind that holds bytes, or -1 */
static int best_fit(size_t bytes, bigbuf_kind kind)
{
    int best = -1;
    for (int k = 0; k < n_kept; k++)
        if (kept[k].kind == kind && kept[k].bytes >= bytes && (best < 0 || kept[k].bytes < kept[best].bytes)) best = k;
    return best;
}

/* A kept block of the kind, not shared, grown with mremap to bytes: its pages stay in and only the
   growth is fresh (a shared mapping is a file of fixed size). NULL: none to grow. *old: its size before. */
static unsigned char *grow_kept(size_t bytes, bigbuf_kind kind, size_t *old)
{
    if (kind == BIGBUF_SHARED) return NULL;
    int big = -1;
    for (int k = 0; k < n_kept; k++)
        if (kept[k].kind == kind && (big < 0 || kept[k].bytes > kept[big].bytes)) big = k;
    if (big < 0) return NULL;
    block b = kept[big];
    kept_bytes -= b.bytes;
    kept[big] = kept[--n_kept];
    trim(bytes);
    void *p = mremap(b.base, b.bytes, bytes, MREMAP_MAYMOVE);
    if (p == MAP_FAILED) {
        munmap(b.base, b.bytes);
        return NULL;
    }
    if (kind == BIGBUF_NOT_INHERITED) madvise(p, bytes, MADV_DONTFORK);
    *old = b.bytes;
    return p;
}

void *bigbuf_alloc(size_t n, int zero, bigbuf_kind kind)
{
    forget_in_child();
    size_t bytes = n + HEADER;
    if (bytes < n) return NULL;
    unsigned char *base;
    size_t old;
    if (kind != BIGBUF_SHARED && bytes < SMALL) {
        if (!(base = zero ? calloc(1, bytes) : malloc(bytes))) return NULL;
        *(header *)base = (header){MAGIC, 0, kind};
        return base + HEADER;
    }
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    bytes = (bytes + page - 1) / page * page;
    int k = best_fit(bytes, kind);
    if (k >= 0) { /* reused: its pages are in already */
        base = kept[k].base;
        bytes = kept[k].bytes;
        kept[k].base = NULL;
        kept_bytes -= bytes;
        kept[k] = kept[--n_kept];
        if (zero) memset(base + HEADER, 0, n);
    } else if ((base = grow_kept(bytes, kind, &old))) { /* the growth is fresh, so zero */
        if (zero) memset(base + HEADER, 0, old - HEADER);
    } else {
        trim(bytes);
        base = mmap(NULL, bytes, PROT_READ | PROT_WRITE, (kind == BIGBUF_SHARED ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS,
                    -1, 0);
        if (base == MAP_FAILED) return NULL; /* fresh pages are zero */
        if (kind == BIGBUF_NOT_INHERITED) madvise(base, bytes, MADV_DONTFORK);
    }
    used_bytes += bytes;
    *(header *)base = (header){MAGIC, bytes, kind};
    return base + HEADER;
}

void bigbuf_seal(const void *p)
{
    if (!p) return;
    unsigned char *base = (unsigned char *)p - HEADER;
    header h = *(header *)base;
    if (h.magic == MAGIC && h.bytes) mprotect(base, h.bytes, PROT_READ);
}

void bigbuf_free(void *p)
{
    if (!p) return;
    unsigned char *base = (unsigned char *)p - HEADER;
    header h = *(header *)base;
    if (h.magic != MAGIC) abort(); /* not ours: a bug to stop at, not memory to corrupt */
    if (!h.bytes) {
        free(base);
        return;
    }
    forget_in_child();
    if (used_bytes < h.bytes) { /* a buffer from before a fork: unmapped, not counted */
        munmap(base, h.bytes);
        return;
    }
    used_bytes -= h.bytes;
    if (n_kept < MAX_KEPT && (double)(used_bytes + kept_bytes + h.bytes) <= cap_bytes) {
        kept[n_kept++] = (block){base, h.bytes, h.kind};
        kept_bytes += h.bytes;
    } else munmap(base, h.bytes);
}

void bigbuf_set_cap(double cap)
{
    forget_in_child();
    cap_bytes = cap > 0 ? cap : 0;
    trim(0);
}

size_t bigbuf_kept(void) { return kept_bytes; }

void bigbuf_keep_heap(void)
{
    mallopt(M_MMAP_THRESHOLD, 32 << 20);  /* the largest glibc takes: below it, from the heap */
    mallopt(M_TRIM_THRESHOLD, KEEP_HEAP); /* free heap kept up to this */
}
