/* tools/disk.c -- member files and block devices for raid5ctl (see disk.h). */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "raid/mdsb.h"
#include "io/member.h"
#include "tools/disk.h"

static int
describe (struct disk *d)
{
  struct stat st;

  if (fstat (d->fd, &st) == -1)
    return -errno;
  if (S_ISDIR (st.st_mode))
    return -EISDIR;
  if (!S_ISREG (st.st_mode) && !S_ISBLK (st.st_mode))
    return -ENODEV;
  d->blockdev = S_ISBLK (st.st_mode);
  if (!d->blockdev) {
    d->size = (uint64_t) st.st_size;
    return 0;
  }
  if (ioctl (d->fd, BLKGETSIZE64, &d->size) == -1)
    return -errno;
  return 0;
}

int
disk_open_ro (struct disk *d, const char *path)
{
  int r;

  d->path = path;
  d->size = 0;
  d->blockdev = false;
  d->fd = open (path, O_RDONLY | O_CLOEXEC);
  if (d->fd == -1)
    return -errno;
  if ((r = describe (d)) < 0)
    disk_close (d);
  return r;
}

void
disk_close (struct disk *d)
{
  if (d->fd >= 0)
    close (d->fd);
  d->fd = -1;
}

int
disk_pread (int fd, void *buf, size_t len, uint64_t off)
{
  return io_pread_full (fd, buf, len, off);
}

int
disk_read_sb (int fd, uint64_t size, void *block)
{
  int r;

  memset (block, 0, MD_SB_BLOCK);
  if (size < MD_SB_OFFSET + MD_SB_BLOCK)
    return 0;
  if ((r = disk_pread (fd, block, MD_SB_BLOCK, MD_SB_OFFSET)) < 0)
    return r;
  return md_sb_has_magic (block);
}

const char *
disk_strerror (int neg_errno)
{
  switch (neg_errno) {
  case -EISDIR: return "is a directory";
  case -ENODEV: return "is not a regular file or block device";
  default: return strerror (-neg_errno);
  }
}
