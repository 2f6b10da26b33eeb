/* raid/jobplan.h -- plans for the array's jobs: check, repair (resync),
 * rebuild, in the plan model of plan.h, run by the executor that runs
 * requests and by the plan simulator of the unit tests.
 *
 * A job plan covers stripes [first, first+n), each over the same chunk
 * bytes [chunk_off, chunk_off+len) (a whole chunk, or a slice of one so
 * that what is read is still in the processor's cache when it is
 * XORed).  Scratch holds, for each stripe in turn, one column of len
 * bytes per member and one more (the computed one): stripe i's column c
 * is at scratch offset (i * (N+1) + c) * len, so executors may put a
 * column anywhere they like (a member's own pages) as long as every
 * reference to it follows.
 *
 *   CHECK    read every member's bytes; compare parity (md's check: the
 *            units where data and parity do not XOR to zero are counted,
 *            nothing is written).
 *   REPAIR   the same, then, only where the compare found wrong parity,
 *            parity computed again from the data and written (md's
 *            repair and resync: data is never changed, parity cannot say
 *            which member is wrong).
 *   REBUILD  read every member but slot; their XOR is slot's bytes,
 *            written to slot (md's recovery).
 *
 * Pure.  Errors: -EINVAL (a range outside the array or the chunk, a
 * slot out of range, len not a multiple of R5_CMP_UNIT for a compare),
 * -ENOMEM.
 */
#ifndef RAID_JOBPLAN_H
#define RAID_JOBPLAN_H

#include <stdint.h>

#include "raid/geom.h"
#include "raid/plan.h"

/* The array's jobs, the one list of them (array/ runs them, raid5ctl and
 * status name them).  At most one runs at a time, as md's sync_action.
 * A plan (r5_plan_job) is made for CHECK, REPAIR and REBUILD; a RESYNC
 * is planned as a REPAIR (md's resync rewrites parity from the data); a
 * RESHAPE by r5_plan_reshape (reshape.h).
 */
enum r5_job {
  R5_JOB_NONE,
  R5_JOB_RESYNC,              /* parity from data after an unclean stop */
  R5_JOB_CHECK,               /* count parity mismatches, write nothing */
  R5_JOB_REPAIR,              /* rewrite wrong parity from the data */
  R5_JOB_REBUILD,             /* reconstruct a replaced member */
  R5_JOB_RESHAPE,             /* move the data to more members (grow:
                               * raid/reshape.h plans it) */
  R5_JOB_REPLACE,             /* copy a member to its replacement */
};
#define R5_JOB_KINDS (R5_JOB_REPLACE + 1)

/* The job's name as md's sync_action says it ("idle", "resync",
 * "check", "repair", "rebuild"), or "unknown".
 */
const char *r5_job_name (enum r5_job job);

/* Scratch column c (0..N; N: the computed one) of stripe i of a job
 * plan whose slices are len bytes.
 */
static inline uint64_t
r5_job_column (const struct r5_geom *g, unsigned i, unsigned c, uint64_t len)
{
  return ((uint64_t) i * (g->members + 1) + c) * len;
}

/* What r5_plan_job() plans: job on stripes [first, first+n), each over
 * chunk bytes [chunk_off, chunk_off+len); slot: the member a REBUILD
 * computes (ignored otherwise).
 */
struct r5_job_span {
  enum r5_job job;
  uint64_t first;
  unsigned n;
  uint64_t chunk_off, len;
  unsigned slot;
};

/* Append the plan of span to p.  Returns 0 or -errno (above). */
int r5_plan_job (struct r5_plan *p, const struct r5_geom *g,
                 const struct r5_job_span *span)
  __attribute__((nonnull, warn_unused_result));

#endif /* RAID_JOBPLAN_H */
