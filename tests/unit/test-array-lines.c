/* tests/unit/test-array-lines.c -- the lines the write path plans by
 * (array/writepath.h): the reshape line (array/grow.h) and the resync
 * line.  The interleavings of a client's batch and the job are made one
 * after the other in one thread, so that each is met every run.
 * Asserts: a batch planned in the old shape ahead of the line is planned
 * again if the reshape ended before it took its stripes' locks (md's
 * make_stripe_request checks a "previous" stripe against the line
 * again, and the end of a reshape sets the line to MaxSector); a batch
 * shaped as the reshape ends keeps the one shape left; the array's bytes
 * are the model's after both; a write to an array whose resync waits
 * behind another job uses RCW from the resync's point (md: recovery_cp).
 */
#include <config.h>

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "array/object.h"
#include "array/writepath.h"
#include "raid/mdsb.h"
#include "raid/plan.h"
#include "tests/unit/arrayfx.h"

#define MEMBER_BYTES (8 << 20)

/* f's array, filled, growing from 3 to 4 members; the reshape not yet
 * run (no background thread: array_job_run runs it).
 */
static void
growing_array (struct afx *f, char *path, size_t size)
{
  const char *paths[1] = { path };
  struct array_err err;

  afx_make (f, 3, MEMBER_BYTES, "--chunk 64K --bitmap none --assume-clean");
  afx_open_ok (f);
  afx_write (f, 0, f->cap, 7);
  afx_new_member (f, path, size, MEMBER_BYTES);
  cr_assert_eq (array_grow_start (f->a, paths, 1, false, &err), 0, "%s",
                err.msg);
  cr_assert (f->a->grow.active);
}

static void
run_reshape (struct afx *f)
{
  struct array_err err;

  cr_assert_eq (array_job_run (f->a, R5_JOB_RESHAPE, NULL, &err), 0, "%s",
                err.msg);
  cr_assert (!f->a->grow.active, "the reshape did not end");
}

/* A write batch of len bytes at off, shaped as a client's would be
 * (exec.c plan_batch) up to the planning.
 */
static void
shape (struct afx *f, struct wp_batch *b, struct r5_range *rg,
       struct r5_plan *plan, uint64_t off, uint64_t len)
{
  struct array_err err;

  *rg = (struct r5_range) { .op = R5_OP_WRITE, .off = off, .len = len,
                            .req_off = off, .missing = -1,
                            .budget = f->a->pool.buf_bytes };
  *b = (struct wp_batch) { .range = rg, .plan = plan, .geom = &f->a->geom,
                           .bb_version = f->a->bb.version, .bb_member = -1 };
  r5_plan_reset (plan);
  cr_assert_eq (wp_shape (f->a, b, &err), 0, "%s", err.msg);
}

Test (grow_line, old_shape_batch_planned_again_after_the_end, .timeout = 120)
{
  struct afx f;
  char path[PATH_MAX + 32];
  struct r5_plan plan;
  struct r5_range rg;
  struct wp_batch b;
  uint64_t off;

  r5_plan_init (&plan);
  growing_array (&f, path, sizeof path);
  off = f.cap - 65536;
  shape (&f, &b, &rg, &plan, off, 65536);
  cr_assert_eq (b.geom, &f.a->grow.r.from,
                "a batch ahead of the line is planned in the old shape");
  cr_assert (wp_holds (f.a, &b), "nothing moved yet: the batch holds");

  /* The job moves every window and ends the reshape before the batch
   * takes its stripes' locks.
   */
  run_reshape (&f);
  cr_assert (!wp_holds (f.a, &b),
             "a batch planned in the old shape was run after the reshape "
             "moved its bytes to the new one");

  shape (&f, &b, &rg, &plan, off, 65536);
  cr_assert_eq (b.geom, &f.a->geom, "planned again: the new shape");
  cr_assert (wp_holds (f.a, &b));
  r5_plan_free (&plan);
  afx_write (&f, off, 65536, 11);
  afx_verify (&f);
  afx_cleanup (&f);
}

Test (grow_line, record_after_the_end_changes_nothing, .timeout = 120)
{
  struct afx f;
  char path[PATH_MAX + 32];
  struct array_err err;
  uint64_t events;

  growing_array (&f, path, sizeof path);
  run_reshape (&f);
  events = f.a->meta.live.common.events;
  /* A client that saw the reshape active records a line (grow_shape) only
   * after it ended: no checkpoint of a reshape that is over.
   */
  cr_assert_eq (grow_record (f.a, f.a->grow.r.end + f.a->geom.stripe_data,
                             &err), 0, "%s", err.msg);
  cr_assert_eq (f.a->meta.live.common.events, events,
                "a reshape checkpoint was recorded after the reshape ended");
  cr_assert_eq (f.a->meta.live.common.feature_map &
                MD_FEATURE_RESHAPE_ACTIVE, 0);
  afx_verify (&f);
  afx_cleanup (&f);
}

Test (resync_line, rcw_from_the_resync_point_while_it_waits, .timeout = 120)
{
  struct afx f;
  struct r5_plan plan;
  struct r5_range rg;
  struct wp_batch b;
  uint64_t from = 2 * 65536 / 512;    /* stripe 2 */

  afx_make (&f, 3, MEMBER_BYTES, "--chunk 64K --bitmap none --assume-clean");
  afx_open_ok (&f);
  afx_write (&f, 0, f.cap, 5);
  afx_close (&f);
  afx_mark_dirty (&f, from);
  afx_reopen (&f);
  cr_assert_eq (f.a->job.kind, R5_JOB_RESYNC, "the resync is due");
  r5_plan_init (&plan);
  shape (&f, &b, &rg, &plan, 5 * f.a->geom.stripe_data, 4096);
  cr_assert_eq (plan.rcw_from, f.a->job.cursor, "the running resync's line");

  /* A rebuild or a replace runs first (md recovers before it resyncs):
   * stood for here by the job's kind, the resync's point kept in the
   * superblocks.
   */
  pthread_mutex_lock (&f.a->job.lock);
  f.a->job.kind = R5_JOB_REBUILD;
  pthread_mutex_unlock (&f.a->job.lock);
  shape (&f, &b, &rg, &plan, 5 * f.a->geom.stripe_data, 4096);
  cr_assert_eq (plan.rcw_from, 2, "writes past the resync's point may carry "
                "wrong parity forward (RMW) while the resync waits");
  pthread_mutex_lock (&f.a->job.lock);
  f.a->job.kind = R5_JOB_RESYNC;
  pthread_mutex_unlock (&f.a->job.lock);
  r5_plan_free (&plan);
  afx_cleanup (&f);
}
