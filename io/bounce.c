/* io/bounce.c -- the pool of O_DIRECT bounce buffers (bounce.h). */
#include <config.h>

#include <pthread.h>
#include <stdlib.h>

#include "io/bounce.h"

static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  void *buf[IO_BOUNCE_POOL_SLOTS];
  size_t cap[IO_BOUNCE_POOL_SLOTS];
  size_t kept;                /* bytes in buf[] */
} pool;

/* The smallest kept buffer of at least len bytes, taken out; NULL if
 * none.
 */
static void *
take (size_t len, size_t *cap)
{
  unsigned best = IO_BOUNCE_POOL_SLOTS;
  void *buf = NULL;

  pthread_mutex_lock (&pool_lock);
  for (unsigned i = 0; i < IO_BOUNCE_POOL_SLOTS; i++)
    if (pool.buf[i] && pool.cap[i] >= len &&
        (best == IO_BOUNCE_POOL_SLOTS || pool.cap[i] < pool.cap[best]))
      best = i;
  if (best < IO_BOUNCE_POOL_SLOTS) {
    buf = pool.buf[best];
    *cap = pool.cap[best];
    pool.buf[best] = NULL;
    pool.kept -= *cap;
  }
  pthread_mutex_unlock (&pool_lock);
  return buf;
}

void *
io_bounce_get (size_t len, size_t align, size_t *cap)
{
  void *buf;

  if (align <= IO_BOUNCE_ALIGN && (buf = take (len, cap)) != NULL)
    return buf;
  if (align < IO_BOUNCE_ALIGN)
    align = IO_BOUNCE_ALIGN;
  if (posix_memalign (&buf, align, len) != 0)
    return NULL;
  *cap = align == IO_BOUNCE_ALIGN ? len : 0;    /* 0: never kept */
  return buf;
}

void
io_bounce_put (void *buf, size_t cap)
{
  if (buf == NULL)
    return;
  if (cap > 0 && cap <= IO_BOUNCE_POOL_BYTES) {
    pthread_mutex_lock (&pool_lock);
    if (pool.kept + cap <= IO_BOUNCE_POOL_BYTES)
      for (unsigned i = 0; i < IO_BOUNCE_POOL_SLOTS; i++)
        if (pool.buf[i] == NULL) {
          pool.buf[i] = buf;
          pool.cap[i] = cap;
          pool.kept += cap;
          buf = NULL;
          break;
        }
    pthread_mutex_unlock (&pool_lock);
  }
  free (buf);
}

size_t
io_bounce_kept (void)
{
  size_t kept;

  pthread_mutex_lock (&pool_lock);
  kept = pool.kept;
  pthread_mutex_unlock (&pool_lock);
  return kept;
}
