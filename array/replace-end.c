/* array/replace-end.c -- the end of a hot replace (replace.h): the
 * replacement takes the slot when the copy is done, or when the slot's
 * member failed mid-copy (what it missed computed onto it first, then
 * rebuilt from the copy's point); else it is let go.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "array/integrity.h"
#include "array/jobs.h"
#include "array/object.h"
#include "array/replace-int.h"
#include "array/replace.h"
#include "array/requests.h"
#include "raid/jobplan.h"

/* Stripes a replacement taking a failed slot may still have to catch up
 * with no request running (promote).
 */
#define CATCH_UP_LOCKED 64

/* --- the end --------------------------------------------------------- */

/* The replacement into members[slot]; the member it replaces returned
 * (the caller closes it).  Under meta.lock: a superblock write
 * (meta_write_out) of a thread that is no request -- the clean mark, a
 * job's checkpoint -- may be queueing or writing these members' structs.
 */
static struct io_member
swap_in (struct array *a, unsigned slot)
{
  struct io_member old;

  pthread_mutex_lock (&a->meta.lock);
  old = a->members[slot];
  a->members[slot] = *replace_replacement (a);
  io_member_init (replace_replacement (a));
  pthread_mutex_unlock (&a->meta.lock);
  return old;
}

/* The replacement, now slot's member, takes the pages its copy could not
 * compute as its bad-block table (written if r, the slot's superblocks'
 * result, is 0), or an empty one.  r, or the table's write's result.
 */
static int
give_lost (struct array *a, unsigned slot, int r, struct array_err *err)
{
  struct replace *rp = &a->replace;

  if (rp->lost == NULL) {
    array_bb_new_member (a, slot);
    return r;
  }
  array_bb_attach (a, slot, rp->lost);
  rp->lost = NULL;
  return r == 0 ? meta_bb_write (a, slot, err) : r;
}

/* Stop mirroring, and wait out the requests that may still be (their
 * epochs); slot is then no longer being replaced.  job.lock held.
 */
static unsigned
stop_mirroring (struct array *a)
{
  unsigned slot = (unsigned) a->replace.slot;

  a->replace.slot = -1;
  epoch_quiesce (&a->epochs);
  return slot;
}

int
replace_done (struct array *a, struct array_err *err)
{
  struct replace *rp = &a->replace;
  unsigned slot = (unsigned) rp->slot;
  struct io_member old;
  int r;

  replace_sync (a);
  if (rp->failed) {
    array_set_err (err, "the replacement (%s) failed its last sync",
                   replace_replacement (a)->path);
    return -ECANCELED;
  }
  /* With no request running, the replacement takes the slot -- if the
   * slot's member is still in service.  One that failed after the last
   * step's look (a request's write to it, a fail by hand) left writes
   * made without it, which were not mirrored: the replacement missed
   * them, and is rebuilt into the slot instead (replace_stopped).
   */
  pthread_rwlock_wrlock (&a->shape_lock);
  if (health_out (&a->health) == (int) slot) {
    pthread_rwlock_unlock (&a->shape_lock);
    array_set_err (err, "slot %u's member failed as the copy ended", slot);
    return -ENODEV;
  }
  rp->slot = -1;
  old = swap_in (a, slot);
  health_member_replaced (&a->health, slot);
  r = meta_replace (a, slot, MD_EV_REPLACE_DONE, 0, err);
  r = give_lost (a, slot, r, err);
  pthread_rwlock_unlock (&a->shape_lock);
  array_log (a, ARRAY_LOG_NOTICE, "slot %u: %s replaced by %s%s", slot,
             old.path, a->members[slot].path,
             r < 0 ? " (recording it in the superblocks failed)" : "");
  io_member_close (&old);
  return r;
}

/* --- the slot's member failed: the replacement takes the slot --------- */

/* The replacement's write of w (slot's bytes), its checksums noted for
 * the slot in the integrity record (it is the slot's member from now).
 */
static int
write_for_slot (struct array *a, unsigned slot, struct io_op *w,
                struct array_err *err)
{
  struct io_op as_slot = *w;
  int r = 0;

  as_slot.member = slot;
  if (a->integrity.on) {
    integrity_writes_begin (a);
    r = integrity_note_writes (a, &as_slot, 1);
  }
  if (r == 0 && io_run (a->members, w, 1, IO_JOB) < 0)
    r = replace_write_failed (a, w, err);
  else if (r < 0)
    array_set_err (err, "integrity record: %s", strerror (-r));
  if (a->integrity.on)
    integrity_writes_end (a);
  return r;
}

/* Slot's chunk of stripe s computed from the rest of its row onto the
 * replacement, the stripe locked.
 */
static int
recompute (struct array *a, unsigned slot, uint64_t s, struct array_err *err)
{
  const struct r5_geom *g = &a->geom;
  struct stripe_range held;
  struct io_op w;
  int r;

  if ((r = replace_make_room (&a->replace, g->chunk, err)) < 0)
    return r;
  w = (struct io_op) { .kind = IO_WRITE, .member = ARRAY_REPLACEMENT,
                       .buf = a->replace.buf, .len = g->chunk,
                       .off = g->data_offset + s * g->chunk };
  stripe_lock_range (&a->locks, s, s, STRIPE_EXCLUSIVE, &held);
  if ((r = replace_compute_chunk (a, slot, s, a->replace.buf, err)) == 0)
    r = write_for_slot (a, slot, &w, err);
  stripe_unlock_range (&a->locks, &held);
  return r;
}

/* The stripes missed so far (replace.h) computed onto the replacement;
 * how many, or -errno.
 */
static int64_t
catch_up (struct array *a, unsigned slot, struct array_err *err)
{
  struct replace *rp = &a->replace;
  struct replace_span spans[REPLACE_MISSED_SPANS];
  int64_t done = 0;
  size_t n;

  pthread_mutex_lock (&rp->missed_lock);
  n = rp->nmissed;
  memcpy (spans, rp->missed, n * sizeof *spans);
  rp->nmissed = 0;
  pthread_mutex_unlock (&rp->missed_lock);
  for (size_t i = 0; i < n; i++)
    for (uint64_t s = spans[i].first; s <= spans[i].last; s++, done++) {
      int r = recompute (a, slot, s, err);

      if (r < 0)
        return r;
    }
  return done;
}

/* The replacement into the slot, rebuilt from stripe `from` on; shape
 * lock held exclusively, no job.  As rebuild.c's begin, in one step.
 */
static void
take_slot (struct array *a, unsigned slot, uint64_t from)
{
  struct replace *rp = &a->replace;
  struct array_err err;
  struct io_member old;
  int r;

  rp->slot = -1;              /* mirroring over: no request runs */
  old = swap_in (a, slot);
  job_begin (a, R5_JOB_REBUILD);
  a->job.cursor = from;
  health_rebuild_begin (&a->health, slot, false, from);
  rebuild_slot_taken (a, slot);
  r = meta_replace (a, slot, MD_EV_REPLACE_PROMOTE,
                    from * a->geom.chunk / 512, &err);
  r = give_lost (a, slot, r, &err);
  if (r < 0) {
    /* As a rebuild whose start could not be recorded. */
    a->job.kind = R5_JOB_NONE;
    rebuild_join_failed (a, slot);
    array_log (a, ARRAY_LOG_ERROR, "slot %u: recording %s in it: %s", slot,
               a->members[slot].path, err.msg);
  }
  else
    array_log (a, ARRAY_LOG_ERROR, "slot %u's member (%s) failed while it "
               "was being replaced: %s takes the slot, rebuilt from stripe %"
               PRIu64 " on (its copy's point)", slot, old.path,
               a->members[slot].path, from);
  io_member_close (&old);
}

/* md's raid5_remove_disk for a slot whose member failed mid-copy: the
 * replacement takes it, the recovery going on from where the copy got.
 * What the replacement missed is computed onto it first: most of it with
 * requests going on, the rest (little, unless writes kept coming) with
 * none (the shape lock), so that no write planned around the slot is
 * still to come.  job.lock held, no
 * job.  0; or -errno with nothing changed but the replacement's bytes.
 */
static int
promote (struct array *a, struct array_err *err)
{
  struct replace *rp = &a->replace;
  unsigned slot = (unsigned) rp->slot;
  uint64_t from = rp->copied;
  unsigned pass = 0;
  int64_t r;

  /* Until a pass finds little new (or 16 passes): what is left for the
   * pass with no request running is then small.
   */
  do
    r = catch_up (a, slot, err);
  while (r > CATCH_UP_LOCKED && ++pass < 16);
  if (r < 0)
    return (int) r;
  pthread_rwlock_wrlock (&a->shape_lock);
  r = catch_up (a, slot, err);
  /* What it holds durable before its superblock says so (as a
   * checkpoint syncs first), and the failure recorded before the slot
   * changes hands: a fail by hand records it after letting the shape
   * lock go.
   */
  if (r >= 0)
    replace_sync (a);
  if (r >= 0 && rp->failed) {
    array_set_err (err, "the replacement (%s) failed",
                   replace_replacement (a)->path);
    r = -ECANCELED;
  }
  else if (r >= 0 && health_failed (&a->health)) {
    array_set_err (err, "the array has failed");
    r = -EIO;
  }
  if (r >= 0)
    r = meta_record_out (a, err);
  if (r >= 0)
    take_slot (a, slot, from);
  pthread_rwlock_unlock (&a->shape_lock);
  return r < 0 ? (int) r : 0;
}

void
replace_stopped (struct array *a, int r)
{
  struct array_err err;
  struct io_member m;
  unsigned slot;

  if (a->replace.slot < 0)
    return;
  slot = (unsigned) a->replace.slot;
  if (r == -ENODEV && health_out (&a->health) == (int) slot &&
      !a->replace.failed) {
    if (promote (a, &err) == 0)
      return;
    array_log (a, ARRAY_LOG_ERROR, "slot %u: the replacement cannot go on "
               "from its copy's point: %s", slot, err.msg);
  }
  slot = stop_mirroring (a);
  pthread_mutex_lock (&a->meta.lock);         /* as in swap_in */
  m = *replace_replacement (a);
  io_member_init (replace_replacement (a));
  pthread_mutex_unlock (&a->meta.lock);
  if (meta_replace (a, slot, MD_EV_REPLACE_DROP, 0, &err) < 0)
    array_log (a, ARRAY_LOG_ERROR, "dropping the replacement: %s", err.msg);
  if (r == -ENODEV && health_out (&a->health) == (int) slot &&
      !a->replace.failed) {
    array_log (a, ARRAY_LOG_ERROR, "slot %u's member failed while it was "
               "being replaced: %s is rebuilt into the slot instead", slot,
               m.path);
    if (rebuild_onto (a, slot, &m, &err) < 0)
      array_log (a, ARRAY_LOG_ERROR, "rebuilding slot %u onto %s: %s", slot,
                 m.path, err.msg);
  }
  else if (health_out (&a->health) == (int) slot)
    array_log (a, ARRAY_LOG_ERROR, "slot %u: its member and its replacement "
               "(%s) both failed: the replacement is let go, the slot stays "
               "out of service", slot, m.path);
  else
    array_log (a, ARRAY_LOG_ERROR, "slot %u: the replace stopped; %s is "
               "let go and slot %u's member stays in service", slot, m.path,
               slot);
  io_member_close (&m);
}
