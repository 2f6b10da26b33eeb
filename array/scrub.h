/* array/scrub.h -- the parts a job's step is cut into (runner.c), each
 * run by one of the runner's threads (scrub.c).  Shared by those two
 * files only.
 */
#ifndef ARRAY_SCRUB_H
#define ARRAY_SCRUB_H

#include "array/object.h"
#include "array/jobs.h"
#include "array/runplan.h"
#include "raid/plan.h"

#define SCRUB_UNIT R5_CMP_UNIT    /* md's stripe_head unit */

/* A stripe whose parity was wrong, kept until the step ends. */
struct bad_stripe {
  uint64_t stripe, first, last;   /* chunk offsets of the first and the
                                   * last wrong unit */
  unsigned parity, units;
  /* With an integrity record: the member whose units failed their
   * checksum (-1: none; the last one if several did), how many, the
   * member offset of the first, and how many were healed (repair).
   */
  int csum_member;
  unsigned csum_units, csum_healed;
  uint64_t csum_off;
};

/* One part of a step's batch, done by one thread: the step's stripes are
 * cut into as many parts as there are processors, because with members
 * in memory a scrub is memory copies and XOR, bound by one core each.
 * Everything it points to belongs to the runner (runner.c), for the
 * job's life.
 */
struct part {
  struct array *a;
  enum r5_job kind;
  uint64_t first;             /* its first stripe */
  unsigned n;                 /* its stripes */
  char *buf;                  /* its columns within the step's buffer */
  uint64_t slice;             /* a slice's bytes; 0: read whole batches */
  char *scratch;              /* members in memory: a slice of each */
  /* Members in memory: each one's bytes of the step's stripes, mapped
   * (view.h; only a rebuilt member's may be written), or NULL where they
   * are read into (or written from) the scratch instead; NULL: none.
   */
  const struct plan_views *views;
  /* Members in memory: every part has the whole step and takes its
   * stripes one at a time from this shared counter, so that a part whose
   * thread is held up (a busy processor) leaves the rest to the others
   * rather than to wait for.  NULL: the part's own n stripes, in order.
   */
  _Atomic unsigned *next;
  struct io_op *ops;          /* room for n * (members + 1) ops */
  struct plan_cmp_out *cmp;   /* room for n */
  struct r5_plan plan;        /* the part's own, reset for each piece */
  struct bad_stripe *bad;     /* room for n */
  unsigned nbad;
  /* Read-only: the read error that gave up the last piece, and the
   * stripe last skipped for one (counted once over its slices).
   */
  struct read_error unread;
  uint64_t unread_stripe;
  uint64_t listed_stripe;     /* the stripe last counted for listed rows */
  int r;
  struct array_err err;
};

/* Do the part's share of its step: compare (check), rewrite wrong parity
 * (repair, resync) or reconstruct the rebuilt member's chunks (rebuild),
 * as raid/jobplan.h plans it.  Sets p->r to 0, -ENODEV if a member failed
 * (the array goes on degraded: a scrub can go no further), -EIO if a
 * rebuild lost a second member, -ECANCELED if the rebuilt member failed,
 * or another -errno, and then p->err.
 */
void scrub_run_part (struct part *p) __attribute__((nonnull));

#endif /* ARRAY_SCRUB_H */
