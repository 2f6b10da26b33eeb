/* tests/unit/test-array-write-integrity.c -- writes with the integrity
 * record (integrity=FILE), through the array layer without nbdkit
 * (arrayfx.h).  Asserts: a data unit spoiled on its member behind the
 * array's back reads right through the array (the read fails its
 * checksum and is healed), the member's bytes are put right on the
 * member itself, and status counts one failed and one healed unit.
 */
#include <config.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "tests/unit/arrayfx.h"

Test (array_integrity, spoiled_unit_read_right_and_healed, .timeout = 120)
{
  struct afx f;
  char record[PATH_MAX + 16];
  unsigned char before[4096], after[4096], *want;
  uint64_t doff;
  int fd;

  afx_make (&f, 3, 8 << 20, "--chunk 64K --bitmap none --assume-clean");
  snprintf (record, sizeof record, "%s/record", f.dir);
  f.cfg.integrity = record;
  afx_open_ok (&f);
  afx_write (&f, 0, f.cap, 7);
  doff = array_geom (f.a)->data_offset;
  cr_assert_not_null (want = malloc (f.cap));
  memcpy (want, f.model, f.cap);
  afx_close (&f);
  /* Array bytes [0, 64K) are stripe 0's first chunk, on member 0. */
  fd = open (f.path[0], O_RDONLY);
  cr_assert_eq (pread (fd, before, sizeof before, (off_t) doff + 8192), 4096);
  close (fd);
  afx_flip (&f, 0, doff + 8192 + 17, 0x81);
  afx_open_ok (&f);           /* the model is read through the array */
  cr_assert_arr_eq (f.model, want, f.cap, "the array read a spoiled unit");
  free (want);
  cr_assert_eq (afx_status (&f, "integrity", "healed_units"), 1,
                "healed units");
  cr_assert_geq (afx_status (&f, "integrity", "failed_units"), 1);
  fd = open (f.path[0], O_RDONLY);
  cr_assert_eq (pread (fd, after, sizeof after, (off_t) doff + 8192), 4096);
  close (fd);
  cr_assert_arr_eq (after, before, sizeof before,
                    "the member's unit was not put right");
  afx_cleanup (&f);
}
