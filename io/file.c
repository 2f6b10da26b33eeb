/* io/file.c -- the file backend (backend.h): members that are local
 * files or block devices, opened with open(2), run in batches on
 * io_uring (engine.c; direct.c for O_DIRECT bounce buffers).
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>

#include "io/backend.h"
#include "io/engine.h"

/* Safe for every device with logical blocks up to 4 KiB, and what the
 * page cache uses anyway.
 */
#define DIO_DEFAULT_ALIGN 4096u

static int
read_size (struct io_member *m, const struct stat *st)
{
  if (!m->blockdev) {
    m->size = (uint64_t) st->st_size;
    return 0;
  }
  if (ioctl (m->file.fd, BLKGETSIZE64, &m->size) == -1)
    return -errno;
  return 0;
}

/* A member in memory mapped at open is mapped again at its new size
 * (no op runs: io_member_size_now's contract), so that requests past
 * its old end use the mapping too, not system calls for ever.
 */
static int
file_size_now (struct io_member *m)
{
  struct stat st;
  int r;

  if (fstat (m->file.fd, &st) == -1)
    return -errno;
  if ((r = read_size (m, &st)) == 0 && m->file.mem.map != NULL &&
      m->file.mem.size != m->size) {
    io_memmap_close (&m->file.mem);
    io_memmap_open (&m->file.mem, m->file.fd, m->size);
  }
  return r;
}

/* What O_DIRECT needs here: the file system's or device's own alignment if
 * the kernel reports one larger than our default.
 */
static unsigned
direct_alignment (int fd)
{
  struct statx stx;
  unsigned align = DIO_DEFAULT_ALIGN;

  if (statx (fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 &&
      (stx.stx_mask & STATX_DIOALIGN)) {
    if (stx.stx_dio_offset_align > align)
      align = stx.stx_dio_offset_align;
    if (stx.stx_dio_mem_align > align)
      align = stx.stx_dio_mem_align;
  }
  return align;
}

/* Memory file systems complete every read and write by copying, and do
 * not support RWF_NOWAIT.
 */
static bool
on_memory_fs (int fd)
{
  struct statfs sfs;

  if (fstatfs (fd, &sfs) == -1)
    return false;
  return sfs.f_type == TMPFS_MAGIC || sfs.f_type == RAMFS_MAGIC;
}

static int
describe (struct io_member *m)
{
  struct stat st;

  if (fstat (m->file.fd, &st) == -1)
    return -errno;
  if (S_ISDIR (st.st_mode))
    return -EISDIR;
  if (!S_ISREG (st.st_mode) && !S_ISBLK (st.st_mode))
    return -ENODEV;
  m->blockdev = S_ISBLK (st.st_mode);
  m->file.dev = m->blockdev ? st.st_rdev : st.st_dev;
  m->file.ino = m->blockdev ? 0 : st.st_ino;
  m->in_memory = !m->blockdev && on_memory_fs (m->file.fd);
  if (m->direct)
    m->dio_align = direct_alignment (m->file.fd);
  return read_size (m, &st);
}

static int
file_open (struct io_member *m, const char *path, enum io_open_mode mode,
           const struct io_tls *tls)
{
  bool writes = mode == IO_OPEN_RW || mode == IO_OPEN_RW_DIRECT;
  int flags = writes ? O_RDWR : O_RDONLY;
  int r;

  m->direct = mode == IO_OPEN_RW_DIRECT || mode == IO_OPEN_READS_DIRECT;
  if (m->direct)
    flags |= O_DIRECT;
  m->file.fd = open (path, flags | O_CLOEXEC);
  if (m->file.fd == -1)
    return m->direct && errno == EINVAL ? -EOPNOTSUPP : -errno;
  if ((r = describe (m)) == 0 && m->in_memory && writes && !m->direct)
    io_memmap_open (&m->file.mem, m->file.fd, m->size);
  if (r < 0) {
    close (m->file.fd);
    m->file.fd = -1;
  }
  return r;
}

static void
file_close (struct io_member *m)
{
  io_memmap_close (&m->file.mem);
  if (m->file.fd >= 0)
    close (m->file.fd);
  m->file.fd = -1;
}

/* fallocate(2) is not covered by RWF_DSYNC, so zeroed members are synced
 * afterwards when the caller asked for FUA.
 */
static int
sync_zeroed (const struct io_member *members, struct io_op *ops, size_t n)
{
  struct io_op sync[64];
  size_t nsync = 0;

  for (size_t i = 0; i < n; i++) {
    bool seen = false;

    if (ops[i].kind != IO_ZERO && ops[i].kind != IO_PUNCH)
      continue;
    for (size_t j = 0; j < nsync; j++)
      seen |= sync[j].member == ops[i].member;
    if (!seen && nsync < sizeof sync / sizeof sync[0])
      sync[nsync++] = (struct io_op) { .kind = IO_FSYNC,
                                       .member = ops[i].member };
  }
  if (io_engine_run (members, sync, nsync, 0) == 0)
    return 0;
  /* Charge a failed sync to the ops it was for, so the caller knows
   * which member failed.
   */
  for (size_t j = 0; j < nsync; j++)
    for (size_t i = 0; i < n; i++)
      if (sync[j].result < 0 && ops[i].member == sync[j].member &&
          (ops[i].kind == IO_ZERO || ops[i].kind == IO_PUNCH))
        ops[i].result = sync[j].result;
  for (size_t i = 0; i < n; i++)
    if (ops[i].result < 0)
      return ops[i].result;
  return -EIO;
}

/* IO_FIXED_SIZE (batch.h): fail the batch, nothing run, if a write would
 * make its member's file longer.  Each member's size is asked once, at
 * its first write, against the furthest end of its writes.
 */
static int
refuse_extending (const struct io_member *members, struct io_op *ops,
                  size_t n)
{
  for (size_t i = 0; i < n; i++) {
    uint64_t end = 0;
    size_t far = i;
    bool first = io_op_writes (&ops[i]);

    for (size_t j = 0; j < i && first; j++)
      first = !(io_op_writes (&ops[j]) && ops[j].member == ops[i].member);
    if (!first)
      continue;
    for (size_t j = i; j < n; j++)
      if (io_op_writes (&ops[j]) && ops[j].member == ops[i].member &&
          ops[j].off + ops[j].len > end) {
        end = ops[j].off + ops[j].len;
        far = j;
      }
    if (!io_member_shrunk (&members[ops[i].member], end, NULL))
      continue;
    io_ops_fail_all (ops, n, -ECANCELED);
    ops[far].result = -ENXIO;
    return -ENXIO;
  }
  return 0;
}

static int
file_run (const struct io_member *members, struct io_op *ops, size_t n,
          unsigned flags)
{
  int r;

  if ((flags & IO_FIXED_SIZE) && (r = refuse_extending (members, ops, n)) < 0)
    return r;
  if (io_direct_needed (members, ops, n))
    r = io_direct_run (members, ops, n, flags);
  else
    r = io_engine_run (members, ops, n, flags);
  if (r == 0 && (flags & IO_FUA))
    r = sync_zeroed (members, ops, n);
  return r;
}

/* Move all len bytes, looping over short transfers and EINTR. */
static int
full_io (int fd, void *buf, size_t len, uint64_t off, bool write)
{
  size_t done = 0;

  while (done < len) {
    char *p = (char *) buf + done;
    off_t at = (off_t) (off + done);
    ssize_t n = write ? pwrite (fd, p, len - done, at)
                      : pread (fd, p, len - done, at);

    if (n == -1 && errno == EINTR)
      continue;
    if (n == -1)
      return -errno;
    if (n == 0)
      return -EIO;
    done += (size_t) n;
  }
  return 0;
}

static int
file_pread (const struct io_member *m, void *buf, size_t len, uint64_t off)
{
  return full_io (m->file.fd, buf, len, off, false);
}

static int
file_pwrite (const struct io_member *m, const void *buf, size_t len,
             uint64_t off)
{
  return full_io (m->file.fd, (void *) buf, len, off, true);
}

static int
file_sync (const struct io_member *m)
{
  return fdatasync (m->file.fd) == -1 ? -errno : 0;
}

/* A server killed a moment ago holds its locks a little longer: the
 * requests it had in flight hold its open files (and so their locks)
 * until the kernel's teardown of its io_uring, which runs after the
 * process is gone, has finished them.  So a lock held is asked for again
 * for up to a second before the member is called in use (seen: a
 * restart right after kill -9 refused, now and then).
 */
#define LOCK_TRIES 20
#define LOCK_WAIT_NS 50000000L

static int
file_lock (struct io_member *m)
{
  for (int i = 0; i < LOCK_TRIES; i++) {
    if (flock (m->file.fd, LOCK_EX | LOCK_NB) == 0)
      return 0;
    if (errno != EWOULDBLOCK)
      return -errno;
    nanosleep (&(struct timespec) { 0, LOCK_WAIT_NS }, NULL);
  }
  return -EBUSY;
}

/* A block device that the kernel holds (mounted, md, dm) refuses
 * O_EXCL; files cannot be held so.
 */
static int
file_held (const struct io_member *m)
{
  int fd;

  if (!m->blockdev)
    return 0;
  fd = open (m->path, O_RDONLY | O_EXCL | O_CLOEXEC);
  if (fd == -1)
    return errno == EBUSY ? -EBUSY : 0;
  close (fd);
  return 0;
}

static bool
file_same (const struct io_member *a, const struct io_member *b)
{
  return a->blockdev == b->blockdev && a->file.dev == b->file.dev &&
    a->file.ino == b->file.ino;
}

int
io_probe (void)
{
  struct io_uring ring;
  int r = io_uring_queue_init (4, &ring, 0);

  if (r == 0)
    io_uring_queue_exit (&ring);
  return r;
}

static bool
file_named (const struct io_member *m, const char *path)
{
  struct stat st;

  if (stat (path, &st) != 0 || S_ISBLK (st.st_mode) != m->blockdev)
    return false;
  return m->blockdev ? st.st_rdev == m->file.dev
    : st.st_dev == m->file.dev && st.st_ino == m->file.ino;
}

/* Any path is the local file system's (last in member.c's table). */
static bool
file_claims (const char *path)
{
  (void) path;
  return true;
}

/* A file or device flushes, and writes with RWF_DSYNC for FUA; one in
 * memory (tmpfs) is mapped and read in place, and is as durable as it
 * will ever be once written.
 */
static unsigned
file_caps (const struct io_member *m)
{
  return IO_CAP_FLUSH | IO_CAP_FUA |
    (m->in_memory ? IO_CAP_MAP | IO_CAP_MEMORY : 0);
}

/* A file in memory is read by the kernel copying pages: pieces of 128
 * KiB of each member (and the one computed from them) stay in the
 * processor's cache for the XOR that reads them next, where whole chunks
 * would be evicted first (array/runner.c).  Disks and files on them take
 * any size, the longer the better.
 */
#define MEMORY_PREFERRED_REQUEST (128u << 10)

static struct io_request_size
file_request_size (const struct io_member *m)
{
  struct io_request_size rs = {
    .preferred = m->in_memory ? MEMORY_PREFERRED_REQUEST : 0,
  };

  return rs;
}

const struct io_backend io_file_backend = {
  .name = "file",
  .claims = file_claims,
  .caps = file_caps,
  .request_size = file_request_size,
  .size_now = file_size_now,
  .open = file_open,
  .close = file_close,
  .run = file_run,
  .pread = file_pread,
  .pwrite = file_pwrite,
  .sync = file_sync,
  .lock = file_lock,
  .held = file_held,
  .same = file_same,
  .named = file_named,
};
