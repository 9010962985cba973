/* Guarded buffers: n elements of a dtype between two sentinel bands of signalling NaNs.
 *
 * Every buffer a kernel under test touches is one. Its outputs: the interior is poisoned with the
 * dtype's NaN, so an element the kernel never writes shows up as a mismatch, and a write past
 * either end changes a band (guarded_check). Its inputs: the caller encodes the values into the
 * interior, and a read up to GUARD_BYTES past either end returns a NaN, the same one in every case,
 * rather than whatever the last case left in a recycled buffer: an over-read is a failure that
 * replays, not one that comes and goes with the memory behind the input. Shared memory (bigbuf.h),
 * so a kernel in a child process writes where the harness reads. */
#ifndef CONFORM_GUARDED_H
#define CONFORM_GUARDED_H

#include <stdint.h>

#include "dtype.h"

#define GUARD_BYTES 256 /* on each side: a cache line four times over */

void *guarded_alloc(int64_t n, const dtype_desc *dt);       /* interior poisoned */
void *guarded_alloc_bands(int64_t n, const dtype_desc *dt); /* interior left to the caller to fill */
int guarded_check(const void *buf, int64_t n, const dtype_desc *dt, int64_t *bad_offset); /* 1 intact */
void guarded_seal(const void *buf); /* read-only from here on, bands included (bigbuf_seal) */
void guarded_free(void *buf);

#endif
