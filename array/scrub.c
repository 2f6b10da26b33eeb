/* array/scrub.c -- a part of a job's step (scrub.h), in the thread that
 * runs it: its stripes planned by raid/jobplan.h (check, repair, rebuild)
 * and run by the one executor (runplan.h), then what the compares found
 * collected per stripe.  The RAID decisions are the planner's; how the
 * work is cut (one batch on disks, a slice at a time in memory, where
 * members are read in place) is this file's.
 *
 * Counting follows md: RAID-5 compares in 4 KiB units and adds 8 sectors
 * to mismatch_cnt for each unit whose parity is wrong.  Repair (and
 * resync) rewrite parity from the data; data is never changed, since
 * parity cannot tell which member is wrong.
 */
#include <config.h>

#include <errno.h>
#include <stdatomic.h>
#include <string.h>

#include "array/runplan.h"
#include "array/scrub.h"
#include "raid/jobplan.h"

static enum r5_job
job_of (enum array_job_kind kind)
{
  switch (kind) {
  case ARRAY_JOB_CHECK: return R5_JOB_CHECK;
  case ARRAY_JOB_REBUILD: return R5_JOB_REBUILD;
  default: return R5_JOB_REPAIR;          /* repair, resync */
  }
}

/* A compare found wrong units: add them to the part's list, to the
 * stripe's entry if the same stripe's last slice was wrong too.
 */
static void
note_wrong (struct part *p, const struct r5_cmp *c,
            const struct plan_cmp_out *o)
{
  struct bad_stripe *last = p->nbad ? &p->bad[p->nbad - 1] : NULL;

  if (last && last->stripe == c->stripe) {
    last->units += o->bad;
    last->last = o->last;
    return;
  }
  p->bad[p->nbad++] = (struct bad_stripe) {
    .stripe = c->stripe, .first = o->first, .last = o->last,
    .parity = c->parity, .units = o->bad,
  };
}

/* A member failed in a piece: taken out of service (the array goes on
 * degraded).  A scrub can go no further (-ENODEV); a rebuild has lost a
 * second member (-EIO) or the one it rebuilds (-ECANCELED).
 */
static int
failed (struct part *p, const struct plan_run *x, int r)
{
  int slot = p->a->job.slot;
  bool ours = false;

  for (size_t i = 0; i < x->nops; i++)
    ours |= x->ops[i].result < 0 && x->ops[i].result != -ECANCELED &&
      (int) x->ops[i].member == slot;
  if (array_io_failed (p->a, x->ops, x->nops, r, &p->err) < 0)
    return -EIO;
  if (p->kind != ARRAY_JOB_REBUILD)
    return -ENODEV;
  return ours ? -ECANCELED : -EIO;
}

/* Plan and run the piece of the part that span says (its stripes and
 * their chunks' bytes; the job and slot are the part's), in scratch; note
 * what the compares found.
 */
static int
run_piece (struct part *p, struct r5_job_span span, char *scratch)
{
  struct array *a = p->a;
  struct plan_run x = {
    .plan = &p->plan, .scratch = scratch, .zero = a->zero,
    .views = p->views, .ops = p->ops, .cmp = p->cmp,
  };
  int r;

  span.job = job_of (p->kind);
  span.slot = p->kind == ARRAY_JOB_REBUILD ? (unsigned) a->job.slot : 0;
  r5_plan_reset (&p->plan);
  r = r5_plan_job (&p->plan, &a->geom, &span);
  if (r < 0) {
    array_set_err (&p->err, "cannot plan the %s: %s",
                   array_job_name (p->kind), strerror (-r));
    return r;
  }
  if ((r = plan_run (a, &x)) < 0)
    return failed (p, &x, r);
  for (size_t i = 0; i < p->plan.ncmps; i++)
    if (x.cmp[i].bad)
      note_wrong (p, &p->plan.cmps[i], &x.cmp[i]);
  return 0;
}

/* The part's next of count units (stripes, or a rebuild's slices) into
 * *i (at counts its own), or false.
 */
static bool
next_of (struct part *p, unsigned *at, unsigned *i, unsigned count)
{
  *i = p->next ? atomic_fetch_add (p->next, 1) : (*at)++;
  return *i < count;
}

/* Members in memory: a slice at a time, taken from the shared counter --
 * a stripe's slices in turn for a scrub (so its compares stay together),
 * any slice of any stripe for a rebuild.
 */
static int
run_sliced (struct part *p)
{
  uint64_t slice = p->slice, chunk = p->a->geom.chunk, per = chunk / slice;
  bool rebuild = p->kind == ARRAY_JOB_REBUILD;
  unsigned count = (unsigned) (rebuild ? p->n * per : p->n), at = 0, u;
  int r = 0;

  while (r == 0 && next_of (p, &at, &u, count)) {
    uint64_t stripe = p->first + (rebuild ? u / per : u);

    if (rebuild)
      r = run_piece (p, (struct r5_job_span) {
                       .first = stripe, .n = 1, .chunk_off = u % per * slice,
                       .len = slice }, p->scratch);
    else
      for (uint64_t off = 0; off < chunk && r == 0; off += slice)
        r = run_piece (p, (struct r5_job_span) {
                         .first = stripe, .n = 1, .chunk_off = off,
                         .len = slice }, p->scratch);
  }
  return r;
}

void *
scrub_run_part (void *arg)
{
  struct part *p = arg;
  struct array *a = p->a;
  int slot = a->job.slot;

  r5_plan_init (&p->plan);
  if (p->kind == ARRAY_JOB_REBUILD
      ? slot < 0 || health_state (&a->health, (unsigned) slot)
        != MEMBER_REBUILDING
      : health_out (&a->health) >= 0)
    p->r = p->kind == ARRAY_JOB_REBUILD ? -ECANCELED : -ENODEV;
  else if (p->slice)
    p->r = run_sliced (p);
  else
    p->r = run_piece (p, (struct r5_job_span) {
                        .first = p->first, .n = p->n, .len = a->geom.chunk },
                      p->buf);
  r5_plan_free (&p->plan);
  return NULL;
}
