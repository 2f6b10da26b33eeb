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

#include "io/signature.h"
#include "tools/fsmap.h"

#define TABLE_SPAN (1u << 20)

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
  int fd = io_sig_ends_copy (src->read, src->opaque, size, TABLE_SPAN,
                             "raid5-partitions"), n = 0;
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
