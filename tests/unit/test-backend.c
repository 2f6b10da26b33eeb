/* tests/unit/test-backend.c -- io/'s member backends (backend.h): which
 * backend a path names, and how io_run cuts one batch into sub-batches
 * per backend.  A member backend of the test's own ("mem": a buffer in
 * this process, counting what reaches it) sits beside real files, as an
 * NBD member will sit beside local ones.  Asserts: every op reaches its
 * own member's backend and no other, once, in batch order; the bytes move
 * where they should; results land on the right ops and io_run returns
 * the first error; an injected failure strikes before any backend sees
 * the op, and counts per op; an op on a member not open is -EBADF while
 * the rest still run; a batch of one backend goes to it whole (the
 * caller's ops, no copy); NBD URIs go to the NBD backend, paths to the
 * file backend, and a URI whose server is not there fails to open and
 * leaves nothing open; a file in memory says it can be mapped and is in
 * memory, one on a disk that it is not, and a member keeps the timeout
 * it was opened with.
 */
#include <config.h>

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <linux/magic.h>

#include <criterion/criterion.h>

#include "io/backend.h"
#include "io/batch.h"
#include "io/member.h"

#define MEM_SIZE (1u << 20)

/* What the mem backend saw. */
static struct {
  unsigned runs;
  size_t ops_seen;
  const struct io_op *last_ops;
  bool foreign;               /* an op on a member of another backend */
} seen;

static int
mem_run (const struct io_member *members, struct io_op *ops, size_t n,
         unsigned flags)
{
  int first = 0;

  (void) flags;
  seen.runs++;
  seen.last_ops = ops;
  for (size_t i = 0; i < n; i++) {
    const struct io_member *m = &members[ops[i].member];
    char *bytes = m->state;

    seen.ops_seen++;
    if (m->backend->run != mem_run) {
      seen.foreign = true;
      ops[i].result = -EXDEV;
    }
    else if (ops[i].off + ops[i].len > m->size)
      ops[i].result = -EIO;
    else if (ops[i].kind == IO_READ)
      memcpy (ops[i].buf, bytes + ops[i].off, ops[i].len), ops[i].result = 0;
    else if (ops[i].kind == IO_WRITE)
      memcpy (bytes + ops[i].off, ops[i].buf, ops[i].len), ops[i].result = 0;
    else
      ops[i].result = 0;
    if (first == 0)
      first = ops[i].result;
  }
  return first;
}

static const struct io_backend mem_backend = {
  .name = "mem", .run = mem_run,
};

static char files[2][64];
static unsigned nfiles;
static struct io_member members[4];

static void
cleanup (void)
{
  for (unsigned i = 0; i < 4; i++)
    if (members[i].backend == &mem_backend) {
      free (members[i].state);
      members[i].backend = NULL;   /* io_member_close would call close */
      io_member_init (&members[i]);
    }
    else
      io_member_close (&members[i]);
  for (unsigned i = 0; i < nfiles; i++)
    unlink (files[i]);
  nfiles = 0;
  memset (&seen, 0, sizeof seen);
}

static void
open_file (struct io_member *m)
{
  char *path = files[nfiles++];
  int fd;

  snprintf (path, sizeof files[0], "/tmp/r5-backend-XXXXXX");
  fd = mkstemp (path);
  cr_assert (fd >= 0);
  cr_assert_eq (ftruncate (fd, MEM_SIZE), 0);
  close (fd);
  io_member_init (m);
  cr_assert_eq (io_member_open (m, path, false), 0);
  cr_assert_eq (m->backend, &io_file_backend);
}

static void
open_mem (struct io_member *m)
{
  io_member_init (m);
  m->backend = &mem_backend;
  m->size = MEM_SIZE;
  m->state = calloc (1, MEM_SIZE);
  cr_assert (m->state);
}

/* members: 0 file, 1 mem, 2 file, 3 mem. */
static void
setup (void)
{
  open_file (&members[0]);
  open_mem (&members[1]);
  open_file (&members[2]);
  open_mem (&members[3]);
}

TestSuite (backend, .init = setup, .fini = cleanup);

static void
fill (char *buf, size_t len, unsigned seed)
{
  for (size_t i = 0; i < len; i++)
    buf[i] = (char) (i * 31 + seed * 7 + i / 251);
}

Test (backend, mixed_batch_goes_to_each_backend)
{
  enum { LEN = 8192 };
  static char out[4][LEN], in[4][LEN];
  struct io_op w[4], r[4];

  for (unsigned m = 0; m < 4; m++) {
    fill (out[m], LEN, m + 1);
    w[m] = (struct io_op) { IO_WRITE, m, out[m], 4096 * (m + 1), LEN, 99,
                            false };
    r[m] = (struct io_op) { IO_READ, 3 - m, in[3 - m], 4096 * (4 - m), LEN,
                            99, false };
  }
  cr_assert_eq (io_run (members, w, 4, 0), 0);
  cr_assert_eq (seen.runs, 1, "one sub-batch for the mem members");
  cr_assert_eq (seen.ops_seen, 2, "mem saw %zu ops, wanted its 2",
                seen.ops_seen);
  cr_assert (!seen.foreign, "an op of a file member reached mem");
  cr_assert_eq (io_run (members, r, 4, 0), 0);
  for (unsigned m = 0; m < 4; m++) {
    cr_assert_eq (w[m].result, 0);
    cr_assert_eq (r[m].result, 0);
    cr_assert (memcmp (in[m], out[m], LEN) == 0, "member %u: other bytes", m);
  }
  cr_assert_eq (memcmp ((char *) members[1].state + 8192, out[1], LEN), 0,
                "mem member 1 does not hold what was written to it");
}

Test (backend, results_land_on_their_ops)
{
  static char buf[4][4096];
  struct io_op ops[4] = {
    { IO_READ, 0, buf[0], 0, 4096, 99, false },
    { IO_READ, 1, buf[1], MEM_SIZE - 2048, 4096, 99, false }, /* past end */
    { IO_READ, 2, buf[2], 0, 4096, 99, false },
    { IO_READ, 3, buf[3], 0, 4096, 99, false },
  };

  cr_assert_eq (io_run (members, ops, 4, 0), -EIO);
  cr_assert_eq (ops[0].result, 0);
  cr_assert_eq (ops[1].result, -EIO);
  cr_assert_eq (ops[2].result, 0);
  cr_assert_eq (ops[3].result, 0);
}

Test (backend, injected_failure_strikes_before_the_backend)
{
  static char buf[4096];
  struct io_op ops[3];

  io_member_inject_failure (&members[3], 2);
  for (unsigned i = 0; i < 3; i++)
    ops[i] = (struct io_op) { IO_WRITE, 3, buf, 4096 * i, 4096, 99, false };
  cr_assert_eq (io_run (members, ops, 3, 0), -EIO);
  cr_assert_eq (ops[0].result, 0);
  cr_assert_eq (ops[1].result, 0);
  cr_assert_eq (ops[2].result, -EIO);
  cr_assert_eq (seen.ops_seen, 2, "the failed op reached the backend");
  ops[0].result = 99;
  cr_assert_eq (io_run (members, ops, 1, 0), -EIO, "struck once, for good");
  cr_assert_eq (seen.ops_seen, 2);
}

Test (backend, member_not_open)
{
  static char buf[2][4096];
  struct io_op ops[2] = {
    { IO_READ, 1, buf[0], 0, 4096, 99, false },
    { IO_READ, 0, buf[1], 0, 4096, 99, false },
  };

  io_member_close (&members[0]);
  cr_assert_eq (io_run (members, ops, 2, 0), -EBADF);
  cr_assert_eq (ops[0].result, 0, "the open member's op still ran");
  cr_assert_eq (ops[1].result, -EBADF);
}

Test (backend, one_backend_gets_the_batch_whole)
{
  static char buf[2][4096];
  struct io_op ops[2] = {
    { IO_READ, 1, buf[0], 0, 4096, 99, false },
    { IO_READ, 3, buf[1], 0, 4096, 99, false },
  };

  cr_assert_eq (io_run (members, ops, 2, 0), 0);
  cr_assert_eq (seen.runs, 1);
  cr_assert_eq (seen.last_ops, ops, "a copy was made for one backend");
}

Test (backend, which_backend_a_path_names)
{
  static const char *const uris[] = {
    "nbd://host/export", "nbds://host:10809/e", "nbd+unix:///e?socket=/s",
    "nbds+unix:///?socket=/run/s",
  };
  static const char *const paths[] = {
    "/dev/sdb", "m0.img", "nbd:/x", "./nbd://x", "nbdx://y",
  };
  struct io_member m;

  for (size_t i = 0; i < sizeof uris / sizeof uris[0]; i++)
    cr_assert_eq (io_backend_for (uris[i]), &io_nbd_backend, "%s", uris[i]);
  for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
    cr_assert_eq (io_backend_for (paths[i]), &io_file_backend, "%s",
                  paths[i]);
  io_member_init (&m);
  cr_assert_lt (io_member_open (&m, "nbd+unix:///?socket=/nonexistent/r5.sock",
                                false), 0);
  cr_assert (!io_member_is_open (&m));
  cr_assert_null (m.path, "a failed open kept its path");
  cr_assert_null (m.state, "a failed open kept its connection");
}

/* A file of len bytes made in dir; its path in out (PATH_MAX). */
static void
make_file (const char *dir, char *out, off_t len)
{
  int fd;

  snprintf (out, PATH_MAX, "%s/r5-caps-XXXXXX", dir);
  fd = mkstemp (out);
  cr_assert_geq (fd, 0, "mkstemp in %s", dir);
  cr_assert_eq (ftruncate (fd, len), 0);
  close (fd);
}

Test (backend, what_a_member_can_do)
{
  char shm[PATH_MAX], disk[PATH_MAX];
  struct statfs sf;
  struct io_member m;

  io_member_init (&m);
  cr_assert_eq (io_member_caps (&m), 0, "a member not open can do nothing");
  if (statfs ("/dev/shm", &sf) == 0 && sf.f_type == TMPFS_MAGIC) {
    make_file ("/dev/shm", shm, 1 << 20);
    cr_assert_eq (io_member_open (&m, shm, false), 0);
    cr_assert_eq (io_member_caps (&m) & (IO_CAP_MAP | IO_CAP_MEMORY),
                  IO_CAP_MAP | IO_CAP_MEMORY, "a file on tmpfs is in memory");
    cr_assert (io_member_caps (&m) & IO_CAP_FLUSH);
    io_member_close (&m);
    unlink (shm);
  }
  /* The build folder is on a disk's file system, not in memory. */
  if (statfs (".", &sf) == 0 && sf.f_type != TMPFS_MAGIC) {
    make_file (".", disk, 1 << 20);
    cr_assert_eq (io_member_open_opts (&m, disk, &(struct io_open_opts) {
                                         false, 1234 }), 0);
    cr_assert_eq (io_member_caps (&m) & (IO_CAP_MAP | IO_CAP_MEMORY), 0,
                  "a file on a disk is not in memory");
    cr_assert_eq (io_member_caps (&m) & (IO_CAP_FLUSH | IO_CAP_FUA),
                  IO_CAP_FLUSH | IO_CAP_FUA);
    cr_assert_eq (m.timeout_ms, 1234, "the timeout asked at open is kept");
    io_member_close (&m);
    unlink (disk);
  }
  cr_assert (io_member_is_uri ("nbd://host/e") && !io_member_is_uri ("m0"),
             "a URI is what the backend table says");
}
