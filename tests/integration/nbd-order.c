/* tests/integration/nbd-order.c -- flush and FUA order on an NBD member,
 * through io/'s NBD backend directly (io_run), for test-nbd-order.sh.
 *
 *   nbd-order URI IMAGE LOG CONNECTIONS ROUNDS flush|fua|apart
 *
 * Opens URI -- an nbdkit serving the file IMAGE whose writes are slow
 * (its delay filter) and logged to LOG (its log filter, nearer the
 * client) -- as a member with CONNECTIONS connections, then ROUNDS times
 * writes four times 64 KiB at new offsets, the writes spread over the
 * connections there are, and
 *   flush: a flush of the member after them in the same batch;
 *   fua:   the writes with IO_FUA, the server having no FUA (so a flush
 *          after them);
 *   apart: the writes in one thread and, once the server has logged all
 *          four (they are in flight), a flush in another: when the flush
 *          returns, the bytes must be on IMAGE, read through the file.
 * After each round the bytes must be on IMAGE.  Whether each flush reached
 * the server only once the writes before it had completed is for the test
 * to read in LOG too.  Exit 0, 1 on an error, 2 usage.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "io/batch.h"
#include "io/member.h"
#include "io/nbd.h"

enum { WRITES = 4, LEN = 64 << 10 };

static unsigned char data[WRITES][LEN];

static int
fail (const char *what, int r)
{
  fprintf (stderr, "nbd-order: %s: %s\n", what, strerror (-r));
  return 1;
}

/* Round k's bytes, and its batch in ops (the flush last if asked). */
static size_t
round_batch (unsigned k, bool flush, struct io_op *ops)
{
  size_t n = 0;

  for (unsigned w = 0; w < WRITES; w++) {
    for (unsigned i = 0; i < LEN; i++)
      data[w][i] = (unsigned char) (k * 31 + w * 7 + i / 512 + 1);
    ops[n++] = (struct io_op) { .kind = IO_WRITE, .buf = data[w],
                                .off = ((uint64_t) k * WRITES + w) * LEN,
                                .len = LEN };
  }
  if (flush)
    ops[n++] = (struct io_op) { .kind = IO_FSYNC };
  return n;
}

/* The image holds round k's bytes. */
static int
check_image (int fd, unsigned k)
{
  static unsigned char got[LEN];

  for (unsigned w = 0; w < WRITES; w++)
    if (pread (fd, got, LEN, ((off_t) k * WRITES + w) * LEN) != LEN ||
        memcmp (got, data[w], LEN) != 0) {
      fprintf (stderr, "nbd-order: round %u: write %u is not on the "
               "member's image\n", k, w);
      return 1;
    }
  return 0;
}

/* How many writes LOG shows arriving so far. */
static unsigned
logged_writes (const char *log)
{
  FILE *f = fopen (log, "r");
  char line[512];
  unsigned n = 0;

  while (f && fgets (line, sizeof line, f))
    n += strstr (line, " Write id=") != NULL;
  if (f)
    fclose (f);
  return n;
}

/* Wait (up to 60 s) until LOG shows n writes. */
static int
await_writes (const char *log, unsigned n)
{
  for (unsigned t = 0; t < 6000; t++) {
    if (logged_writes (log) >= n)
      return 0;
    nanosleep (&(struct timespec) { .tv_nsec = 10000000 }, NULL);
  }
  fprintf (stderr, "nbd-order: the server never logged %u writes\n", n);
  return 1;
}

struct writer {
  struct io_member *m;
  struct io_op *ops;
  size_t n;
  int r;
};

static void *
write_batch (void *arg)
{
  struct writer *w = arg;

  w->r = io_run (w->m, w->ops, w->n, 0);
  return NULL;
}

/* apart: round k's writes in a thread; the flush once all four are in
 * flight; then the image, before the writes' batch is waited for.
 */
static int
round_apart (struct io_member *m, int fd, const char *log, unsigned k)
{
  struct io_op ops[WRITES], fl = { .kind = IO_FSYNC };
  struct writer w = { m, ops, round_batch (k, false, ops), 0 };
  pthread_t t;
  int r, bad;

  if (pthread_create (&t, NULL, write_batch, &w) != 0)
    return fail ("pthread_create", -EAGAIN);
  bad = await_writes (log, (k + 1) * WRITES);
  if (!bad && (r = io_run (m, &fl, 1, 0)) < 0)
    bad = fail ("flush", r);
  bad = bad || check_image (fd, k);   /* the flush returned: durable */
  pthread_join (t, NULL);
  if (!bad && w.r < 0)
    bad = fail ("writes", w.r);
  return bad;
}

static int
run_rounds (struct io_member *m, int fd, const char *log, unsigned rounds,
            const char *mode)
{
  bool fua = strcmp (mode, "fua") == 0;
  struct io_op ops[WRITES + 1];
  int r;

  for (unsigned k = 0; k < rounds; k++) {
    size_t n = round_batch (k, strcmp (mode, "flush") == 0, ops);

    if (strcmp (mode, "apart") == 0) {
      if (round_apart (m, fd, log, k))
        return 1;
      continue;
    }
    if ((r = io_run (m, ops, n, fua ? IO_FUA : 0)) < 0)
      return fail ("io_run", r);
    if (check_image (fd, k))
      return 1;
  }
  return 0;
}

int
main (int argc, char **argv)
{
  struct io_member m;
  int fd, r;

  if (argc != 7 || (strcmp (argv[6], "flush") && strcmp (argv[6], "fua") &&
                    strcmp (argv[6], "apart"))) {
    fprintf (stderr, "usage: nbd-order URI IMAGE LOG CONNECTIONS ROUNDS "
             "flush|fua|apart\n");
    return 2;
  }
  if ((r = io_nbd_set_connections ((unsigned) atoi (argv[4]))) < 0)
    return fail ("connections", r);
  io_member_init (&m);
  if ((r = io_member_open (&m, argv[1], false)) < 0)
    return fail (argv[1], r);
  if ((fd = open (argv[2], O_RDONLY)) < 0)
    return fail (argv[2], -errno);
  if (run_rounds (&m, fd, argv[3], (unsigned) atoi (argv[5]), argv[6]))
    return 1;
  close (fd);
  io_member_close (&m);
  printf ("nbd-order: %s: %s rounds, the bytes on the image each time\n",
          argv[6], argv[5]);
  return 0;
}
