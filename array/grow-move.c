/* array/grow-move.c -- the reshape job's moves (grow.h): a window at a
 * time, its old stripes read (around a member whose bad-block log lists
 * bytes there), backed up if critical, written in the new shape, the
 * line recorded as md's reshape_position.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array/badblocks.h"
#include "array/grow.h"
#include "array/guard.h"
#include "array/jobs.h"
#include "array/object.h"
#include "array/requests.h"
#include "array/state.h"

/* A step moves at most this much of each member, so that progress shows
 * and job.lock is let go now and then (offline nothing else limits it).
 */
#define GROW_STEP_BYTES (1u << 20)

/* Room in the job's memory for the plan just made. */
static int
make_room (struct grow *g, struct array_err *err)
{
  if (g->scratch_len < g->plan.scratch) {
    free (g->scratch);
    g->scratch_len = 0;
    /* Page aligned: O_DIRECT members take it as it is, and ISA-L's XOR
     * wants its vectors aligned (else the byte loop runs).
     */
    if (posix_memalign ((void **) &g->scratch, 4096, g->plan.scratch) != 0) {
      g->scratch = NULL;
      goto oom;
    }
    g->scratch_len = g->plan.scratch;
  }
  if (g->ops_cap < g->plan.nios) {
    free (g->ops);
    g->ops_cap = 0;
    if ((g->ops = calloc (g->plan.nios, sizeof *g->ops)) == NULL)
      goto oom;
    g->ops_cap = g->plan.nios;
  }
  return 0;
oom:
  array_set_err (err, "out of memory for the reshape's window");
  return -ENOMEM;
}

/* The job's memory, had before anything is written: a window is the
 * LCM of the two stripes, which is much with many members (31 to 32 with
 * 512K chunks: 465 MiB), and a grow recorded but unable to move would
 * leave the array unservable until someone finds the memory.
 */
int
grow_window_memory (struct array *a, const struct r5_reshape *rs,
                    struct array_err *err)
{
  struct grow *g = &a->grow;
  int r;

  r5_plan_reset (&g->plan);
  if ((r = r5_plan_reshape (&g->plan, rs, 0, health_out (&a->health),
                            NULL)) < 0) {
    array_set_err (err, "planning the reshape's first window: %s",
                   strerror (-r));
    return r;
  }
  return make_room (g, err);
}

/* A critical window's bytes, as read for its move (in scratch from the
 * `from` stripe holding line; zeroes past the old end), into the backup
 * file before any of its writes.
 */
static int
back_up (struct array *a, uint64_t line, uint64_t len, struct array_err *err)
{
  const struct r5_geom *from = &a->grow.r.from;
  uint64_t base = line / from->stripe_data * from->stripe_data;
  uint64_t kept = line >= from->capacity ? 0
    : from->capacity - line < len ? from->capacity - line : len;
  char *data = a->grow.scratch + (line - base), *copy = NULL;
  int r;

  if (kept < len) {
    /* Page aligned: the backup may go to new members opened O_DIRECT. */
    if (posix_memalign ((void **) &copy, 4096, len) != 0)
      return -ENOMEM;
    memcpy (copy, data, kept);
    memset (copy + kept, 0, len - kept);
    data = copy;
  }
  r = grow_backup_save (a, line, len, data, err);
  free (copy);
  return r;
}

/* The window's reads (x) failed: a read error is corrected in the old
 * shape, with the window's stripes held, as md's reshape does
 * (handle_stripe: R5_ReadError, then R5_ReWrite); true if so, and the
 * window is read again, with *r 0 or the correction's error.
 */
static bool
corrected (struct array *a, const struct plan_run *x,
           struct correct_tries *tries, struct array_err *err, int *r)
{
  struct read_error re;

  if (!array_read_error (a, &a->grow.r.from, x->ops, x->nops, &re) ||
      array_correct_try (tries, &re) > CORRECT_TRIES)
    return false;
  *r = array_correct_read (a, &re, true, err);
  return true;
}

/* Say which members a window read around (named: a mask). */
static void
log_around (struct array *a, uint64_t line, uint64_t named)
{
  char who[64];

  array_log (a, ARRAY_LOG_NOTICE, "reshape: %s list%s bad blocks in the "
             "window at array byte %" PRIu64 ": those pages computed from "
             "the others", bb_members_named (named, who, sizeof who),
             named & (named - 1) ? "" : "s", line);
}

/* Plan the window at line with out out of service, each page of an old
 * row whose member lists it bad computed from the others (md's
 * analyse_stripe: a device bad in a stripe is not in sync there), and a
 * page two members are out of moved as lost (grow-lost.c) -- but with a
 * member out of service (its page of each lost page's new row could not
 * be written, and would be lost too), or in a critical window (after a
 * crash its backup is written again in the new shape, which cannot tell
 * the listings kept for lost pages from the old shape's): bb_window_lost
 * then stops the reshape there.
 */
static int
plan_window (struct array *a, uint64_t line, int out, bool critical,
             struct array_err *err)
{
  struct grow *g = &a->grow;
  struct bb_around c = {
    .a = a, .out = out < (int) g->r.from.members ? out : -1,
    .critical = critical, .degraded = out >= 0,
  };
  int r;

  r5_plan_reset (&g->plan);
  g->nlost = g->nkept = 0;
  r = r5_plan_reshape (&g->plan, &g->r, line, out, &(struct r5_around) {
      .fn = bb_reshape_around,
      .lost = critical || out >= 0 ? NULL : grow_lost_note, .ctx = &c });
  if (r == -ENODATA)
    return bb_window_lost (a, line, &c, err);
  if (r < 0) {
    array_set_err (err, "planning the reshape at array byte %" PRIu64
                   ": %s", line, strerror (-r));
    return r;
  }
  if (c.named)
    log_around (a, line, c.named);
  return 0;
}

/* The window's writes ran (x): true if they all did, or those that
 * failed are recorded in their members' bad-block logs (all were tried:
 * none cancelled) -- a recorded page is read from the rest of its row,
 * which the window wrote.  Listed bytes written well are cleared.
 */
static bool
written (struct array *a, const struct plan_run *x, int r,
         struct array_err *err)
{
  for (size_t i = 0; r < 0 && i < x->nops; i++)
    if (x->ops[i].result == -ECANCELED)
      return false;
  if (r < 0 && !array_bb_write_failed (a, x->ops, x->nops, err))
    return false;
  bb_window_written (a, x->plan);
  if (r < 0)
    bb_written_lost (a, x->ops, x->nops);
  return true;
}

/* Move the window at line (backed up first if critical); a read error is
 * corrected, a write error recorded where the member keeps a bad-block
 * log, and a member that fails otherwise is taken out of service
 * (recorded) and the window moved again without it.
 */
static int
move_locked (struct array *a, uint64_t line, bool critical,
             struct array_err *err)
{
  struct grow *g = &a->grow;
  uint64_t len = r5_reshape_window_len (&g->r, line);
  struct correct_tries tries = { 0, 0, 0, 0 };
  bool writes_ran = false;
  int r;

  for (;;) {
    struct plan_run x = { .plan = &g->plan, .zero = a->zero,
                          .io_flags = IO_JOB };
    int out = health_out (&a->health);

    if ((r = plan_window (a, line, out, critical, err)) < 0 ||
        (r = make_room (g, err)) < 0)
      return r;
    x.scratch = g->scratch;
    x.ops = g->ops;
    if ((r = plan_run_prepare (a, &x)) == 0) {
      if ((r = grow_lost_list (a, line, len, err)) < 0 ||
          (critical && (r = back_up (a, line, len, err)) < 0))
        return r;
      if (critical)
        array_test_crash ("grow-backed-up");
      if (written (a, &x, r = plan_run_writes (a, &x, -1), err))
        return 0;
      writes_ran = true;
    }
    else if (corrected (a, &x, &tries, err, &r)) {
      if (r < 0)
        return r;
      continue;
    }
    if ((r = array_io_failed (a, x.ops, x.nops, r, err)) < 0)
      return r;
    if (health_out (&a->health) == out) {
      /* Nobody new out of service, so moving it again fails again. */
      array_set_err (err, "moving the window at array byte %" PRIu64
                     " failed without a member to take out", line);
      return -EIO;
    }
    /* A critical window's writes may lie over its own old bytes now: it
     * is not read again but written from its backup, in the new shape
     * without the member taken out (as a start after a crash would).
     */
    if (critical && writes_ran)
      return grow_backup_restore (a, err);
  }
}

/* A critical window moved: the line past it recorded, then its backup
 * forgotten (grow-backup.c), before the line moves past it and anyone
 * may write there.
 */
static int
past_critical (struct array *a, uint64_t end, struct array_err *err)
{
  int r;

  array_test_crash ("grow-moved");
  if ((r = grow_record (a, end, err)) == 0) {
    array_test_crash ("grow-recorded");
    r = grow_backup_forget (a, err);
  }
  return r;
}

/* Move the window [line, line + len) holding its old stripes' locks
 * (requests ahead of the line take them, grow-line.c), and the line past
 * it before they are let go.
 */
static int
move_window (struct array *a, uint64_t line, uint64_t len,
             struct array_err *err)
{
  const struct r5_geom *from = &a->grow.r.from;
  bool critical = r5_reshape_critical (&a->grow.r, line);
  struct stripe_range held;
  int r;

  stripe_lock_range (&a->locks, line / from->stripe_data,
                     (line + len - 1) / from->stripe_data, STRIPE_EXCLUSIVE,
                     &held);
  if ((r = move_locked (a, line, critical, err)) == 0 &&
      (!critical || (r = past_critical (a, line + len, err)) == 0))
    a->job.cursor = (line + len) / a->grow.r.to.stripe_data;
  stripe_unlock_range (&a->locks, &held);
  return r;
}

int
grow_step (struct array *a, uint64_t reach, struct array_err *err)
{
  struct grow *g = &a->grow;
  const struct r5_reshape *rs = &g->r;
  uint64_t line = grow_line (a), covered = 0;
  int r;

  if (reach > GROW_STEP_BYTES)
    reach = GROW_STEP_BYTES;
  while (covered < reach && line < rs->end) {
    uint64_t len = r5_reshape_window_len (rs, line);

    if ((r5_reshape_must_record (rs, g->safe, line) ||
         array_now_ns () - g->recorded_ns >= GROW_RECORD_NS) &&
        (r = grow_record (a, line, err)) < 0)
      return r;
    if ((r = move_window (a, line, len, err)) < 0)
      return r;
    line += len;
    covered += len / rs->to.stripe_data * rs->to.chunk;
    g->windows++;
  }
  return 0;
}

