/* tests/unit/test-array-write-ppl.c -- writes with md's partial parity
 * log (--consistency-policy ppl), through the array layer without nbdkit
 * (arrayfx.h).  Asserts: writes to part of a stripe are logged before
 * they go out (status counts more log writes and entries after them);
 * every byte reads back as written; a check finds parity right.  A
 * replacement's log is emptied before it joins.
 */
#include <config.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "array/object.h"
#include "raid/ppl.h"
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

/* f: a ppl array filled, then a write to part of stripe (whose parity,
 * and so its log entry, is on slot), stopped; slot's member file copied
 * to copy (size bytes) in f's folder; opened again, nothing read.
 */
static void
logged_and_copied (struct afx *f, uint64_t stripe, unsigned slot, char *copy,
                   size_t size)
{
  uint64_t sd;

  afx_make (f, 3, 8 << 20,
            "--chunk 64K --consistency-policy ppl --assume-clean");
  afx_open_ok (f);
  sd = array_geom (f->a)->stripe_data;
  afx_write (f, 0, f->cap, 1);
  afx_write (f, stripe * sd + 4096, 4096, 2);
  afx_close (f);
  snprintf (copy, size, "%s/copy.img", f->dir);
  afx_copy_file (f->path[slot], copy);
  afx_reopen (f);
}

/* The header of the log in the area of the member file at path
 * (signature and area as f's array has them, while open).
 */
static struct ppl_header
log_header (const char *path, uint64_t area_off, uint32_t signature)
{
  char block[PPL_HEADER_SIZE];
  struct ppl_header h;
  int fd = open (path, O_RDONLY);

  cr_assert_geq (fd, 0, "%s", path);
  cr_assert_eq (pread (fd, block, sizeof block, (off_t) area_off),
                (ssize_t) sizeof block);
  close (fd);
  if (ppl_header_decode (block, signature, &h, NULL, 0) < 0)
    h.entries_count = 0;
  return h;
}

/* A replacement that held a log of this array before (a copy of a
 * member, a member taken out and used again) starts with an empty one,
 * as mdadm's write_init_ppl leaves every device it adds: otherwise a
 * dirty start after the replace recovers the stale entries into today's
 * stripes and records their wrong parity as clean.
 */
Test (array_ppl, a_replacement_starts_with_an_empty_log, .timeout = 120)
{
  struct afx f;
  struct array_err err;
  char old[PATH_MAX + 32];
  uint64_t sd, area;
  uint32_t sig;

  logged_and_copied (&f, 1, 1, old, sizeof old);   /* stripe 1: parity on 1 */
  sd = array_geom (f.a)->stripe_data;
  area = f.a->ppl.area_off;
  sig = f.a->ppl.signature;
  cr_assert_gt (log_header (old, area, sig).entries_count, 0,
                "no stale entry to start from");
  afx_write (&f, sd, sd, 3);              /* stripe 1 anew, all of it */
  cr_assert_eq (array_replace_start (f.a, 1, old, true, &err), 0, "%s",
                err.msg);
  cr_assert_eq (log_header (old, area, sig).entries_count, 0,
                "the replacement kept its stale log");
  cr_assert_eq (array_job_run (f.a, R5_JOB_REPLACE, NULL, &err), 0, "%s",
                err.msg);
  afx_close (&f);
  strcpy (f.path[1], old);                /* the slot's member now */
  afx_mark_dirty (&f, 0);
  afx_reopen (&f);
  afx_verify (&f);
  afx_check_clean (&f);
  afx_cleanup (&f);
}

/* Bytes [off, off + len) of the file from into the file to, same place. */
static void
copy_range (const char *from, const char *to, uint64_t off, size_t len)
{
  char *buf = malloc (len);
  int in = open (from, O_RDONLY), out = open (to, O_WRONLY);

  cr_assert (buf && in >= 0 && out >= 0, "%s -> %s", from, to);
  cr_assert_eq (pread (in, buf, len, (off_t) off), (ssize_t) len);
  cr_assert_eq (pwrite (out, buf, len, (off_t) off), (ssize_t) len);
  close (in);
  close (out);
  free (buf);
}

/* An entry in slot 1's log for parity on slot 0 (a log area copied from
 * another member, stale): md stops there (BUG_ON); here it is not
 * recovered but counted as not usable, so the array resyncs, rather
 * than writing parity from stale partial parity onto slot 0.
 */
Test (array_ppl, an_entry_for_another_slots_parity_is_refused,
      .timeout = 120)
{
  struct afx f;
  struct array_err err;
  char saved[PATH_MAX + 32];
  uint64_t sd, area, len;

  logged_and_copied (&f, 2, 0, saved, sizeof saved); /* parity on 0 */
  sd = array_geom (f.a)->stripe_data;
  area = f.a->ppl.area_off;
  len = f.a->ppl.area_len;
  afx_write (&f, 2 * sd, sd, 3);          /* stripe 2 anew, all of it */
  afx_close (&f);
  copy_range (saved, f.path[1], area, len);
  afx_mark_dirty (&f, 0);
  afx_reopen (&f);
  cr_assert_eq (afx_status (&f, "ppl", "not_usable_at_start"), 1,
                "slot 1's entry for slot 0's parity was recovered");
  cr_assert_eq (array_job_run (f.a, R5_JOB_RESYNC, NULL, &err), 0, "%s",
                err.msg);
  afx_verify (&f);
  afx_check_clean (&f);
  afx_cleanup (&f);
}
