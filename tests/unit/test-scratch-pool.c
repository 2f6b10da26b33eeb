/* tests/unit/test-scratch-pool.c -- array/scratch_pool.c: buffers are
 * made on demand up to max, reused, aligned, and a taker beyond max waits
 * until one is given back.
 */
#include <config.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "array/scratch_pool.h"

Test (scratch_pool, made_on_demand_reused_aligned)
{
  struct scratch_pool p;
  void *a, *b, *c;

  cr_assert_eq (scratch_pool_init (&p, 65536, 2), 0);
  cr_assert_eq (p.made, 0, "nothing made before the first get");
  a = scratch_pool_get (&p);
  b = scratch_pool_get (&p);
  cr_assert (a != NULL && b != NULL && a != b);
  cr_assert_eq ((uintptr_t) a % 4096, 0);
  cr_assert_eq ((uintptr_t) b % 4096, 0);
  memset (a, 1, 65536);       /* the whole length is ours (ASan checks) */
  memset (b, 2, 65536);
  cr_assert_eq (p.made, 2);
  scratch_pool_put (&p, a);
  c = scratch_pool_get (&p);
  cr_assert_eq (c, a, "a given-back buffer is reused, not a new one made");
  cr_assert_eq (p.made, 2);
  scratch_pool_put (&p, b);
  scratch_pool_put (&p, c);
  scratch_pool_put (&p, NULL);
  cr_assert_eq (p.nfree, 2);
  scratch_pool_destroy (&p);
}

struct taker {
  struct scratch_pool *p;
  void *got;
  atomic_bool done;
};

static void *
take (void *arg)
{
  struct taker *t = arg;

  t->got = scratch_pool_get (t->p);
  t->done = true;
  return NULL;
}

Test (scratch_pool, beyond_max_waits_for_a_buffer)
{
  struct scratch_pool p;
  struct taker t = { &p, NULL, false };
  pthread_t tid;
  void *a;

  cr_assert_eq (scratch_pool_init (&p, 4096, 1), 0);
  a = scratch_pool_get (&p);
  cr_assert_not_null (a);
  cr_assert_eq (pthread_create (&tid, NULL, take, &t), 0);
  usleep (100 * 1000);
  cr_assert (!t.done, "a second taker got a buffer beyond max");
  cr_assert_eq (p.made, 1);
  scratch_pool_put (&p, a);
  pthread_join (tid, NULL);
  cr_assert (t.done);
  cr_assert_eq (t.got, a, "the waiter gets the buffer given back");
  scratch_pool_put (&p, t.got);
  scratch_pool_destroy (&p);
}
