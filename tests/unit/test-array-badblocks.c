/* tests/unit/test-array-badblocks.c -- members' md bad-block logs through
 * assembly and requests (arrayfx.h, members made by raid5ctl create,
 * whose logs sit where mdadm's do).  Asserts: listed bytes are served
 * from the rest of their row and rewritten where a member never failed
 * a write, rows bad on two members fail only their requests, a write
 * beside a listed page reaches its member, a page put right is cleared
 * before its stripe is let go, a grow reads around them and its writes
 * clear them (each test says what); a member whose bit is set over an empty list is
 * served and loses the bit at the next write (super_1_sync's rule); a
 * corrupt log refuses the array naming the member and the entry.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "array/object.h"
#include "array/requests.h"
#include "array/writepath.h"
#include "raid/badblocks.h"
#include "raid/mdsb.h"
#include "tests/unit/arrayfx.h"

#define ARGS "--chunk 64K --bitmap none --assume-clean"
#define DOFF 2048u                    /* raid5ctl's data offset for 8 MiB */

static struct md_bb_table t;          /* 8 KiB: not on Criterion's stack */

/* f's array filled; member 1's log lists two ranges (8 sectors at 100
 * and 700 at 5000 past the data offset), its bytes there stale (as after
 * a write that failed); opened again.
 */
static void
member1_lists_two_ranges (struct afx *f)
{
  afx_make (f, 3, 8 << 20, ARGS);
  afx_open_ok (f);
  afx_write (f, 0, f->cap, 7);
  afx_close (f);
  md_bb_init (&t, 0);
  cr_assert_eq (md_bb_add (&t, DOFF + 100, 8), 0);
  cr_assert_eq (md_bb_add (&t, DOFF + 5000, 700), 0);
  afx_put_log (f->path[1], &t, false);
  afx_flip (f, 1, (DOFF + 100) * 512ULL + 7, 0xff);
  afx_flip (f, 1, (DOFF + 5600) * 512ULL, 0x01);
  afx_reopen (f);
}

/* f's array (open) starts a grow by a fourth member (not run). */
static void
grow_by_one (struct afx *f)
{
  const char *paths[1];
  struct array_err err;

  afx_new_member (f, f->path[3], sizeof f->path[3], 8 << 20);
  f->n = 4;
  paths[0] = f->path[3];
  cr_assert_eq (array_grow_start (f->a, paths, 1, false, &err), 0, "%s",
                err.msg);
}

/* Member 1's log lists two ranges, and its bytes there are stale (as
 * after a write that failed): each slot answers array_member_bad from its
 * own table in device sectors; the array reads right, served from the
 * others; the reads rewrite the listed bytes and clear them (member 1
 * never failed a write here), and the superblocks lose feature 0x8.
 */
Test (array_badblocks, listed_blocks_served_then_rewritten, .timeout = 120)
{
  struct afx f;
  uint64_t first = 0;

  member1_lists_two_ranges (&f);
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
  cr_expect_eq (afx_member_status (&f, 1, "bad_blocks", "sectors"), 708);
  afx_verify (&f);
  cr_expect_eq (array_member_bad (f.a, 1, DOFF * 512ULL, 8 << 20, NULL),
                MD_BB_NONE, "the listed bytes read were not rewritten");
  cr_expect (strstr (afx_log (), "good again"), "%s", afx_log ());
  afx_close (&f);
  cr_expect (!afx_has_bb_bit (f.path[0]) && !afx_has_bb_bit (f.path[1]) &&
             !afx_has_bb_bit (f.path[2]), "feature 0x8 left after the rewrite");
  afx_open_ok (&f);
  afx_verify (&f);
  afx_cleanup (&f);
}

/* Member 1 lists one page of stripe 0's row (page 12); a write to
 * other pages of its chunk there reaches member 1 itself (md fails a
 * device only for the 4 KiB stripe_head its table lists): after the
 * listed page is rewritten and cleared, member 1's own bytes are read
 * straight, so they must be the ones written.  Then every page of the
 * stripe but page 12 is written, and the whole array read back.
 */
Test (array_badblocks, write_beside_a_listed_page_reaches_its_member,
      .timeout = 120)
{
  struct afx f;
  unsigned char got[4096];
  int fd;

  afx_make (&f, 3, 8 << 20, ARGS);
  afx_open_ok (&f);
  afx_write (&f, 0, f.cap, 7);
  afx_close (&f);
  md_bb_init (&t, 0);
  cr_assert_eq (md_bb_add (&t, DOFF + 96, 8), 0);
  afx_put_log (f.path[1], &t, false);
  afx_reopen (&f);
  cr_assert_eq (array_member_bad (f.a, 1, (DOFF + 96) * 512ULL, 4096, NULL),
                MD_BB_ALL);
  /* Stripe 0, left-symmetric: data chunk 1 (array bytes 64K..128K) is
   * member 1's; its page 0 is not listed.
   */
  afx_write (&f, 65536, 4096, 99);
  fd = open (f.path[1], O_RDONLY);
  cr_assert_geq (fd, 0);
  cr_assert_eq (pread (fd, got, sizeof got, DOFF * 512), (ssize_t) sizeof got);
  close (fd);
  cr_expect_eq (memcmp (got, f.model + 65536, sizeof got), 0,
                "the write skipped member 1's page beside its listed one");
  afx_verify (&f);
  for (uint64_t c = 0; c < 2; c++)
    for (uint64_t p = 0; p < 16; p++)
      if (p != 12)
        afx_write (&f, c * 65536 + p * 4096, 4096, 11 + (unsigned) p);
  afx_verify (&f);
  afx_close (&f);
  afx_open_ok (&f);
  afx_verify (&f);
  afx_cleanup (&f);
}

/* Member 1 lists two ranges, its bytes there stale, and the array grows
 * to four members, as md grows such an array (raid5.c analyse_stripe: a
 * device bad in a stripe is not in sync there, so the reshape computes
 * its block from the others; a good write of a listed block clears it,
 * R5_MadeGood).  Stopped before the reshape ran, it is assembled again
 * (md serves a reshape with bad blocks) and served right in the old
 * shape, the listed bytes left listed (the reshape rewrites them); then
 * the reshape: every byte reads right, the reshape's writes cleared the
 * listed bytes (all lie in the new shape's rows), and a check finds
 * every parity right.
 */
Test (array_badblocks, grow_reads_around_listed_blocks, .timeout = 120)
{
  struct array_err err;
  struct afx f;

  member1_lists_two_ranges (&f);
  grow_by_one (&f);
  afx_close (&f);
  f.cfg.members = 4;
  f.cfg.paths[3] = f.path[3];
  afx_reopen (&f);
  cr_assert (f.a->grow.active, "not assembled mid-grow");
  afx_verify (&f);
  cr_expect_eq (array_member_bad (f.a, 1, (DOFF + 100) * 512ULL, 4096, NULL),
                MD_BB_ALL, "rewritten in the old shape");
  cr_assert_eq (array_job_run (f.a, R5_JOB_RESHAPE, NULL, &err), 0, "%s",
                err.msg);
  cr_assert (!f.a->grow.active, "the reshape did not end");
  afx_verify (&f);
  cr_expect_eq (array_member_bad (f.a, 1, DOFF * 512ULL,
                                  (8 << 20) - DOFF * 512ULL, NULL),
                MD_BB_NONE, "the reshape's writes left listed bytes listed");
  cr_expect_eq (f.a->bb.listed, 0);
  afx_check_clean (&f);
  afx_cleanup (&f);
}

/* f filled, member 1 listing sector 8 past the data offset and member 2
 * sector2, both spoiled there, then reopened and growing by one member
 * (its reshape not run).
 */
static void
listed_then_growing (struct afx *f, unsigned sector2)
{
  afx_make (f, 3, 8 << 20, ARGS);
  afx_open_ok (f);
  afx_write (f, 0, f->cap, 3);
  afx_close (f);
  md_bb_init (&t, 0);
  cr_assert_eq (md_bb_add (&t, DOFF + 8, 8), 0);
  afx_put_log (f->path[1], &t, false);
  md_bb_init (&t, 0);
  cr_assert_eq (md_bb_add (&t, DOFF + sector2, 8), 0);
  afx_put_log (f->path[2], &t, false);
  afx_flip (f, 1, (DOFF + 8) * 512ULL, 0xff);
  afx_flip (f, 2, (DOFF + sector2) * 512ULL, 0xff);
  afx_reopen (f);
  grow_by_one (f);
}

/* The same, its reshape run to the end. */
static void
listed_then_grown (struct afx *f, unsigned sector2)
{
  struct array_err err;

  listed_then_growing (f, sector2);
  cr_assert_eq (array_job_run (f->a, R5_JOB_RESHAPE, NULL, &err), 0, "%s",
                err.msg);
  cr_assert (!f->a->grow.active);
}

/* Members 1 and 2 list pages of one stripe, member 1 page 1 and member 2
 * page 8 (sectors 8 and 64 past the data offset), both spoiled: md grows
 * it (a stripe_head is a page), and so does the reshape here, reading
 * each page around the member that lists it.
 */
Test (array_badblocks, grow_two_members_listed_in_one_stripe, .timeout = 120)
{
  struct afx f;

  listed_then_grown (&f, 64);
  afx_verify (&f);
  afx_check_clean (&f);
  afx_cleanup (&f);
}

/* The same page on members 1 and 2: old stripe 0's row at chunk offset
 * 4 KiB (left-symmetric, 3 members: data 0 on member 0, data 1 on member
 * 1, parity on member 2), so array bytes 69632+4096 (data 1) cannot be
 * computed.  md's reshape hangs there; this one moves the window with
 * those bytes lost: listed in the new shape on their member and on their
 * new row's parity (4 members: stripe 0, data 1 on member 1, parity on
 * member 3), so that they read as lost (EIO), before and after a start
 * again, while every other byte reads as written, data 0 of the old row
 * too; a check skips the row.
 */
Test (array_badblocks, grow_moves_a_row_two_members_list_as_lost,
      .timeout = 120)
{
  const uint64_t lost = 65536 + 4096;
  uint64_t doff;
  struct afx f;

  listed_then_grown (&f, 8);
  cr_expect (strstr (afx_log (), "reshape: array bytes 69632+4096 lost: "
                     "their old row (stripe 0, member offset 1052672) has "
                     "members 1 and 2 out"), "%s", afx_log ());
  doff = f.a->geom.data_offset;
  cr_expect_eq (array_member_bad (f.a, 1, doff + 4096, 4096, NULL),
                MD_BB_ALL, "member 1 does not list the lost page");
  cr_expect_eq (array_member_bad (f.a, 3, doff + 4096, 4096, NULL),
                MD_BB_ALL, "member 3 does not list its row's parity");
  cr_expect_eq (array_member_bad (f.a, 0, doff + 4096, 4096, NULL),
                MD_BB_NONE, "member 0 lists its page of the row");
  afx_verify_lost (&f, lost, 4096);
  afx_check_clean (&f);
  afx_close (&f);
  f.cfg.members = 4;
  f.cfg.paths[3] = f.path[3];
  afx_reopen_grown (&f);
  afx_verify_lost (&f, lost, 4096);
  afx_cleanup (&f);
}

/* The same row with the new member out of service (failed after the grow
 * began): moving the lost page would lose the new member's page of its
 * new row too, so the reshape stops at the window, saying why, and every
 * byte but the lost one still reads as written (the old shape, degraded).
 */
Test (array_badblocks, grow_over_a_lost_row_degraded_stops, .timeout = 120)
{
  struct array_err err;
  struct afx f;

  listed_then_growing (&f, 8);
  cr_assert_eq (array_fail (f.a, 3, &err), 0, "%s", err.msg);
  cr_assert_eq (array_job_run (f.a, R5_JOB_RESHAPE, NULL, &err), -EIO,
                "the reshape went on degraded over a lost row: %s", err.msg);
  cr_expect (strstr (err.msg, "array bytes lost: 69632+4096; with a member "
                     "out of service the window cannot move them"),
             "%s", err.msg);
  cr_assert (f.a->grow.active);
  afx_verify_lost (&f, 65536 + 4096, 4096);
  afx_cleanup (&f);
}

/* A listed page put right (array_rewrite_page, as bbpath.c does after a
 * request met it) is cleared by the time the rewrite returns, so that a
 * write planned meanwhile with the page listed (its member missing
 * there) no longer holds and plans again -- replayed in one thread.
 * (That the clear comes before the stripe lock is let go, so that such a
 * write waiting for the lock cannot slip in between, is the code's
 * order, which one thread cannot show.)  Then, with another member out
 * of service, a listed page is not rewritten from a row that cannot
 * compute it, and stays listed.
 */
Test (array_badblocks, page_put_right_is_cleared_and_replans_writes,
      .timeout = 120)
{
  struct afx f;
  struct array_err err;
  struct r5_range rg;
  struct r5_plan plan;
  struct wp_batch b;
  struct io_op failed;
  uint64_t page = (DOFF + 96) * 512ULL;

  afx_make (&f, 3, 8 << 20, ARGS);
  afx_open_ok (&f);
  afx_write (&f, 0, f.cap, 7);
  afx_close (&f);
  md_bb_init (&t, 0);
  cr_assert_eq (md_bb_add (&t, DOFF + 96, 8), 0);
  cr_assert_eq (md_bb_add (&t, DOFF + 128 + 96, 8), 0);
  afx_put_log (f.path[1], &t, false);
  afx_reopen (&f);

  r5_plan_init (&plan);
  rg = (struct r5_range) { .op = R5_OP_WRITE, .off = 65536 + 12 * 4096,
                           .len = 4096, .req_off = 65536 + 12 * 4096,
                           .missing = -1, .budget = f.a->pool.buf_bytes };
  b = (struct wp_batch) { .range = &rg, .plan = &plan, .geom = &f.a->geom,
                          .bb_version = f.a->bb.version, .bb_member = -1 };
  cr_assert_eq (wp_shape (f.a, &b, &err), 0, "%s", err.msg);
  cr_assert_eq (rg.missing, 1, "planned with member 1 missing there");
  cr_assert_eq (array_rewrite_page (f.a, 1, page, false, &failed), 0);
  cr_assert_eq (array_member_bad (f.a, 1, page, 4096, NULL), MD_BB_NONE);
  cr_assert (!wp_holds (f.a, &b), "a write planned with the page listed "
             "still held once the page was put right and its lock let go");
  r5_plan_free (&plan);

  cr_assert_eq (array_fail (f.a, 2, &err), 0, "%s", err.msg);
  cr_assert_eq (array_rewrite_page (f.a, 1, page + 65536, false, &failed), -ENODEV);
  cr_assert_eq (array_member_bad (f.a, 1, page + 65536, 4096, NULL),
                MD_BB_ALL);
  afx_cleanup (&f);
}

/* Rows bad on two members: a read of a chunk bad there fails, naming the
 * array bytes, and a write there too; a read of the row's chunk on the
 * third member is served; the rest of the array reads right and nothing
 * of those rows is rewritten.
 */
Test (array_badblocks, row_bad_on_two_members_is_lost, .timeout = 120)
{
  struct afx f;
  struct array_err err;
  unsigned char buf[4096];
  uint64_t row = 3;                   /* stripe 3: parity on member 2 */

  afx_make (&f, 3, 8 << 20, ARGS);
  afx_open_ok (&f);
  afx_write (&f, 0, f.cap, 9);
  afx_close (&f);
  md_bb_init (&t, 0);
  cr_assert_eq (md_bb_add (&t, DOFF + row * 128 + 16, 8), 0);
  afx_put_log (f.path[0], &t, false);
  afx_put_log (f.path[2], &t, false);
  afx_reopen (&f);
  /* left-symmetric, stripe 3: data 0 on member 0 (3 % 3 = 0: parity on
   * member 2), data 1 on member 1.
   */
  cr_expect_lt (array_read (f.a, buf, 4096, row * 131072 + 8192, &err), 0,
                "a read of the lost row of member 0 succeeded");
  cr_expect (strstr (err.msg, "are lost") && strstr (err.msg, "members 0 "
             "and 2"), "%s", err.msg);
  cr_expect_eq (array_read (f.a, buf, 4096, row * 131072 + 65536 + 8192,
                            &err), 0, "member 1's chunk: %s", err.msg);
  cr_expect_eq (memcmp (buf, f.model + row * 131072 + 65536 + 8192, 4096), 0);
  cr_expect_lt (array_write (f.a, buf, 4096, row * 131072 + 65536 + 8192, 0,
                             &err), 0, "a write of the lost row succeeded");
  cr_expect (strstr (err.msg, "cannot be written: their row") &&
             strstr (err.msg, "md fails the write too"), "%s", err.msg);
  cr_expect_eq (array_read (f.a, buf, 4096, row * 131072 + 4096, &err), 0,
                "the page before the lost row: %s", err.msg);
  cr_expect_eq (memcmp (buf, f.model + row * 131072 + 4096, 4096), 0);
  cr_expect_eq (afx_status (&f, "counters", "lost_requests"), 2);
  cr_expect (array_member_bad (f.a, 0, (DOFF + row * 128 + 16) * 512ULL, 512,
                               NULL) != MD_BB_NONE, "cleared");
  afx_cleanup (&f);
}

Test (array_badblocks, bit_over_an_empty_list_is_dropped, .timeout = 120)
{
  struct afx f;

  afx_make (&f, 3, 8 << 20, ARGS);
  md_bb_init (&t, 0);
  afx_put_log (f.path[0], &t, true);
  cr_assert (afx_has_bb_bit (f.path[0]));
  afx_open_ok (&f);
  cr_expect_eq (array_member_bad (f.a, 0, 0, 8 << 20, NULL), MD_BB_NONE);
  afx_write (&f, 0, 65536, 5);
  afx_close (&f);
  for (unsigned i = 0; i < 3; i++)
    cr_expect (!afx_has_bb_bit (f.path[i]), "member %u keeps feature 0x8", i);
  afx_cleanup (&f);
}

Test (array_badblocks, corrupt_log_refused, .timeout = 120)
{
  struct afx f;
  struct array_err err;

  afx_make (&f, 3, 8 << 20, ARGS);
  md_bb_init (&t, 0);
  cr_assert_eq (md_bb_add (&t, (8 << 11) - 4, 8), 0);   /* past the end */
  afx_put_log (f.path[2], &t, false);
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
  afx_open_ok (&f);
  afx_close (&f);
  md_bb_init (&t, 0);
  cr_assert_eq (md_bb_add (&t, DOFF + 100, 8), 0);
  afx_put_log (f.path[1], &t, false);
  afx_reopen (&f);
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
  cr_expect (!afx_has_bb_bit (fresh), "the new member says it has bad blocks");
  unlink (fresh);
  afx_cleanup (&f);
}

/* Log lines name every member of a mask (three listing a row were named
 * by the lowest and highest alone).
 */
Test (array_badblocks, members_named)
{
  char buf[64];

  cr_expect_str_eq (bb_members_named (0x2, buf, sizeof buf), "member 1");
  cr_expect_str_eq (bb_members_named (0x6, buf, sizeof buf),
                    "members 1 and 2");
  cr_expect_str_eq (bb_members_named (0xb, buf, sizeof buf),
                    "members 0, 1 and 3");
  cr_expect_str_eq (bb_members_named (0x1f, buf, 12), "members 0, ");
}
