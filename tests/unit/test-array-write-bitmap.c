/* tests/unit/test-array-write-bitmap.c -- writes with md's write-intent
 * bitmap, through the array layer without nbdkit (arrayfx.h).  Asserts:
 * writes while a member is out mark the bitmap; re-adding the member
 * rebuilds what the bitmap marks and not the rest (less than the whole
 * member, more than nothing); afterwards every byte reads as written
 * and a check finds parity right everywhere -- also in the region the
 * re-add passed over, which the member had kept.
 */
#include <config.h>

#include <criterion/criterion.h>

#include "tests/unit/arrayfx.h"

/* Members of 136 MiB: mdadm's bitmap chunk is 64 MiB here, so the
 * bitmap has three bits and a re-add can pass over two of them.
 */
#define MEMBER (136ull << 20)

Test (array_bitmap, readd_rebuilds_what_the_bitmap_marks, .timeout = 120)
{
  struct afx f;
  struct array_err err;
  struct array_job_status st;
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
  cr_assert_eq (array_job_run (f.a, R5_JOB_CHECK, NULL, &err), 0, "%s",
                err.msg);
  array_job_status (f.a, &st);
  cr_assert_eq (st.last_mismatches, 0, "mismatch_cnt %lu after the re-add",
                (unsigned long) st.last_mismatches);
  afx_cleanup (&f);
}
