/* tests/unit/test-array-write-bitmap.c -- writes with md's write-intent
 * bitmap, through the array layer without nbdkit (arrayfx.h).  Asserts:
 * writes while a member is out mark the bitmap; re-adding the member
 * rebuilds what the bitmap marks and not the rest (less than the whole
 * member, more than nothing); afterwards every byte reads as written
 * and a check finds parity right everywhere -- also in the region the
 * re-add passed over, which the member had kept.  A write during a grow
 * marks the stripes of the shape it is written in.
 */
#include <config.h>

#include <limits.h>
#include <string.h>

#include <criterion/criterion.h>

#include "array/meta.h"
#include "array/object.h"
#include "tests/unit/arrayfx.h"

/* Members of 136 MiB: mdadm's bitmap chunk is 64 MiB here, so the
 * bitmap has three bits and a re-add can pass over two of them.
 */
#define MEMBER (136ull << 20)

Test (array_bitmap, readd_rebuilds_what_the_bitmap_marks, .timeout = 120)
{
  struct afx f;
  struct array_err err;
  uint64_t rebuilt, member_data;

  afx_make (&f, 3, MEMBER, "--chunk 64K --bitmap internal");
  afx_open_ok (&f);
  afx_write (&f, 0, 4 << 20, 4);
  afx_write (&f, 200 << 20, 1 << 20, 5);
  afx_close (&f);             /* stopped clean: the bits are cleared */
  afx_open_ok (&f);
  cr_assert_eq (array_fail (f.a, 1, &err), 0, "%s", err.msg);
  /* Degraded: only the first 64 MiB of each member is written. */
  afx_write (&f, 1 << 20, 2 << 20, 6);
  cr_assert_eq (array_readd_start (f.a, 1, NULL, &err), 0, "%s", err.msg);
  cr_assert_eq (array_member_state (f.a, 1), MEMBER_REBUILDING);
  cr_assert_eq (array_job_run (f.a, R5_JOB_REBUILD, NULL, &err), 0, "%s",
                err.msg);
  cr_assert_eq (array_member_state (f.a, 1), MEMBER_ACTIVE);
  rebuilt = afx_status (&f, "counters", "rebuilt_bytes");
  member_data = array_geom (f.a)->stripes * array_geom (f.a)->chunk;
  cr_assert (rebuilt > 0 && rebuilt <= (64ull << 20),
             "re-add rebuilt %lu bytes of a member's %lu: only the first "
             "bitmap chunk was written while it was out",
             (unsigned long) rebuilt, (unsigned long) member_data);
  afx_verify (&f);
  afx_check_clean (&f);
  afx_cleanup (&f);
}

/* A member whose write of the clean superblock fails -- its link dropped
 * just then -- holds every byte (the members were all synced before the
 * bits were cleared) and the events before that write.  md records
 * events_cleared as the events of that moment (bitmap_endwrite), so the
 * member is re-added by its bitmap, not refused as if the bits it needs
 * were gone.
 */
Test (array_bitmap, readd_after_losing_the_clean_write, .timeout = 120)
{
  struct afx f;
  struct array_err err;
  int after = 0;

  afx_make (&f, 3, MEMBER, "--chunk 64K --bitmap internal");
  afx_open_ok (&f);
  afx_write (&f, 0, 1 << 20, 7);
  /* Member 1 takes the flush before the clean superblocks, then fails:
   * the close's clean write is the first write it loses.
   */
  afx_log_clear ();
  array_inject_failure (f.a, 1, 1);
  afx_close (&f);
  cr_assert (strstr (afx_log (), "member 1") != NULL,
             "member 1 did not fail at the close: %s", afx_log ());
  afx_open_ok (&f);
  cr_assert_neq (array_member_state (f.a, 1), MEMBER_ACTIVE,
                 "member 1 came back active on its own");
  afx_write (&f, 4 << 20, 1 << 20, 8);
  after = array_readd_start (f.a, 1, NULL, &err);
  cr_assert_eq (after, 0, "re-add refused: %s", err.msg);
  cr_assert_eq (array_job_run (f.a, R5_JOB_REBUILD, NULL, &err), 0, "%s",
                err.msg);
  cr_assert_eq (array_member_state (f.a, 1), MEMBER_ACTIVE);
  afx_verify (&f);
  afx_cleanup (&f);
}

/* A grow with a bitmap: a write ahead of the reshape line runs in the old
 * shape and marks its old-shape stripes' bits (md marks the stripe_head
 * of the shape it writes in), so that after a crash the resync, which
 * visits only marked regions, finds it -- and the new shape's, not the
 * regions between.  Members of 400 MiB, 64 MiB bitmap chunks: array byte
 * 768 MiB is at member offset 384 MiB in the old shape (two data chunks
 * a stripe; bit 6) and 256 MiB in the new (three; bit 4); bit 5 between.
 */
Test (array_bitmap, grow_marks_the_shape_written, .timeout = 120)
{
  const uint64_t member = 400ull << 20, at = 768ull << 20;
  char path[PATH_MAX + 32];
  const char *paths[1] = { path };
  struct array_err err;
  uint64_t old_stripe = at / 2 / 65536, new_stripe = at / 3 / 65536;
  uint64_t between = (320ull << 20) / 65536;
  struct afx f;

  afx_make (&f, 3, member, "--chunk 64K --bitmap internal --assume-clean");
  afx_open_ok (&f);
  afx_write (&f, 0, 65536, 2);
  afx_close (&f);             /* stopped clean: the bits are cleared */
  afx_open_ok (&f);
  afx_new_member (&f, path, sizeof path, member);
  cr_assert (!meta_stripe_marked (f.a, old_stripe) &&
             !meta_stripe_marked (f.a, new_stripe), "bits set at open");
  cr_assert_eq (array_grow_start (f.a, paths, 1, false, &err), 0, "%s",
                err.msg);
  cr_assert (!meta_stripe_marked (f.a, old_stripe) &&
             !meta_stripe_marked (f.a, new_stripe), "bits set before");
  afx_write (&f, at, 65536, 3);
  cr_assert (meta_stripe_marked (f.a, old_stripe),
             "a write in the old shape left its stripe's bit clear");
  cr_assert (!meta_stripe_marked (f.a, between),
             "a write marked the regions between its two shapes' stripes");
  cr_assert_eq (array_job_run (f.a, R5_JOB_RESHAPE, NULL, &err), 0, "%s",
                err.msg);
  cr_assert (!f.a->grow.active, "the reshape did not end");
  afx_verify (&f);
  afx_check_clean (&f);
  afx_cleanup (&f);
}
