/* tests/unit/test-array-write-ppl.c -- writes with md's partial parity
 * log (--consistency-policy ppl), through the array layer without nbdkit
 * (arrayfx.h).  Asserts: writes to part of a stripe are logged before
 * they go out (status counts more log writes and entries after them);
 * every byte reads back as written; a check finds parity right.
 */
#include <config.h>

#include <criterion/criterion.h>

#include "tests/unit/arrayfx.h"

Test (array_ppl, partial_writes_are_logged, .timeout = 120)
{
  struct afx f;
  uint64_t sd, units, entries;

  afx_make (&f, 3, 8 << 20,
            "--chunk 64K --consistency-policy ppl --assume-clean");
  afx_open_ok (&f);
  sd = array_geom (f.a)->stripe_data;
  afx_write (&f, 0, 4 * sd, 8);           /* whole stripes */
  units = afx_status (&f, "ppl", "log_writes");
  entries = afx_status (&f, "ppl", "entries");
  afx_write (&f, 5 * sd + 4096, 8192, 9); /* part of stripe 5 */
  afx_write (&f, 9 * sd + 512, 1536, 10); /* sectors of stripe 9 */
  cr_assert_geq (afx_status (&f, "ppl", "log_writes"), units + 2,
                 "partial writes went out unlogged");
  cr_assert_geq (afx_status (&f, "ppl", "entries"), entries + 2);
  afx_verify (&f);
  afx_check_clean (&f);
  afx_cleanup (&f);
}
