/* tests/unit/test-array-badblocks.c -- members' md bad-block logs through
 * assembly (arrayfx.h, members made by raid5ctl create, whose logs sit
 * where mdadm's do).  Asserts: an array whose member in service lists bad
 * blocks is refused with one line naming the member, how many and the
 * first, and nothing is written; opened with bad_blocks_ok, each slot
 * answers array_member_bad from its own table in device sectors (not
 * offset by the data offset), and superblock writes keep feature 0x8 on
 * that member alone; a member whose bit is set over an empty list is
 * served and loses the bit at the next write (super_1_sync's rule); a
 * corrupt log refuses the array naming the member and the entry.
 */
#include <config.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "raid/badblocks.h"
#include "raid/mdsb.h"
#include "tests/unit/arrayfx.h"

#define ARGS "--chunk 64K --bitmap none --assume-clean"
#define DOFF 2048u                    /* raid5ctl's data offset for 8 MiB */

static struct md_bb_table t;          /* 8 KiB: not on Criterion's stack */

static void
read_sb (const char *path, struct md_sb *sb, unsigned char *block)
{
  int fd = open (path, O_RDONLY);

  cr_assert_geq (fd, 0, "%s", path);
  cr_assert_eq (pread (fd, block, MD_SB_BLOCK, MD_SB_OFFSET),
                (ssize_t) MD_SB_BLOCK);
  close (fd);
  md_sb_peek (block, sb, NULL);
}

/* Member path's log holds t (or, if empty_bit, nothing but the bit). */
static void
put_log (const char *path, const struct md_bb_table *tb, bool empty_bit)
{
  unsigned char block[MD_SB_BLOCK], area[4096];
  uint64_t sector;
  struct md_sb sb;
  int fd;

  read_sb (path, &sb, block);
  cr_assert (md_bblog_area (&sb, &sector, NULL), "%s: no log", path);
  cr_assert_eq (md_bblog_encode (&sb, tb, area), 0);
  cr_assert_eq (md_bblog_feature (&sb, tb, &sb.feature_map), 0);
  if (empty_bit)
    sb.feature_map |= MD_FEATURE_BAD_BLOCKS;
  md_sb_encode (&sb, block);
  fd = open (path, O_RDWR);
  cr_assert_geq (fd, 0, "%s", path);
  cr_assert_eq (pwrite (fd, area, sb.bblog_size * 512u, sector * 512),
                (ssize_t) (sb.bblog_size * 512u));
  cr_assert_eq (pwrite (fd, block, MD_SB_BLOCK, MD_SB_OFFSET),
                (ssize_t) MD_SB_BLOCK);
  close (fd);
}

static bool
has_bit (const char *path)
{
  unsigned char block[MD_SB_BLOCK];
  struct md_sb sb;

  read_sb (path, &sb, block);
  return sb.feature_map & MD_FEATURE_BAD_BLOCKS;
}

Test (array_badblocks, listed_blocks_refused_then_loaded, .timeout = 120)
{
  unsigned char before[MD_SB_BLOCK], after[MD_SB_BLOCK];
  struct afx f;
  struct array_err err;
  struct md_sb sb;
  uint64_t first = 0;

  afx_make (&f, 3, 8 << 20, ARGS);
  md_bb_init (&t, 0);
  cr_assert_eq (md_bb_add (&t, DOFF + 100, 8), 0);
  cr_assert_eq (md_bb_add (&t, DOFF + 5000, 700), 0);
  put_log (f.path[1], &t, false);
  read_sb (f.path[1], &sb, before);
  cr_assert_lt (afx_open (&f, &err), 0, "served with bad blocks");
  cr_assert (strstr (err.msg, "member 1 (") && strstr (err.msg, f.path[1]) &&
             strstr (err.msg, "lists 3 bad ranges (708 sectors, the first at "
                     "sector 2148)"), "%s", err.msg);
  read_sb (f.path[1], &sb, after);
  cr_assert_eq (memcmp (before, after, sizeof before), 0,
                "the refusal wrote a superblock");
  f.cfg.bad_blocks_ok = true;
  afx_open_ok (&f);
  cr_expect_eq (array_member_bad (f.a, 1, (DOFF + 100) * 512ULL, 4096,
                                  &first), MD_BB_ALL);
  cr_expect_eq (first, (DOFF + 100) * 512ULL);
  cr_expect_eq (array_member_bad (f.a, 1, (DOFF + 99) * 512ULL + 100, 1024,
                                  &first), MD_BB_SOME);
  cr_expect_eq (first, (DOFF + 100) * 512ULL);
  cr_expect_eq (array_member_bad (f.a, 1, (DOFF + 108) * 512ULL, 4096, NULL),
                MD_BB_NONE);
  cr_expect_eq (array_member_bad (f.a, 1, 100 * 512ULL, 4096, NULL),
                MD_BB_NONE, "the table counts device sectors");
  cr_expect_eq (array_member_bad (f.a, 0, (DOFF + 100) * 512ULL, 4096, NULL),
                MD_BB_NONE, "another slot's table");
  afx_write (&f, 0, 65536, 3);      /* superblocks written twice */
  afx_close (&f);
  cr_expect (has_bit (f.path[1]) && !has_bit (f.path[0]) &&
             !has_bit (f.path[2]), "feature 0x8 on member 1 only");
  afx_cleanup (&f);
}

Test (array_badblocks, bit_over_an_empty_list_is_dropped, .timeout = 120)
{
  struct afx f;

  afx_make (&f, 3, 8 << 20, ARGS);
  md_bb_init (&t, 0);
  put_log (f.path[0], &t, true);
  cr_assert (has_bit (f.path[0]));
  afx_open_ok (&f);
  cr_expect_eq (array_member_bad (f.a, 0, 0, 8 << 20, NULL), MD_BB_NONE);
  afx_write (&f, 0, 65536, 5);
  afx_close (&f);
  for (unsigned i = 0; i < 3; i++)
    cr_expect (!has_bit (f.path[i]), "member %u keeps feature 0x8", i);
  afx_cleanup (&f);
}

Test (array_badblocks, corrupt_log_refused, .timeout = 120)
{
  struct afx f;
  struct array_err err;

  afx_make (&f, 3, 8 << 20, ARGS);
  md_bb_init (&t, 0);
  cr_assert_eq (md_bb_add (&t, (8 << 11) - 4, 8), 0);   /* past the end */
  put_log (f.path[2], &t, false);
  f.cfg.bad_blocks_ok = true;
  cr_assert_lt (afx_open (&f, &err), 0, "a corrupt log was taken");
  cr_assert (strstr (err.msg, "member 2 (") && strstr (err.msg, f.path[2]) &&
             strstr (err.msg, "past the end of the member"), "%s", err.msg);
  afx_cleanup (&f);
}

/* A new member rebuilt into the slot is another device: no bad blocks of
 * the old one's, and no feature 0x8 in its superblock.
 */
Test (array_badblocks, new_member_has_no_table, .timeout = 120)
{
  struct afx f;
  struct array_err err;
  char fresh[PATH_MAX + 16];
  FILE *fp;

  afx_make (&f, 3, 8 << 20, ARGS);
  md_bb_init (&t, 0);
  cr_assert_eq (md_bb_add (&t, DOFF + 100, 8), 0);
  put_log (f.path[1], &t, false);
  f.cfg.bad_blocks_ok = true;
  afx_open_ok (&f);
  cr_assert_eq (array_member_bad (f.a, 1, (DOFF + 100) * 512ULL, 512, NULL),
                MD_BB_ALL);
  cr_assert_eq (array_fail (f.a, 1, &err), 0, "%s", err.msg);
  snprintf (fresh, sizeof fresh, "%s/new.img", f.dir);
  cr_assert_not_null (fp = fopen (fresh, "w"));
  cr_assert_eq (ftruncate (fileno (fp), 8 << 20), 0);
  fclose (fp);
  cr_assert_eq (array_rebuild_start (f.a, 1, fresh, false, &err), 0, "%s",
                err.msg);
  cr_expect_eq (array_member_bad (f.a, 1, (DOFF + 100) * 512ULL, 512, NULL),
                MD_BB_NONE, "the old member's table answers for the new");
  cr_assert_eq (array_job_run (f.a, R5_JOB_REBUILD, NULL, &err), 0, "%s",
                err.msg);
  afx_close (&f);
  cr_expect (!has_bit (fresh), "the new member says it has bad blocks");
  unlink (fresh);
  afx_cleanup (&f);
}
