/* The O_DIRECT bounce pool (io/bounce.h): buffers come back aligned and
 * large enough, a buffer given back is handed out again (the smallest
 * that fits), and the pool keeps no more than its bound.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "io/bounce.h"

#define MiB (1u << 20)

/* Empty the pool (the tests share it when run in one process). */
static void
drain (void)
{
  while (io_bounce_kept () > 0) {
    size_t c;

    free (io_bounce_get (1, 512, &c));
  }
}

Test (bounce, aligned_and_reused)
{
  size_t cap, cap2;
  char *a;

  drain ();
  a = io_bounce_get (MiB + 512, 512, &cap);
  cr_assert_not_null (a);
  cr_assert_eq ((uintptr_t) a % IO_BOUNCE_ALIGN, 0);
  cr_assert_geq (cap, MiB + 512);
  memset (a, 0x5a, MiB + 512);       /* all of it is ours */
  io_bounce_put (a, cap);
  cr_assert_eq (io_bounce_get (4096, 4096, &cap2), a,
                "a buffer given back is not handed out again");
  cr_assert_eq (cap2, cap);
  io_bounce_put (a, cap2);
}

Test (bounce, smallest_that_fits)
{
  size_t cs, cb, c;
  char *small, *big;

  drain ();
  small = io_bounce_get (64 << 10, 512, &cs);
  big = io_bounce_get (4 * MiB, 512, &cb);
  io_bounce_put (big, cb);
  io_bounce_put (small, cs);
  cr_assert_eq (io_bounce_get (32 << 10, 512, &c), small);
  io_bounce_put (small, c);
  cr_assert_eq (io_bounce_get (2 * MiB, 512, &c), big);
  io_bounce_put (big, c);
}

Test (bounce, bounded)
{
  enum { N = IO_BOUNCE_POOL_BYTES / (4 * MiB) + 2 };
  char *b[N];
  size_t cap[N];

  drain ();
  for (unsigned i = 0; i < N; i++)
    cr_assert_not_null (b[i] = io_bounce_get (4 * MiB, 4096, &cap[i]));
  for (unsigned i = 0; i < N; i++)
    io_bounce_put (b[i], cap[i]);
  cr_assert_leq (io_bounce_kept (), IO_BOUNCE_POOL_BYTES);
  cr_assert_geq (io_bounce_kept (), IO_BOUNCE_POOL_BYTES - 4 * MiB,
                 "kept only %zu bytes", io_bounce_kept ());
  /* What it kept goes out again before anything new is made. */
  for (unsigned i = 0; i < N; i++)
    b[i] = io_bounce_get (4 * MiB, 4096, &cap[i]);
  cr_assert_eq (io_bounce_kept (), 0);
  for (unsigned i = 0; i < N; i++)
    io_bounce_put (b[i], cap[i]);
}

Test (bounce, stricter_alignment_never_kept)
{
  size_t c;
  char *a = io_bounce_get (8192, 8192, &c);

  cr_assert_not_null (a);
  cr_assert_eq ((uintptr_t) a % 8192, 0);
  cr_assert_eq (c, 0);
  io_bounce_put (a, c);             /* freed, not kept */
}
