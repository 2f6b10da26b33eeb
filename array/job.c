/* array/job.c -- the array's one job at a time (md's sync_action):
 * resync after an unclean stop, check, repair, rebuild of a replaced
 * member: when it starts and ends and what status says of it; and the
 * background thread that steps it (its runner, runner.h) at the pace its
 * policy sets (pacing.h) and marks the array clean when idle.  A rebuild keeps its progress in the new member's superblock (md's
 * recovery_offset) every few seconds and at shutdown, so a restart
 * resumes it; a resync keeps its checkpoint the same way (resync_offset).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "array/pacing.h"
#include "array/runner.h"

#define IDLE_TICK_NS (50 * 1000000ULL)
#define CHECKPOINT_NS (2000 * 1000000ULL)

int
job_init (struct array *a)
{
  struct job *j = &a->job;

  if (pthread_mutex_init (&j->lock, NULL) != 0)
    return -ENOMEM;
  j->lock_made = true;
  j->rate.min = ARRAY_SYNC_SPEED_MIN;
  j->rate.max = ARRAY_SYNC_SPEED_MAX;
  if (a->grow.active) {
    /* md goes on with a reshape before anything else (md_check_recovery:
     * reshape, then recovery, then resync).
     */
    j->kind = R5_JOB_RESHAPE;
    j->cursor = a->grow.safe / a->geom.stripe_data;
  }
  /* Another slot out and nothing rebuilding it: the copy goes on,
   * degraded, as it does when a member fails while it runs (md recovers
   * the replacement from the others).  A rebuild comes first (it then
   * begins the replace: begin_next).
   */
  else if (a->replace.slot >= 0 && !health_rebuilding (&a->health) &&
           health_out (&a->health) != a->replace.slot &&
           !health_failed (&a->health)) {
    j->kind = R5_JOB_REPLACE;
    j->cursor = a->replace.copied;
  }
  else if (health_rebuilding (&a->health)) {
    uint64_t limit;

    j->kind = R5_JOB_REBUILD;
    (void) health_missing_for (&a->health, 0, &limit);
    j->cursor = limit == UINT64_MAX ? 0 : limit;
  }
  else if (meta_resync_due (a) && health_out (&a->health) < 0) {
    j->kind = R5_JOB_RESYNC;
    j->cursor = meta_resync_from (a) * 512 / a->geom.chunk;
  }
  /* md starts no resync, recovery or reshape on a read-only array
   * (md_check_recovery: nothing while !md_is_rdwr).  The cursor stays:
   * a reshape's is its line (grow_line), which the reads follow.
   */
  if (a->read_only)
    j->kind = R5_JOB_NONE;
  /* A resumed job's speed is measured from where it resumes. */
  pacing_restart (j);
  j->checkpoint_ns = array_now_ns ();
  return 0;
}

void
job_destroy (struct array *a)
{
  runner_close (a->job.runner);
  a->job.runner = NULL;
  grow_free (&a->grow);
  replace_free (&a->replace);
  if (a->job.lock_made)
    pthread_mutex_destroy (&a->job.lock);
  a->job.lock_made = false;
}

void
array_set_sync_speed (struct array *a, uint64_t min_kib, uint64_t max_kib)
{
  if (min_kib)
    a->job.rate.min = min_kib;
  if (max_kib)
    a->job.rate.max = max_kib;
  if (a->job.rate.max < a->job.rate.min)
    a->job.rate.max = a->job.rate.min;
}

void
array_set_sync_latency (struct array *a, uint64_t target_us)
{
  a->job.pacer.target_us = target_us;
}

void
array_job_pause (struct array *a, bool pause)
{
  a->job.paused = pause;
}

int
job_slot (const struct array *a)
{
  return a->job.kind == R5_JOB_REBUILD ? health_out (&a->health) : -1;
}

/* Start kind at stripe 0 (a reshape: at the line); job.lock held.  The
 * cursor is reset before anything else changes: requests read it to tell
 * a rebuilt stripe.
 */
void
job_begin (struct array *a, enum r5_job kind)
{
  struct job *j = &a->job;

  /* While a grow is under way the cursor is its line (grow.h): its
   * reshape, begun again, goes on from there; a replace begins at the
   * copy's point its caller set (replace.h: writes below it are
   * mirrored).
   */
  if (!(kind == R5_JOB_RESHAPE && a->grow.active) && kind != R5_JOB_REPLACE)
    j->cursor = 0;
  j->tally.mismatches = 0;
  j->tally.stripes_bad = 0;
  j->tally.bb_stripes = 0;
  j->tally.bb_rewritten = 0;
  j->tally.unread_stripes = 0;
  j->tally.nfound = 0;
  j->paused = false;
  j->abort = false;
  pacing_restart (j);
  j->checkpoint_ns = 0;       /* a rebuild's first step is kept at once */
  j->kind = kind;
}

int
array_job_start (struct array *a, enum r5_job kind,
                 struct array_err *err)
{
  struct job *j = &a->job;
  int r = 0;

  if (kind != R5_JOB_CHECK && kind != R5_JOB_REPAIR) {
    array_set_err (err, "only check and repair are started by hand");
    return -EINVAL;
  }
  if (kind != R5_JOB_CHECK && (r = array_writable (a, r5_job_name (kind),
                                                     err)) < 0)
    return r;
  pthread_mutex_lock (&j->lock);
  if (j->kind != R5_JOB_NONE) {
    array_set_err (err, "busy: a %s is running (%" PRIu64 "/%" PRIu64
                   " stripes)", r5_job_name (j->kind),
                   (uint64_t) j->cursor, a->geom.stripes);
    r = -EBUSY;
  }
  else if (a->grow.active) {
    array_set_err (err, "the array is being grown (its reshape stopped at "
                   "array byte %" PRIu64 "): go on with the grow first "
                   "(raid5ctl grow)", grow_line (a));
    r = -EBUSY;
  }
  else if (health_out (&a->health) >= 0 || health_failed (&a->health)) {
    array_set_err (err, "the array is degraded (slot %d out of service): "
                   "there is no parity to %s", health_out (&a->health),
                   r5_job_name (kind));
    r = -ENODEV;
  }
  else
    job_begin (a, kind);
  pthread_mutex_unlock (&j->lock);
  return r;
}

/* md cannot resync a degraded RAID-5: raid5_sync_request "asserts that
 * we are finished" for every stripe while degraded >= max_degraded, and
 * md_do_sync, not interrupted, then sets recovery_cp = MaxSector -- the
 * array is called in sync.  But md_check_recovery recovers a spare
 * first (remove_and_add_spares before it looks at recovery_cp), and the
 * resync goes on from its point once the recovery ends (begin_next) --
 * as it does when a rebuild or re-add takes over from the resync
 * (job_preempt), which is why only a job that ended by itself with
 * nothing after it (step_once), or the background finding nothing
 * running (idle_resync_check), comes here.  Both seen in kernel md
 * (tests/vm/test-md-state.sh).  job.lock held.
 */
static void
resync_while_degraded (struct array *a)
{
  struct array_err err;

  /* Only with nothing running.  A failed array (two out) keeps it: the
   * superblocks may not record the second failure, and the dirty mark is
   * then what keeps a restart from rebuilding the first from stale
   * parity.  A reshape or a replace still to go on comes first (md:
   * reshape, then recovery).
   */
  if (a->read_only || a->job.kind != R5_JOB_NONE || !meta_resync_due (a) ||
      health_out (&a->health) < 0 ||
      health_failed (&a->health) || io_member_is_open (&a->spare) ||
      a->grow.active || a->replace.slot >= 0)
    return;
  array_log (a, ARRAY_LOG_NOTICE, "slot %d is out of service: there is no "
             "parity to resync; the array is marked in sync, as md does",
             health_out (&a->health));
  meta_warn_unsynced (a);
  if (meta_resync_done (a, &err) < 0)
    array_log (a, ARRAY_LOG_ERROR, "marking the array in sync: %s", err.msg);
}

/* What follows the job kind that ended with r; job.lock held. */
static void
begin_next (struct array *a, enum r5_job kind, int r)
{
  struct job *j = &a->job;

  if (kind == R5_JOB_REPLACE && r < 0 && r != -EAGAIN)  /* -EAGAIN: held */
    replace_stopped (a, r);   /* may begin a rebuild */
  /* A replace that waited for a rebuild (md recovers both together). */
  if (kind == R5_JOB_REBUILD && r == 0 && a->replace.slot >= 0) {
    j->cursor = a->replace.copied;
    job_begin (a, R5_JOB_REPLACE);
    return;
  }
  /* A resync that waited for a whole array, or for a replace to end (md
   * does recovery -- a replacement's copy too -- and reshape first).  A
   * replace that stopped leaves the array whole when its replacement
   * failed: md_check_recovery resyncs then too, without it.
   */
  if ((kind == R5_JOB_REBUILD || kind == R5_JOB_RESHAPE ||
       kind == R5_JOB_REPLACE) && (r == 0 || kind == R5_JOB_REPLACE) &&
      j->kind == R5_JOB_NONE && meta_resync_due (a) &&
      health_out (&a->health) < 0 && !health_failed (&a->health) &&
      !a->grow.active && a->replace.slot < 0) {
    job_begin (a, R5_JOB_RESYNC);
    j->cursor = meta_resync_from (a) * 512 / a->geom.chunk;
  }
}

/* The job is over (r: 0, or why it stopped: why, the step's words, or
 * NULL); job.lock held.  say: log why it stopped (a job that runs in the
 * caller's thread, array_job_run, returns it instead).
 */
static void
finish_locked (struct array *a, enum r5_job kind, int r, const char *why,
               bool say)
{
  struct job *j = &a->job;
  struct array_err err, also;

  j->last.kind = kind;
  j->last.result = r;
  j->last.ended++;
  j->last.mismatches = j->tally.mismatches;
  j->last.stripes_bad = j->tally.stripes_bad;
  j->last.bb_stripes = j->tally.bb_stripes;
  j->last.bb_rewritten = j->tally.bb_rewritten;
  j->last.unread_stripes = j->tally.unread_stripes;
  snprintf (err.msg, sizeof err.msg, "%s",
            why && why[0] ? why : r == -ECANCELED || r == -ENODEV
            ? job_result_text (kind, r) : "");
  if (kind == R5_JOB_REBUILD && r == 0)
    r = rebuild_done (a, &err);
  else if (kind == R5_JOB_REBUILD) {
    /* Stays out of service, and the superblocks say so: a member whose
     * rebuild stopped is not in service anywhere any more.
     */
    health_rebuild_failed (&a->health);
    if (meta_member_failed (a, (unsigned) job_slot (a),
                            health_gen (&a->health, (unsigned) job_slot (a)),
                            &also) < 0)
      array_log (a, ARRAY_LOG_ERROR, "recording the stopped rebuild: %s",
                 also.msg);
  }
  else if (kind == R5_JOB_RESYNC && r == 0)
    r = meta_resync_done (a, &err);
  else if (kind == R5_JOB_RESHAPE && r == 0)
    r = grow_done (a, &err);
  else if (kind == R5_JOB_REPLACE && r == 0)
    r = replace_done (a, &err);
  else if (kind == R5_JOB_RESHAPE)
    array_log (a, ARRAY_LOG_ERROR, "the reshape stopped at array byte %"
               PRIu64 " (the superblocks say %" PRIu64 "): raid5ctl grow "
               "goes on with it", grow_line (a), (uint64_t) a->grow.safe);
  if (r < 0 && err.msg[0] == '\0')
    snprintf (err.msg, sizeof err.msg, "%s", strerror (-r));
  snprintf (j->last.why, sizeof j->last.why, "%s", r < 0 ? err.msg : "");
  if (r < 0) {
    j->last.result = r;       /* its end failed too (a replace's slot) */
    if (say)
      array_log (a, ARRAY_LOG_ERROR, "%s stopped at stripe %" PRIu64 ": %s",
                 r5_job_name (kind), (uint64_t) j->cursor, err.msg);
  }
  else
    array_log (a, ARRAY_LOG_DEBUG, "%s done: %" PRIu64 " stripes, "
               "mismatch_cnt %" PRIu64, r5_job_name (kind),
               a->geom.stripes, (uint64_t) j->tally.mismatches);
  j->kind = R5_JOB_NONE;
  runner_close (j->runner);   /* the job's threads, buffers, mappings */
  j->runner = NULL;
  begin_next (a, kind, r);
}

void
job_preempt (struct array *a)
{
  /* A replace's copy is held, not dropped, for a rebuild of another
   * slot: it goes on from its point once the rebuild ends (begin_next),
   * writes below that point mirrored meanwhile.  md does not drop a
   * replacement for a spare's recovery either.
   */
  if (a->job.kind == R5_JOB_REPLACE && a->replace.slot >= 0 &&
      !a->replace.failed && health_out (&a->health) != a->replace.slot)
    finish_locked (a, R5_JOB_REPLACE, -EAGAIN, "held while the other "
                   "slot is rebuilt: it goes on from its point after",
                   true);
  else if (a->job.kind != R5_JOB_NONE)
    finish_locked (a, a->job.kind, -ECANCELED, NULL, true);
}

/* Keep progress in the superblocks now and then. */
static void
checkpoint (struct array *a, enum r5_job kind, bool now)
{
  struct array_err err;
  uint64_t t = array_now_ns ();

  if (kind == R5_JOB_RESYNC)
    meta_set_resync_cp (a, a->job.cursor * a->geom.chunk / 512);
  if (kind == R5_JOB_REPLACE)
    replace_checkpoint (a, now);
  if (kind != R5_JOB_REBUILD ||
      (!now && t - a->job.checkpoint_ns < CHECKPOINT_NS))
    return;
  a->job.checkpoint_ns = t;
  if (meta_rebuild_progress (a, a->job.cursor, &err) < 0)
    array_log (a, ARRAY_LOG_ERROR, "keeping rebuild progress: %s", err.msg);
}

/* A spare takes the place of a failed member by itself: when no job
 * runs, or at once during a hot replace of another slot, which is held
 * meanwhile and goes on after (job_preempt) -- md interrupts the replace
 * and recovers the spare in the same pass (md_choose_sync_action,
 * remove_and_add_spares), rather than finish a copy with a member out.
 * (A replace whose own slot failed hands it to its replacement:
 * replace_stopped.)
 */
static void
maybe_use_spare (struct array *a)
{
  struct array_err err;
  int out = health_out (&a->health);
  bool replacing_another = a->job.kind == R5_JOB_REPLACE &&
    a->replace.slot >= 0 && a->replace.slot != out;

  if (out < 0 || !io_member_is_open (&a->spare) ||
      health_failed (&a->health) ||
      (a->job.kind != R5_JOB_NONE && !replacing_another) ||
      health_state (&a->health, (unsigned) out) != MEMBER_FAULTY)
    return;
  if (array_rebuild_start (a, (unsigned) out, NULL, false, &err) < 0)
    array_log (a, ARRAY_LOG_ERROR, "rebuilding onto the spare: %s", err.msg);
}

/* md_check_recovery looks again whenever nothing runs: a resync owed by
 * a degraded array with nothing to recover first is over -- one left due
 * for a spare that was then refused, one a rebuild took over from and
 * then could not begin, a dirty array started degraded with its partial
 * parity log replayed.
 */
static void
idle_resync_check (struct array *a)
{
  pthread_mutex_lock (&a->job.lock);
  resync_while_degraded (a);
  pthread_mutex_unlock (&a->job.lock);
}

/* The current job's runner, made at its first step (or made again if
 * the job changed under it).  job.lock held.
 */
static int
runner_for (struct array *a, struct array_err *err)
{
  struct job *j = &a->job;

  if (j->runner && runner_kind (j->runner) != (enum r5_job) j->kind) {
    runner_close (j->runner);
    j->runner = NULL;
  }
  return j->runner ? 0 : runner_open (a, &j->runner, err);
}

/* How much of each member a step may cover: the pace's online, the
 * watcher's offline (array_job_watch.step_bytes), else all it can.
 */
static uint64_t
reach_of (struct job *j, bool online, const struct array_job_watch *watch)
{
  if (!online && watch && watch->step_bytes)
    return watch->step_bytes;
  return pacing_reach (j, online);
}

/* Run one step of the current job; returns false when there was none.
 * job.lock is held across the step, so that nobody changes the job (and
 * its cursor) under a step in progress.
 */
static bool
step_once (struct array *a, bool online, const struct array_job_watch *watch)
{
  struct job *j = &a->job;
  enum r5_job kind;
  struct array_err err = { .msg = "" };
  int r;

  pthread_mutex_lock (&j->lock);
  kind = j->kind;
  if (kind == R5_JOB_NONE || j->paused || health_failed (&a->health)) {
    pthread_mutex_unlock (&j->lock);
    return false;
  }
  if (j->abort)
    r = -ECANCELED;
  else if (kind == R5_JOB_RESHAPE)
    r = grow_step (a, reach_of (j, online, watch), &err);
  else if (kind == R5_JOB_REPLACE)
    r = replace_step (a, reach_of (j, online, watch), &err);
  else if ((r = runner_for (a, &err)) == 0)
    r = runner_step (j->runner, reach_of (j, online, watch), watch, &err);
  checkpoint (a, kind, r < 0 || j->cursor >= a->geom.stripes);
  if (r < 0 || j->cursor >= a->geom.stripes) {
    /* A step that stopped it says why (-ECANCELED too: the replacement
     * that failed, and where); one stopped from outside says nothing.
     */
    finish_locked (a, kind, r, r < 0 && r != -ENODEV &&
                   (r != -ECANCELED || err.msg[0]) ? err.msg : NULL, online);
    resync_while_degraded (a);
  }
  pthread_mutex_unlock (&j->lock);
  return true;
}

/* The calling thread's nice value to the policy's (0: the server's
 * own); *asked is the value last asked for, tried once per change of
 * policy.  Going back up from 19 needs CAP_SYS_NICE or RLIMIT_NICE: a
 * server without them keeps the job at the lowest priority, which still
 * gets every processor the clients leave.
 */
static void
follow_policy_nice (struct array *a, int own, int *asked)
{
  int want = pacing_policy (&a->job)->nice;

  if (want == 0)
    want = own;
  if (want == *asked)
    return;
  *asked = want;
  if (setpriority (PRIO_PROCESS, (id_t) gettid (), want) < 0)
    array_log (a, ARRAY_LOG_NOTICE, "job thread: setpriority to nice %d: %s",
               want, strerror (errno));
}

static void *
background (void *arg)
{
  struct array *a = arg;
  struct array_err err;
  int own, asked;

  errno = 0;
  own = getpriority (PRIO_PROCESS, (id_t) gettid ());
  if (own == -1 && errno != 0)
    own = 0;
  asked = own;

  while (!a->job.stop) {
    uint64_t before = a->job.cursor;

    follow_policy_nice (a, own, &asked);
    if (meta_mark_clean (a, true, &err) < 0)
      array_log (a, ARRAY_LOG_ERROR, "%s", err.msg);
    maybe_use_spare (a);
    idle_resync_check (a);
    comeback_tick (a);
    keepalive_tick (a);
    if (!step_once (a, true, NULL)) {
      array_sleep_ns (IDLE_TICK_NS);
      continue;
    }
    pacing_after_step (&a->job, a->geom.chunk, a->job.cursor > before
                       ? (a->job.cursor - before) * a->geom.chunk : 0);
  }
  return NULL;
}

int
array_start_background (struct array *a)
{
  int r;

  if (a->job.started)
    return 0;
  a->job.stop = false;
  r = pthread_create (&a->job.thread, NULL, background, a);
  if (r != 0)
    return -r;
  /* Named, so that top -H, perf and bench.sh tell it from the threads
   * that serve clients (a name is at most 15 bytes).
   */
  pthread_setname_np (a->job.thread, "raid5-job");
  a->job.started = true;
  return 0;
}

void
array_stop_background (struct array *a)
{
  if (!a->job.started)
    return;
  a->job.stop = true;
  pthread_join (a->job.thread, NULL);
  a->job.started = false;
  if (a->job.kind == R5_JOB_REBUILD || a->job.kind == R5_JOB_REPLACE)
    checkpoint (a, a->job.kind, true);
}


int
array_job_run (struct array *a, enum r5_job kind,
               const struct array_job_watch *watch, struct array_err *err)
{
  struct job *j = &a->job;
  bool scrub = kind == R5_JOB_CHECK || kind == R5_JOB_REPAIR;
  bool was_dirty = false;
  uint64_t ended;
  int r = 0;

  /* Offline nothing runs the pending resync: a check looks at parity as
   * the crash left it, a repair does the resync's work on every stripe.
   */
  if (scrub && j->kind == R5_JOB_RESYNC) {
    j->kind = R5_JOB_NONE;
    was_dirty = true;
  }
  if (scrub && (r = array_job_start (a, kind, err)) < 0)
    return r;
  if (j->kind != (int) kind)
    return 0;                 /* no resync or rebuild pending */
  ended = j->last.ended;
  while (j->kind == (int) kind) {
    if (!step_once (a, false, watch))
      break;
    if (watch && watch->progress)
      watch->progress (watch->opaque, j->cursor, a->geom.stripes);
  }
  if (j->last.ended == ended) {
    /* Not ended: stopped with the array failed (step_once takes no
     * step then), not by a job of before.
     */
    array_set_err (err, "%s stopped at stripe %" PRIu64 ": the array has "
                   "failed (two members out of service)", r5_job_name (kind),
                   (uint64_t) j->cursor);
    return -EIO;
  }
  r = j->last.result;
  if (r < 0)
    array_set_err (err, "%s stopped at stripe %" PRIu64 ": %s",
                   r5_job_name (kind), (uint64_t) j->cursor,
                   r == -ENODEV ? "the array is degraded" : j->last.why);
  else if (was_dirty && kind == R5_JOB_REPAIR)
    r = meta_resync_done (a, err);
  return r;
}
