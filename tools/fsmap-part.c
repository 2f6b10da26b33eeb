/* tools/fsmap-part.c -- the partitions of an array, as libblkid reads its
 * partition table (fsmap.h): check --files finds each file system where
 * its partition starts (the seed post's at sector 64, a DOS one at 63,
 * GPT's at 2048...).  libblkid probes file descriptors: it gets a sparse
 * copy in memory of the array's size holding its first and last MiB,
 * where MBR and GPT (and GPT's backup) live.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <blkid.h>

#include "tools/fsmap.h"

#define TABLE_SPAN (1u << 20)

/* Array bytes [off, off+len) into fd at the same place. */
static int
copy_out (const struct fsmap_src *src, int fd, uint64_t off, size_t len)
{
  char *buf = malloc (len);
  int r;

  if (buf == NULL)
    return -ENOMEM;
  r = src->read (src->opaque, buf, len, off);
  if (r == 0 && pwrite (fd, buf, len, (off_t) off) != (ssize_t) len)
    r = -EIO;
  free (buf);
  return r;
}

static int
table_copy (const struct fsmap_src *src, uint64_t size)
{
  uint64_t head = size < TABLE_SPAN ? size : TABLE_SPAN;
  uint64_t tail = size - head < TABLE_SPAN ? size - head : TABLE_SPAN;
  int fd = memfd_create ("raid5-partitions", MFD_CLOEXEC), r;

  if (fd == -1)
    return -errno;
  if (ftruncate (fd, (off_t) size) == -1)
    r = -errno;
  else if ((r = copy_out (src, fd, 0, head)) == 0 && tail > 0)
    r = copy_out (src, fd, size - tail, tail);
  if (r < 0) {
    close (fd);
    return r;
  }
  return fd;
}

static unsigned
list_parts (blkid_probe pr, struct fsmap_part *out, unsigned max,
            char *pttype, size_t pttype_len)
{
  blkid_partlist pl = blkid_probe_get_partitions (pr);
  blkid_parttable t = pl ? blkid_partlist_get_table (pl) : NULL;
  int n = pl ? blkid_partlist_numof_partitions (pl) : 0;
  unsigned k = 0;

  if (t != NULL)
    snprintf (pttype, pttype_len, "%s", blkid_parttable_get_type (t));
  for (int i = 0; i < n && k < max; i++) {
    blkid_partition p = blkid_partlist_get_partition (pl, i);

    if (p == NULL || blkid_partition_is_extended (p))
      continue;
    out[k++] = (struct fsmap_part) {
      .number = (unsigned) blkid_partition_get_partno (p),
      .off = (uint64_t) blkid_partition_get_start (p) * 512,
      .len = (uint64_t) blkid_partition_get_size (p) * 512,
    };
  }
  return k;
}

int
fsmap_partitions (const struct fsmap_src *src, struct fsmap_part *out,
                  unsigned max, char *pttype, size_t pttype_len)
{
  uint64_t size = src->size;
  int fd = table_copy (src, size), n = 0;
  blkid_probe pr;

  snprintf (pttype, pttype_len, "%s", "");
  if (fd < 0)
    return fd;
  if ((pr = blkid_new_probe ()) == NULL ||
      blkid_probe_set_device (pr, fd, 0, (blkid_loff_t) size) != 0) {
    if (pr)
      blkid_free_probe (pr);
    close (fd);
    return -ENOMEM;
  }
  blkid_probe_enable_superblocks (pr, 0);
  blkid_probe_enable_partitions (pr, 1);
  blkid_probe_set_partitions_flags (pr, BLKID_PARTS_ENTRY_DETAILS);
  if (blkid_do_safeprobe (pr) == 0)
    n = (int) list_parts (pr, out, max, pttype, pttype_len);
  blkid_free_probe (pr);
  close (fd);
  return n;
}
