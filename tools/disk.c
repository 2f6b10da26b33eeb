/* tools/disk.c -- disks for raid5ctl to look at (see disk.h). */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "raid/mdsb.h"
#include "tools/disk.h"
#include "tools/raid5ctl.h"

int
disk_open_ro (struct io_member *d, const char *path)
{
  io_member_init (d);
  return io_member_open_opts (d, path, &(struct io_open_opts) {
                                .tls = tool_tls (), .read_only = true });
}

int
disk_read_sb (const struct io_member *d, void *block)
{
  int r;

  memset (block, 0, MD_SB_BLOCK);
  if (d->size < MD_SB_OFFSET + MD_SB_BLOCK)
    return 0;
  if ((r = io_member_pread (d, block, MD_SB_BLOCK, MD_SB_OFFSET)) < 0)
    return r;
  return md_sb_has_magic (block);
}

const char *
disk_strerror (int neg_errno)
{
  switch (neg_errno) {
  case -EISDIR: return "is a directory";
  case -ENODEV: return "is not a regular file or block device";
  default: return io_strerror (neg_errno);
  }
}

int
disk_cache_option (enum disk_cache_mode *mode, int c)
{
  if (*mode != DISK_CACHE_AUTO)
    return tool_error ("--direct and --buffered: give one of them");
  *mode = c == 'd' ? DISK_CACHE_DIRECT : DISK_CACHE_BUFFERED;
  return TOOL_OK;
}

bool
disk_use_direct (enum disk_cache_mode mode, const char *const *paths,
                 unsigned n)
{
  unsigned given = 0;
  struct stat st;

  if (mode != DISK_CACHE_AUTO)
    return mode == DISK_CACHE_DIRECT;
  for (unsigned i = 0; i < n; i++) {
    if (paths[i] == NULL)
      continue;
    if (stat (paths[i], &st) < 0 || !S_ISBLK (st.st_mode))
      return false;
    given++;
  }
  return given > 0;
}

void
disk_say_direct (void)
{
  fprintf (stderr, "raid5ctl %s: the members are block devices: read and "
           "written with O_DIRECT, past the page cache (--buffered: "
           "through it)\n", tool_sub ());
}
