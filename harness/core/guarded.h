/* Guarded buffers: n elements of a dtype between two sentinel bands (signalling NaNs around an
 * output, GUARD_INPUT_VALUE around an input).
 *
 * Every buffer a kernel under test touches is one. Its outputs: the interior is poisoned with the
 * dtype's NaN, so an element the kernel never writes shows up as a mismatch, and a write past
 * either end changes a band (guarded_check). Its inputs: the caller encodes the values into the
 * interior, and a read up to GUARD_BYTES past either end returns GUARD_INPUT_VALUE, the same in
 * every case, rather than whatever the last case left in a recycled buffer: an over-read is a
 * failure that replays, not one that comes and goes with the memory behind the input. Shared
 * memory (bigbuf.h), so a kernel in a child process writes where the harness reads. */
#ifndef CONFORM_GUARDED_H
#define CONFORM_GUARDED_H

#include <stdint.h>

#include "dtype.h"

#define GUARD_BYTES 256 /* on each side: a cache line four times over */
/* What a read past an input gives: finite and non-zero, so a sample that reads it differs from the
   golden's zero padding (a zero there passed a deformable read past x); a batch index of 0 under
   floor, trunc and both roundings, so a roi read past the end counts (a NaN there was skipped by
   the non-finite batch test, and a backward that ran one roi past K passed every case); exact in
   every dtype. A read at weight 0 (a tap loaded, then not used) stays 0, as it should. */
#define GUARD_INPUT_VALUE 0.25

void *guarded_alloc(int64_t n, const dtype_desc *dt);       /* interior poisoned */
void *guarded_alloc_input(int64_t n, const dtype_desc *dt); /* bands of GUARD_INPUT_VALUE; interior the caller's */
int guarded_check(const void *buf, int64_t n, const dtype_desc *dt, int64_t *bad_offset); /* 1 intact */
void guarded_seal(const void *buf); /* read-only from here on, bands included (bigbuf_seal) */
void guarded_free(void *buf);

#endif
