/* array/scratch_pool.h -- scratch memory for requests, bounded in total.
 *
 * Why: a write (or a degraded read) needs scratch for the chunks it reads
 * and the parity it computes.  nbdkit runs 16 threads per connection, so
 * scratch kept per thread grows with the number of connections (4 x 16 x
 * a few MiB).  Requests take one buffer from this pool instead, for the
 * whole request, and give it back when they end: at most max buffers
 * exist, however many threads there are; a request finding none waits.
 *
 * Buffers are made on first need (so an idle or read-only array holds
 * none), all buf_bytes long and 4096-aligned.  A request must take its
 * buffer before it locks any stripe: holders then never wait for a buffer,
 * so waiting cannot deadlock.
 *
 * Locking: one mutex, held only to pop or push a pointer.
 */
#ifndef ARRAY_SCRATCH_POOL_H
#define ARRAY_SCRATCH_POOL_H

#include <pthread.h>
#include <stddef.h>

struct scratch_pool {
  pthread_mutex_t lock;
  pthread_cond_t returned;
  size_t buf_bytes;
  unsigned max, made;         /* buffers allowed, made so far */
  unsigned nfree;
  void **free;                /* room for max */
};

/* Returns 0 or -errno. */
int scratch_pool_init (struct scratch_pool *p, size_t buf_bytes,
                       unsigned max) __attribute__((nonnull));
void scratch_pool_destroy (struct scratch_pool *p) __attribute__((nonnull));

/* A buffer of buf_bytes; waits while all max are in use.  NULL only when
 * memory for a new buffer cannot be had and none is in use to wait for.
 */
void *scratch_pool_get (struct scratch_pool *p) __attribute__((nonnull));

/* Buffers of buf_bytes from now on, at most max: the free ones are let
 * go.  0; -EBUSY if a buffer is in use, -ENOMEM (the pool as it was).
 */
int scratch_pool_resize (struct scratch_pool *p, size_t buf_bytes,
                         unsigned max) __attribute__((nonnull));

/* Give back a buffer from scratch_pool_get(); NULL is ignored. */
void scratch_pool_put (struct scratch_pool *p, void *buf)
  __attribute__((nonnull (1)));

#endif /* ARRAY_SCRATCH_POOL_H */
