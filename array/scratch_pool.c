/* array/scratch_pool.c -- see scratch_pool.h. */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "array/scratch_pool.h"

int
scratch_pool_init (struct scratch_pool *p, size_t buf_bytes, unsigned max)
{
  int r;

  *p = (struct scratch_pool) { .buf_bytes = buf_bytes, .max = max };
  p->free = calloc (max, sizeof *p->free);
  if (p->free == NULL)
    return -ENOMEM;
  if ((r = pthread_mutex_init (&p->lock, NULL)) != 0) {
    free (p->free);
    return -r;
  }
  if ((r = pthread_cond_init (&p->returned, NULL)) != 0) {
    pthread_mutex_destroy (&p->lock);
    free (p->free);
    return -r;
  }
  return 0;
}

void
scratch_pool_destroy (struct scratch_pool *p)
{
  for (unsigned i = 0; i < p->nfree; i++)
    free (p->free[i]);
  free (p->free);
  pthread_cond_destroy (&p->returned);
  pthread_mutex_destroy (&p->lock);
}

int
scratch_pool_resize (struct scratch_pool *p, size_t buf_bytes, unsigned max)
{
  void **room;
  int r = 0;

  pthread_mutex_lock (&p->lock);
  if (p->made != p->nfree)
    r = -EBUSY;
  else if ((room = calloc (max, sizeof *room)) == NULL)
    r = -ENOMEM;
  else {
    for (unsigned i = 0; i < p->nfree; i++)
      free (p->free[i]);
    free (p->free);
    p->free = room;
    p->nfree = p->made = 0;
    p->buf_bytes = buf_bytes;
    p->max = max;
  }
  pthread_mutex_unlock (&p->lock);
  return r;
}

/* With the lock held: may another buffer be made? */
static bool
may_make (const struct scratch_pool *p)
{
  return p->made < p->max;
}

void *
scratch_pool_get (struct scratch_pool *p)
{
  void *buf = NULL;

  pthread_mutex_lock (&p->lock);
  while (p->nfree == 0 && !may_make (p))
    pthread_cond_wait (&p->returned, &p->lock);
  if (p->nfree > 0)
    buf = p->free[--p->nfree];
  else
    p->made++;                /* reserve the slot, allocate unlocked */
  pthread_mutex_unlock (&p->lock);
  if (buf != NULL)
    return buf;
  if (posix_memalign (&buf, 4096, p->buf_bytes) == 0)
    return buf;
  /* No memory: give the slot back, and wait for a buffer in use if any. */
  pthread_mutex_lock (&p->lock);
  p->made--;
  while (p->nfree == 0 && p->made > 0)
    pthread_cond_wait (&p->returned, &p->lock);
  buf = p->nfree > 0 ? p->free[--p->nfree] : NULL;
  pthread_mutex_unlock (&p->lock);
  return buf;
}

void
scratch_pool_put (struct scratch_pool *p, void *buf)
{
  if (buf == NULL)
    return;
  pthread_mutex_lock (&p->lock);
  p->free[p->nfree++] = buf;
  pthread_cond_signal (&p->returned);
  pthread_mutex_unlock (&p->lock);
}
