/* tests/unit/test-array-assembly.c -- assembly decisions through the
 * array layer without nbdkit (arrayfx.h), as md makes them.  Asserts: a
 * member put back from an old copy (behind by more than md's one event)
 * is left out -- refused without run=, assembled degraded with it; a
 * member of another array is refused by name; disk=missing assembles
 * degraded with that slot missing; the same members in another order
 * assemble with each in its own slot; an array in the middle of a grow
 * (md's reshape fields in every superblock) is served, with a bitmap
 * or without, its reshape resumed at the recorded line with the old size
 * served -- unless it keeps a partial parity log: then it is refused
 * with a line that says so, and its members are left as they were.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "array/object.h"
#include "array/state.h"
#include "raid/mdbitmap.h"
#include "raid/mdsb.h"
#include "tests/unit/arrayfx.h"

#define ARGS "--chunk 64K --bitmap none --assume-clean"

Test (array_assembly, stale_member_left_out, .timeout = 120)
{
  struct afx f;
  struct array_err err;
  char old[PATH_MAX + 16];

  afx_make (&f, 3, 8 << 20, ARGS);
  snprintf (old, sizeof old, "%s/old.img", f.dir);
  afx_copy_file (f.path[1], old);
  for (unsigned round = 0; round < 2; round++) {   /* events move on */
    afx_open_ok (&f);
    afx_write (&f, round << 20, 65536, 11 + round);
    afx_close (&f);
  }
  afx_copy_file (old, f.path[1]);
  unlink (old);
  cr_assert_lt (afx_open (&f, &err), 0, "a stale member was taken");
  cr_assert (strstr (err.msg, "usable"), "%s", err.msg);
  f.cfg.run = true;
  afx_open_ok (&f);
  cr_assert_neq (array_member_state (f.a, 1), MEMBER_ACTIVE,
                 "the stale member is in service");
  cr_assert_eq (array_member_state (f.a, 0), MEMBER_ACTIVE);
  afx_cleanup (&f);
}

Test (array_assembly, member_of_another_array_refused, .timeout = 120)
{
  struct afx f, g;
  struct array_err err;

  afx_make (&f, 3, 8 << 20, ARGS);
  afx_make (&g, 3, 8 << 20, ARGS);
  f.cfg.paths[2] = g.path[2];
  cr_assert_lt (afx_open (&f, &err), 0, "another array's member was taken");
  cr_assert (strstr (err.msg, "another array"), "%s", err.msg);
  afx_cleanup (&f);
  afx_cleanup (&g);
}

Test (array_assembly, missing_and_reordered, .timeout = 120)
{
  struct afx f;

  afx_make (&f, 3, 8 << 20, ARGS);
  f.cfg.paths[2] = NULL;
  afx_open_ok (&f);
  cr_assert_eq (array_member_state (f.a, 2), MEMBER_MISSING);
  cr_assert_eq (array_member_state (f.a, 0), MEMBER_ACTIVE);
  afx_close (&f);
  f.cfg.paths[0] = f.path[2];
  f.cfg.paths[1] = f.path[0];
  f.cfg.paths[2] = f.path[1];
  afx_open_ok (&f);
  for (unsigned i = 0; i < 3; i++) {
    cr_assert_eq (array_member_state (f.a, i), MEMBER_ACTIVE);
    cr_assert_str_eq (array_member_path (f.a, i), f.path[i],
                      "slot %u is %s", i, array_member_path (f.a, i));
  }
  afx_cleanup (&f);
}

/* Member i's superblock made to say a grow by one member is under way
 * (raid/reshape.h): the data offset moved down by 384 sectors, the line
 * one new stripe in.
 */
static void
mark_growing (const char *path)
{
  struct md_sb sb;

  afx_sb_read (path, &sb);
  sb.feature_map |= MD_FEATURE_RESHAPE_ACTIVE | MD_FEATURE_NEW_OFFSET;
  sb.new_level = 5;
  sb.new_layout = sb.layout;
  sb.new_chunk = sb.chunksize;
  sb.delta_disks = 1;
  sb.new_offset = -384;
  sb.reshape_position = (uint64_t) sb.chunksize * (sb.raid_disks - 1);
  afx_sb_write (path, &sb);
}

/* With or without a write-intent bitmap (md reshapes an array that has
 * one, and so does this one).
 */
static void
served_mid_grow (const char *create_args)
{
  struct afx f;
  struct array_job_status st;

  afx_make (&f, 4, 8 << 20, create_args);
  for (unsigned i = 0; i < 4; i++)
    mark_growing (f.path[i]);
  afx_open_ok (&f);
  array_job_status (f.a, &st);
  cr_assert_eq (st.kind, R5_JOB_RESHAPE, "job %s", r5_job_name (st.kind));
  cr_assert_eq (st.done, 1, "the reshape resumes at new stripe %llu",
                (unsigned long long) st.done);
  cr_assert_eq (array_geom (f.a)->members, 4);
  cr_assert_eq (array_capacity (f.a),
                array_geom (f.a)->stripes * 2 * 65536,
                "the old size is served until the grow ends: %llu",
                (unsigned long long) array_capacity (f.a));
  afx_cleanup (&f);
}

Test (array_assembly, array_being_grown_is_served, .timeout = 120)
{
  served_mid_grow (ARGS);
}

Test (array_assembly, array_being_grown_with_bitmap_is_served,
      .timeout = 120)
{
  served_mid_grow ("--chunk 64K --bitmap internal --assume-clean");
}

/* A grow whose new data offset lies on the bitmap (superblocks from
 * elsewhere: neither mdadm nor raid5ctl moves data there) is refused: the
 * reshape would write the new shape over the bitmap.
 */
Test (array_assembly, array_grown_onto_its_bitmap_refused, .timeout = 120)
{
  struct afx f;
  struct array_err err;
  struct md_sb sb;

  afx_make (&f, 4, 8 << 20, "--chunk 64K --bitmap internal --assume-clean");
  for (unsigned i = 0; i < 4; i++) {
    mark_growing (f.path[i]);
    afx_sb_read (f.path[i], &sb);
    sb.new_offset = -(int32_t) (sb.data_offset - 20);   /* data at 10K */
    afx_sb_write (f.path[i], &sb);
  }
  cr_assert_lt (afx_open (&f, &err), 0, "a grow onto the bitmap was served");
  cr_assert (strstr (err.msg, "overlaps the data"), "%s", err.msg);
  afx_cleanup (&f);
}

/* md does not reshape an array with a partial parity log (raid5.c
 * check_reshape), and neither does this one: refused, nothing written.
 */
Test (array_assembly, array_being_grown_with_ppl_refused, .timeout = 120)
{
  struct afx f;
  struct array_err err;
  unsigned char before[MD_SB_BLOCK], after[MD_SB_BLOCK];
  FILE *fp;

  afx_make (&f, 4, 8 << 20,
            "--chunk 64K --consistency-policy ppl --assume-clean");
  for (unsigned i = 0; i < 4; i++)
    mark_growing (f.path[i]);
  fp = fopen (f.path[0], "rb");
  cr_assert (fp && fseek (fp, MD_SB_OFFSET, SEEK_SET) == 0 &&
             fread (before, 1, sizeof before, fp) == sizeof before);
  fclose (fp);
  cr_assert_lt (afx_open (&f, &err), 0, "an array mid-reshape was served");
  cr_assert (strstr (err.msg, "grown from 3 to 4 members") &&
             strstr (err.msg, "partial parity log"), "%s", err.msg);
  fp = fopen (f.path[0], "rb");
  cr_assert (fp && fseek (fp, MD_SB_OFFSET, SEEK_SET) == 0 &&
             fread (after, 1, sizeof after, fp) == sizeof after);
  fclose (fp);
  cr_assert_eq (memcmp (before, after, sizeof before), 0,
                "the refusal wrote a superblock");
  afx_cleanup (&f);
}

/* Dirty, with slot 2's member partly rebuilt: refused, and the line says
 * force=true goes on rebuilding it (md keeps a recovering device), not
 * that it starts without it -- which force=true then does not do.
 */
Test (array_assembly, dirty_with_a_member_partly_rebuilt, .timeout = 120)
{
  struct afx f;
  struct array_err err;
  struct md_sb sb;

  afx_make (&f, 3, 8 << 20, ARGS);
  for (unsigned i = 0; i < 3; i++) {
    afx_sb_read (f.path[i], &sb);
    sb.resync_offset = 0;                     /* dirty */
    if (i == 2) {
      sb.feature_map |= MD_FEATURE_RECOVERY_OFFSET;
      sb.recovery_offset = 2048;
    }
    afx_sb_write (f.path[i], &sb);
  }
  cr_assert_lt (afx_open (&f, &err), 0, "a dirty degraded array started");
  cr_assert (strstr (err.msg, "force=true starts it and goes on rebuilding "
                     "that member"), "%s", err.msg);
  f.cfg.force = true;
  afx_open_ok (&f);
  cr_assert_eq (array_member_state (f.a, 2), MEMBER_REBUILDING, "state %d",
                (int) array_member_state (f.a, 2));
  afx_cleanup (&f);
}

/* Members 1 and 2 dropped one after the other (their links lost), member
 * 0 moving on: refused, as too few -- and with force=true started on
 * members 0 and 1 (the newer), as mdadm --assemble --force does; the
 * superblocks then say so, so the next start needs no force.
 */
Test (array_assembly, force_takes_back_a_dropped_member, .timeout = 120)
{
  struct afx f;
  struct array_err err;
  struct md_sb sb;

  afx_make (&f, 3, 8 << 20, ARGS);
  afx_open_ok (&f);
  afx_write (&f, 0, f.cap, 21);
  afx_close (&f);
  for (unsigned i = 0; i < 2; i++) {
    afx_sb_read (f.path[i], &sb);
    sb.events += i == 0 ? 4 : 2;
    sb.dev_roles[2] = MD_ROLE_FAULTY;
    if (i == 0)
      sb.dev_roles[1] = MD_ROLE_FAULTY;
    afx_sb_write (f.path[i], &sb);
  }
  cr_assert_lt (afx_open (&f, &err), 0, "two members out, started");
  cr_assert (strstr (err.msg, "survives the loss of one") &&
             strstr (err.msg, "force=true takes the newest member left out "
                     "back in sync"), "%s", err.msg);
  f.cfg.force = true;
  afx_open_ok (&f);
  cr_assert_eq (array_member_state (f.a, 1), MEMBER_ACTIVE);
  cr_assert_neq (array_member_state (f.a, 2), MEMBER_ACTIVE);
  cr_assert (strstr (afx_log (), "member 1 (") &&
             strstr (afx_log (), "forced into slot 1"), "%s", afx_log ());
  afx_verify (&f);
  afx_close (&f);
  f.cfg.force = false;
  afx_open_ok (&f);
  cr_assert_eq (array_member_state (f.a, 1), MEMBER_ACTIVE);
  afx_verify (&f);
  afx_cleanup (&f);
}

/* A member failing on a degraded array fails it; md records that member
 * faulty in the superblocks left (raid5_error on a broken array,
 * md_update_sb) and marks them clean at the stop, so the next start is
 * refused and mdadm --force takes the member back knowingly.  Here the
 * survivor's superblock said the array whole: the member one event
 * behind, the one that failed, would have come back as current.
 */
Test (array_assembly, a_failed_array_records_the_member_that_failed_it,
      .timeout = 120)
{
  struct afx f;
  struct array_err err;
  struct md_sb s0, s1;
  static unsigned char buf[65536];

  afx_make (&f, 3, 8 << 20, ARGS);
  afx_open_ok (&f);
  afx_write (&f, 0, f.cap, 41);
  afx_close (&f);
  f.cfg.paths[2] = NULL;       /* member 2 misses writes */
  afx_reopen (&f);
  afx_write (&f, 0, 1 << 20, 42);
  afx_close (&f);
  afx_reopen (&f);              /* clean: the failing write marks it dirty */
  array_inject_failure (f.a, 1, 0);
  cr_assert_lt (array_write (f.a, buf, sizeof buf, 0, 0, &err), 0,
                "a write went on with two members out");
  cr_assert (array_has_failed (f.a));
  afx_close (&f);
  afx_sb_read (f.path[0], &s0);
  afx_sb_read (f.path[1], &s1);
  cr_assert_eq (s0.dev_roles[1], MD_ROLE_FAULTY,
                "member 0's superblock does not record member 1 faulty "
                "(role %#x)", s0.dev_roles[1]);
  cr_assert_eq (s0.resync_offset, MD_MAX_SECTOR, "not marked clean");
  cr_assert_gt (s0.events, s1.events);
  f.cfg.paths[2] = f.path[2];
  cr_assert_lt (afx_open (&f, &err), 0, "the failed array started");
  cr_assert (strstr (err.msg, "force=true takes the newest member left "
                     "out back in sync"), "%s", err.msg);
  f.cfg.force = true;
  afx_reopen (&f);
  cr_assert_eq (array_member_state (f.a, 1), MEMBER_ACTIVE);
  cr_assert_neq (array_member_state (f.a, 2), MEMBER_ACTIVE);
  afx_verify (&f);
  afx_cleanup (&f);
}

/* Two members failing in one batch fail the array; the superblock left
 * records both faulty (md fails each device: md_error), not only the
 * first, so that neither comes back without force.
 */
Test (array_assembly, members_failing_together_are_all_recorded,
      .timeout = 120)
{
  struct afx f;
  struct array_err err;
  struct md_sb s0;
  struct io_op ops[2] = {
    { .kind = IO_WRITE, .member = 1, .off = 1 << 20, .len = 4096,
      .result = -EIO, .link_lost = true },
    { .kind = IO_WRITE, .member = 2, .off = 1 << 20, .len = 4096,
      .result = -EIO, .link_lost = true },
  };

  afx_make (&f, 3, 8 << 20, ARGS);
  afx_open_ok (&f);
  afx_write (&f, 0, f.cap, 43);
  cr_assert_lt (array_io_failed (f.a, ops, 2, -EIO, &err), 0,
                "two members failed, the array did not");
  afx_close (&f);
  afx_sb_read (f.path[0], &s0);
  cr_assert (s0.dev_roles[1] == MD_ROLE_FAULTY &&
             s0.dev_roles[2] == MD_ROLE_FAULTY,
             "member 0's superblock records roles %#x %#x", s0.dev_roles[1],
             s0.dev_roles[2]);
  cr_assert_eq (s0.resync_offset, MD_MAX_SECTOR, "not marked clean");
  cr_assert_lt (afx_open (&f, &err), 0, "the failed array started");
  afx_cleanup (&f);
}

/* A member being rebuilt is no source of the bitmap (md reads it from a
 * device in sync only: md-bitmap.c read_sb_page skips one not In_sync):
 * its area may still hold what the disk held before -- a power cut
 * between its superblock's write and its bitmap's -- and where it holds
 * the freshest superblock (events tied, the lowest slot) the array
 * would not start, or would take another life's bitmap.
 */
Test (array_assembly, the_bitmap_is_read_from_a_member_in_sync,
      .timeout = 120)
{
  struct afx f;
  struct array_err err;
  char fresh[PATH_MAX + 32];
  char junk[4096];
  struct md_sb sb;
  int fd;

  afx_make (&f, 3, 8 << 20, "--chunk 64K --bitmap internal --assume-clean");
  afx_open_ok (&f);
  afx_write (&f, 0, f.cap, 1);
  cr_assert_eq (array_fail (f.a, 0, &err), 0, "%s", err.msg);
  afx_new_member (&f, fresh, sizeof fresh, 8 << 20);
  cr_assert_eq (array_rebuild_start (f.a, 0, fresh, false, &err), 0, "%s",
                err.msg);
  afx_close (&f);             /* slot 0 recovering from stripe 0 */
  strcpy (f.path[0], fresh);
  afx_sb_read (fresh, &sb);
  cr_assert (sb.feature_map & MD_FEATURE_BITMAP_OFFSET);
  memset (junk, 0x5a, sizeof junk);
  fd = open (fresh, O_WRONLY);
  cr_assert_geq (fd, 0, "%s", fresh);
  cr_assert_eq (pwrite (fd, junk, sizeof junk,
                        MD_SB_OFFSET + (off_t) sb.bitmap_offset * 512),
                (ssize_t) sizeof junk);
  close (fd);
  afx_reopen (&f);
  cr_assert_eq (array_member_state (f.a, 0), MEMBER_REBUILDING);
  cr_assert_eq (array_job_run (f.a, R5_JOB_REBUILD, NULL, &err), 0, "%s",
                err.msg);
  afx_verify (&f);
  afx_check_clean (&f);
  afx_cleanup (&f);
}

/* A bitmap older than the superblocks (its header's events below
 * theirs: a power cut between the superblocks' write and the bitmap's)
 * cannot say what a member that left has missed: md takes it as stale
 * (md_bitmap_read_sb: "bitmap file is out of date ... forcing full
 * recovery", events_cleared set to the array's), so that member's re-add
 * is refused (mdadm --re-add too) and it comes back rebuilt whole.
 */
Test (array_assembly, a_stale_bitmap_brings_no_member_back,
      .timeout = 120)
{
  struct afx f;
  struct array_err err;
  struct md_bitmap_sb bm;
  unsigned char header[MD_BITMAP_HEADER];

  afx_make (&f, 3, 8 << 20, "--chunk 64K --bitmap internal --assume-clean");
  afx_open_ok (&f);
  afx_write (&f, 0, f.cap, 1);
  cr_assert_eq (array_fail (f.a, 2, &err), 0, "%s", err.msg);
  afx_write (&f, 0, 65536, 2);
  afx_close (&f);
  for (unsigned i = 0; i < 2; i++) {
    struct md_sb sb;
    off_t at;
    int fd;

    afx_sb_read (f.path[i], &sb);
    at = MD_SB_OFFSET + (off_t) sb.bitmap_offset * 512;
    fd = open (f.path[i], O_RDWR);
    cr_assert_geq (fd, 0, "%s", f.path[i]);
    cr_assert_eq (pread (fd, header, sizeof header, at),
                  (ssize_t) sizeof header);
    cr_assert_eq (md_bitmap_decode (header, sb.set_uuid, &bm, NULL, 0), 0);
    bm.events = sb.events - 1;
    md_bitmap_encode (&bm, header);
    cr_assert_eq (pwrite (fd, header, sizeof header, at),
                  (ssize_t) sizeof header);
    close (fd);
  }
  f.cfg.paths[2] = NULL;
  afx_open_ok (&f);
  cr_assert_lt (array_readd_start (f.a, 2, f.path[2], &err), 0,
                "slot 2 was re-added by a stale bitmap");
  cr_assert (strstr (err.msg, "rebuild it instead"), "%s", err.msg);
  cr_assert_eq (array_rebuild_start (f.a, 2, f.path[2], false, &err), 0,
                "%s", err.msg);
  cr_assert_eq (array_job_run (f.a, R5_JOB_REBUILD, NULL, &err), 0, "%s",
                err.msg);
  afx_verify (&f);
  afx_cleanup (&f);
}
