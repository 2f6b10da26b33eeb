/* array/job.c -- the array's one job at a time (md's sync_action):
 * resync after an unclean stop, check, repair, rebuild of a replaced
 * member; and the background thread that runs it at the sync speed and
 * marks the array clean when idle.
 *
 * Speed, as md: at most speed_max KiB/s per member while clients are
 * idle, falling back to speed_min while they are busy (client I/O goes
 * first above min); a token bucket turns that into a pause after each
 * step.  Or, with a latency target (sync-latency-max=), while clients are
 * busy the job runs as fast as keeps their p99 under it (raid/pace.h).
 * A rebuild keeps its progress in the new member's superblock (md's
 * recovery_offset) every few seconds and at shutdown, so a restart
 * resumes it; a resync keeps its checkpoint the same way (resync_offset).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "array/internal.h"

#define IDLE_TICK_NS (50 * 1000000ULL)
#define SPEED_WINDOW_NS (1000 * 1000000ULL)
#define CHECKPOINT_NS (2000 * 1000000ULL)
#define BURST_NS (200 * 1000000ULL)
#define CATCH_UP_NS (2000 * 1000000ULL)
#define BUSY_WINDOW_NS (100 * 1000000ULL)
#define PACE_WINDOW_NS (100 * 1000000ULL)
/* An online step covers at most what the speed limit allows in this time
 * (members in memory, whose steps may be long: see job_step).
 */
#define STEP_TIME_NS (100 * 1000000ULL)

static void
sleep_ns (uint64_t ns)
{
  struct timespec ts = { (time_t) (ns / 1000000000), (long) (ns % 1000000000) };

  nanosleep (&ts, NULL);
}

static void
close_views (struct job *j)
{
  for (unsigned m = 0; m < R5_MAX_MEMBERS; m++)
    io_view_close (&j->views[m]);
}

int
job_init (struct array *a)
{
  struct job *j = &a->job;

  if (pthread_mutex_init (&j->lock, NULL) != 0)
    return -ENOMEM;
  j->lock_made = true;
  for (unsigned m = 0; m < R5_MAX_MEMBERS; m++)
    io_view_init (&j->views[m]);
  j->speed_min = ARRAY_SYNC_SPEED_MIN;
  j->speed_max = ARRAY_SYNC_SPEED_MAX;
  if (health_rebuilding (&a->health)) {
    uint64_t limit;

    j->kind = R5_JOB_REBUILD;
    (void) health_missing_for (&a->health, 0, &limit);
    j->cursor = limit == UINT64_MAX ? 0 : limit;
  }
  else if (meta_resync_due (a) && health_out (&a->health) < 0) {
    j->kind = R5_JOB_RESYNC;
    j->cursor = meta_resync_from (a) * 512 / a->geom.chunk;
  }
  /* A resumed job's speed is measured from where it resumes. */
  j->mark_ns = j->next_ns = j->checkpoint_ns = array_now_ns ();
  j->mark_cursor = j->cursor;
  return 0;
}

void
job_destroy (struct array *a)
{
  close_views (&a->job);
  if (a->job.lock_made)
    pthread_mutex_destroy (&a->job.lock);
  a->job.lock_made = false;
}

void
array_set_sync_speed (struct array *a, uint64_t min_kib, uint64_t max_kib)
{
  if (min_kib)
    a->job.speed_min = min_kib;
  if (max_kib)
    a->job.speed_max = max_kib;
  if (a->job.speed_max < a->job.speed_min)
    a->job.speed_max = a->job.speed_min;
}

void
array_set_sync_latency (struct array *a, uint64_t target_us)
{
  a->job.latency_max_us = target_us;
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

/* Start kind at stripe 0; job.lock held.  The cursor is reset before
 * anything else changes: requests read it to tell a rebuilt stripe.
 */
void
job_begin (struct array *a, enum r5_job kind)
{
  struct job *j = &a->job;

  j->cursor = 0;
  j->mismatches = 0;
  j->stripes_bad = 0;
  j->nfound = 0;
  j->paused = false;
  j->abort = false;
  j->mark_ns = j->next_ns = array_now_ns ();
  j->checkpoint_ns = 0;       /* a rebuild's first step is kept at once */
  j->mark_cursor = 0;
  j->speed_kib = 0;
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
  pthread_mutex_lock (&j->lock);
  if (j->kind != R5_JOB_NONE) {
    array_set_err (err, "busy: a %s is running (%" PRIu64 "/%" PRIu64
                   " stripes)", r5_job_name (j->kind),
                   (uint64_t) j->cursor, a->geom.stripes);
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

void
array_job_status (struct array *a, struct array_job_status *st)
{
  struct job *j = &a->job;

  pthread_mutex_lock (&j->lock);
  *st = (struct array_job_status) {
    .kind = j->kind, .paused = j->paused, .slot = job_slot (a),
    .done = j->cursor, .total = a->geom.stripes,
    .stripe_bytes = a->geom.chunk, .speed_kib = j->speed_kib,
    .speed_min = j->speed_min, .speed_max = j->speed_max,
    .latency_max_us = j->latency_max_us, .paced_kib = j->paced_kib,
    .client_p99_us = j->client_p99_us, .pace_cuts = j->pace_cuts,
    .throttled_ms = j->throttled_ns / 1000000,
    .resync_due = meta_resync_due (a),
    .mismatches = j->mismatches, .stripes_bad = j->stripes_bad,
    .nfound = j->nfound, .last_kind = j->last_kind,
    .last_result = j->last_result, .last_mismatches = j->last_mismatches,
    .jobs_ended = j->jobs_ended,
    .last_stripes_bad = j->last_stripes_bad,
  };
  memcpy (st->found, j->found, j->nfound * sizeof j->found[0]);
  pthread_mutex_unlock (&j->lock);
}

/* The job is over (r: 0, or why it stopped); job.lock held. */
static void
finish_locked (struct array *a, enum r5_job kind, int r)
{
  struct job *j = &a->job;
  struct array_err err;

  j->last_kind = kind;
  j->last_result = r;
  j->jobs_ended++;
  j->last_mismatches = j->mismatches;
  j->last_stripes_bad = j->stripes_bad;
  snprintf (err.msg, sizeof err.msg, "%s",
            r == -ECANCELED ? "cancelled because its member failed or "
            "another job took over" : strerror (-r));
  if (kind == R5_JOB_REBUILD && r == 0)
    r = rebuild_done (a, &err);
  else if (kind == R5_JOB_REBUILD) {
    /* Stays out of service, and the superblocks say so: a member whose
     * rebuild stopped is not in service anywhere any more.
     */
    health_rebuild_failed (&a->health);
    if (meta_member_failed (a, (unsigned) job_slot (a),
                            health_gen (&a->health, (unsigned) job_slot (a)),
                            &err) < 0)
      array_log (a, ARRAY_LOG_ERROR, "recording the stopped rebuild: %s",
                 err.msg);
  }
  else if (kind == R5_JOB_RESYNC && (r == 0 || r == -ENODEV))
    r = meta_resync_done (a, &err);
  if (r < 0)
    array_log (a, ARRAY_LOG_ERROR, "%s stopped at stripe %" PRIu64 ": %s",
               r5_job_name (kind), (uint64_t) j->cursor, err.msg);
  else
    array_log (a, ARRAY_LOG_DEBUG, "%s done: %" PRIu64 " stripes, "
               "mismatch_cnt %" PRIu64, r5_job_name (kind),
               a->geom.stripes, (uint64_t) j->mismatches);
  j->kind = R5_JOB_NONE;
  close_views (j);
  /* A resync that waited for a whole array (md does recovery first). */
  if (kind == R5_JOB_REBUILD && r == 0 && meta_resync_due (a)) {
    job_begin (a, R5_JOB_RESYNC);
    j->cursor = meta_resync_from (a) * 512 / a->geom.chunk;
  }
}

void
job_preempt (struct array *a)
{
  if (a->job.kind != R5_JOB_NONE)
    finish_locked (a, a->job.kind, -ECANCELED);
}

/* Keep progress in the superblocks now and then. */
static void
checkpoint (struct array *a, enum r5_job kind, bool now)
{
  struct array_err err;
  uint64_t t = array_now_ns ();

  if (kind == R5_JOB_RESYNC)
    meta_set_resync_cp (a, a->job.cursor * a->geom.chunk / 512);
  if (kind != R5_JOB_REBUILD ||
      (!now && t - a->job.checkpoint_ns < CHECKPOINT_NS))
    return;
  a->job.checkpoint_ns = t;
  if (meta_rebuild_progress (a, a->job.cursor, &err) < 0)
    array_log (a, ARRAY_LOG_ERROR, "keeping rebuild progress: %s", err.msg);
}

static void
measure (struct job *j, uint64_t chunk)
{
  uint64_t t = array_now_ns ();

  if (t - j->mark_ns < SPEED_WINDOW_NS)
    return;
  j->speed_kib = (j->cursor - j->mark_cursor) * chunk * 1000000000ULL /
    (t - j->mark_ns) / 1024;
  j->mark_ns = t;
  j->mark_cursor = j->cursor;
}

/* Busy, like md's is_mddev_idle() over a window rather than at one
 * instant: a request running, or one that ended very recently.
 */
static bool
clients_busy (const struct job *j, uint64_t t)
{
  return j->inflight > 0 || t - j->last_request_ns < BUSY_WINDOW_NS;
}

/* The latency-target mode: at the end of each window, the clients'
 * latencies go to the pacer (raid/pace.h), which sets the rate the job
 * keeps while they are busy.  A new target starts the pacer afresh, at
 * min.
 */
static void
pace_tick (struct job *j, uint64_t t)
{
  uint64_t target = j->latency_max_us;
  struct r5_lat w;

  if (target == 0)
    return;
  if (j->pace.target_us != target) {
    r5_pace_init (&j->pace, target, j->speed_min, j->speed_max);
    for (unsigned b = 0; b < R5_LAT_BUCKETS; b++)
      j->lat[b] = 0;
    j->pace_window_ns = t;
  }
  if (t - j->pace_window_ns < PACE_WINDOW_NS)
    return;
  for (unsigned b = 0; b < R5_LAT_BUCKETS; b++)
    w.bucket[b] = atomic_exchange (&j->lat[b], 0);
  /* Counted while no job ran (nothing ticks then): old news. */
  if (t - j->pace_window_ns >= 3 * PACE_WINDOW_NS) {
    j->pace_window_ns = t;
    return;
  }
  r5_pace_bounds (&j->pace, j->speed_min, j->speed_max);
  j->paced_kib = r5_pace_window (&j->pace, &w);
  j->client_p99_us = j->pace.last_p99_us;
  j->pace_cuts = j->pace.cuts;
  j->pace_window_ns = t;
}

/* The job's rate limit at t, KiB/s per member: max while clients are
 * idle; while they are busy, min (md), or the pacer's rate.
 */
static uint64_t
limit_kib (struct job *j, uint64_t t)
{
  pace_tick (j, t);
  if (!clients_busy (j, t))
    return j->speed_max;
  return j->latency_max_us ? j->pace.rate_kib : j->speed_min;
}

/* Bytes of each member the next step may cover (job_step's reach): what
 * the limit allows in STEP_TIME_NS online, so that progress moves and
 * clients wait little for a step's stripes; offline, where nobody waits
 * and nothing limits the speed, anything.
 */
static uint64_t
step_reach (struct job *j, bool online)
{
  /* Paced by latency, steps are a tenth as long: a client request that
   * meets a step's stripes waits for the whole step.
   */
  uint64_t ms = STEP_TIME_NS / 1000000 / (j->latency_max_us ? 10 : 1);

  if (!online)
    return UINT64_MAX;
  return limit_kib (j, array_now_ns ()) * 1024 * ms / 1000;
}

/* Token bucket: after a step of bytes per member, wait until the speed
 * limit allows the next (max while clients are idle, min while busy).
 */
static void
throttle (struct array *a, uint64_t bytes)
{
  struct job *j = &a->job;
  uint64_t t = array_now_ns (), base, due;
  bool busy = clients_busy (j, t);
  /* Credit for steps that took longer than the limit allows: little at
   * max, so that the limit holds; up to 2 s at min, so that a job slowed
   * by a stall (clients holding its stripes, a busy processor) catches up
   * to the minimum, as md's speed over its last marks does.  Never more:
   * a job paused for minutes does not come back with minutes of burst.
   * Paced by latency, no catch-up either: the pacer sets the rate.
   */
  uint64_t credit = busy && !j->latency_max_us ? CATCH_UP_NS : BURST_NS;

  if (j->next_ns + credit < t)
    j->next_ns = t - credit;
  base = j->next_ns;
  /* The limit is read again at every tick, so that a new one (raid5ctl
   * speed) takes effect at once, as md's does, not after this step's wait.
   */
  for (;;) {
    uint64_t kib = limit_kib (j, t);

    due = base + bytes * 1000000000ULL / (kib * 1024);
    if (j->stop || j->abort || j->kind == R5_JOB_NONE ||
        (t = array_now_ns ()) >= due)
      break;
    sleep_ns (due - t < IDLE_TICK_NS ? due - t : IDLE_TICK_NS);
    j->throttled_ns += array_now_ns () - t;
    t = array_now_ns ();
  }
  j->next_ns = due;
}

/* A spare takes the place of a failed member by itself. */
static void
maybe_use_spare (struct array *a)
{
  struct array_err err;
  int out = health_out (&a->health);

  if (out < 0 || !io_member_is_open (&a->spare) ||
      health_failed (&a->health) || a->job.kind != 0 ||
      health_state (&a->health, (unsigned) out) != MEMBER_FAULTY)
    return;
  if (array_rebuild_start (a, (unsigned) out, NULL, false, &err) < 0)
    array_log (a, ARRAY_LOG_ERROR, "rebuilding onto the spare: %s", err.msg);
}

/* Run one step of the current job; returns false when there was none.
 * job.lock is held across the step, so that nobody changes the job (and
 * its cursor) under a step in progress.
 */
static bool
step_once (struct array *a, bool online, char **buf,
           const struct array_job_watch *watch)
{
  struct job *j = &a->job;
  enum r5_job kind;
  struct array_err err;
  int r;

  pthread_mutex_lock (&j->lock);
  kind = j->kind;
  if (kind == R5_JOB_NONE || j->paused || health_failed (&a->health)) {
    pthread_mutex_unlock (&j->lock);
    return false;
  }
  if (*buf == NULL &&
      posix_memalign ((void **) buf, 4096, job_buf_bytes (a)) != 0) {
    *buf = NULL;
    r = -ENOMEM;
  }
  else
    r = j->abort ? -ECANCELED
      : job_step (a, step_reach (j, online), *buf, watch, &err);
  if (r < 0 && r != -ENODEV && r != -ECANCELED && r != -ENOMEM)
    array_log (a, ARRAY_LOG_ERROR, "%s: %s", r5_job_name (kind), err.msg);
  checkpoint (a, kind, r < 0 || j->cursor >= a->geom.stripes);
  if (r < 0 || j->cursor >= a->geom.stripes)
    finish_locked (a, kind, r);
  pthread_mutex_unlock (&j->lock);
  return true;
}

static void *
background (void *arg)
{
  struct array *a = arg;
  struct array_err err;
  char *buf = NULL;

  while (!a->job.stop) {
    uint64_t before = a->job.cursor;

    if (meta_mark_clean (a, true, &err) < 0)
      array_log (a, ARRAY_LOG_ERROR, "%s", err.msg);
    maybe_use_spare (a);
    comeback_tick (a);
    keepalive_tick (a);
    if (!step_once (a, true, &buf, NULL)) {
      sleep_ns (IDLE_TICK_NS);
      continue;
    }
    measure (&a->job, a->geom.chunk);
    if (a->job.cursor > before)
      throttle (a, (a->job.cursor - before) * a->geom.chunk);
  }
  free (buf);
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
  if (a->job.kind == R5_JOB_REBUILD)
    checkpoint (a, R5_JOB_REBUILD, true);
}


int
array_job_run (struct array *a, enum r5_job kind,
               const struct array_job_watch *watch, struct array_err *err)
{
  struct job *j = &a->job;
  bool scrub = kind == R5_JOB_CHECK || kind == R5_JOB_REPAIR;
  bool was_dirty = false;
  char *buf = NULL;
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
  while (j->kind == (int) kind) {
    if (!step_once (a, false, &buf, watch))
      break;
    if (watch && watch->progress)
      watch->progress (watch->opaque, j->cursor, a->geom.stripes);
  }
  free (buf);
  r = j->last_result;
  if (r < 0)
    array_set_err (err, "%s stopped at stripe %" PRIu64 ": %s",
                   r5_job_name (kind), (uint64_t) j->cursor,
                   r == -ENODEV ? "the array is degraded" : strerror (-r));
  else if (was_dirty && kind == R5_JOB_REPAIR)
    r = meta_resync_done (a, err);
  return r;
}
