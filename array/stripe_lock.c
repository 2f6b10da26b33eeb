/* array/stripe_lock.c -- a hashed table of stripe rwlocks. */
#include <config.h>

#include <errno.h>
#include <time.h>

#include "array/object.h"
#include "array/requests.h"
#include "array/stripe_lock.h"

int
stripe_locks_init (struct stripe_locks *t)
{
  for (unsigned i = 0; i < STRIPE_LOCK_BUCKETS; i++) {
    int r = pthread_rwlock_init (&t->bucket[i], NULL);

    if (r != 0) {
      while (i-- > 0)
        pthread_rwlock_destroy (&t->bucket[i]);
      return -r;
    }
  }
  return 0;
}

void
stripe_locks_destroy (struct stripe_locks *t)
{
  for (unsigned i = 0; i < STRIPE_LOCK_BUCKETS; i++)
    pthread_rwlock_destroy (&t->bucket[i]);
}

/* The buckets of stripes first..last form a run that may wrap around the
 * end of the table: buckets [0, hi] and [lo, BUCKETS) when it wraps,
 * [lo, hi] when it does not.  Visit them in ascending order.
 */
static void
for_each_bucket (struct stripe_locks *t, uint64_t first, uint64_t last,
                 void (*fn) (pthread_rwlock_t *, enum stripe_lock_mode),
                 enum stripe_lock_mode mode)
{
  unsigned lo = 0, hi = STRIPE_LOCK_BUCKETS - 1;

  if (last - first + 1 < STRIPE_LOCK_BUCKETS) {
    lo = (unsigned) (first % STRIPE_LOCK_BUCKETS);
    hi = (unsigned) (last % STRIPE_LOCK_BUCKETS);
  }
  if (lo > hi) {
    for (unsigned b = 0; b <= hi; b++)
      fn (&t->bucket[b], mode);
    hi = STRIPE_LOCK_BUCKETS - 1;
  }
  for (unsigned b = lo; b <= hi; b++)
    fn (&t->bucket[b], mode);
}

static void
lock_one (pthread_rwlock_t *l, enum stripe_lock_mode mode)
{
  if (mode == STRIPE_EXCLUSIVE)
    pthread_rwlock_wrlock (l);
  else
    pthread_rwlock_rdlock (l);
}

static void
unlock_one (pthread_rwlock_t *l, enum stripe_lock_mode mode)
{
  (void) mode;
  pthread_rwlock_unlock (l);
}

void
stripe_lock_range (struct stripe_locks *t, uint64_t first, uint64_t last,
                   enum stripe_lock_mode mode, struct stripe_range *r)
{
  for_each_bucket (t, first, last, lock_one, mode);
  *r = (struct stripe_range) { first, last, true };
}

void
stripe_unlock_range (struct stripe_locks *t, struct stripe_range *r)
{
  if (!r->held)
    return;
  for_each_bucket (t, r->first, r->last, unlock_one, STRIPE_SHARED);
  r->held = false;
}

uint64_t
epoch_enter (struct epochs *e)
{
  for (;;) {
    uint64_t now = e->epoch;

    e->active[now & 1]++;
    if (e->epoch == now)
      return now;
    e->active[now & 1]--;     /* a quiesce began meanwhile: join the new */
  }
}

void
epoch_exit (struct epochs *e, uint64_t epoch)
{
  e->active[epoch & 1]--;
}

void
epoch_quiesce (struct epochs *e)
{
  uint64_t old = e->epoch++;
  struct timespec ts = { 0, 100000 };

  while (e->active[old & 1] > 0)
    nanosleep (&ts, NULL);
}
