/* io/member.c -- open and describe a member file or block device. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "io/member.h"

/* Safe for every device with logical blocks up to 4 KiB, and what the
 * page cache uses anyway.
 */
#define DIO_DEFAULT_ALIGN 4096u

void
io_member_init (struct io_member *m)
{
  memset (m, 0, sizeof *m);
  m->fd = -1;
  m->dio_align = 1;
  m->fail_after = -1;
}

void
io_member_inject_failure (struct io_member *m, int64_t after)
{
  m->fail_after = after;
}

static int
read_size (struct io_member *m, const struct stat *st)
{
  if (!m->blockdev) {
    m->size = (uint64_t) st->st_size;
    return 0;
  }
  if (ioctl (m->fd, BLKGETSIZE64, &m->size) == -1)
    return -errno;
  return 0;
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

  if (fstat (m->fd, &st) == -1)
    return -errno;
  if (S_ISDIR (st.st_mode))
    return -EISDIR;
  if (!S_ISREG (st.st_mode) && !S_ISBLK (st.st_mode))
    return -ENODEV;
  m->blockdev = S_ISBLK (st.st_mode);
  m->dev = m->blockdev ? st.st_rdev : st.st_dev;
  m->ino = m->blockdev ? 0 : st.st_ino;
  m->in_memory = !m->blockdev && on_memory_fs (m->fd);
  if (m->direct)
    m->dio_align = direct_alignment (m->fd);
  return read_size (m, &st);
}

/* Open with flags (O_RDWR or O_RDONLY, maybe O_DIRECT) and describe. */
static int
open_member (struct io_member *m, const char *path, int flags, bool direct)
{
  int r;

  io_member_close (m);
  m->path = strdup (path);
  if (m->path == NULL)
    return -ENOMEM;
  m->direct = direct;
  m->fd = open (path, flags | O_CLOEXEC);
  if (m->fd == -1)
    r = direct && errno == EINVAL ? -EOPNOTSUPP : -errno;
  else
    r = describe (m);
  if (r < 0)
    io_member_close (m);
  return r;
}

int
io_member_open (struct io_member *m, const char *path, bool direct)
{
  return open_member (m, path, O_RDWR | (direct ? O_DIRECT : 0), direct);
}

int
io_member_open_ro (struct io_member *m, const char *path)
{
  return open_member (m, path, O_RDONLY, false);
}

int
io_member_sync (const struct io_member *m)
{
  return fdatasync (m->fd) == -1 ? -errno : 0;
}

int
io_member_lock (struct io_member *m)
{
  if (flock (m->fd, LOCK_EX | LOCK_NB) == -1)
    return errno == EWOULDBLOCK ? -EBUSY : -errno;
  return 0;
}

int
io_member_probe_read (struct io_member *m, uint64_t off, uint32_t len)
{
  size_t align = m->dio_align > 64 ? m->dio_align : 64;
  void *buf;
  ssize_t n;
  int r = 0;

  if (posix_memalign (&buf, align, len) != 0)
    return -ENOMEM;
  n = pread (m->fd, buf, len, (off_t) off);
  if (n == -1)
    r = -errno;
  else if ((size_t) n != len)
    r = -EIO;
  free (buf);
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

int
io_pread_full (int fd, void *buf, size_t len, uint64_t off)
{
  return full_io (fd, buf, len, off, false);
}

int
io_pwrite_full (int fd, const void *buf, size_t len, uint64_t off)
{
  return full_io (fd, (void *) buf, len, off, true);
}

int
io_member_pread (const struct io_member *m, void *buf, size_t len,
                 uint64_t off)
{
  return io_pread_full (m->fd, buf, len, off);
}

int
io_member_pwrite (const struct io_member *m, const void *buf, size_t len,
                  uint64_t off)
{
  return io_pwrite_full (m->fd, buf, len, off);
}

bool
io_member_same (const struct io_member *a, const struct io_member *b)
{
  return a->blockdev == b->blockdev && a->dev == b->dev && a->ino == b->ino;
}

void
io_member_close (struct io_member *m)
{
  if (m->fd >= 0)
    close (m->fd);
  free (m->path);
  io_member_init (m);
}
