/* array/fail.c -- taking a member out of service after an I/O error.
 *
 * RAID-5 survives one lost member.  The first member to fail is marked
 * faulty (atomically: health's out slot goes from -1 to it), logged with the
 * member, path, operation and offset, and recorded in the survivors'
 * superblocks; the work that failed is then redone degraded.  A second
 * member failing, or two failing as a whole in one batch, fails the
 * array: every later request gets EIO rather than wrong data.  (Another
 * member's error about a range only is met again by the redo.)
 *
 * Why it was taken out is kept with it (struct fault), as the backend
 * tells it (io_op's link_lost): an error the member reported (its
 * storage's: it stays out until a person acts) or a host or link lost
 * (it may come back by itself, comeback.c), or failed by hand.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "array/object.h"
#include "array/state.h"
#include "array/jobs.h"

static const char *
op_name (enum io_kind kind)
{
  switch (kind) {
  case IO_READ: return "read";
  case IO_WRITE: return "write";
  case IO_ZERO: return "zero";
  case IO_PUNCH: return "punch";
  case IO_FSYNC: return "fdatasync";
  }
  return "io";
}

/* Did op fail, blaming a member of the array's slots?  A replacement's
 * op (ARRAY_REPLACEMENT, past the slots) is the replace's to drop
 * (replace_took), never a slot to take out.
 */
static bool
blames_member (const struct array *a, const struct io_op *op)
{
  return op->result < 0 && op->result != -ECANCELED &&
    op->member < a->geom.members;
}

/* Why op failed, in words, into buf: a member's end met, a connection
 * lost (whose errno alone -- EINVAL from a dead handle -- says nothing),
 * or the member's errno.
 */
static void
op_failure (const struct io_op *op, char *buf, size_t len)
{
  if (io_op_member_shrank (op))
    snprintf (buf, len, "it ends before that (truncated under the "
              "server?)");
  else if (op->link_lost)
    snprintf (buf, len, "no answer, the connection is lost (%s)",
              strerror (-op->result));
  else
    snprintf (buf, len, "%s", strerror (-op->result));
}

/* The op whose member is taken out, or NULL (the batch could not run):
 * the first whose failure is the member's as a whole (its link lost, it
 * shrank, a sync failed) if any, else the first failed.  Another
 * member's error about its range alone (io_op_range_error: a medium
 * error, say) is not a second failure: the work is redone degraded and
 * meets it again, where md's rules correct or record it -- md fails the
 * one device (md_error) and records the other's sectors
 * (handle_failed_stripe: rdev_set_badblocks).
 */
static const struct io_op *
member_to_take_out (const struct array *a, const struct io_op *ops, size_t n)
{
  const struct io_op *first = NULL;

  for (size_t i = 0; i < n; i++)
    if (blames_member (a, &ops[i])) {
      if (!io_op_range_error (&ops[i]))
        return &ops[i];
      if (first == NULL)
        first = &ops[i];
    }
  return first;
}

/* Did a member other than op's fail as a whole with it -- or at all,
 * when op's own failure is about its range (then nothing tells which
 * member to keep)?
 */
static bool
other_member_failed (const struct array *a, const struct io_op *ops,
                     size_t n, const struct io_op *op)
{
  bool whole = !io_op_range_error (op);

  for (size_t i = 0; i < n; i++)
    if (blames_member (a, &ops[i]) && ops[i].member != op->member &&
        !(whole && io_op_range_error (&ops[i])))
      return true;
  return false;
}

int
array_mark_failed (struct array *a, struct array_err *err, const char *why,
                   const char *what)
{
  health_fail_array (&a->health);
  array_set_err (err, "array has failed: %s %s", why, what);
  return -EIO;
}

/* A member failing: which, why, and whether others failed with it. */
struct failure {
  int m;
  bool others;                /* another member failed in the same batch */
  const struct io_op *ops;    /* the batch, for others (or NULL) */
  size_t nops;
  enum fault_kind kind;
  const char *why;            /* "write at 4096: ...", in what */
  char what[ARRAY_ERR_LEN];   /* "member 1 (path): write at 4096: ..." */
};

/* What the log adds to a failure: what becomes of the member (as
 * status.c's print_fault says it).
 */
static const char *
fault_fate (const struct array *a, enum fault_kind kind)
{
  switch (kind) {
  case FAULT_IO_ERROR:
    return array_readd_possible (a)
      ? "an error the member reported: it stays out until re-added or "
        "rebuilt"
      : "an error the member reported: it stays out until rebuilt";
  case FAULT_LINK_LOST: return "its host or link was lost";
  case FAULT_BY_HAND: return "failed by hand";
  case FAULT_NONE: break;
  }
  return "";
}

/* health_take_out, and if that took the member out, why (f) kept with
 * it: one step under fault_lock, so that whoever sees it faulty under the
 * lock sees why too.
 */
static enum health_taken
take_and_record (struct array *a, const struct failure *f, uint32_t gen)
{
  enum health_taken t;

  pthread_mutex_lock (&a->fault_lock);
  t = health_take_out (&a->health, (unsigned) f->m);
  if (t == HEALTH_TAKEN || t == HEALTH_REBUILD_LOST) {
    a->fault = (struct fault) { .kind = f->kind, .slot = f->m, .gen = gen };
    snprintf (a->fault.why, sizeof a->fault.why, "%s", f->why);
  }
  pthread_mutex_unlock (&a->fault_lock);
  return t;
}

/* Take member f->m out of service; see array_take_out. */
static int
take_out (struct array *a, struct failure *f, uint32_t *gen,
          struct array_err *err)
{
  int m = f->m, had;
  char *what = f->what;
  size_t len = sizeof f->what;
  uint32_t g = health_gen (&a->health, (unsigned) m);

  if (gen)
    *gen = g;
  if (f->others) {
    take_and_record (a, f, g);  /* marks it faulty */
    /* and the others with it, as md fails each (md_error per device):
     * the superblocks left record them all (meta_array_failed).
     */
    for (size_t i = 0; i < f->nops; i++)
      if (blames_member (a, &f->ops[i]) && (int) f->ops[i].member != m)
        (void) health_take_out (&a->health, f->ops[i].member);
    health_fail_array (&a->health);
    return array_mark_failed (a, err, "several members failed at once, "
                              "first", what);
  }
  switch (take_and_record (a, f, g)) {
  case HEALTH_TAKEN:
    a->count.member_failures++;
    array_log (a, ARRAY_LOG_ERROR, "%s; member marked faulty (%s), array "
               "continues degraded on %u members", what,
               fault_fate (a, f->kind), a->geom.members - 1);
    /* Out of service: its server must not wait for us.  A lost link's
     * connections may still be up (a server shutting down answers
     * ESHUTDOWN over them, and ends only once its clients have gone);
     * comeback's probe, and any re-add, make them again.
     */
    io_member_let_go (&a->members[m]);
    return 1;
  case HEALTH_REBUILD_LOST:
    job_abort_rebuild (a);      /* the new member failed: stop */
    a->count.member_failures++;
    array_log (a, ARRAY_LOG_ERROR, "%s; the member being rebuilt failed "
               "(%s): rebuild stopped, slot %d out of service", what,
               fault_fate (a, f->kind), m);
    return 1;
  case HEALTH_ALREADY:
    return 0;                 /* another request got there first */
  case HEALTH_SECOND:
    break;
  }
  had = health_out (&a->health);
  a->count.member_failures++;
  snprintf (what + strlen (what), len - strlen (what),
            ", and member %d (%s) is already out of service", had,
            a->members[had].path ? a->members[had].path : "missing");
  return array_mark_failed (a, err, "a second member failed:", what);
}

int
array_take_out (struct array *a, const struct io_op *ops, size_t n, int r,
                uint32_t *gen, struct array_err *err)
{
  const struct io_op *op = member_to_take_out (a, ops, n);
  struct failure f;

  if (op == NULL) {
    array_set_err (err, "cannot run member I/O: %s", strerror (-r));
    return r < 0 ? r : -EIO;
  }
  f.m = (int) op->member;
  f.others = other_member_failed (a, ops, n, op);
  f.ops = ops;
  f.nops = n;
  f.kind = op->link_lost ? FAULT_LINK_LOST : FAULT_IO_ERROR;
  snprintf (f.what, sizeof f.what, "member %u (%s): ", op->member,
            a->members[op->member].path);
  f.why = f.what + strlen (f.what);
  snprintf (f.what + strlen (f.what), sizeof f.what - strlen (f.what),
            "%s at %" PRIu64 ": ", op_name (op->kind), op->off);
  op_failure (op, f.what + strlen (f.what), sizeof f.what - strlen (f.what));
  return take_out (a, &f, gen, err);
}

/* Record a member just taken out (the gen-th of its slot) in the
 * superblocks.
 */
static void
record_failure (struct array *a, int slot, uint32_t gen)
{
  struct array_err merr;

  if (meta_member_failed (a, (unsigned) slot, gen, &merr) < 0)
    array_log (a, ARRAY_LOG_ERROR, "recording the failure in the "
               "superblocks: %s", merr.msg);
}

/* Is slot one a fail by hand may take out?  0, or -errno with err set. */
static int
may_fail (struct array *a, unsigned slot, struct array_err *err)
{
  int out = health_out (&a->health);

  if (out == (int) slot &&
      health_state (&a->health, slot) != MEMBER_REBUILDING) {
    array_set_err (err, "slot %u is out of service already", slot);
    return -EINVAL;
  }
  if (out >= 0 && out != (int) slot) {
    array_set_err (err, "refused: slot %d is out of service already, and "
                   "failing slot %u too would fail the array", out, slot);
    return -EBUSY;
  }
  return 0;
}

int
array_fail (struct array *a, unsigned slot, struct array_err *err)
{
  struct failure f = { .m = (int) slot, .kind = FAULT_BY_HAND,
                       .why = "failed by hand" };
  uint32_t gen;
  int t;

  if ((t = array_writable (a, "fail", err)) < 0)
    return t;
  if (slot >= a->geom.members) {
    array_set_err (err, "slot %u: the array has slots 0 to %u", slot,
                   a->geom.members - 1);
    return -EINVAL;
  }
  /* Looked at and taken out under the shape lock, as a request's failure
   * is: a replace's end looks at the slot and hands it over (its member
   * struct swapped) with the lock held for writing.  Not comeback_hold
   * (job.lock), which a holder of that lock may wait for.
   */
  pthread_rwlock_rdlock (&a->shape_lock);
  if ((t = may_fail (a, slot, err)) == 0) {
    snprintf (f.what, sizeof f.what, "member %u (%s): failed by hand", slot,
              a->members[slot].path ? a->members[slot].path : "missing");
    t = take_out (a, &f, &gen, err);
  }
  pthread_rwlock_unlock (&a->shape_lock);
  if (t == 1) {
    comeback_hold (a, slot, gen);
    record_failure (a, (int) slot, gen);
  }
  return t < 0 ? t : 0;
}

enum fault_kind
fault_of (struct array *a, unsigned slot, char *why)
{
  enum fault_kind kind = FAULT_NONE;

  pthread_mutex_lock (&a->fault_lock);
  if (a->fault.slot == (int) slot && health_out (&a->health) == (int) slot &&
      health_state (&a->health, slot) == MEMBER_FAULTY &&
      a->fault.gen == health_gen (&a->health, slot)) {
    kind = a->fault.kind;
    if (why)
      snprintf (why, ARRAY_ERR_LEN, "%s", a->fault.why);
  }
  pthread_mutex_unlock (&a->fault_lock);
  return kind;
}

int
array_io_failed (struct array *a, const struct io_op *ops, size_t n, int r,
                 struct array_err *err)
{
  uint32_t gen;
  int t = array_take_out (a, ops, n, r, &gen, err);

  if (t < 0) {
    if (array_has_failed (a))
      meta_array_failed (a);
    return t;
  }
  if (t == 1)
    record_failure (a, health_out (&a->health), gen);
  return 0;
}
