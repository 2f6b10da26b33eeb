/* array/runplan.h -- the one executor: a plan of raid/plan.h, a request's
 * or a job's (raid/jobplan.h), run on the array's members in its three
 * phases -- every read as one batch (io/batch.h), then the compares and
 * the XORs, then every write as one batch.
 *
 * Where a member is in memory and mapped (io/view.h), a buffer is a
 * choice, not a copy: a read into a scratch column becomes a pointer to
 * the member's own pages, and a write of a computed column to the member
 * mapped for writing (a rebuild's) is computed in its pages and needs no
 * write at all.  The plan is the same either way.
 *
 * Failures: the return value is io_run()'s for the phase that failed
 * (nothing after it ran), and ops[0..nops) are that phase's ops with their
 * results, for array_io_failed() or array_take_out() to blame a member.
 *
 * Threads: a struct plan_run and what it points to belong to one thread.
 */
#ifndef ARRAY_RUNPLAN_H
#define ARRAY_RUNPLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "array/integrity.h"
#include "io/batch.h"
#include "raid/plan.h"

struct array;

/* Members' mappings: base[m] holds member m's bytes [off, off+len), or
 * is NULL; only member writable's (or none: -1) may be written.
 */
struct plan_views {
  char *const *base;
  uint64_t off, len;
  int writable;
};

/* What one compare found: wrong R5_CMP_UNIT units, and the chunk offsets
 * of the first and the last.
 */
struct plan_cmp_out {
  unsigned bad;
  uint64_t first, last;
};

/* Scratch columns that live in a member's mapped pages instead (the
 * executor's own, filled by plan_run_prepare).  A plan with more mapped
 * columns than this reads (or writes) the rest.
 */
#define PLAN_MAX_ALIASES (2 * R5_MAX_MEMBERS + 2)
struct plan_aliases {
  unsigned n;
  struct { uint64_t off, len; char *at; } a[PLAN_MAX_ALIASES];
};

struct plan_run {
  const struct r5_plan *plan;
  char *client;               /* R5_BUF_CLIENT; NULL if none */
  char *scratch;              /* R5_BUF_SCRATCH, plan->scratch bytes */
  const void *zero;           /* R5_BUF_ZERO, a chunk of zeroes */
  const struct plan_views *views;   /* NULL: nothing mapped */
  unsigned io_flags;          /* io_run flags of the writes (IO_FUA;
                                 IO_JOB for jobs: IO_CALLS for the reads
                                 too, and no write makes a file longer) */
  bool zero_punches;          /* R5_IO_ZERO may make holes */
  struct io_op *ops;          /* room for plan->nios */
  struct plan_cmp_out *cmp;   /* room for plan->ncmps */
  size_t nops;                /* out: the failed phase's ops */
  struct plan_aliases al;     /* the executor's */
  /* With an integrity record (integrity.h): verify phase 1's reads and
   * stop with -EBADMSG and the first unit that fails, in bad.
   */
  bool verify;
  struct integrity_bad bad;
};

/* Run x->plan on a's members.  Returns 0, or the failing phase's io_run()
 * result (see above) -- phase 2's is a fault in mapped member bytes
 * (plan_run_guarded); -ENOMEM if the plan needs more aliases of mapped
 * columns than this executor keeps (it does not: one per io).
 */
int plan_run (struct array *a, struct plan_run *x)
  __attribute__((nonnull, warn_unused_result));

/* plan_run in two steps, for a plan whose writes go out in groups (a
 * partial parity log's, ppl.h): phases 1 and 2, then the writes of the
 * stripes whose parity member is group (every write with group -1), as
 * many times as there are groups.  Results as plan_run's.
 */
int plan_run_prepare (struct array *a, struct plan_run *x)
  __attribute__((nonnull, warn_unused_result));
int plan_run_writes (struct array *a, struct plan_run *x, int group)
  __attribute__((nonnull, warn_unused_result));

/* Does the plan write anything to the stripes of group (as above)? */
bool plan_run_has_writes (const struct array *a, const struct plan_run *x,
                          unsigned group)
  __attribute__((nonnull));

/* Call fn(arg), which reads (or writes) x's mapped member bytes, with a
 * fault there (a member truncated under the server: io/sigbus.h) turned
 * into the failure of that member's op: 0, or -ENXIO (the member is
 * shorter than it was) or -ENOMEM (a hole punched in a full tmpfs) with
 * x->ops[0] (x->nops 1) that op, a page of PLAN_FAULT_PAGE bytes and no
 * buffer, for array_io_failed().  fn: as io_sigbus_run's (no lock, no
 * allocation).  Phase 2 runs so; a caller's own use of the bytes after
 * it may too (scrub.c's checksums).
 */
#define PLAN_FAULT_PAGE 4096u
int plan_run_guarded (struct array *a, struct plan_run *x,
                      void (*fn) (void *), void *arg)
  __attribute__((nonnull (1, 2, 3), warn_unused_result));

/* The memory buf names, after plan_run_prepare. */
void *plan_run_ptr (const struct plan_run *x, struct r5_buf buf)
  __attribute__((nonnull));

#endif /* ARRAY_RUNPLAN_H */
