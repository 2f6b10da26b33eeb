/* tests/unit/test-view.c -- io/view.c: a member in memory read and
 * written in place.  Files on /dev/shm (tmpfs) are read through a view
 * with the bytes pread sees; holes are refused for reading (also holes a
 * punch made after the view had looked) and allocated for writing; the
 * window moves, and a view follows its member to another file; members
 * not in memory, with a failure injected or shrunk since they were
 * opened, and ranges past the end are refused.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "io/member.h"
#include "io/batch.h"
#include "io/view.h"

#define MiB (1u << 20)
#define TMPFS_MAGIC_NUMBER 0x01021994

/* Files a test made, removed after it even when it fails. */
static char made[4][64];
static unsigned nmade;

static void
remove_made (void)
{
  for (unsigned i = 0; i < nmade; i++)
    unlink (made[i]);
  nmade = 0;
}

TestSuite (view, .fini = remove_made);

/* A file under dir (made, size bytes, data written over [0, data)) and
 * its path in path (room for 64).  Bytes are a function of their offset.
 */
static void
make_file (char *path, size_t path_len, const char *dir, uint64_t size,
           uint64_t data)
{
  static char block[MiB];
  int fd;

  snprintf (path, path_len, "%s/r5-view-XXXXXX", dir);
  fd = mkstemp (path);
  cr_assert (fd >= 0, "mkstemp %s: %s", path, strerror (errno));
  cr_assert (nmade < 4);
  snprintf (made[nmade++], sizeof made[0], "%s", path);
  cr_assert_eq (ftruncate (fd, (off_t) size), 0);
  for (uint64_t off = 0; off < data; off += MiB) {
    for (size_t i = 0; i < MiB; i++)
      block[i] = (char) ((off + i) * 7 + (off + i) / 4093);
    cr_assert_eq (pwrite (fd, block, MiB, (off_t) off), (ssize_t) MiB);
  }
  close (fd);
}

static void
open_member (struct io_member *m, const char *path)
{
  io_member_init (m);
  cr_assert_eq (io_member_open (m, path, false), 0, "open %s", path);
}

/* The view's bytes at off equal what pread reads there. */
static void
assert_same (const struct io_member *m, const char *bytes, uint64_t off,
             uint64_t len)
{
  char *want = malloc (len);

  cr_assert_not_null (want);
  cr_assert_eq (pread (m->file.fd, want, len, (off_t) off), (ssize_t) len);
  cr_assert (memcmp (bytes, want, len) == 0,
             "the view's bytes at %llu differ from pread's",
             (unsigned long long) off);
  free (want);
}

static void
require_tmpfs (void)
{
  struct statfs st;

  cr_assert (statfs ("/dev/shm", &st) == 0 &&
             st.f_type == TMPFS_MAGIC_NUMBER,
             "these tests need a tmpfs at /dev/shm");
}

Test (view, reads_in_place_and_moves_its_window)
{
  char path[64];
  struct io_member m;
  struct io_view v;
  char *b;
  void *first_map;

  require_tmpfs ();
  make_file (path, sizeof path, "/dev/shm", 64 * MiB, 64 * MiB);
  open_member (&m, path);
  cr_assert (m.in_memory);
  io_view_init (&v);
  cr_assert_eq (io_view_get (&v, &m, MiB + 4096 + 5, 65536, IO_VIEW_READ,
                             &b), 0);
  assert_same (&m, b, MiB + 4096 + 5, 65536);
  first_map = v.map;
  cr_assert_eq (io_view_get (&v, &m, 3 * MiB, MiB, IO_VIEW_READ, &b), 0);
  cr_assert_eq (v.map, first_map, "a range in the window maps nothing new");
  assert_same (&m, b, 3 * MiB, MiB);
  /* Past the window: it moves. */
  cr_assert_eq (io_view_get (&v, &m, 40 * MiB, 2 * MiB, IO_VIEW_READ, &b),
                0);
  cr_assert_eq (v.map_off, 40 * MiB);
  assert_same (&m, b, 40 * MiB, 2 * MiB);
  /* The last bytes: the window stops at the end of the file. */
  cr_assert_eq (io_view_get (&v, &m, 64 * MiB - 4096, 4096, IO_VIEW_READ,
                             &b), 0);
  cr_assert (v.map_off + v.map_len <= 64 * MiB);
  assert_same (&m, b, 64 * MiB - 4096, 4096);
  cr_assert_eq (io_view_get (&v, &m, 64 * MiB - 4096, 4097, IO_VIEW_READ,
                             &b), -EINVAL);
  cr_assert_null (b);
  io_view_close (&v);
  io_member_close (&m);
}

Test (view, refuses_holes_for_reading)
{
  char path[64];
  struct io_member m;
  struct io_view v;
  char *b;
  int fd;

  require_tmpfs ();
  make_file (path, sizeof path, "/dev/shm", 8 * MiB, 4 * MiB);
  open_member (&m, path);
  io_view_init (&v);
  cr_assert_eq (io_view_get (&v, &m, 0, MiB, IO_VIEW_READ, &b), 0);
  assert_same (&m, b, 0, MiB);
  cr_assert_eq (io_view_get (&v, &m, 3 * MiB + MiB / 2, MiB, IO_VIEW_READ,
                             &b), -EAGAIN, "a range over a hole is refused");
  cr_assert_null (b);
  cr_assert_eq (io_view_get (&v, &m, 6 * MiB, MiB, IO_VIEW_READ, &b),
                -EAGAIN);
  /* Written since: the view looks again. */
  fd = open (path, O_WRONLY);
  cr_assert (fd >= 0);
  cr_assert_eq (pwrite (fd, path, 1, 4 * MiB), 1);
  close (fd);
  cr_assert_eq (io_view_get (&v, &m, 4 * MiB - 8192, 8192 + 100,
                             IO_VIEW_READ, &b), 0);
  assert_same (&m, b, 4 * MiB - 8192, 8192 + 100);
  io_view_close (&v);
  io_member_close (&m);
}

Test (view, sees_a_punch_made_after_it_looked)
{
  char path[64];
  struct io_member m;
  struct io_view v;
  char *b;
  struct io_op punch = {
    .kind = IO_PUNCH, .member = 0, .off = 2 * MiB, .len = 65536,
  };

  require_tmpfs ();
  make_file (path, sizeof path, "/dev/shm", 8 * MiB, 8 * MiB);
  open_member (&m, path);
  io_view_init (&v);
  cr_assert_eq (io_view_get (&v, &m, 2 * MiB, MiB, IO_VIEW_READ, &b), 0);
  cr_assert_eq (io_run (&m, &punch, 1, 0), 0);
  cr_assert_eq (io_view_get (&v, &m, 2 * MiB, MiB, IO_VIEW_READ, &b),
                -EAGAIN, "the punched range is a hole now");
  cr_assert_eq (io_view_get (&v, &m, 3 * MiB, MiB, IO_VIEW_READ, &b), 0,
                "after the hole the file is still whole");
  assert_same (&m, b, 3 * MiB, MiB);
  io_view_close (&v);
  io_member_close (&m);
}

/* An 8 MiB member in memory, all hole: open in *m, its fstat in *st, an
 * empty view in *v.
 */
static void
open_sparse (char *path, size_t len, struct io_member *m, struct stat *st,
             struct io_view *v)
{
  require_tmpfs ();
  make_file (path, len, "/dev/shm", 8 * MiB, 0);
  open_member (m, path);
  cr_assert_eq (fstat (m->file.fd, st), 0);
  io_view_init (v);
}

Test (view, allocates_holes_for_writing)
{
  char path[64], got[4096];
  struct io_member m;
  struct io_view v;
  struct stat before, after;
  char *b;

  open_sparse (path, sizeof path, &m, &before, &v);
  cr_assert_eq (io_view_get (&v, &m, 2 * MiB, MiB, IO_VIEW_WRITE, &b), 0);
  cr_assert_eq (fstat (m.file.fd, &after), 0);
  cr_assert_geq ((after.st_blocks - before.st_blocks) * 512, MiB,
                 "the range was allocated before any store");
  io_view_populate (b, MiB);
  memset (b, 0xab, MiB);
  io_view_close (&v);
  cr_assert_eq (pread (m.file.fd, got, sizeof got, 3 * MiB - 4096),
                (ssize_t) sizeof got);
  for (size_t i = 0; i < sizeof got; i++)
    cr_assert_eq ((unsigned char) got[i], 0xab);
  cr_assert_eq (pread (m.file.fd, got, 1, 3 * MiB), 1);
  cr_assert_eq (got[0], 0, "nothing written past the range");
  io_member_close (&m);
}

Test (view, writes_in_place_only_where_allocated)
{
  char path[64];
  struct io_member m;
  struct io_view v;
  struct stat before, after;
  char *b;

  open_sparse (path, sizeof path, &m, &before, &v);
  cr_assert_eq (io_view_get (&v, &m, 2 * MiB, MiB, IO_VIEW_WRITE_DENSE, &b),
                -EAGAIN, "a hole mapped to write in place");
  cr_assert_null (b);
  cr_assert_eq (fstat (m.file.fd, &after), 0);
  cr_assert_eq (after.st_blocks, before.st_blocks, "the hole was filled");
  cr_assert_eq (io_view_get (&v, &m, 2 * MiB, MiB, IO_VIEW_WRITE, &b), 0);
  memset (b, 0x5a, MiB);
  cr_assert_eq (io_view_get (&v, &m, 2 * MiB, MiB, IO_VIEW_WRITE_DENSE, &b),
                0, "allocated now: written in place");
  cr_assert_eq ((unsigned char) b[17], 0x5a);
  io_view_close (&v);
  io_member_close (&m);
}

Test (view, follows_its_member_to_another_file)
{
  char p1[64], p2[64];
  struct io_member m;
  struct io_view v;
  char *b;
  int fd;

  require_tmpfs ();
  make_file (p1, sizeof p1, "/dev/shm", 4 * MiB, 4 * MiB);
  make_file (p2, sizeof p2, "/dev/shm", 4 * MiB, 4 * MiB);
  fd = open (p2, O_WRONLY);
  cr_assert (fd >= 0);
  cr_assert_eq (pwrite (fd, "another", 7, MiB), 7);
  close (fd);
  open_member (&m, p1);
  io_view_init (&v);
  cr_assert_eq (io_view_get (&v, &m, MiB, 4096, IO_VIEW_READ, &b), 0);
  cr_assert_neq (memcmp (b, "another", 7), 0);
  io_member_close (&m);
  open_member (&m, p2);       /* most likely the same fd number */
  cr_assert_eq (io_view_get (&v, &m, MiB, 4096, IO_VIEW_READ, &b), 0);
  cr_assert_eq (memcmp (b, "another", 7), 0,
                "the view still shows the member's old file");
  io_view_close (&v);
  io_member_close (&m);
}

Test (view, refuses_what_it_must_not_map)
{
  char path[64], disk[64];
  struct io_member m;
  struct io_view v;
  struct statfs st;
  char *b;

  require_tmpfs ();
  make_file (path, sizeof path, "/dev/shm", 4 * MiB, 4 * MiB);
  open_member (&m, path);
  io_view_init (&v);
  io_member_inject_failure (&m, 10);
  cr_assert_eq (io_view_get (&v, &m, 0, 4096, IO_VIEW_READ, &b), -EAGAIN,
                "with a failure injected, reads must go where it strikes");
  io_member_close (&m);

  /* Shrunk since it was opened: mapping its end would raise SIGBUS. */
  open_member (&m, path);
  cr_assert_eq (truncate (path, 2 * MiB), 0);
  cr_assert_eq (io_view_get (&v, &m, 0, 4096, IO_VIEW_READ, &b), -EAGAIN,
                "a member shorter than it was opened is not mapped");
  io_member_close (&m);

  /* A member on a disk's file system is read the usual way. */
  make_file (disk, sizeof disk, ".", 4 * MiB, 4 * MiB);
  open_member (&m, disk);
  cr_assert_eq (statfs (".", &st), 0);
  if (st.f_type != TMPFS_MAGIC_NUMBER) {
    cr_assert (!m.in_memory);
    cr_assert_eq (io_view_get (&v, &m, 0, 4096, IO_VIEW_READ, &b),
                  -EAGAIN);
  }
  else
    cr_log_warn ("the build folder is on tmpfs: no file off it to refuse");
  io_view_close (&v);
  io_member_close (&m);
}
