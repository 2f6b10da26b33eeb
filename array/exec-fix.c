/* array/exec-fix.c -- what a failed batch of a client's request asks
 * for before it is redone (exec.c): a unit that failed its checksum
 * healed, a read error corrected, or -- read-only -- read around, and on
 * a degraded array a read error that cannot be corrected kept to the
 * rows it lost.  md's rules: raid5.c raid5_end_read_request and
 * handle_stripe (R5_ReadError, R5_ReWrite, set_bad).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>

#include "array/exec-int.h"
#include "array/object.h"
#include "array/requests.h"
#include "array/state.h"

/* A read of the request failed its checksum (nothing was written): put
 * the unit right, with no stripe lock of ours held, and let the batch be
 * redone.  A unit that fails again after HEAL_TRIES heals is an error.
 */
#define HEAL_TRIES 3

int
exec_heal (struct request *rq, const struct integrity_bad *bad,
           unsigned *tries)
{
  if (++*tries > HEAL_TRIES) {
    array_set_err (rq->err, "member %u (%s): 4 KiB at member offset %"
                   PRIu64 " still fails its checksum after %u repairs",
                   bad->member, array_member_path (rq->a, bad->member),
                   bad->off, HEAL_TRIES);
    return -EIO;
  }
  return integrity_heal (rq->a, bad, false, rq->err);
}

/* Read-only, a read error is neither rewritten (md: no R5_ReWrite while
 * ro) nor a reason to take the member out: md marks the stripe's device
 * R5_ReadError, which analyse_stripe counts as failed for that stripe
 * alone, and computes the read from the rest of the row (raid5.c,
 * raid5_end_read_request and handle_stripe).  Here the batch is redone
 * with the member read around (*around).  md fails the member once its
 * read errors pass max_nr_stripes; so here, in memory.  Not while a
 * resync is due (parity may be torn: the read fails instead).  A second
 * member failing too has the batch redone a 4 KiB row at a time
 * (rq->pieces_end), each row read around its own; two failing in one
 * row cannot be computed (md: two failed devices in the stripe).
 */
int
exec_read_around (struct request *rq, const struct read_error *re,
                  int *around, uint64_t batch_end)
{
  struct array *a = rq->a;
  unsigned m = re->member;
  int r;

  if (meta_resync_due (a)) {
    array_set_err (rq->err, "member %u (%s): read error at member offset %"
                   PRIu64 ": the array is read-only and not in sync (it "
                   "was not stopped cleanly), so the bytes cannot be "
                   "computed from the others", m, array_member_path (a, m),
                   re->off);
    return -EIO;
  }
  if (*around >= 0 && rq->pieces_end < batch_end) {
    rq->pieces_end = batch_end;
    *around = -1;
    return 0;
  }
  if (*around >= 0) {
    array_set_err (rq->err, "member %u (%s): read error at member offset %"
                   PRIu64 " while member %d was read around: the bytes "
                   "cannot be computed", m, array_member_path (a, m),
                   re->off, *around);
    return -EIO;
  }
  if (array_read_errors_too_many (a, re, rq->err, &r))
    return r;
  array_log (a, ARRAY_LOG_ERROR, "member %u (%s): read error at member "
             "offset %" PRIu64 ": read from the other members, not "
             "rewritten (the array is read-only)", m,
             array_member_path (a, m), re->off);
  *around = (int) m;
  return 0;
}

/* A read error corrected with no stripe lock of ours held (heal.c), and
 * the batch redone; after CORRECT_TRIES corrections of one place its
 * member is taken out (it reads back what it was given, then fails the
 * batch's read there again).
 */
int
exec_correct (struct request *rq, const struct read_error *re,
              struct correct_tries *tries)
{
  if (array_correct_try (tries, re) > CORRECT_TRIES) {
    struct io_op op = { .kind = IO_READ, .member = re->member,
                        .off = re->off, .len = re->len,
                        .result = re->result };

    return array_io_failed (rq->a, &op, 1, re->result, rq->err);
  }
  return array_correct_read (rq->a, re, false, rq->err);
}

/* A degraded array's read failing on a member in service: its bytes
 * cannot be computed (md: "read error not correctable").  md records the
 * pages in that member's bad-block log and fails only what needs them
 * (raid5_end_read_request: set_bad, rdev_set_badblocks); so here: true
 * with *r 0, and exec_record_unreadable records them once the batch's
 * locks are let go, each row's stripe locked exclusively meanwhile (a
 * table changes only so: bbpath.c), and the batch is redone with the
 * rows listed (bb_shape fails what needs them).  Read-only, md changes
 * its table in memory only: here nothing is recorded, the request fails
 * (*r) and the member stays.  False: not such a failure.
 */
bool
exec_unreadable_degraded (struct request *rq, size_t nops, int *r)
{
  struct array *a = rq->a;
  int out = health_out (&a->health);
  const struct io_op *bad;

  if (out < 0 || (bad = array_failed_reads (a, rq->w->ops, nops)) == NULL)
    return false;
  if (!a->read_only) {
    *r = 0;
    return true;
  }
  array_set_err (rq->err, "member %u (%s): read error at member offset %"
                 PRIu64 ": not correctable, the array is degraded (member "
                 "%d is out of service) and read-only", bad->member,
                 array_member_path (a, bad->member), bad->off, out);
  *r = -EIO;
  return true;
}

int
exec_record_unreadable (struct request *rq, size_t nops,
                        const struct r5_geom *g)
{
  struct array *a = rq->a;
  int out = health_out (&a->health);

  if (out < 0)
    return 0;                 /* whole again meanwhile: redo */
  for (size_t i = 0; i < nops; i++) {
    const struct io_op *op = &rq->w->ops[i];
    struct stripe_range held;
    bool recorded = false;

    if (op->result == 0 || op->result == -ECANCELED)
      continue;
    if (op->off >= g->data_offset) {
      /* A grow moved the row meanwhile: its bytes are not these now. */
      if (!array_lock_in_shape (a, g, op->off, false, &held))
        return 0;             /* redone in the shape it is in */
      recorded = bb_reads_failed (a, op, 1, (unsigned) out, rq->err);
      stripe_unlock_range (&a->locks, &held);
    }
    /* No log, or a full one: md fails the member (md_error). */
    if (!recorded)
      return array_io_failed (a, op, 1, op->result, rq->err);
  }
  return 0;
}
