/* array/runner.h -- a job's runner: the long-lived process that runs one
 * job (check, repair, resync, rebuild) from its first step to its end,
 * after SPDK's raid_bdev_process.  Made when the job's first step runs,
 * it owns for the job's life everything a step needs: the step's buffer,
 * room for every part's ops, compares and wrong stripes, each part's
 * plan, the members' mappings, and the part threads, which wait between
 * steps.  So a step allocates nothing and starts no thread: it fills the
 * parts from the cursor and runs them (scrub.c does a part's work).
 *
 * The pacing policy (pacing.h) in force at each step says how many parts
 * run and whether members in memory are read in place; the runner keeps
 * room for the most any policy asks.
 *
 * Threads: the job thread (or array_job_run's caller) makes, steps and
 * closes its runner, with job.lock held around each step.
 */
#ifndef ARRAY_RUNNER_H
#define ARRAY_RUNNER_H

#include <stdint.h>

#include "array/object.h"
#include "array/jobs.h"

/* Make a runner for a's current job (a->job.kind, not NONE).  Returns 0
 * and *out, or -ENOMEM (err says so).
 */
int runner_open (struct array *a, struct job_runner **out,
                 struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Which job the runner was made for. */
enum r5_job runner_kind (const struct job_runner *r) __attribute__((nonnull));

/* One step: up to a batch of stripes from the cursor, under their stripe
 * locks; job.lock held by the caller.  With every member in memory a step
 * may go further than the batch, up to reach bytes of each member
 * (UINT64_MAX: as far as it likes).  watch (or NULL) hears of each
 * stripe found wrong.  Moves the cursor past what it did.  Returns 0,
 * -ENODEV when the array became degraded (a scrub can go no further),
 * -EIO when a rebuild lost a second member, -ECANCELED when the rebuilt
 * member failed, or -errno; err says why.
 */
int runner_step (struct job_runner *r, uint64_t reach,
                 const struct array_job_watch *watch, struct array_err *err)
  __attribute__((nonnull (1, 4)));

/* Stop the part threads, unmap, free.  NULL is fine. */
void runner_close (struct job_runner *r);

#endif /* ARRAY_RUNNER_H */
