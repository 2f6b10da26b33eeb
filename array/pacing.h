/* array/pacing.h -- how a job is paced: a policy, chosen at each step,
 * and the token bucket that holds the job to the policy's rate.
 *
 *   speed    md's: at most rate.max KiB/s per member while clients are
 *            idle, rate.min while they are busy (client I/O goes first
 *            above min).
 *   latency  the latency target (sync-latency-max=, raid/pace.h): while
 *            clients are busy, as fast as keeps their p99 under the
 *            target, between the limits.
 *
 * A policy is a row of one table: what it sets is data (how many parts
 * a step runs on, how long a step is, whether members in memory are
 * read in place, how much a late job may catch up) and its rate while
 * clients are busy; the runner and the job thread read the row and
 * never ask which policy it is.
 *
 * Threads: the job thread, except where a field says otherwise.
 */
#ifndef ARRAY_PACING_H
#define ARRAY_PACING_H

#include <stdbool.h>
#include <stdint.h>

#include "array/object.h"
#include "array/jobs.h"

/* Parts (threads) a step runs on, at most, whatever the policy. */
#define JOB_MAX_PARTS 4

struct job_policy {
  const char *name;           /* "speed", "latency" */
  unsigned parts;             /* a step's parts (threads), at most */
  uint64_t step_ns;           /* online, a step covers this long's worth */
  bool map_members;           /* members in memory read in place */
  int nice;                   /* the job thread's nice (0: the server's) */
  uint64_t busy_credit_ns;    /* catch-up allowed while clients are busy */
  /* Learn from the clients at t (NULL: nothing to learn). */
  void (*tick) (struct job *j, uint64_t t);
  /* The rate while clients are busy, KiB/s per member. */
  uint64_t (*busy_kib) (const struct job *j);
};

/* The policy in force now (it changes when the latency target does). */
const struct job_policy *pacing_policy (const struct job *j)
  __attribute__((nonnull, returns_nonnull));

/* A job starts (or resumes) now: its speed is measured from here. */
void pacing_restart (struct job *j) __attribute__((nonnull));

/* Bytes of each member the next step may cover (runner_step's reach):
 * online, what the limit allows in the policy's step time, so that
 * progress moves and clients wait little for a step's stripes; offline,
 * where nobody waits and nothing limits the speed, UINT64_MAX.
 */
uint64_t pacing_reach (struct job *j, bool online) __attribute__((nonnull));

/* After a step that moved the cursor: the measured speed, then wait until
 * the limit allows the next step of bytes per member.
 */
void pacing_after_step (struct job *j, uint64_t chunk, uint64_t bytes)
  __attribute__((nonnull));

#endif /* ARRAY_PACING_H */
