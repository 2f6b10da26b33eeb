/* array/heal.c -- a unit that failed its checksum, put right from the
 * other members of its row (integrity_heal, integrity.h).
 *
 * ZFS's rule: a block whose checksum fails is read again from the
 * redundancy, and if that matches the checksum, the bad copy is
 * rewritten.  Here the redundancy is the row: the other members' units
 * at the same member offset XOR to the missing one.  Nothing is written
 * unless exactly one unit of the row fails and the others rebuild it to
 * its own checksum: parity alone could not say which unit is wrong.
 *
 * The I/O and the XOR are the jobs' plans (raid/jobplan.h) over one
 * unit of one stripe, run by the one executor (runplan.h): a check's
 * reads the whole row, then a rebuild's of the failing member, run in
 * two steps so that its computed unit is verified before it is written.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "array/integrity.h"
#include "array/object.h"
#include "array/runplan.h"
#include "raid/jobplan.h"

/* One heal's plan and room: the row's columns (members + 1 units). */
struct heal {
  struct array *a;
  struct r5_job_span span;
  struct r5_plan plan;
  char *scratch;
  struct io_op ops[R5_MAX_MEMBERS + 1];
  struct plan_cmp_out cmp[1];
};

/* Plan the span's job; a run of it in *x. */
static int
plan_row (struct heal *h, enum r5_job job, unsigned slot, struct plan_run *x)
{
  h->span.job = job;
  h->span.slot = slot;
  r5_plan_reset (&h->plan);
  *x = (struct plan_run) { .plan = &h->plan, .scratch = h->scratch,
                           .zero = h->a->zero, .ops = h->ops,
                           .cmp = h->cmp };
  return r5_plan_job (&h->plan, &h->a->geom, &h->span);
}

/* Column c of the row: member c's unit, or (c = members) the computed. */
static const char *
column (const struct heal *h, unsigned c)
{
  return h->scratch + r5_job_column (&h->a->geom, 0, c, R5I_UNIT);
}

/* Every member's unit of the row read; which fail their checksum into
 * *mask.  0, -ENODEV when a member is out of service, or an I/O error.
 */
static int
read_row (struct heal *h, uint64_t off, uint64_t *mask)
{
  struct array *a = h->a;
  struct plan_run x;
  int e;

  for (unsigned m = 0; m < a->geom.members; m++)
    if (health_state (&a->health, m) != MEMBER_ACTIVE)
      return -ENODEV;
  if ((e = plan_row (h, R5_JOB_CHECK, 0, &x)) < 0 ||
      (e = plan_run (a, &x)) < 0)
    return e;
  *mask = 0;
  for (unsigned m = 0; m < a->geom.members; m++)
    if (!integrity_verify (a, m, off, column (h, m), R5I_UNIT, NULL))
      *mask |= UINT64_C (1) << m;
  return 0;
}

/* Member m's unit rebuilt from the others; written (durably) only if it
 * is what its checksum says.  1 written, 0 not, or -errno.
 */
static int
rebuild_unit (struct heal *h, unsigned m, uint64_t off)
{
  struct plan_run x;
  int e;

  if ((e = plan_row (h, R5_JOB_REBUILD, m, &x)) < 0 ||
      (e = plan_run_prepare (h->a, &x)) < 0)
    return e;
  if (!integrity_verify (h->a, m, off, column (h, h->a->geom.members),
                         R5I_UNIT, NULL))
    return 0;
  x.io_flags = IO_FUA;
  return (e = plan_run_writes (h->a, &x, -1)) < 0 ? e : 1;
}

static int
heal_row (struct heal *h, const struct integrity_bad *b, struct array_err *err)
{
  struct array *a = h->a;
  struct integrity *t = &a->integrity;
  uint64_t mask = 0;
  int e = read_row (h, b->off, &mask);

  if (e == 0 && mask == 0)
    return 0;                   /* a write was changing it: nothing wrong */
  t->failures++;
  if (e == 0 && __builtin_popcountll (mask) == 1) {
    unsigned m = (unsigned) __builtin_ctzll (mask);

    if ((e = rebuild_unit (h, m, b->off)) > 0) {
      t->healed++;
      if (!t->quiet_heal)
        array_log (a, ARRAY_LOG_NOTICE, "member %u (%s): 4 KiB at member "
                 "offset %" PRIu64 " failed its checksum; rewritten from "
                 "the other members", m, array_member_path (a, m), b->off);
      return 0;
    }
  }
  t->unhealable++;
  array_set_err (err, "member %u (%s): 4 KiB at member offset %" PRIu64
                 " fails its checksum and cannot be rebuilt from the others "
                 "(%s)", b->member, array_member_path (a, b->member), b->off,
                 e == -ENODEV ? "a member is out of service"
                 : e < 0 ? strerror (-e)
                 : __builtin_popcountll (mask) > 1
                 ? "more than one unit of the row fails"
                 : "the others do not rebuild it to its checksum");
  return -EIO;
}

int
integrity_heal (struct array *a, const struct integrity_bad *b, bool locked,
                struct array_err *err)
{
  const struct r5_geom *g = &a->geom;
  uint64_t stripe = (b->off - g->data_offset) / g->chunk;
  struct stripe_range range = { 0, 0, false };
  struct heal h = {
    .a = a, .span = { .first = stripe, .n = 1, .len = R5I_UNIT,
                      .chunk_off = (b->off - g->data_offset) % g->chunk },
  };
  int e;

  r5_plan_init (&h.plan);
  h.scratch = aligned_alloc (R5I_UNIT, (size_t) (g->members + 1) * R5I_UNIT);
  if (h.scratch == NULL) {
    array_set_err (err, "out of memory");
    return -ENOMEM;
  }
  if (!locked)
    stripe_lock_range (&a->locks, stripe, stripe, STRIPE_EXCLUSIVE, &range);
  e = heal_row (&h, b, err);
  stripe_unlock_range (&a->locks, &range);
  r5_plan_free (&h.plan);
  free (h.scratch);
  return e;
}
