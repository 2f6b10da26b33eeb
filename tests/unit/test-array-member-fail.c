/* tests/unit/test-array-member-fail.c -- a member failing while a job
 * runs, through the array layer without nbdkit (arrayfx.h).  Asserts: a
 * check whose member fails stops with an error, the member is faulty,
 * the array serves every byte as written (degraded reads); a rebuild
 * whose new member fails stops too, and that member stays out while the
 * array still reads right; a replace whose slot's member fails just as
 * its copy ends, or mid-way, hands the slot to the replacement rebuilt
 * from the copy's point, the writes it missed meanwhile computed onto
 * it first.
 * A resync cut short by a member failing is over when no spare is there
 * (md calls a degraded array in sync: there is no parity to resync; the
 * stripes it had not reached are named as the write hole's), and
 * goes on from its point after the spare is rebuilt when one is, or
 * after a rebuild started by hand that took over from it; it is over if
 * that spare is refused when its turn comes.  A member failing in a
 * grow's critical window: the window is written from its backup, every
 * byte reads back.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "array/object.h"
#include "array/runplan.h"
#include "array/state.h"
#include "io/view.h"
#include "raid/jobplan.h"
#include "raid/layout.h"
#include "tests/unit/arrayfx.h"

/* A blank member file of 8 MiB named name in f's folder, its path in
 * path (size bytes).
 */
static void
blank_member (struct afx *f, const char *name, char *path, size_t size)
{
  int fd;

  snprintf (path, size, "%s/%s", f->dir, name);
  fd = open (path, O_CREAT | O_RDWR, 0600);
  cr_assert_geq (fd, 0, "%s", path);
  cr_assert_eq (ftruncate (fd, 8 << 20), 0);
  close (fd);
}

Test (array_fail, member_fails_mid_check, .timeout = 120)
{
  struct afx f;
  struct array_err err;
  int r;

  afx_make (&f, 3, 4 << 20, NULL);
  afx_open_ok (&f);
  afx_write (&f, 0, f.cap, 2);
  array_inject_failure (f.a, 2, 20);
  r = array_job_run (f.a, R5_JOB_CHECK, NULL, &err);
  cr_assert_lt (r, 0, "the check went on past a failed member");
  cr_assert_eq (array_member_state (f.a, 2), MEMBER_FAULTY);
  cr_assert_eq (array_member_state (f.a, 0), MEMBER_ACTIVE);
  afx_verify (&f);
  afx_cleanup (&f);
}

Test (array_fail, new_member_fails_mid_rebuild, .timeout = 120)
{
  struct afx f;
  struct array_err err;
  char fresh[PATH_MAX + 16];
  int r;

  afx_make (&f, 3, 8 << 20, "--chunk 64K --bitmap none --assume-clean");
  afx_open_ok (&f);
  afx_write (&f, 0, f.cap, 3);
  cr_assert_eq (array_fail (f.a, 1, &err), 0, "%s", err.msg);
  blank_member (&f, "new.img", fresh, sizeof fresh);
  cr_assert_eq (array_rebuild_start (f.a, 1, fresh, false, &err), 0, "%s",
                err.msg);
  cr_assert_eq (array_member_state (f.a, 1), MEMBER_REBUILDING);
  array_inject_failure (f.a, 1, 10);
  r = array_job_run (f.a, R5_JOB_REBUILD, NULL, &err);
  cr_assert_lt (r, 0, "the rebuild went on onto a failed member");
  cr_assert_eq (array_member_state (f.a, 1), MEMBER_FAULTY, "state %d",
                array_member_state (f.a, 1));
  afx_verify (&f);
  unlink (fresh);
  afx_cleanup (&f);
}

/* Failed mid-rebuild, the slot asked again before the job has stopped:
 * the answer says it is stopping (it said "being rebuilt already").
 */
Test (array_fail, asked_again_while_the_rebuild_stops, .timeout = 120)
{
  struct afx f;
  struct array_err err;
  char fresh[PATH_MAX + 16];

  afx_make (&f, 3, 8 << 20, "--chunk 64K --bitmap none --assume-clean");
  afx_open_ok (&f);
  cr_assert_eq (array_fail (f.a, 1, &err), 0, "%s", err.msg);
  blank_member (&f, "new.img", fresh, sizeof fresh);
  cr_assert_eq (array_rebuild_start (f.a, 1, fresh, false, &err), 0, "%s",
                err.msg);
  cr_assert_eq (array_fail (f.a, 1, &err), 0, "%s", err.msg);
  cr_assert_eq (array_rebuild_start (f.a, 1, fresh, false, &err), -EBUSY);
  cr_assert (strstr (err.msg, "slot 1's rebuild is stopping: try again"),
             "%s", err.msg);
  cr_assert_lt (array_job_run (f.a, R5_JOB_REBUILD, NULL, &err), 0);
  cr_assert_eq (array_rebuild_start (f.a, 1, fresh, false, &err), 0, "%s",
                err.msg);
  cr_assert_eq (array_job_run (f.a, R5_JOB_REBUILD, NULL, &err), 0, "%s",
                err.msg);
  afx_verify (&f);
  unlink (fresh);
  afx_cleanup (&f);
}

/* A client's request (it holds the shape lock, as exec.c's serve does)
 * whose write to slot 1 fails once the replace's copy has reached the
 * end: the replace's end then waits for the shape lock.
 */
static struct afx ends;
static pthread_barrier_t holding;

static void *
failing_request (void *arg)
{
  struct array *a = ends.a;
  struct io_op op = { .kind = IO_WRITE, .member = 1, .len = 4096,
                      .off = a->geom.data_offset, .result = -EIO };
  struct array_err err;

  (void) arg;
  pthread_rwlock_rdlock (&a->shape_lock);
  pthread_barrier_wait (&holding);
  for (unsigned i = 0; i < 60000 && a->job.cursor < a->geom.stripes; i++)
    usleep (1000);
  usleep (100000);            /* the replace's end waits for the lock */
  cr_assert_eq (array_io_failed (a, &op, 1, -EIO, &err), 0, "%s", err.msg);
  pthread_rwlock_unlock (&a->shape_lock);
  return NULL;
}

Test (array_fail, slot_fails_as_its_replace_ends, .timeout = 120)
{
  struct array_err err;
  char fresh[PATH_MAX + 16];
  pthread_t t;
  int r;

  afx_make (&ends, 3, 8 << 20, "--chunk 64K --bitmap none --assume-clean");
  afx_open_ok (&ends);
  afx_write (&ends, 0, ends.cap, 3);
  blank_member (&ends, "new.img", fresh, sizeof fresh);
  cr_assert_eq (array_replace_start (ends.a, 1, fresh, false, &err), 0,
                "%s", err.msg);
  pthread_barrier_init (&holding, NULL, 2);
  cr_assert_eq (pthread_create (&t, NULL, failing_request, NULL), 0);
  pthread_barrier_wait (&holding);
  r = array_job_run (ends.a, R5_JOB_REPLACE, NULL, &err);
  pthread_join (t, NULL);
  cr_assert_lt (r, 0, "the replace ended as if its slot were in service");
  cr_assert (strstr (afx_log (), "takes the slot, rebuilt from stripe 112 "
                     "on"), "%s", afx_log ());
  cr_assert_eq (array_job_run (ends.a, R5_JOB_REBUILD, NULL, &err), 0, "%s",
                err.msg);
  cr_assert_eq (array_member_state (ends.a, 1), MEMBER_ACTIVE);
  cr_assert_str_eq (array_member_path (ends.a, 1), fresh);
  afx_verify (&ends);
  afx_close (&ends);
  ends.cfg.paths[1] = fresh;  /* the slot's member now */
  afx_reopen (&ends);
  afx_verify (&ends);
  afx_cleanup (&ends);
}

/* The slot being replaced fails when the copy has passed stripe 48 (of
 * 112), and the clients write on: whole stripes 10 to 12 (the slot holds
 * the parity of stripe 10, data in 11 and 12) and 80 to 81, planned
 * around the slot, so the replacement has none of them.
 */
struct midway {
  struct afx *f;
  bool failed;
  bool then_pause;            /* and the job held there (checkpoint first) */
};

static void
fail_midway (void *opaque, uint64_t done, uint64_t total)
{
  struct midway *mw = opaque;
  struct array_err err;

  (void) total;
  if (mw->failed || done < 48)
    return;
  mw->failed = true;
  if (mw->then_pause)
    replace_checkpoint (mw->f->a, true);      /* the copy's point kept */
  cr_assert_eq (array_fail (mw->f->a, 1, &err), 0, "%s", err.msg);
  afx_write (mw->f, 10 * 131072, 3 * 131072, 11);
  afx_write (mw->f, 80 * 131072, 2 * 131072, 12);
  if (mw->then_pause)
    array_job_pause (mw->f->a, true);
}

/* f made and written, slot 1 replaced by a blank member (its path in
 * fresh), the replace run with mw's failure; the job's result.
 */
static int
replace_failing_midway (struct afx *f, struct midway *mw, char *fresh,
                        size_t size, struct array_err *err)
{
  struct array_job_watch watch = { .progress = fail_midway, .opaque = mw };
  int r;

  afx_make (f, 3, 8 << 20, "--chunk 64K --bitmap none --assume-clean");
  afx_open_ok (f);
  afx_write (f, 0, f->cap, 3);
  blank_member (f, "new.img", fresh, size);
  cr_assert_eq (array_replace_start (f->a, 1, fresh, false, err), 0, "%s",
                err->msg);
  r = array_job_run (f->a, R5_JOB_REPLACE, &watch, err);
  cr_assert (mw->failed, "the copy never passed stripe 48");
  return r;
}

/* md goes on from the copy's point when the slot's member fails mid-way
 * (raid5_remove_disk moves the replacement into the slot): so do we, the
 * stripes written meanwhile below that point computed onto it first --
 * without that, the slot's data chunks of stripes 11 and 12 would read
 * as they were before, and stripe 10's parity would be wrong.
 */
Test (array_fail, slot_fails_mid_replace, .timeout = 120)
{
  struct afx f;
  struct array_err err;
  char fresh[PATH_MAX + 16];
  struct midway mw = { .f = &f };
  int r;

  r = replace_failing_midway (&f, &mw, fresh, sizeof fresh, &err);
  cr_assert_lt (r, 0, "the replace ended as if its slot were in service");
  cr_assert (strstr (afx_log (), "takes the slot, rebuilt from stripe 48 "
                     "on"), "%s", afx_log ());
  cr_assert_eq (array_member_state (f.a, 1), MEMBER_REBUILDING);
  cr_assert_str_eq (array_member_path (f.a, 1), fresh);
  afx_verify (&f);            /* below 48 read from the replacement */
  cr_assert_eq (array_job_run (f.a, R5_JOB_REBUILD, NULL, &err), 0, "%s",
                err.msg);
  cr_assert_eq (array_member_state (f.a, 1), MEMBER_ACTIVE);
  afx_verify (&f);
  afx_check_clean (&f);
  afx_close (&f);
  f.cfg.paths[1] = fresh;
  afx_reopen (&f);
  afx_verify (&f);
  unlink (fresh);
  afx_cleanup (&f);
}

/* The same failure with the job held before the replacement takes the
 * slot, the array stopped then and started on the replacement without
 * the failed member: the writes it missed are not computed onto it yet,
 * so its superblock must not say it holds the copy's first 48 stripes
 * (the failure recorded its copy at 0): it is rebuilt from the start.
 */
Test (array_fail, stopped_before_the_replacement_takes_the_slot,
      .timeout = 120)
{
  struct afx f;
  struct array_err err;
  char fresh[PATH_MAX + 16];
  struct midway mw = { .f = &f, .then_pause = true };

  (void) replace_failing_midway (&f, &mw, fresh, sizeof fresh, &err);
  cr_assert_eq (array_member_state (f.a, 1), MEMBER_FAULTY);
  afx_close (&f);
  f.cfg.paths[1] = fresh;
  afx_reopen (&f);
  cr_assert_eq (array_member_state (f.a, 1), MEMBER_REBUILDING);
  cr_assert_eq (f.a->job.kind, R5_JOB_REBUILD);
  cr_assert_eq (f.a->job.cursor, 0, "the replacement was taken as holding "
                "stripes it missed: rebuilt from %lu",
                (unsigned long) f.a->job.cursor);
  cr_assert_eq (array_job_run (f.a, R5_JOB_REBUILD, NULL, &err), 0, "%s",
                err.msg);
  afx_verify (&f);
  unlink (fresh);
  afx_cleanup (&f);
}

/* f made, written and left as an unclean stop leaves it (a resync due
 * from the start), then opened again with spare (or none).
 */
static void
dirty_with_spare (struct afx *f, const char *spare, char *path, size_t size)
{
  afx_make (f, 3, 8 << 20, "--chunk 64K --bitmap none --assume-clean");
  afx_open_ok (f);
  afx_write (f, 0, f->cap, 4);
  afx_close (f);
  afx_mark_dirty (f, 0);
  if (spare) {
    blank_member (f, spare, path, size);
    f->cfg.spare = path;
  }
  afx_reopen (f);
  cr_assert_eq (f->a->job.kind, R5_JOB_RESYNC, "the resync is due");
}

static bool
resync_due (struct afx *f)
{
  struct array_job_status st;

  array_job_status (f->a, &st);
  return st.resync_due;
}

/* A replace under way when the array stopped uncleanly goes on first,
 * the resync waiting for it (md: recovery, a replacement's copy too,
 * before resync); its replacement then fails: md_check_recovery resyncs
 * the array, whole again without it, at once -- not at the next start.
 */
Test (array_fail, resync_follows_a_replace_whose_replacement_failed,
      .timeout = 120)
{
  struct afx f;
  struct array_err err;
  char fresh[PATH_MAX + 16];

  afx_make (&f, 3, 8 << 20, "--chunk 64K --bitmap none --assume-clean");
  afx_open_ok (&f);
  afx_write (&f, 0, f.cap, 4);
  blank_member (&f, "new.img", fresh, sizeof fresh);
  cr_assert_eq (array_replace_start (f.a, 1, fresh, false, &err), 0, "%s",
                err.msg);
  afx_close (&f);
  afx_mark_dirty (&f, 0);
  f.cfg.paths[3] = fresh;
  f.cfg.members = 4;
  afx_reopen (&f);
  cr_assert_eq (f.a->job.kind, R5_JOB_REPLACE, "the replace goes on first");
  cr_assert (resync_due (&f));
  io_member_inject_failure (&f.a->members[ARRAY_REPLACEMENT], 3);
  cr_assert_lt (array_job_run (f.a, R5_JOB_REPLACE, NULL, &err), 0,
                "the replace ended with its replacement failing");
  cr_assert_eq (f.a->replace.slot, -1, "the replacement was not let go");
  cr_assert_eq (f.a->job.kind, R5_JOB_RESYNC,
                "no resync after the replace stopped (job %d)",
                (int) f.a->job.kind);
  cr_assert_eq (array_job_run (f.a, R5_JOB_RESYNC, NULL, &err), 0, "%s",
                err.msg);
  cr_assert_not (resync_due (&f));
  afx_verify (&f);
  unlink (fresh);
  afx_cleanup (&f);
}

/* The rebuild runs, the resync follows it and ends. */
static void
rebuild_then_resync (struct afx *f)
{
  struct array_err err;

  cr_assert_eq (array_job_run (f->a, R5_JOB_REBUILD, NULL, &err), 0, "%s",
                err.msg);
  cr_assert_eq (f->a->job.kind, R5_JOB_RESYNC, "no resync after the rebuild");
  cr_assert_eq (array_job_run (f->a, R5_JOB_RESYNC, NULL, &err), 0, "%s",
                err.msg);
  cr_assert_not (resync_due (f));
}

static void
assert_clean_on_disk (struct afx *f)
{
  struct md_sb sb;

  afx_close (f);
  afx_sb_read (f->path[0], &sb);
  cr_assert_eq (sb.resync_offset, MD_MAX_SECTOR, "resync_offset %llu",
                (unsigned long long) sb.resync_offset);
}

Test (array_fail, resync_cut_by_a_failure_is_over_without_a_spare,
      .timeout = 120)
{
  struct afx f;
  struct array_err err;
  char want[160];

  dirty_with_spare (&f, NULL, NULL, 0);
  array_inject_failure (f.a, 2, 20);
  cr_assert_lt (array_job_run (f.a, R5_JOB_RESYNC, NULL, &err), 0);
  cr_assert_eq (array_member_state (f.a, 2), MEMBER_FAULTY);
  cr_assert_not (resync_due (&f), "a degraded array still owes a resync");
  cr_assert (strstr (afx_log (), "no parity to resync"), "%s", afx_log ());
  /* What is left at risk is said: here every stripe (the step failed
   * before any checkpoint).
   */
  snprintf (want, sizeof want, "%lu stripes from stripe 0 are not "
            "recorded as resynced since the unclean stop: where a write "
            "was cut short in one, slot 2's chunks",
            (unsigned long) array_geom (f.a)->stripes);
  cr_assert (strstr (afx_log (), want), "%s", afx_log ());
  afx_verify (&f);
  assert_clean_on_disk (&f);
  afx_cleanup (&f);
}

Test (array_fail, resync_cut_by_a_failure_goes_on_after_the_spare,
      .timeout = 120)
{
  struct afx f;
  struct array_err err;
  struct array_job_status st;
  char spare[PATH_MAX + 16];

  dirty_with_spare (&f, "spare.img", spare, sizeof spare);
  array_inject_failure (f.a, 1, 20);
  cr_assert_lt (array_job_run (f.a, R5_JOB_RESYNC, NULL, &err), 0);
  cr_assert (resync_due (&f), "the resync was called done with a spare "
             "about to be rebuilt (md recovers it, then resyncs)");
  cr_assert_eq (array_rebuild_start (f.a, 1, NULL, false, &err), 0, "%s",
                err.msg);
  rebuild_then_resync (&f);
  cr_assert_str_eq (array_member_path (f.a, 1), spare);
  array_job_status (f.a, &st);
  cr_assert_eq (st.last_kind, R5_JOB_RESYNC);
  for (unsigned i = 0; i < 3; i++)
    cr_assert_eq (array_member_state (f.a, i), MEMBER_ACTIVE);
  afx_verify (&f);
  assert_clean_on_disk (&f);
  afx_cleanup (&f);
}

/* A rebuild started by hand takes over from the resync (md: recovery
 * first): the resync stays due and follows the rebuild.
 */
Test (array_fail, rebuild_by_hand_takes_over_the_resync, .timeout = 120)
{
  struct afx f;
  struct array_err err;
  char fresh[PATH_MAX + 16];

  dirty_with_spare (&f, NULL, NULL, 0);
  cr_assert_eq (array_fail (f.a, 1, &err), 0, "%s", err.msg);
  blank_member (&f, "new.img", fresh, sizeof fresh);
  cr_assert_eq (array_rebuild_start (f.a, 1, fresh, false, &err), 0, "%s",
                err.msg);
  cr_assert (resync_due (&f), "the resync was called done as the rebuild "
             "took over (md recovers, then resyncs)");
  rebuild_then_resync (&f);
  afx_verify (&f);
  assert_clean_on_disk (&f);
  afx_cleanup (&f);
}

/* The spare the resync was left due for is refused when its turn comes
 * (it got a file system meanwhile): then, with no spare, the resync is
 * over as md's would be, not owed for good by a degraded array (which
 * would not start again without force=true).
 */
Test (array_fail, resync_over_when_the_spare_is_refused, .timeout = 120)
{
  struct afx f;
  char spare[PATH_MAX + 16], cmd[PATH_MAX + 64];

  dirty_with_spare (&f, "spare.img", spare, sizeof spare);
  snprintf (cmd, sizeof cmd, "mkfs.ext4 -q -F %s >/dev/null 2>&1", spare);
  cr_assert_eq (system (cmd), 0, "%s", cmd);
  array_inject_failure (f.a, 1, 20);
  cr_assert_eq (array_start_background (f.a), 0);
  for (int i = 0; i < 400 && (resync_due (&f) ||
                              !strstr (afx_log (), "rebuilding onto the spare"));
       i++)
    usleep (25000);
  array_stop_background (f.a);
  cr_assert (strstr (afx_log (), "rebuilding onto the spare"), "%s",
             afx_log ());
  cr_assert_eq (array_member_state (f.a, 1), MEMBER_FAULTY);
  cr_assert_not (resync_due (&f), "a degraded array with no spare still "
                 "owes a resync");
  afx_verify (&f);
  assert_clean_on_disk (&f);
  afx_cleanup (&f);
}

/* A spare taken with spare-force=true whose old signatures cannot be
 * wiped (its write fails) is a new member failing: the slot is out of
 * service again (faulty), recorded so, and not left "rebuilding" with no
 * rebuild running.
 */
Test (array_fail, spare_whose_wipe_fails_is_out, .timeout = 120)
{
  struct afx f;
  struct array_err err;
  char spare[PATH_MAX + 16], cmd[PATH_MAX + 64];

  afx_make (&f, 3, 8 << 20, "--chunk 64K --bitmap none --assume-clean");
  blank_member (&f, "spare.img", spare, sizeof spare);
  snprintf (cmd, sizeof cmd, "mkfs.ext4 -q -F %s >/dev/null 2>&1", spare);
  cr_assert_eq (system (cmd), 0, "%s", cmd);
  f.cfg.spare = spare;
  f.cfg.spare_force = true;
  afx_open_ok (&f);
  afx_write (&f, 0, f.cap, 5);
  cr_assert_eq (array_fail (f.a, 1, &err), 0, "%s", err.msg);
  io_member_inject_failure (&f.a->spare, 1);  /* its superblock, no more */
  cr_assert_lt (array_rebuild_start (f.a, 1, NULL, false, &err), 0,
                "the wipe did not fail: %s", afx_log ());
  cr_assert (strstr (err.msg, "wiping the ext4"), "%s", err.msg);
  cr_assert_eq (array_member_state (f.a, 1), MEMBER_FAULTY, "state %d",
                (int) array_member_state (f.a, 1));
  cr_assert_eq (f.a->job.kind, R5_JOB_NONE);
  afx_verify (&f);
  afx_close (&f);
  f.cfg.spare = NULL;
  afx_reopen (&f);
  cr_assert_eq (array_member_state (f.a, 1), MEMBER_MISSING,
                "the superblocks do not record slot 1 out (state %d)",
                (int) array_member_state (f.a, 1));
  afx_verify (&f);
  afx_cleanup (&f);
}

/* Two members failing in the same resync step fail the array: the
 * resync stays due (the superblocks may not record the second failure,
 * and the dirty mark keeps a restart from rebuilding from stale parity).
 */
Test (array_fail, resync_stays_due_when_the_array_fails, .timeout = 120)
{
  struct afx f;
  struct array_err err;

  dirty_with_spare (&f, NULL, NULL, 0);
  array_inject_failure (f.a, 1, 20);
  array_inject_failure (f.a, 2, 20);
  cr_assert_lt (array_job_run (f.a, R5_JOB_RESYNC, NULL, &err), 0);
  cr_assert (resync_due (&f), "a failed array was marked in sync");
  afx_close (&f);
  afx_cleanup (&f);
}

/* A member failing in a grow that keeps its data offset (no room before
 * the data: at 64K), its critical windows backed up on the new member:
 * a critical window's new stripes may already lie over its own old bytes
 * when the failure is seen, so it is written from its backup without the
 * member, not read again.  The failure lands at each of member 1's first
 * ops in turn; every byte reads back, degraded, after the grow.
 */
Test (member_fail, critical_window_written_from_its_backup, .timeout = 240)
{
  for (int64_t k = 0; k < 10; k++) {
    const char *paths[1];
    struct array_err err;
    struct afx f;

    afx_make (&f, 3, 8 << 20,
              "--chunk 64K --bitmap none --assume-clean --data-offset 64K");
    afx_open_ok (&f);
    afx_write (&f, 0, f.cap, 5 + (unsigned) k);
    afx_new_member (&f, f.path[3], sizeof f.path[3], 8 << 20);
    f.n = 4;
    paths[0] = f.path[3];
    cr_assert_eq (array_grow_start (f.a, paths, 1, false, &err), 0, "%s",
                  err.msg);
    io_member_inject_failure (&f.a->members[1], k);
    cr_assert_eq (array_job_run (f.a, R5_JOB_RESHAPE, NULL, &err), 0,
                  "failure after %ld ops: %s", (long) k, err.msg);
    cr_assert (!f.a->grow.active);
    cr_assert_eq (health_out (&f.a->health), 1, "member 1 not out");
    afx_verify (&f);
    afx_cleanup (&f);
  }
}

/* A job's XOR reads members in memory where they lie (io/view.h); one
 * truncated under the server between the view and the XOR faulted
 * (SIGBUS) and ended the server.  Now the step fails as the member's
 * read would, and the member is taken out.
 */
Test (array_fail, member_truncated_under_a_jobs_view, .timeout = 60)
{
  struct afx f;
  struct array_err err;
  struct io_view views[3];
  char *base[3];
  struct r5_plan plan;
  struct io_op ops[64];
  struct plan_cmp_out cmp[64];
  const unsigned n = 8;
  uint64_t off, len;
  char *scratch;
  int r;

  afx_make (&f, 3, 4 << 20, "--chunk 64K --bitmap none --assume-clean");
  afx_open_ok (&f);
  afx_write (&f, 0, f.cap, 5);
  if (!f.a->members[2].in_memory) {
    afx_cleanup (&f);
    cr_skip_test ("members not in memory (no /dev/shm)");
  }
  off = r5_stripe_member_off (&f.a->geom, 0);
  len = (uint64_t) n * f.a->geom.chunk;
  for (unsigned m = 0; m < 3; m++) {
    io_view_init (&views[m]);
    cr_assert_eq (io_view_get (&views[m], &f.a->members[m], off, len,
                               IO_VIEW_READ, &base[m]), 0);
  }
  struct plan_views pv = { base, off, len, -1 };
  struct r5_job_span span = { .job = R5_JOB_CHECK, .first = 0, .n = n,
                              .chunk_off = 0, .len = f.a->geom.chunk };
  r5_plan_init (&plan);
  cr_assert_eq (r5_plan_job (&plan, &f.a->geom, &span), 0);
  cr_assert_leq (plan.nios, 64);
  scratch = calloc (1, plan.scratch + 1);
  cr_assert_not_null (scratch);
  struct plan_run x = { .plan = &plan, .scratch = scratch, .zero = f.a->zero,
                        .views = &pv, .ops = ops, .cmp = cmp,
                        .io_flags = IO_CALLS };

  cr_assert_eq (plan_run (f.a, &x), 0, "the check of intact members");
  cr_assert_eq (truncate (f.path[2], (off_t) (off + len / 2)), 0);
  r = plan_run (f.a, &x);
  cr_assert_eq (r, -ENXIO, "the step over a truncated member: %d", r);
  cr_assert_eq (x.nops, 1);
  cr_assert_eq (ops[0].member, 2);
  cr_assert_eq (ops[0].kind, IO_READ);
  cr_assert (ops[0].off >= off + len / 2 && ops[0].off < off + len,
             "the fault's offset %" PRIu64, ops[0].off);
  cr_assert_eq (array_io_failed (f.a, x.ops, x.nops, r, &err), 0, "%s",
                err.msg);
  cr_assert_eq (array_member_state (f.a, 2), MEMBER_FAULTY);
  cr_assert (strstr (afx_log (), "it ends before that"), "%s", afx_log ());
  for (unsigned m = 0; m < 3; m++)
    io_view_close (&views[m]);
  r5_plan_free (&plan);
  free (scratch);
  afx_verify (&f);
  afx_cleanup (&f);
}

/* The new member cut short under a rebuild (from its progress, between
 * steps, where no server's size check runs: offline): its writes would
 * extend it again, the rebuilt bytes cut off then holes read as zeroes,
 * and the rebuild would end "healthy".  It stops at the next piece.
 */
struct cut {
  const char *path;
  off_t to;
  bool done;
};

static void
cut_after_first_step (void *opaque, uint64_t done, uint64_t total)
{
  struct cut *c = opaque;

  (void) total;
  if (!c->done && done > 0) {
    cr_assert_eq (truncate (c->path, c->to), 0);
    c->done = true;
  }
}

Test (array_fail, new_member_cut_short_mid_rebuild, .timeout = 120)
{
  struct afx f;
  struct array_err err;
  char fresh[PATH_MAX + 16];
  struct cut c = { fresh, 0, false };
  struct array_job_watch w = { .progress = cut_after_first_step,
                               .opaque = &c, .step_bytes = 256 << 10 };
  struct stat st;
  int r;

  afx_make (&f, 3, 8 << 20, "--chunk 64K --bitmap none --assume-clean");
  afx_open_ok (&f);
  afx_write (&f, 0, f.cap, 6);
  cr_assert_eq (array_fail (f.a, 1, &err), 0, "%s", err.msg);
  blank_member (&f, "new.img", fresh, sizeof fresh);
  c.to = (off_t) f.a->geom.data_offset;
  cr_assert_eq (array_rebuild_start (f.a, 1, fresh, false, &err), 0, "%s",
                err.msg);
  r = array_job_run (f.a, R5_JOB_REBUILD, &w, &err);
  cr_assert (c.done, "the rebuild made no step");
  cr_assert_lt (r, 0, "the rebuild went on onto a member cut short");
  cr_assert_eq (array_member_state (f.a, 1), MEMBER_FAULTY, "state %d",
                array_member_state (f.a, 1));
  cr_assert (strstr (afx_log (), "it ends before that"), "%s", afx_log ());
  cr_assert_eq (stat (fresh, &st), 0);
  cr_assert_eq (st.st_size, c.to, "the new member grew again to %jd bytes",
                (intmax_t) st.st_size);
  afx_verify (&f);
  unlink (fresh);
  afx_cleanup (&f);
}

/* A batch (a superblock write, say) where the replacement's op failed as
 * a whole (its link lost) and a member's with an error of its range: the
 * member is taken out -- the replacement is the replace's to drop, no
 * slot (it was picked, and slot 32 taken out past the health table).
 */
Test (array_fail, a_replacements_failure_is_no_slots, .timeout = 60)
{
  struct afx f;
  struct array_err err;
  struct io_op ops[2] = {
    { .kind = IO_WRITE, .member = ARRAY_REPLACEMENT, .off = 4096,
      .len = 4096, .result = -ECONNRESET, .link_lost = true },
    { .kind = IO_WRITE, .member = 1, .off = 4096, .len = 4096,
      .result = -EIO },
  };

  afx_make (&f, 3, 4 << 20, "--chunk 64K --bitmap none --assume-clean");
  afx_open_ok (&f);
  afx_write (&f, 0, f.cap, 7);
  cr_assert_eq (array_io_failed (f.a, ops, 2, -EIO, &err), 0, "%s",
                err.msg);
  cr_assert_eq (array_member_state (f.a, 1), MEMBER_FAULTY);
  cr_assert_eq (array_member_state (f.a, 0), MEMBER_ACTIVE);
  cr_assert_eq (array_member_state (f.a, 2), MEMBER_ACTIVE);
  cr_assert (strstr (afx_log (), "member 1 ("), "%s", afx_log ());
  afx_verify (&f);
  afx_cleanup (&f);
}

/* Status on a member failed by an I/O error: with no bitmap nothing
 * marks what it missed, and md refuses a re-add, so status says to
 * rebuild it (it said "until re-added or rebuilt"); with one, either.
 * The failure's log line says the same.
 */
static char *
status_text (struct array *a)
{
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream (&text, &len);

  cr_assert (out);
  array_status_print (a, false, out);
  fclose (out);
  return text;
}

Test (array_fail, status_says_how_a_failed_member_comes_back, .timeout = 60)
{
  static const char *const args[2] = {
    "--chunk 64K --bitmap none --assume-clean",
    "--chunk 64K --bitmap internal --assume-clean",
  };

  for (unsigned bitmap = 0; bitmap < 2; bitmap++) {
    struct afx f;
    struct array_err err;
    struct io_op op = { .kind = IO_WRITE, .member = 1, .off = 4096,
                        .len = 4096, .result = -EIO };
    char *text;

    afx_make (&f, 3, 4 << 20, args[bitmap]);
    afx_open_ok (&f);
    afx_log_clear ();
    cr_assert_eq (array_io_failed (f.a, &op, 1, -EIO, &err), 0, "%s",
                  err.msg);
    cr_assert_eq (array_member_state (f.a, 1), MEMBER_FAULTY);
    text = status_text (f.a);
    cr_assert (strstr (text, bitmap ? "stays out until re-added or rebuilt"
                       : "stays out until rebuilt"), "%s", text);
    cr_assert (strstr (afx_log (), bitmap ? "stays out until re-added or "
                       "rebuilt" : "stays out until rebuilt)"), "%s",
               afx_log ());
    free (text);
    afx_cleanup (&f);
  }
}

/* A check stopped by a member leaving: status says so in words (it said
 * "No such device" once the job's reason was shown).
 */
Test (array_fail, status_says_why_a_check_stopped, .timeout = 60)
{
  struct afx f;
  struct array_err err;
  char *text;

  afx_make (&f, 3, 8 << 20, "--chunk 64K --bitmap none --assume-clean");
  afx_open_ok (&f);
  array_inject_failure (f.a, 1, 4);
  cr_assert_lt (array_job_run (f.a, R5_JOB_CHECK, NULL, &err), 0,
                "the check went on without member 1");
  text = status_text (f.a);
  cr_assert (strstr (text, "last check: stopped: a member left service"),
             "%s", text);
  free (text);
  afx_cleanup (&f);
}
