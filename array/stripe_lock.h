/* array/stripe_lock.h -- serialise work on the same stripes.
 *
 * Why: a partial-stripe write reads, computes and writes parity; two of
 * them on one stripe would each compute parity from the other's old data.
 * A degraded read rebuilds bytes from parity and must not see a stripe
 * half-updated.  Writers therefore hold their stripes exclusively and
 * degraded readers shared; healthy reads take no lock (they read only the
 * bytes they return, which a concurrent write may change only if the
 * client overlapped its own requests).
 *
 * Stripes hash onto a fixed table of rwlocks (stripe % buckets), so
 * different stripes rarely contend and memory stays constant.  A range is
 * always locked in ascending bucket order, and a thread holds at most one
 * range at a time, so ranges cannot deadlock.
 */
#ifndef ARRAY_STRIPE_LOCK_H
#define ARRAY_STRIPE_LOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define STRIPE_LOCK_BUCKETS 1024u

struct stripe_locks {
  pthread_rwlock_t bucket[STRIPE_LOCK_BUCKETS];
};

enum stripe_lock_mode { STRIPE_SHARED, STRIPE_EXCLUSIVE };

/* A held range, to pass back to stripe_unlock_range(). */
struct stripe_range {
  uint64_t first, last;       /* stripes, inclusive */
  bool held;
};

/* Returns 0 or -errno (pthread). */
int stripe_locks_init (struct stripe_locks *t) __attribute__((nonnull));
void stripe_locks_destroy (struct stripe_locks *t) __attribute__((nonnull));

/* Lock stripes first..last (first <= last) and fill *r. */
void stripe_lock_range (struct stripe_locks *t, uint64_t first, uint64_t last,
                        enum stripe_lock_mode mode, struct stripe_range *r)
  __attribute__((nonnull));

/* Release what stripe_lock_range() took; no-op if r->held is false. */
void stripe_unlock_range (struct stripe_locks *t, struct stripe_range *r)
  __attribute__((nonnull));

#endif /* ARRAY_STRIPE_LOCK_H */
