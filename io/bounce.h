/* io/bounce.h -- internal to io/: aligned buffers for O_DIRECT bounces
 * (direct.c), kept and handed out again instead of allocated per op.
 *
 * Why: a bounce per op (posix_memalign, free) of a large request made
 * glibc map fresh pages and give them back for nearly every request, and
 * on some virtual machines touching fresh pages is what costs: 1M reads
 * at QD32 through direct=true ran at 550-600 MiB/s with a bounce per op
 * and at 1.9-2.2 GiB/s with memory kept (AMD EPYC VM, ext4 on virtio).
 *
 * The pool is the process's, bounded (IO_BOUNCE_POOL_BYTES kept at most,
 * in at most IO_BOUNCE_POOL_SLOTS buffers); a buffer it cannot keep is
 * freed.  Buffers are aligned to IO_BOUNCE_ALIGN.  Thread-safe (one
 * mutex, held only to pick or keep a buffer).
 */
#ifndef IO_BOUNCE_H
#define IO_BOUNCE_H

#include <stddef.h>

#define IO_BOUNCE_ALIGN 4096u
#define IO_BOUNCE_POOL_BYTES (32u << 20)
#define IO_BOUNCE_POOL_SLOTS 64u

/* A buffer of at least len bytes aligned to align (a power of two; more
 * than IO_BOUNCE_ALIGN is allocated afresh), the smallest kept one that
 * fits, else a new one; *cap: its size, for io_bounce_put.  NULL if
 * memory is short.
 */
void *io_bounce_get (size_t len, size_t align, size_t *cap)
  __attribute__((nonnull, warn_unused_result));

/* Give back buf (cap bytes, from io_bounce_get): kept if the pool has
 * room, else freed (always if cap is 0).  buf may be NULL.
 */
void io_bounce_put (void *buf, size_t cap);

/* Bytes the pool keeps now. */
size_t io_bounce_kept (void);

#endif /* IO_BOUNCE_H */
