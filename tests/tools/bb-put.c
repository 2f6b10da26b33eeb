/* tests/tools/bb-put.c -- write an md bad-block log with raid/badblocks.c,
 * for tests that hand it to mdadm and kernel md (tests/vm/test-md-
 * badblocks.sh) or to the plugin (test-bad-blocks.sh): the plugin
 * records bad blocks only where a member fails, so tests that want them
 * at chosen places write the log themselves.
 *
 *   bb-put DISK [SECTOR+COUNT]...
 *
 * DISK's v1.2 superblock must reserve a log.  The ranges (sectors of the
 * disk, as md's table counts them) go through md_bb_add in the order
 * given; the table is written by md_bblog_encode, feature 0x8 set or
 * cleared by md_bblog_feature, the superblock re-encoded (checksum).  No
 * range: the list is emptied.  Exit 0, or 1 with one line on stderr.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "raid/badblocks.h"
#include "raid/mdsb.h"

static struct md_bb_table t;
static uint8_t block[MD_SB_BLOCK], area[MD_BB_LOG_SECTORS * 512];

static int
die (const char *disk, const char *what, int err)
{
  fprintf (stderr, "bb-put: %s: %s%s%s\n", disk, what, err ? ": " : "",
           err ? strerror (err) : "");
  return 1;
}

static int
add_ranges (char **arg, int n, const char *disk)
{
  for (int i = 0; i < n; i++) {
    uint64_t s, len;
    int r;

    if (sscanf (arg[i], "%" SCNu64 "+%" SCNu64, &s, &len) != 2)
      return die (disk, "a range is SECTOR+COUNT", 0);
    if ((r = md_bb_add (&t, s, len)) < 0)
      return die (disk, arg[i], -r);
  }
  return 0;
}

int
main (int argc, char **argv)
{
  struct md_sb sb;
  uint64_t sector;
  char why[200];
  off_t size;
  int fd, r;

  if (argc < 2)
    return die ("usage", "bb-put DISK [SECTOR+COUNT]...", 0);
  if ((fd = open (argv[1], O_RDWR)) < 0 ||
      (size = lseek (fd, 0, SEEK_END)) < 0 ||
      pread (fd, block, sizeof block, MD_SB_OFFSET) != sizeof block)
    return die (argv[1], "cannot read its superblock", errno);
  if (md_sb_decode (block, (uint64_t) size / 512, &sb, why, sizeof why) < 0)
    return die (argv[1], why, 0);
  md_bb_init (&t, sb.bblog_shift);
  if (add_ranges (argv + 2, argc - 2, argv[1]) != 0)
    return 1;
  if (!md_bblog_area (&sb, &sector, NULL) ||
      (r = md_bblog_encode (&sb, &t, area)) < 0 ||
      (r = md_bblog_feature (&sb, &t, &sb.feature_map)) < 0)
    return die (argv[1], "its log cannot hold the list", 0);
  md_sb_encode (&sb, block);
  if (pwrite (fd, area, sb.bblog_size * 512u, (off_t) sector * 512) < 0 ||
      pwrite (fd, block, sizeof block, MD_SB_OFFSET) != sizeof block ||
      fsync (fd) < 0 || close (fd) < 0)
    return die (argv[1], "cannot write", errno);
  return 0;
}
