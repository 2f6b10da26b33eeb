/* tests/unit/test-array-write-integrity.c -- writes with the integrity
 * record (integrity=FILE), through the array layer without nbdkit
 * (arrayfx.h).  Asserts: a data unit spoiled on its member behind the
 * array's back reads right through the array (the read fails its
 * checksum and is healed), the member's bytes are put right on the
 * member itself, and status counts one failed and one healed unit; a
 * read that meets a write in flight on a degraded array succeeds; a
 * bitmap re-add leaves its slot's unknown regions unknown.
 */
#include <config.h>

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "array/object.h"
#include "array/stripe_lock.h"
#include "raid/badblocks.h"
#include "tests/unit/arrayfx.h"

/* f: 3 members of 8 MiB, 64K chunks, made with bitmap (internal or
 * none), served with the integrity record at record (in f's folder, size
 * bytes of room), filled.
 */
static void
with_bitmap_and_record (struct afx *f, const char *bitmap, char *record,
                        size_t size)
{
  char args[96];

  snprintf (args, sizeof args, "--chunk 64K --bitmap %s --assume-clean",
            bitmap);
  afx_make (f, 3, 8 << 20, args);
  snprintf (record, size, "%s/record", f->dir);
  f->cfg.integrity = record;
  afx_open_ok (f);
  afx_write (f, 0, f->cap, 7);
}

static void
filled_with_record (struct afx *f, char *record, size_t size)
{
  with_bitmap_and_record (f, "none", record, size);
}

Test (array_integrity, spoiled_unit_read_right_and_healed, .timeout = 120)
{
  struct afx f;
  char record[PATH_MAX + 16];
  unsigned char before[4096], after[4096], *want;
  uint64_t doff;
  int fd;

  filled_with_record (&f, record, sizeof record);
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

/* A read that needs no other member takes no stripe lock, and a write
 * records its checksums before its bytes land (integrity.h): a read may
 * meet the new checksum over the old bytes, and the heal that follows
 * waits for the stripe and looks again.  Degraded (member 2 out), it
 * cannot read the row: it looks at the unit alone, finds it right, and
 * the read succeeds.  Made here by hand: the record says new bytes, the
 * member holds the old ones, and the stripe is held while the reader
 * fails its check and waits for it; then the new bytes land and the
 * stripe is let go.
 */
struct reader {
  struct afx *f;
  uint64_t at;
  unsigned char got[4096];
  int r;
};

static void *
read_unit (void *arg)
{
  struct reader *rd = arg;
  struct array_err err;

  rd->r = array_read (rd->f->a, rd->got, sizeof rd->got, rd->at, &err);
  return NULL;
}

static void
member_io (struct afx *f, unsigned m, void *buf, uint64_t off, bool write)
{
  int fd = open (f->path[m], O_RDWR);

  cr_assert_geq (fd, 0);
  cr_assert_eq (write ? pwrite (fd, buf, 4096, (off_t) off)
                      : pread (fd, buf, 4096, (off_t) off), 4096);
  close (fd);
}

Test (array_integrity, read_meeting_a_write_in_flight_degraded,
      .timeout = 120)
{
  struct afx f;
  struct reader rd = { .f = &f, .at = 8192 };
  struct stripe_range held;
  struct array_err err;
  char record[PATH_MAX + 16];
  unsigned char old[4096], new[4096];
  uint64_t unit;
  pthread_t t;

  filled_with_record (&f, record, sizeof record);
  /* Array bytes [8K, 12K): stripe 0's first chunk, on member 0. */
  unit = array_geom (f.a)->data_offset + 8192;
  member_io (&f, 0, old, unit, false);
  afx_write (&f, 8192, 4096, 9);
  member_io (&f, 0, new, unit, false);
  member_io (&f, 0, old, unit, true);         /* the new bytes not landed */
  cr_assert_eq (array_fail (f.a, 2, &err), 0, "%s", err.msg);
  stripe_lock_range (&f.a->locks, 0, 0, STRIPE_EXCLUSIVE, &held);
  cr_assert_eq (pthread_create (&t, NULL, read_unit, &rd), 0);
  usleep (300000);                            /* it fails its check, waits */
  member_io (&f, 0, new, unit, true);         /* they land */
  stripe_unlock_range (&f.a->locks, &held);
  cr_assert_eq (pthread_join (t, NULL), 0);
  cr_expect_eq (rd.r, 0, "the read failed: %s", afx_log ());
  cr_expect_arr_eq (rd.got, new, sizeof new, "the read is not the new bytes");
  afx_cleanup (&f);
}

/* In the record at path (layout l, units a member): slot's region 0
 * marked, as a crash leaves it, and with flip its checksums made wrong,
 * as a power cut that lost the table's pages may leave them.
 */
static void
mark_region0 (const char *path, const struct r5i_layout *l, uint64_t units,
              unsigned slot, bool flip)
{
  uint64_t bit = r5i_bit (l, slot, 0);
  int fd = open (path, O_RDWR);
  uint32_t crc;

  cr_assert_geq (fd, 0, "%s", path);
  cr_assert_eq (pwrite (fd, &(uint8_t) { 1u << (bit % 8) }, 1,
                        (off_t) (l->bits_off + bit / 8)), 1);
  for (uint64_t u = 0; flip && u < R5I_REGION_UNITS && u < units; u++) {
    off_t at = (off_t) (l->table_off + (slot * units + u) * 4);

    cr_assert_eq (pread (fd, &crc, 4, at), 4);
    crc ^= 1;
    cr_assert_eq (pwrite (fd, &crc, 4, at), 4);
  }
  close (fd);
}

/* A bitmap re-add rewrites what the bitmap marks and nothing more: a
 * region of its slot whose checksums were unknown at the start (marked
 * in the record while the member was not in service) stays unknown, and
 * the next start computes it from the member -- rather than trusting
 * checksums from before it (a power cut that lost the table's pages
 * leaves them so).  Slot 1's region 0 is set up that way by hand.
 */
Test (array_integrity, a_readd_leaves_unknown_regions_unknown,
      .timeout = 120)
{
  struct afx f;
  struct array_err err;
  char record[PATH_MAX + 16];
  struct r5i_layout l;
  uint64_t units;

  with_bitmap_and_record (&f, "internal", record, sizeof record);
  l = f.a->integrity.l;
  units = f.a->integrity.h.units;
  afx_close (&f);
  mark_region0 (record, &l, units, 1, true);
  f.cfg.paths[1] = NULL;      /* slot 1 out: its region 0 unknown */
  afx_open_ok (&f);
  cr_assert_eq (array_readd_start (f.a, 1, f.path[1], &err), 0, "%s",
                err.msg);
  cr_assert_eq (array_job_run (f.a, R5_JOB_REBUILD, NULL, &err), 0, "%s",
                err.msg);
  afx_verify (&f);
  cr_assert_eq (afx_status (&f, "integrity", "failed_units"), 0,
                "slot 1's old checksums were trusted after the re-add");
  afx_close (&f);
  f.cfg.paths[1] = f.path[1];
  afx_reopen (&f);
  afx_verify (&f);
  cr_assert_eq (afx_status (&f, "integrity", "failed_units"), 0,
                "the next start did not compute the region again");
  afx_cleanup (&f);
}

static struct md_bb_table listed;     /* 8 KiB: not on Criterion's stack */

/* f filled with a record (filled_with_record), then slot 1's log lists
 * page 12 of stripe 0's row (array bytes 64K + 48K), opened again:
 * returns that page's member offset.
 */
static uint64_t
slot1_lists_page12 (struct afx *f, char *record, size_t size)
{
  uint64_t page;

  filled_with_record (f, record, size);
  page = array_geom (f->a)->data_offset + 12 * 4096;
  afx_close (f);
  md_bb_init (&listed, 0);
  cr_assert_eq (md_bb_add (&listed, page / 512, 8), 0);
  afx_put_log (f->path[1], &listed, false);
  afx_reopen (f);
  return page;
}

/* Slot 1 lists page 12 of stripe 0's row (array bytes 64K + 48K), and a
 * client writes it: the write goes around slot 1 there (computed from
 * the rest of the row), so the record's checksum of that unit is not the
 * write's.  Putting the page right (bbpath.c, after the write) computes
 * it from its row, which vouches for it, and the record takes its
 * checksum: the page is no longer listed, and every read of it, once
 * again from slot 1 itself, is right and passes its checksum.
 */
Test (array_integrity, a_listed_page_written_around_is_put_right,
      .timeout = 120)
{
  struct afx f;
  char record[PATH_MAX + 16];
  uint64_t page;

  page = slot1_lists_page12 (&f, record, sizeof record);
  cr_assert_eq (array_member_bad (f.a, 1, page, 4096, NULL), MD_BB_ALL);
  afx_write (&f, 65536 + 12 * 4096, 4096, 21);
  cr_assert_eq (array_member_bad (f.a, 1, page, 4096, NULL), MD_BB_NONE,
                "the page written around was not put right: %s", afx_log ());
  afx_verify (&f);
  afx_close (&f);
  afx_open_ok (&f);
  cr_assert_eq (afx_status (&f, "integrity", "failed_units"), 0);
  afx_cleanup (&f);
}

/* The same page, slot 1 having failed a write (md's WriteErrorSeen: its
 * listed pages are not rewritten), so that its checksum stays from
 * before the write around it; then slot 1 is replaced.  The copy
 * computes the page from its row, which vouches for it, and the record
 * takes its checksum for the slot: once the replacement holds the slot,
 * the page reads right from it and passes its checksum.
 */
Test (array_integrity, a_listed_page_copied_by_a_replace_is_recorded,
      .timeout = 120)
{
  struct afx f;
  struct array_err err;
  char record[PATH_MAX + 16], fresh[PATH_MAX + 32];
  uint64_t page;

  page = slot1_lists_page12 (&f, record, sizeof record);
  f.a->bb.write_error[1] = true;
  afx_write (&f, 65536 + 12 * 4096, 4096, 22);
  cr_assert_eq (array_member_bad (f.a, 1, page, 4096, NULL), MD_BB_ALL);
  afx_new_member (&f, fresh, sizeof fresh, 8 << 20);
  cr_assert_eq (array_replace_start (f.a, 1, fresh, false, &err), 0, "%s",
                err.msg);
  cr_assert_eq (array_job_run (f.a, R5_JOB_REPLACE, NULL, &err), 0, "%s",
                err.msg);
  cr_assert_str_eq (array_member_path (f.a, 1), fresh);
  afx_verify (&f);
  cr_assert_eq (afx_status (&f, "integrity", "failed_units"), 0,
                "the replacement's copy of the listed page fails the record");
  afx_cleanup (&f);
}

/* A unit whose checksum is not known vouches for nothing: slot 0 comes
 * back by a bitmap re-add with its region 0 unknown, its unit in the row
 * of slot 1's listed page spoiled behind the array's back; putting the
 * listed page right would compute it from that unit, so it is refused
 * (what the row computes fails the page's own checksum) and the page
 * stays listed, its checksum as it was.
 */
Test (array_integrity, an_unknown_unit_vouches_for_nothing, .timeout = 120)
{
  struct afx f;
  struct array_err err;
  struct io_op failed;
  char record[PATH_MAX + 16];
  struct r5i_layout l;
  uint64_t units, page;

  with_bitmap_and_record (&f, "internal", record, sizeof record);
  l = f.a->integrity.l;
  units = f.a->integrity.h.units;
  page = array_geom (f.a)->data_offset + 12 * 4096;
  afx_close (&f);
  mark_region0 (record, &l, units, 0, false);
  md_bb_init (&listed, 0);
  cr_assert_eq (md_bb_add (&listed, page / 512, 8), 0);
  afx_put_log (f.path[1], &listed, false);
  f.cfg.paths[0] = NULL;      /* slot 0 out: its region 0 unknown */
  afx_reopen (&f);
  cr_assert_eq (array_readd_start (f.a, 0, f.path[0], &err), 0, "%s",
                err.msg);
  cr_assert_eq (array_job_run (f.a, R5_JOB_REBUILD, NULL, &err), 0, "%s",
                err.msg);
  afx_flip (&f, 0, page + 100, 0x40);
  cr_assert_lt (array_rewrite_page (f.a, 1, page, false, &failed), 0,
                "slot 1's listed page was rewritten from a spoiled row");
  cr_assert_eq (array_member_bad (f.a, 1, page, 4096, NULL), MD_BB_ALL);
  afx_cleanup (&f);
}
