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

uint32_t
disk_le32 (const void *p)
{
  const uint8_t *b = p;

  return (uint32_t) b[0] | (uint32_t) b[1] << 8 | (uint32_t) b[2] << 16
    | (uint32_t) b[3] << 24;
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
  return disk_le32 (block) == MD_SB_MAGIC;
}

static uint64_t
le64 (const uint8_t *p)
{
  return (uint64_t) disk_le32 (p) | (uint64_t) disk_le32 (p + 4) << 32;
}

/* Is there an md superblock of this version at byte off? */
static int
probe_md (int fd, uint64_t off, const char *version, uint8_t *b)
{
  bool v1 = version[0] == '1';
  int r = disk_pread (fd, b, 4096, off);

  if (r < 0)
    return r;
  if (disk_le32 (b) != MD_SB_MAGIC || disk_le32 (b + 4) != (v1 ? 1 : 0))
    return 0;
  return !v1 || le64 (b + 144) == off / 512;
}

int
disk_find_other_md (int fd, uint64_t size, struct disk_md found[3],
                    void *block)
{
  uint64_t sectors = size / 512;
  struct disk_md where[3] = {
    { "1.1", 0 },
    { "1.0", sectors >= 24 ? ((sectors - 16) & ~UINT64_C (7)) * 512 : 0 },
    { "0.90", sectors >= 256 ? ((sectors & ~UINT64_C (127)) - 128) * 512
                             : 0 },
  };
  uint8_t *b = malloc (4096);
  int n = 0, r = 0;

  if (b == NULL)
    return -ENOMEM;
  for (unsigned i = 0; i < 3 && r >= 0; i++) {
    if (size < 4096 || (i > 0 && where[i].offset == 0))
      continue;
    if ((r = probe_md (fd, where[i].offset, where[i].version, b)) == 1) {
      if (n == 0)
        memcpy (block, b, 4096);
      found[n++] = where[i];
    }
  }
  free (b);
  return r < 0 ? r : n;
}

void
disk_sb_identity (const void *block, char uuid[36], char name[33])
{
  const uint8_t *b = block;

  md_uuid_format (b + 16, uuid);
  memcpy (name, b + 32, 32);
  name[32] = '\0';
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
