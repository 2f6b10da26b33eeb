/* array/writepath.h -- the one table of the features that act on a
 * request as it passes through the executor (exec.c, runplan.c): the
 * superblocks' dirty mark and the bitmap, the resync line, the partial
 * parity log, the integrity record, the bad-block log, the reshape line,
 * a hot replace's copy.  The executor calls the stages below; each stage runs the
 * hooks of the features that are on, in the table's order (writepath.c),
 * so what happens to a request, and in what order, is read in one place.
 *
 * The stages, in the order a request meets them:
 *   pad      before anything: writes and zeroes are widened to whole
 *            units of the largest pad a feature asks (a log's sectors, a
 *            record's units), reads to the largest read pad (only whole
 *            units can be verified).  Bytes; 1: none.
 *   begin    a write, zero or trim is about to be planned over stripes
 *            [first, last] (no stripe lock held): a feature may make
 *            something durable first (the bitmap's bits: md's rule, the
 *            bit reaches the disk before the write).  On failure the
 *            request fails, and the hooks that began are ended.
 *   shape    a batch's plan is being made (its range, the plan's knobs):
 *            a feature sets what the planner must know (the geometry the
 *            range is in, where parity may be stale, the log's limits);
 *            under no lock.  May wait, and fail the request.
 *   holds    the batch's stripe locks are held: does what shape decided
 *            still hold (the reshape's line may have passed the batch)?
 *            If not, the batch is planned again.  A feature that shaped
 *            the batch judges it even if it went off since (a reshape
 *            that ended: the batch planned in the old shape is not run).
 *   run      the batch's plan is run, stripe locks held: by the first
 *            feature that runs plans its own way (the log: each parity
 *            group's entries logged before its writes), else plan_run.
 *   issue    a plan's writes are about to be issued (ops): a feature may
 *            record them first (the record's checksums); a failure fails
 *            the writes.  issued follows every issue, whatever it
 *            returned, once the writes have run.
 *   mirror   the writes about to run: a feature may add writes of its own
 *            to other devices, run with them (a replacement's copy of its
 *            slot's bytes); mirrored hands it their results (a failure of
 *            these is the feature's, never the request's).
 *   verify   a read's bytes arrived: are they right?
 *   end      the request is done, whatever its result.
 *
 * Threads: any request thread; each hook keeps its own locks.
 */
#ifndef ARRAY_WRITEPATH_H
#define ARRAY_WRITEPATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "array/integrity.h"
#include "array/runplan.h"
#include "io/batch.h"
#include "raid/plan.h"

struct meta_marks;            /* meta.h */

struct array;

/* A batch being planned: the range asked of the planner (a hook may cut
 * len, change missing, set the log's limits), the plan, reset (a hook may
 * set its knobs: rcw_from, ppl), the geometry it is planned in (the
 * array's, unless a hook says otherwise) and whether even a healthy read
 * must hold its stripes' locks.
 */
struct wp_batch {
  struct r5_range *range;
  struct r5_plan *plan;
  const struct r5_geom *geom;
  bool lock_reads;
  uint64_t bb_version;        /* the bad-block tables it was planned with */
  int bb_member;              /* treated as missing for its listed bytes,
                               * to be rewritten after (bbpath.c); -1 */
  unsigned shaped;            /* the hooks that shaped it, 1 << index
                               * (set by wp_shape) */
};

struct write_hook {
  const char *name;
  bool (*on) (const struct array *a);
  uint64_t pad, read_pad;     /* bytes; 0: none */
  int (*begin) (struct array *a, const struct meta_marks *marks,
                struct array_err *err);
  int (*shape) (struct array *a, struct wp_batch *b, struct array_err *err);
  bool (*holds) (const struct array *a, const struct wp_batch *b);
  int (*run) (struct array *a, struct plan_run *x);
  int (*issue) (struct array *a, const struct io_op *ops, size_t n);
  void (*issued) (struct array *a);
  size_t (*mirror) (struct array *a, const struct io_op *ops, size_t n,
                    struct io_op *extra);
  void (*mirrored) (struct array *a, const struct io_op *extra, size_t n);
  bool (*verify) (struct array *a, unsigned member, uint64_t off,
                  const void *buf, uint64_t len, struct integrity_bad *bad);
  void (*end) (struct array *a);
};

/* The stages (see above).  wp_pad: of writes and zeroes (read false) or
 * of reads; 1 if no feature pads.  wp_shape: 0, or -errno with err set.
 * wp_run: 0 or the executor's result (runplan.h).  wp_verify: true if
 * every feature that verifies says the bytes are right; else false with
 * *bad (NULL: not wanted).
 */
uint64_t wp_pad (const struct array *a, bool read) __attribute__((nonnull));
int wp_begin (struct array *a, const struct meta_marks *marks,
              struct array_err *err)
  __attribute__((nonnull, warn_unused_result));
int wp_shape (struct array *a, struct wp_batch *b, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));
bool wp_holds (const struct array *a, const struct wp_batch *b)
  __attribute__((nonnull));
int wp_run (struct array *a, struct plan_run *x)
  __attribute__((nonnull, warn_unused_result));
int wp_issue (struct array *a, const struct io_op *ops, size_t n)
  __attribute__((nonnull (1), warn_unused_result));
void wp_issued (struct array *a) __attribute__((nonnull));
/* Run ops[0..n) with io_run's flags, and whatever the features mirror
 * of ops[0..n+also) (also: writes made in a member's mapped pages);
 * io_run's result for ops[0..n).
 */
int wp_run_writes (struct array *a, struct io_op *ops, size_t n,
                   size_t also, unsigned flags)
  __attribute__((nonnull (1), warn_unused_result));
bool wp_verify (struct array *a, unsigned member, uint64_t off,
                const void *buf, uint64_t len, struct integrity_bad *bad)
  __attribute__((nonnull (1, 4)));
void wp_end (struct array *a) __attribute__((nonnull));

#endif /* ARRAY_WRITEPATH_H */
