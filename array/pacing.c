/* array/pacing.c -- a job's pacing (pacing.h): the policies' table, the
 * measured speed, the token bucket.
 */
#include <config.h>

#include <stdatomic.h>

#include "array/pacing.h"

#define IDLE_TICK_NS (50 * 1000000ULL)
#define SPEED_WINDOW_NS (1000 * 1000000ULL)
#define BURST_NS (200 * 1000000ULL)
#define CATCH_UP_NS (2000 * 1000000ULL)
#define BUSY_WINDOW_NS (100 * 1000000ULL)
#define PACE_WINDOW_NS (100 * 1000000ULL)
/* An online step covers at most what the speed limit allows in this time
 * (members in memory, whose steps may be long: see runner_step).
 */
#define STEP_TIME_NS (100 * 1000000ULL)

static uint64_t
speed_busy_kib (const struct job *j)
{
  return j->rate.min;
}

/* The latency-target mode: at the end of each window, the clients'
 * latencies go to the pacer (raid/pace.h), which sets the rate the job
 * keeps while they are busy.  A new target starts the pacer afresh, at
 * min.
 */
static void
latency_tick (struct job *j, uint64_t t)
{
  struct job_pacer *p = &j->pacer;
  struct r5_lat w;

  if (p->pace.target_us != p->target_us) {
    r5_pace_init (&p->pace, p->target_us, j->rate.min, j->rate.max);
    for (unsigned b = 0; b < R5_LAT_BUCKETS; b++)
      j->clients.lat[b] = 0;
    p->window_ns = t;
  }
  if (t - p->window_ns < PACE_WINDOW_NS)
    return;
  for (unsigned b = 0; b < R5_LAT_BUCKETS; b++)
    w.bucket[b] = atomic_exchange (&j->clients.lat[b], 0);
  /* Counted while no job ran (nothing ticks then): old news. */
  if (t - p->window_ns >= 3 * PACE_WINDOW_NS) {
    p->window_ns = t;
    return;
  }
  r5_pace_bounds (&p->pace, j->rate.min, j->rate.max);
  p->paced_kib = r5_pace_window (&p->pace, &w);
  p->p99_us = p->pace.last_p99_us;
  p->cuts = p->pace.cuts;
  p->window_ns = t;
}

static uint64_t
latency_busy_kib (const struct job *j)
{
  return j->pacer.pace.rate_kib;
}

enum { POLICY_SPEED, POLICY_LATENCY };

static const struct job_policy policies[] = {
  [POLICY_SPEED] = {
    .name = "speed", .parts = JOB_MAX_PARTS, .step_ns = STEP_TIME_NS,
    .map_members = true,
    /* Credit for steps that took longer than the limit allows: up to 2 s
     * at min, so that a job slowed by a stall (clients holding its
     * stripes, a busy processor) catches up to the minimum, as md's speed
     * over its last marks does.
     */
    .busy_credit_ns = CATCH_UP_NS, .busy_kib = speed_busy_kib,
  },
  [POLICY_LATENCY] = {
    /* One part: the job takes at most one processor from the clients.
     * Steps a tenth as long: a client request that meets a step's
     * stripes waits for the whole step.  Members in memory are read (and
     * a rebuilt one written) through the I/O path, not mapped: mapping
     * and unmapping windows takes the whole process's address-space lock
     * and flushes every processor's TLB under the clients' requests -- a
     * latency outside the requests, which the pacer cannot see
     * (measured: clients' p99 0.2 -> 1.1 ms with the job at 100 MB/s per
     * member, the requests' own p99 under 70 us throughout).  No
     * catch-up: the pacer sets the rate.
     */
    .name = "latency", .parts = 1, .step_ns = STEP_TIME_NS / 10,
    .map_members = false, .busy_credit_ns = BURST_NS,
    /* The lowest CPU priority: a client's request thread that wakes
     * while the job computes takes the processor at once.  Time a
     * request waits for a processor is not in its service time, so the
     * pacer does not see it either.
     */
    .nice = 19,
    .tick = latency_tick, .busy_kib = latency_busy_kib,
  },
};

const struct job_policy *
pacing_policy (const struct job *j)
{
  return &policies[j->pacer.target_us ? POLICY_LATENCY : POLICY_SPEED];
}

void
pacing_restart (struct job *j)
{
  j->rate.mark_ns = j->rate.next_ns = array_now_ns ();
  j->rate.mark_cursor = j->cursor;
  j->rate.kib = 0;
}

/* Busy, like md's is_mddev_idle() over a window rather than at one
 * instant: a request running, or one that ended very recently.
 */
static bool
clients_busy (const struct job *j, uint64_t t)
{
  return j->clients.inflight > 0 || t - j->clients.last_ns < BUSY_WINDOW_NS;
}

/* The job's rate limit at t, KiB/s per member: max while clients are
 * idle; while they are busy, the policy's.
 */
static uint64_t
limit_kib (struct job *j, const struct job_policy *pol, uint64_t t)
{
  if (pol->tick)
    pol->tick (j, t);
  return clients_busy (j, t) ? pol->busy_kib (j) : j->rate.max;
}

uint64_t
pacing_reach (struct job *j, bool online)
{
  const struct job_policy *pol = pacing_policy (j);

  if (!online)
    return UINT64_MAX;
  return limit_kib (j, pol, array_now_ns ()) * 1024 * (pol->step_ns / 1000000)
    / 1000;
}

static void
measure (struct job *j, uint64_t chunk)
{
  uint64_t t = array_now_ns ();

  if (t - j->rate.mark_ns < SPEED_WINDOW_NS)
    return;
  j->rate.kib = (j->cursor - j->rate.mark_cursor) * chunk * 1000000000ULL /
    (t - j->rate.mark_ns) / 1024;
  j->rate.mark_ns = t;
  j->rate.mark_cursor = j->cursor;
}

/* Token bucket: after a step of bytes per member, wait until the limit
 * allows the next.  Credit for late steps is little while clients are
 * idle (BURST_NS, so that the limit holds), the policy's while they are
 * busy, and never more: a job paused for minutes does not come back with
 * minutes of burst.
 */
static void
throttle (struct job *j, uint64_t bytes)
{
  const struct job_policy *pol = pacing_policy (j);
  uint64_t t = array_now_ns (), base, due;
  uint64_t credit = clients_busy (j, t) ? pol->busy_credit_ns : BURST_NS;

  if (j->rate.next_ns + credit < t)
    j->rate.next_ns = t - credit;
  base = j->rate.next_ns;
  /* The limit is read again at every tick, so that a new one (raid5ctl
   * speed) takes effect at once, as md's does, not after this step's wait.
   */
  for (;;) {
    uint64_t kib = limit_kib (j, pacing_policy (j), t);

    due = base + bytes * 1000000000ULL / (kib * 1024);
    if (j->stop || j->abort || j->kind == R5_JOB_NONE ||
        (t = array_now_ns ()) >= due)
      break;
    array_sleep_ns (due - t < IDLE_TICK_NS ? due - t : IDLE_TICK_NS);
    j->rate.throttled_ns += array_now_ns () - t;
    t = array_now_ns ();
  }
  j->rate.next_ns = due;
}

void
pacing_after_step (struct job *j, uint64_t chunk, uint64_t bytes)
{
  measure (j, chunk);
  if (bytes)
    throttle (j, bytes);
}
