/* array/replace.h -- hot replace (jobs room): a new device takes over a
 * slot while the slot's member stays in service, so that redundancy never
 * drops (md's want_replacement, mdadm --replace DEV --with NEW), run as
 * the job R5_JOB_REPLACE.
 *
 * The replacement is a->members[ARRAY_REPLACEMENT] while it is copied.
 * Below the job's cursor (stripes) it holds the slot's bytes: the copy
 * brought them, and the write path mirrors every write of the slot's
 * member there (its "replacement" row, replace_mirror).  From the cursor
 * on the copy brings them later: it holds each batch's stripe locks, so
 * a write either comes before the copy of its stripe (and is copied) or
 * after (and is mirrored).  The copy reads the slot's member, and
 * computes from the rest of the row what it cannot read (md reconstructs
 * only there).  Client reads keep going to the slot's member.
 *
 * Persistence (raid/mdstate.h): the replacement's own superblock says it
 * is one (MD_FEATURE_REPLACEMENT) and how far its copy is
 * (recovery_offset, kept every REPLACE_CHECKPOINT_NS after a sync of the
 * replacement); a restart goes on from there (assembly attaches it,
 * job_init resumes).  Flushes sync the replacement too.
 *
 * At the end, with no request running (the shape lock), the replacement
 * takes the slot and the old member is let go; the superblocks say so
 * (md's raid5_spare_active and raid5_remove_disk, as one step).  If the
 * replacement fails, it is dropped and the slot's member stays.  If the
 * slot's member fails, the replacement takes the slot as a member in
 * service below the copy's point and a rebuild goes on from there (md's
 * raid5_remove_disk moves the replacement into the slot; its recovery
 * goes on from its recovery_offset).  Writes between the failure and
 * that step are planned around the slot and so miss the replacement
 * (md writes them to it): their stripes below the copy's point are noted
 * (replace_mirror) and computed onto the replacement first, the last of
 * them with no request running.  Until then its superblock says its copy
 * is at 0 (meta.c records that with the failure; checkpoints stop), so
 * that a restart in between rebuilds it from the start.
 *
 * Who calls what: array_replace_start (array.h; control.c, tools'
 * offline replace) begins one; assembly attaches the replacement found
 * (replace_attach); job.c runs the steps (replace_step) and the end
 * (replace_done, replace_stopped); the write path calls replace_mirror /
 * replace_mirrored; flushes call replace_sync.  Locking: job.lock around
 * start, steps and end; the slot and cursor change only under it, the
 * cursor also only with the stripes it passes locked.  Errors: -errno,
 * one line in err.
 */
#ifndef ARRAY_REPLACE_H
#define ARRAY_REPLACE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "array/array.h"
#include "io/batch.h"
#include "raid/badblocks.h"
#include "raid/plan.h"

/* The replacement's index in a->members. */
#define ARRAY_REPLACEMENT R5_MAX_MEMBERS

#define REPLACE_CHECKPOINT_NS (2000 * 1000000ULL)

/* Spans of stripes the replacement missed (struct replace's missed). */
#define REPLACE_MISSED_SPANS 64

struct replace_span {
  uint64_t first, last;       /* stripes, both included */
};

struct replace {
  _Atomic int slot;           /* being replaced, or -1 */
  _Atomic bool failed;        /* the replacement failed: it is dropped at
                               * the job's next step (mirroring stops) */
  /* Stripes the replacement holds the slot's bytes of: the copy's point
   * (where an attached one resumes, while another job runs first).
   * Moves only with the stripes it passes locked.
   */
  _Atomic uint64_t copied;
  /* Stripes below `copied` written after the slot's member failed:
   * planned around the slot, so not mirrored.  They are computed onto the
   * replacement before it takes the slot (replace_stopped).  Merged as
   * they come; when full, the last span widens (more is computed, never
   * less).  Under missed_lock.
   */
  pthread_mutex_t missed_lock;
  struct replace_span missed[REPLACE_MISSED_SPANS];
  size_t nmissed;
  uint64_t checkpoint_ns;
  /* The job's memory, made at its first step, kept to its end. */
  char *buf;
  size_t buf_len;
  struct r5_plan plan;
  bool plan_made;
  /* The slot's pages the copy could not compute (bad on the slot's
   * member and another): the replacement's bad-block table when it takes
   * the slot; NULL: none.  The first stripe holding one bounds what a
   * checkpoint keeps, so that a restart copies it again and finds them.
   */
  struct md_bb_table *lost;
  uint64_t first_lost;
  uint64_t last_lost;         /* the stripe of the last page lost: each
                               * stripe counted once in the job's tally */
};

/* Assembly found slot's replacement (opened into ARRAY_REPLACEMENT),
 * copied up to sectors: the job goes on from there.
 */
void replace_attach (struct array *a, unsigned slot, uint64_t sectors)
  __attribute__((nonnull));

/* One step: the next stripes of the slot copied (at most reach bytes of
 * each member).  0; -ENODEV when the slot's member is out of service;
 * -ECANCELED when the replacement failed (dropped); -EIO when a stripe
 * can be neither read nor computed.
 */
int replace_step (struct array *a, uint64_t reach, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* The copy reached the end: the replacement takes the slot. */
int replace_done (struct array *a, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* The job stopped with r < 0: the slot's member out -> its replacement
 * takes the slot, rebuilt from the copy's point (from 0 if what it
 * missed cannot be computed onto it); else the replacement is dropped.
 */
void replace_stopped (struct array *a, int r) __attribute__((nonnull));

/* Keep the copy's point in the replacement's superblock (after a sync
 * of it), if REPLACE_CHECKPOINT_NS passed or now.
 */
void replace_checkpoint (struct array *a, bool now) __attribute__((nonnull));

/* The write path's row: the mirrored copies of ops[0..n) (writes of the
 * slot's member below the cursor) into extra (room for n); their count.
 * Their results are then handed to replace_mirrored: a failure drops
 * the replacement, never fails the request.  With the slot's member out
 * of service the stripes ops[] write below the copy's point are noted as
 * missed instead (none mirrored).
 */
size_t replace_mirror (struct array *a, const struct io_op *ops, size_t n,
                       struct io_op *extra)
  __attribute__((nonnull));
void replace_mirrored (struct array *a, const struct io_op *extra, size_t n)
  __attribute__((nonnull));

/* Sync the replacement, if any (a flush, a checkpoint); a failure drops
 * it.
 */
void replace_sync (struct array *a) __attribute__((nonnull));

/* A batch of ops[0..n) failed (io_run's results): if the replacement's
 * ops failed, it is marked failed (dropped later); true if no other
 * member's op failed -- the batch may then be run again without it.
 */
bool replace_took (struct array *a, const struct io_op *ops, size_t n)
  __attribute__((nonnull));

void replace_free (struct replace *r) __attribute__((nonnull));

#endif /* ARRAY_REPLACE_H */
