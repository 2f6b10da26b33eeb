/* tests/unit/test-array-bbscrub.c -- check, repair and resync over rows a
 * member's md bad-block log lists (arrayfx.h; members made by raid5ctl
 * create).  Kernel md's rule, seen in the guest (tests/vm/
 * test-md-bbscrub.sh): a check, a repair and a resync each write a page
 * one member lists with what the rest of its row computes, and clear it
 * (analyse_stripe fails the device in that stripe_head,
 * handle_parity_checks5 writes the computed block, R5_MadeGood), but not
 * on a device that failed a write (WriteErrorSeen), and not where two
 * list the row (handle_failed_sync leaves it); the other rows of the
 * stripe are compared as ever.  Asserts: the page is rewritten and
 * cleared by each job (the member's bytes are the row's again, the bit
 * leaves the superblock), counted and logged; a read-only check and a
 * member that failed a write leave it listed and skip it; a row two
 * members list is skipped alone: a wrong parity page beside it in the
 * same stripe is found and repaired, and the stripe is counted once.
 */
#include <config.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "array/object.h"
#include "raid/badblocks.h"
#include "tests/unit/arrayfx.h"

#define ARGS "--chunk 64K --bitmap none --assume-clean"
#define DOFF 2048u                    /* raid5ctl's data offset for 8 MiB */
#define CHUNK 65536u
/* Stripe 2 (left-symmetric, 3 members): parity on member 0, data on
 * members 1 and 2.  A member's page p of it, as a device sector.
 */
#define STRIPE 2u
#define PAGE_SECTOR(p) (DOFF + (STRIPE * CHUNK + (p) * 4096u) / 512u)

static struct md_bb_table t;          /* 8 KiB: not on Criterion's stack */

static unsigned char
member_byte (struct afx *f, unsigned m, uint64_t off)
{
  unsigned char b;
  int fd = open (f->path[m], O_RDONLY);

  cr_assert_geq (fd, 0);
  cr_assert_eq (pread (fd, &b, 1, (off_t) off), 1);
  close (fd);
  return b;
}

/* f's array filled and closed. */
static void
filled (struct afx *f)
{
  afx_make (f, 3, 8 << 20, ARGS);
  afx_open_ok (f);
  afx_write (f, 0, f->cap, 11);
  afx_close (f);
}

/* Member m's log lists page p of stripe 2, its bytes there made stale
 * (one flipped at +7): the byte it held is returned.
 */
static unsigned char
list_stale_page (struct afx *f, unsigned m, unsigned p)
{
  uint64_t off = PAGE_SECTOR (p) * 512ULL + 7;
  unsigned char was = member_byte (f, m, off);

  md_bb_init (&t, 0);
  cr_assert_eq (md_bb_add (&t, PAGE_SECTOR (p), 8), 0);
  afx_put_log (f->path[m], &t, false);
  afx_flip (f, m, off, 0xff);
  return was;
}

static uint64_t
last_job (struct afx *f, const char *key)
{
  return afx_status (f, "last_job", key);
}

/* Member 1 lists page 3 of stripe 2, stale; the array opened again (no
 * read: a read would rewrite it first) and job run: the page is the
 * row's again and cleared, nothing counted as a mismatch.
 */
static void
job_rewrites_the_listed_page (enum r5_job job)
{
  struct array_err err;
  struct afx f;
  unsigned char was;

  filled (&f);
  was = list_stale_page (&f, 1, 3);
  if (job == R5_JOB_RESYNC)
    afx_mark_dirty (&f, 0);
  afx_reopen (&f);
  cr_assert_eq (array_member_bad (f.a, 1, PAGE_SECTOR (3) * 512ULL, 4096,
                                  NULL), MD_BB_ALL);
  cr_assert_eq (array_job_run (f.a, job, NULL, &err), 0, "%s", err.msg);
  cr_expect_eq (array_member_bad (f.a, 1, DOFF * 512ULL, 4 << 20, NULL),
                MD_BB_NONE, "the listed page is still listed");
  cr_expect_eq (member_byte (&f, 1, PAGE_SECTOR (3) * 512ULL + 7), was,
                "member 1's page was not rewritten from its row");
  cr_expect_eq (last_job (&f, "mismatch_sectors"), 0);
  cr_expect_eq (last_job (&f, "bad_block_stripes"), 0);
  cr_expect_eq (last_job (&f, "bad_block_sectors_rewritten"), 8);
  cr_expect (strstr (afx_log (), "rewritten from the other members, read "
                     "back and cleared"), "%s", afx_log ());
  afx_verify (&f);
  afx_close (&f);
  cr_expect (!afx_has_bb_bit (f.path[1]), "feature 0x8 left on member 1");
  afx_cleanup (&f);
}

Test (array_bbscrub, check_rewrites_a_page_one_member_lists, .timeout = 120)
{
  job_rewrites_the_listed_page (R5_JOB_CHECK);
}

Test (array_bbscrub, repair_rewrites_a_page_one_member_lists, .timeout = 120)
{
  job_rewrites_the_listed_page (R5_JOB_REPAIR);
}

Test (array_bbscrub, resync_rewrites_a_page_one_member_lists, .timeout = 120)
{
  job_rewrites_the_listed_page (R5_JOB_RESYNC);
}

/* Member 1 lists page 3 of stripe 2 and cannot have it rewritten (the
 * array read-only, or the member failed a write): the check skips that
 * row, says why, and the page stays listed and stale.
 */
static void
check_leaves_it (bool read_only)
{
  struct array_err err;
  struct afx f;
  unsigned char was;

  filled (&f);
  was = list_stale_page (&f, 1, 3);
  f.cfg.read_only = read_only;
  afx_reopen (&f);
  if (!read_only)
    f.a->bb.write_error[1] = true;
  cr_assert_eq (array_job_run (f.a, R5_JOB_CHECK, NULL, &err), 0, "%s",
                err.msg);
  cr_expect_eq (array_member_bad (f.a, 1, PAGE_SECTOR (3) * 512ULL, 4096,
                                  NULL), MD_BB_ALL);
  cr_expect_eq (member_byte (&f, 1, PAGE_SECTOR (3) * 512ULL + 7),
                was ^ 0xff, "member 1's page was written");
  cr_expect_eq (last_job (&f, "bad_block_stripes"), 1);
  cr_expect_eq (last_job (&f, "bad_block_sectors_rewritten"), 0);
  cr_expect (strstr (afx_log (), read_only ? "not rewritten: the array is "
                     "read-only" : "not rewritten: the member failed a "
                     "write"), "%s", afx_log ());
  afx_cleanup (&f);
}

Test (array_bbscrub, read_only_check_leaves_it_listed, .timeout = 120)
{
  check_leaves_it (true);
}

Test (array_bbscrub, member_that_failed_a_write_keeps_it_listed,
      .timeout = 120)
{
  check_leaves_it (false);
}

/* Members 1 and 2 list pages 3 and 12 of stripe 2 (its two data pages
 * there: those rows are lost), member 1 alone page 7, and member 0's
 * parity page 5 is wrong: a repair rewrites page 7, skips rows 3 and 12
 * (the stripe counted once, whatever slices it is cut into), finds page
 * 5's parity wrong and rewrites it; a check then finds it right.
 */
Test (array_bbscrub, row_two_members_list_is_skipped_alone, .timeout = 120)
{
  struct array_err err;
  struct afx f;

  filled (&f);
  md_bb_init (&t, 0);
  cr_assert_eq (md_bb_add (&t, PAGE_SECTOR (3), 8), 0);
  cr_assert_eq (md_bb_add (&t, PAGE_SECTOR (12), 8), 0);
  afx_put_log (f.path[2], &t, false);
  cr_assert_eq (md_bb_add (&t, PAGE_SECTOR (7), 8), 0);
  afx_put_log (f.path[1], &t, false);
  afx_flip (&f, 0, PAGE_SECTOR (5) * 512ULL + 100, 0x10);
  afx_reopen (&f);
  cr_assert_eq (array_job_run (f.a, R5_JOB_REPAIR, NULL, &err), 0, "%s",
                err.msg);
  cr_expect_eq (last_job (&f, "mismatch_sectors"), 8,
                "the wrong parity beside the skipped rows");
  cr_expect_eq (last_job (&f, "bad_block_stripes"), 1);
  cr_expect_eq (last_job (&f, "bad_block_sectors_rewritten"), 8);
  cr_expect_eq (array_member_bad (f.a, 1, PAGE_SECTOR (7) * 512ULL, 4096,
                                  NULL), MD_BB_NONE);
  cr_expect_eq (array_member_bad (f.a, 1, PAGE_SECTOR (3) * 512ULL, 4096,
                                  NULL), MD_BB_ALL);
  cr_expect (strstr (afx_log (), "skipped: members 1 and 2 list them bad"),
             "%s", afx_log ());
  cr_assert_eq (array_job_run (f.a, R5_JOB_CHECK, NULL, &err), 0, "%s",
                err.msg);
  cr_expect_eq (last_job (&f, "mismatch_sectors"), 0, "not repaired");
  cr_expect_eq (last_job (&f, "bad_block_stripes"), 1);
  afx_cleanup (&f);
}

/* With an integrity record: member 1 lists page 3 of stripe 2, and
 * member 0's parity unit there has rotted.  What the row computes for
 * member 1 fails member 1's checksum: a check writes nothing there (md,
 * without checksums, would write it), logs why, leaves the page listed
 * and member 1 unmarked; the array never returns those bytes wrong.
 */
Test (array_bbscrub, computed_page_failing_its_checksum_is_not_written,
      .timeout = 120)
{
  char record[PATH_MAX + 16];
  unsigned char got[4096];
  struct array_err err;
  uint64_t at = STRIPE * 2 * CHUNK + 3 * 4096;   /* member 1's page 3 */
  struct afx f;
  unsigned char was;
  int r;

  afx_make (&f, 3, 8 << 20, ARGS);
  snprintf (record, sizeof record, "%s/record", f.dir);
  f.cfg.integrity = record;
  afx_open_ok (&f);
  afx_write (&f, 0, f.cap, 11);
  afx_close (&f);
  was = list_stale_page (&f, 1, 3);
  afx_flip (&f, 0, PAGE_SECTOR (3) * 512ULL + 300, 0x04);
  afx_reopen (&f);
  cr_assert_eq (array_job_run (f.a, R5_JOB_CHECK, NULL, &err), 0, "%s",
                err.msg);
  cr_expect_eq (member_byte (&f, 1, PAGE_SECTOR (3) * 512ULL + 7),
                was ^ 0xff, "member 1's page was written from a rotten row");
  cr_expect_eq (array_member_bad (f.a, 1, PAGE_SECTOR (3) * 512ULL, 4096,
                                  NULL), MD_BB_ALL);
  cr_expect (!f.a->bb.write_error[1], "member 1 marked as failing writes");
  cr_expect (strstr (afx_log (), "what the rest of its row computes fails "
                     "its checksum"), "%s", afx_log ());
  r = array_read (f.a, got, sizeof got, at, &err);
  cr_expect (r < 0 || memcmp (got, f.model + at, sizeof got) == 0,
             "the array read member 1's listed page wrong");
  afx_cleanup (&f);
}
