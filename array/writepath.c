/* array/writepath.c -- the table of write-path features (writepath.h)
 * and the stages that run it.  A feature is a row; its hooks are its own
 * files' functions, or the few lines here that say what the feature asks
 * of the planner.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "array/object.h"
#include "array/writepath.h"

static bool
always (const struct array *a)
{
  (void) a;
  return true;
}

/* The resync line: after an unclean stop parity may be wrong from the
 * resync's cursor on; writes there use RCW, which computes parity afresh,
 * rather than RMW, which would carry the error forward.  md does the same
 * from recovery_cp whatever runs (raid5.c handle_stripe_dirtying), so
 * also while the resync waits for a rebuild or a replace to end: from
 * where the superblocks say it is to go on.  (The planner gives a stripe
 * with a member missing its own way, as md's test of s->failed does.)
 */
static int
resync_shape (struct array *a, struct wp_batch *b, struct array_err *err)
{
  (void) err;
  if (a->job.kind == R5_JOB_RESYNC)
    b->plan->rcw_from = a->job.cursor;
  else if (meta_resync_due (a))
    b->plan->rcw_from = meta_resync_from (a) * 512 / a->geom.chunk;
  return 0;
}

/* The reshape line (grow.h): a batch runs in the shape its address is
 * in, and a write waits for the line to be recorded where md's does.
 */
static bool
growing (const struct array *a)
{
  return a->grow.active;
}

/* A hot replace (replace.h): writes of the slot's member below the copy's
 * point go to the replacement too.
 */
static bool
replacing (const struct array *a)
{
  return a->replace.slot >= 0;
}

static bool
ppl_on (const struct array *a)
{
  return a->ppl.on;
}

/* With a log, a batch's entries of one group fit one unit (ppl.h): the
 * planner stops before a stripe that would not fit, and the first stripe,
 * which it always plans, is cut here if it could be too big alone (the
 * partial parity of a stripe is no more than the bytes written to it,
 * and none for a full stripe).
 */
static int
ppl_shape (struct array *a, struct wp_batch *b, struct array_err *err)
{
  const uint64_t sd = a->geom.stripe_data;
  struct r5_range *rg = b->range;
  uint64_t in_first = sd - rg->off % sd < rg->len ? sd - rg->off % sd
                                                  : rg->len;

  b->plan->ppl = true;
  rg->ppl_entries = PPL_BATCH_ENTRIES;
  rg->ppl_bytes = a->ppl.unit_room;
  (void) err;
  if (in_first != sd && in_first > a->ppl.unit_room)
    rg->len = a->ppl.unit_room;
  return 0;
}

static bool
integrity_on (const struct array *a)
{
  return a->integrity.on;
}

/* A plan with entries for the log is run the log's way (ppl.h). */
static int
ppl_run_plan (struct array *a, struct plan_run *x)
{
  return x->plan->nppl > 0 ? ppl_run (a, x) : plan_run (a, x);
}

/* The record's checksums of a batch's writes are noted before the
 * writes go out, under its gate, held until they have run.
 */
static int
integrity_issue (struct array *a, const struct io_op *ops, size_t n)
{
  integrity_writes_begin (a);
  return integrity_note_writes (a, ops, n);
}

/* The features, in the order their hooks run.  The bitmap comes first:
 * its bits are durable before anything else of the write happens; then
 * the reshape line, which says the geometry the others plan in; then the
 * bad-block log, which says which member is missing (bbpath.c: a batch
 * notes the tables' version, so the row is always on).
 */
static const struct write_hook hooks[] = {
  { .name = "superblocks and bitmap", .on = always,
    .begin = meta_write_begin, .end = meta_write_end },
  { .name = "reshape line", .on = growing, .shape = grow_shape,
    .holds = grow_holds },
  { .name = "bad-block log", .on = always, .shape = bb_shape,
    .holds = bb_holds },
  { .name = "resync line", .on = always, .shape = resync_shape },
  { .name = "partial parity log", .on = ppl_on, .pad = 512,
    .shape = ppl_shape, .run = ppl_run_plan },
  { .name = "integrity record", .on = integrity_on, .pad = R5I_UNIT,
    .read_pad = R5I_UNIT, .issue = integrity_issue,
    .issued = integrity_writes_end, .verify = integrity_verify },
  { .name = "replacement", .on = replacing, .mirror = replace_mirror,
    .mirrored = replace_mirrored },
};
#define NHOOKS (sizeof hooks / sizeof hooks[0])
_Static_assert (NHOOKS <= 32, "wp_batch.shaped has a bit per hook");

uint64_t
wp_pad (const struct array *a, bool read)
{
  uint64_t pad = 1;

  for (size_t i = 0; i < NHOOKS; i++) {
    uint64_t p = read ? hooks[i].read_pad : hooks[i].pad;

    if (p > pad && hooks[i].on (a))
      pad = p;
  }
  return pad;
}

int
wp_begin (struct array *a, const struct meta_marks *marks,
          struct array_err *err)
{
  for (size_t i = 0; i < NHOOKS; i++) {
    int r;

    if (hooks[i].begin == NULL || !hooks[i].on (a) ||
        (r = hooks[i].begin (a, marks, err)) == 0)
      continue;
    while (i-- > 0)           /* end what began */
      if (hooks[i].begin && hooks[i].end && hooks[i].on (a))
        hooks[i].end (a);
    return r;
  }
  return 0;
}

void
wp_end (struct array *a)
{
  for (size_t i = NHOOKS; i-- > 0;)
    if (hooks[i].end && hooks[i].on (a))
      hooks[i].end (a);
}

int
wp_shape (struct array *a, struct wp_batch *b, struct array_err *err)
{
  b->shaped = 0;
  for (size_t i = 0; i < NHOOKS; i++) {
    int r;

    if (hooks[i].shape == NULL || !hooks[i].on (a))
      continue;
    b->shaped |= 1u << i;
    if ((r = hooks[i].shape (a, b, err)) < 0)
      return r;
  }
  return 0;
}

/* A hook that shaped the batch judges it even if it went off meanwhile:
 * a reshape that ended between the planning and the stripe locks left a
 * batch planned in the old shape (md: make_stripe_request checks a
 * "previous" stripe against reshape_progress again, which the reshape's
 * end set to MaxSector).
 */
bool
wp_holds (const struct array *a, const struct wp_batch *b)
{
  for (size_t i = 0; i < NHOOKS; i++)
    if (hooks[i].holds && (hooks[i].on (a) || (b->shaped & (1u << i))) &&
        !hooks[i].holds (a, b))
      return false;
  return true;
}

int
wp_run (struct array *a, struct plan_run *x)
{
  for (size_t i = 0; i < NHOOKS; i++)
    if (hooks[i].run && hooks[i].on (a))
      return hooks[i].run (a, x);
  return plan_run (a, x);
}

int
wp_issue (struct array *a, const struct io_op *ops, size_t n)
{
  int r = 0;

  for (size_t i = 0; i < NHOOKS; i++)
    if (hooks[i].issue && hooks[i].on (a)) {
      int e = hooks[i].issue (a, ops, n);

      r = r < 0 ? r : e;      /* every issue runs: issued follows each */
    }
  return r;
}

void
wp_issued (struct array *a)
{
  for (size_t i = NHOOKS; i-- > 0;)
    if (hooks[i].issued && hooks[i].on (a))
      hooks[i].issued (a);
}

int
wp_run_writes (struct array *a, struct io_op *ops, size_t n, size_t also,
               unsigned flags)
{
  struct io_op *extra;
  int e;

  if (!replacing (a))
    return io_run (a->members, ops, n, flags);
  if ((extra = malloc ((n + also + 1) * sizeof *extra)) == NULL)
    return -ENOMEM;
  /* The members' writes first, then their copies, each batch on its own:
   * a copy that fails is the feature's (mirrored), never the request's.
   */
  e = io_run (a->members, ops, n, flags);
  for (size_t i = 0; i < NHOOKS; i++) {
    size_t k;

    if (!hooks[i].mirror || !hooks[i].on (a) ||
        (k = hooks[i].mirror (a, ops, n + also, extra)) == 0)
      continue;
    (void) !io_run (a->members, extra, k, flags);
    hooks[i].mirrored (a, extra, k);
  }
  free (extra);
  return e;
}

bool
wp_verify (struct array *a, unsigned member, uint64_t off, const void *buf,
           uint64_t len, struct integrity_bad *bad)
{
  for (size_t i = 0; i < NHOOKS; i++)
    if (hooks[i].verify && hooks[i].on (a) &&
        !hooks[i].verify (a, member, off, buf, len, bad))
      return false;
  return true;
}
