/* Big buffers a process keeps for the next case instead of returning them to the kernel.
 *
 * A worker of `conform run` runs case after case; every case allocates the same kinds of arrays
 * (the reference and its four bounds per output, the guarded output). Mapped fresh for each case,
 * every page is faulted in, zeroed by the kernel and unmapped again: on the models suite that was
 * most of its 32 s of system time. Kept mapped, a later case reuses the pages (zeroed in user space
 * where asked). What is kept is bounded by a cap the scheduler sets from the case's memory
 * estimate, so a process never holds more than the budget it was admitted for. */
#ifndef CONFORM_BIGBUF_H
#define CONFORM_BIGBUF_H

#include <stddef.h>

/* What children forked later see of a buffer */
typedef enum {
    BIGBUF_INHERITED,     /* a copy (an implementation's child reads its inputs there) */
    BIGBUF_SHARED,        /* the same memory (an implementation's child writes its outputs there) */
    BIGBUF_NOT_INHERITED, /* nothing: the reference and its bounds, which no child reads. Their pages
                             then stay writable across the fork, so a later case writes the kept
                             pages without a copy-on-write fault each */
} bigbuf_kind;

/* n bytes, 64-byte aligned; zeroed when zero is set. NULL: no memory. */
void *bigbuf_alloc(size_t n, int zero, bigbuf_kind kind);
void bigbuf_free(void *p);
/* Makes a mapped buffer (its header too) read-only in this process; a small heap one is left as it
   is. For an implementation's child: a kernel that writes through its input pointers then dies on
   SIGSEGV, a crash named as its verdict, instead of scribbling on shared pages the parent frees. */
void bigbuf_seal(const void *p);
/* At most cap bytes of buffers, in use and kept, are held: kept ones beyond it are unmapped now
   and whenever a new mapping would pass it (a buffer in use is never refused). 0 keeps none. */
void bigbuf_set_cap(double cap);
/* Freed malloc memory stays in the process too: the goldens' scratch (allocated per call, on
   threads started per call) then takes the pages of the call before instead of fresh ones. */
void bigbuf_keep_heap(void);
/* bytes kept for reuse (not in use), for tests */
size_t bigbuf_kept(void);

#endif
