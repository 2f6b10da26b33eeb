/* array/replace.c -- hot replace (replace.h): its start, the copy, the
 * writes mirrored to the replacement, and its end.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "array/guard.h"
#include "array/integrity.h"
#include "array/jobs.h"
#include "array/object.h"
#include "array/replace.h"
#include "array/requests.h"
#include "array/runplan.h"
#include "array/state.h"
#include "raid/jobplan.h"
#include "raid/layout.h"

/* A copy step moves at most this much of each member. */
#define REPLACE_STEP_BYTES (1u << 20)

/* Stripes a replacement taking a failed slot may still have to catch up
 * with no request running (promote).
 */
#define CATCH_UP_LOCKED 64

static struct io_member *
replacement (struct array *a)
{
  return &a->members[ARRAY_REPLACEMENT];
}

/* --- the start ------------------------------------------------------- */

static void
forget_lost (struct replace *rp)
{
  free (rp->lost);
  rp->lost = NULL;
  rp->first_lost = UINT64_MAX;
}

/* What a replace needs of the array as it is; job.lock held. */
static int
check_replaceable (struct array *a, unsigned slot, struct array_err *err)
{
  int out = health_out (&a->health);

  if (slot >= a->geom.members)
    array_set_err (err, "slot %u: the array has slots 0 to %u", slot,
                   a->geom.members - 1);
  else if (health_failed (&a->health))
    array_set_err (err, "the array has failed");
  else if (out == (int) slot)
    array_set_err (err, "slot %u is out of service: rebuild it instead "
                   "(raid5ctl rebuild)", slot);
  else if (out >= 0)
    array_set_err (err, "the array is degraded (slot %d out of service): "
                   "rebuild that slot first", out);
  else if (a->replace.slot >= 0)
    array_set_err (err, "slot %d is being replaced already",
                   (int) a->replace.slot);
  else if (a->grow.active)
    array_set_err (err, "the array is being grown: replace when the "
                   "reshape is over");
  else if (a->job.kind != R5_JOB_NONE)
    array_set_err (err, "busy: a %s is running: let it end first",
                   r5_job_name (a->job.kind));
  else
    return 0;
  return -EINVAL;
}

/* The new device, checked as a rebuild's (guard.h) and wiped if forced,
 * opened into ARRAY_REPLACEMENT.
 */
static int
open_replacement (struct array *a, const char *path, bool force,
                  struct array_err *err)
{
  struct join_new jn = {
    .path = path, .need = a->geom.data_offset + a->geom.member_data,
    .except = -1, .force = force,
  };
  struct io_sig_list sigs = { .n = 0 };
  struct io_member *m = replacement (a);
  int r;

  if ((r = join_open_new (a, &jn, m, &sigs, err)) == 0 && sigs.n > 0)
    r = array_guard_wipe (m, &sigs, a->meta.enabled ? MD_SB_OFFSET : 0,
                          a->meta.enabled ? a->geom.data_offset : 0, err);
  if (r < 0)
    io_member_close (m);
  return r;
}

int
array_replace_start (struct array *a, unsigned slot, const char *path,
                     bool force, struct array_err *err)
{
  int r;

  pthread_mutex_lock (&a->job.lock);
  if (a->replace.slot == (int) slot &&
      io_member_named (replacement (a), path)) {
    pthread_mutex_unlock (&a->job.lock);
    return 0;                 /* asked again: it goes on (--wait follows) */
  }
  if ((r = check_replaceable (a, slot, err)) == 0 &&
      (r = open_replacement (a, path, force, err)) == 0) {
    a->job.cursor = 0;        /* nothing is mirrored below 0 */
    a->replace.copied = 0;
    a->replace.nmissed = 0;
    forget_lost (&a->replace);
    a->replace.failed = false;
    a->replace.slot = (int) slot;
    if ((r = meta_replace (a, slot, MD_EV_REPLACE_ADD, 0, err)) < 0) {
      a->replace.slot = -1;
      epoch_quiesce (&a->epochs);
      io_member_close (replacement (a));
    }
    else {
      a->replace.checkpoint_ns = array_now_ns ();
      job_begin (a, R5_JOB_REPLACE);
      array_log (a, ARRAY_LOG_NOTICE, "slot %u (%s): being replaced by %s",
                 slot, a->members[slot].path, replacement (a)->path);
    }
  }
  pthread_mutex_unlock (&a->job.lock);
  return r;
}

void
replace_attach (struct array *a, unsigned slot, uint64_t sectors)
{
  forget_lost (&a->replace);
  a->replace.slot = (int) slot;
  a->replace.copied = sectors == MD_MAX_SECTOR ? a->geom.stripes
                                               : sectors * 512 / a->geom.chunk;
  a->replace.nmissed = 0;
}

/* --- the copy -------------------------------------------------------- */

static int
make_room (struct replace *rp, size_t len, struct array_err *err)
{
  if (rp->buf_len >= len)
    return 0;
  free (rp->buf);
  rp->buf_len = 0;
  if (posix_memalign ((void **) &rp->buf, 4096, len) != 0) {
    rp->buf = NULL;
    array_set_err (err, "out of memory for the replacement's copy");
    return -ENOMEM;
  }
  rp->buf_len = len;
  return 0;
}

/* The pages of slot's chunk of stripe s that other members list bad: not
 * computed right, kept for the replacement's table (md records them bad
 * on a replacement, handle_failed_sync).  0, or -ENOMEM.
 */
static int
note_lost (struct array *a, unsigned slot, uint64_t s, struct array_err *err)
{
  const struct r5_geom *g = &a->geom;
  struct replace *rp = &a->replace;
  uint64_t row = r5_stripe_member_off (g, s);

  for (uint64_t co = 0; co < g->chunk; co += 4096) {
    if (bb_row_listed (a, s, co, 4096, (int) slot) == 0)
      continue;
    if (rp->lost == NULL && (rp->lost = malloc (sizeof *rp->lost)) != NULL)
      md_bb_init (rp->lost, a->meta.live.common.bblog_shift);
    if (rp->lost == NULL || md_bb_add (rp->lost, (row + co) / 512, 8) < 0) {
      array_set_err (err, "stripe %" PRIu64 ": slot %u's bytes there are "
                     "bad on another member too, and the replacement's "
                     "bad-block table cannot take them", s, slot);
      return -ENOSPC;
    }
    if (rp->first_lost > s)
      rp->first_lost = s;
    array_log (a, ARRAY_LOG_ERROR, "replace of slot %u: member bytes %" PRIu64
               "+4096 are bad on it and on member %u: not copied, recorded "
               "bad on the replacement", slot, row + co,
               (unsigned) __builtin_ctzll (bb_row_listed (a, s, co, 4096,
                                                          (int) slot)));
  }
  return 0;
}

/* Slot's chunk of stripe s computed from the rest of the row into dst
 * (the slot's member could not be read there, or is out of service).
 * 0, or -errno.
 */
static int
compute_chunk (struct array *a, unsigned slot, uint64_t s, char *dst,
               struct array_err *err)
{
  const struct r5_geom *g = &a->geom;
  struct r5_job_span span = { .job = R5_JOB_REBUILD, .first = s, .n = 1,
                              .len = g->chunk, .slot = slot };
  struct replace *rp = &a->replace;
  struct io_op ops[R5_MAX_MEMBERS + 1];
  char *scratch = NULL;
  struct plan_run x;
  int out = health_out (&a->health), r;

  if (out >= 0 && out != (int) slot) {
    array_set_err (err, "stripe %" PRIu64 ": slot %u's member cannot be "
                   "read there and slot %d is out of service: nothing to "
                   "compute it from", s, slot, out);
    return -EIO;
  }
  if (!rp->plan_made) {
    r5_plan_init (&rp->plan);
    rp->plan_made = true;
  }
  r5_plan_reset (&rp->plan);
  if ((r = r5_plan_job (&rp->plan, g, &span)) < 0 ||
      posix_memalign ((void **) &scratch, 4096,
                      (g->members + 1) * g->chunk) != 0) {
    array_set_err (err, "stripe %" PRIu64 ": cannot plan its computation",
                   s);
    return r < 0 ? r : -ENOMEM;
  }
  x = (struct plan_run) { .plan = &rp->plan, .scratch = scratch,
                          .zero = a->zero, .ops = ops, .io_flags = IO_CALLS };
  if ((r = plan_run_prepare (a, &x)) == 0) {
    memcpy (dst, scratch + r5_job_column (g, 0, g->members, g->chunk),
            g->chunk);
    r = note_lost (a, slot, s, err);
  }
  else
    array_set_err (err, "stripe %" PRIu64 ": slot %u's member cannot be "
                   "read there, nor the rest of its row", s, slot);
  free (scratch);
  return r < 0 ? -EIO : 0;
}

/* Stripes [first, first + n) of slot read into rp->buf: all at once, or
 * (a read failed, or the slot's member lists bad blocks there) one by
 * one, each computed from its row if need be.
 */
static int
read_slot (struct array *a, unsigned slot, uint64_t first, uint64_t n,
           struct array_err *err)
{
  const struct r5_geom *g = &a->geom;
  char *buf = a->replace.buf;
  struct io_op op = { .kind = IO_READ, .member = slot, .buf = buf,
                      .off = g->data_offset + first * g->chunk,
                      .len = n * g->chunk };
  int r = 0;

  if (!array_member_bad (a, slot, op.off, op.len, NULL) &&
      io_run (a->members, &op, 1, IO_CALLS) == 0)
    return 0;
  for (uint64_t i = 0; i < n && r == 0; i++) {
    op = (struct io_op) { .kind = IO_READ, .member = slot,
                          .buf = buf + i * g->chunk,
                          .off = g->data_offset + (first + i) * g->chunk,
                          .len = g->chunk };
    if (array_member_bad (a, slot, op.off, op.len, NULL) ||
        io_run (a->members, &op, 1, IO_CALLS) < 0)
      r = compute_chunk (a, slot, first + i, op.buf, err);
  }
  return r;
}

/* Copy stripes [first, first + n), their locks held. */
static int
copy (struct array *a, unsigned slot, uint64_t first, uint64_t n,
      struct array_err *err)
{
  const struct r5_geom *g = &a->geom;
  struct io_op w = { .kind = IO_WRITE, .member = ARRAY_REPLACEMENT,
                     .buf = a->replace.buf,
                     .off = g->data_offset + first * g->chunk,
                     .len = n * g->chunk };
  int r;

  if ((r = read_slot (a, slot, first, n, err)) < 0)
    return r;
  if (io_run (a->members, &w, 1, IO_CALLS) < 0) {
    a->replace.failed = true;
    array_set_err (err, "the replacement (%s): write at %" PRIu64 ": %s",
                   replacement (a)->path, w.off, io_strerror (w.result));
    return -ECANCELED;
  }
  return 0;
}

int
replace_step (struct array *a, uint64_t reach, struct array_err *err)
{
  struct replace *rp = &a->replace;
  const struct r5_geom *g = &a->geom;
  uint64_t first = a->job.cursor, n;
  unsigned slot = (unsigned) rp->slot;
  struct stripe_range held;
  int r;

  if (rp->failed) {
    array_set_err (err, "the replacement (%s) failed",
                   replacement (a)->path);
    return -ECANCELED;
  }
  if (health_out (&a->health) == (int) slot) {
    array_set_err (err, "slot %u's member is out of service", slot);
    return -ENODEV;
  }
  if (reach > REPLACE_STEP_BYTES)
    reach = REPLACE_STEP_BYTES;
  n = reach / g->chunk ? reach / g->chunk : 1;
  if (n > g->stripes - first)
    n = g->stripes - first;
  if (n == 0)
    return 0;
  if ((r = make_room (rp, n * g->chunk, err)) < 0)
    return r;
  stripe_lock_range (&a->locks, first, first + n - 1, STRIPE_EXCLUSIVE,
                     &held);
  /* Looked at again under the locks: a write planned around a slot that
   * failed since the look above may have gone out before them, and the
   * slot's member does not have it.  From here on no write comes in.
   */
  if (health_out (&a->health) == (int) slot) {
    array_set_err (err, "slot %u's member is out of service", slot);
    r = -ENODEV;
  }
  else if ((r = copy (a, slot, first, n, err)) == 0) {
    a->job.cursor = first + n;
    rp->copied = first + n;
  }
  stripe_unlock_range (&a->locks, &held);
  return r;
}

void
replace_checkpoint (struct array *a, bool now)
{
  struct replace *rp = &a->replace;
  struct array_err err;
  uint64_t t = array_now_ns ();

  /* Not once the slot's member is out: writes miss the replacement until
   * it takes the slot (its superblock says 0 meanwhile, replace.h).
   */
  if (rp->slot < 0 || health_out (&a->health) == rp->slot ||
      (!now && t - rp->checkpoint_ns < REPLACE_CHECKPOINT_NS))
    return;
  rp->checkpoint_ns = t;
  replace_sync (a);
  if (!rp->failed &&
      meta_replace (a, (unsigned) rp->slot, MD_EV_REPLACE_CP,
                    (a->job.cursor < rp->first_lost ? a->job.cursor
                                                    : rp->first_lost)
                    * a->geom.chunk / 512, &err) < 0)
    array_log (a, ARRAY_LOG_ERROR, "keeping the replace's progress: %s",
               err.msg);
}

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
  a->members[slot] = *replacement (a);
  io_member_init (replacement (a));
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
                   replacement (a)->path);
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
  if (r == 0 && io_run (a->members, w, 1, 0) < 0) {
    a->replace.failed = true;
    array_set_err (err, "the replacement (%s): write at %" PRIu64 ": %s",
                   replacement (a)->path, w->off, io_strerror (w->result));
    r = -ECANCELED;
  }
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

  if ((r = make_room (&a->replace, g->chunk, err)) < 0)
    return r;
  w = (struct io_op) { .kind = IO_WRITE, .member = ARRAY_REPLACEMENT,
                       .buf = a->replace.buf, .len = g->chunk,
                       .off = g->data_offset + s * g->chunk };
  stripe_lock_range (&a->locks, s, s, STRIPE_EXCLUSIVE, &held);
  if ((r = compute_chunk (a, slot, s, a->replace.buf, err)) == 0)
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
    array_set_err (err, "the replacement (%s) failed", replacement (a)->path);
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
  m = *replacement (a);
  io_member_init (replacement (a));
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

/* --- the write path -------------------------------------------------- */

/* Stripes [first, last] missed by the replacement, merged into the last
 * span if they touch it or there is no room for another.
 */
static void
note_missed (struct replace *rp, uint64_t first, uint64_t last)
{
  struct replace_span *sp;

  pthread_mutex_lock (&rp->missed_lock);
  sp = rp->nmissed > 0 ? &rp->missed[rp->nmissed - 1] : NULL;
  if (sp == NULL ||
      ((first > sp->last + 1 || last + 1 < sp->first) &&
       rp->nmissed < REPLACE_MISSED_SPANS))
    rp->missed[rp->nmissed++] = (struct replace_span) { first, last };
  else {
    if (first < sp->first)
      sp->first = first;
    if (last > sp->last)
      sp->last = last;
  }
  pthread_mutex_unlock (&rp->missed_lock);
}

/* The stripes ops[0..n) write in the data area below end (bytes). */
static void
note_writes_missed (struct array *a, const struct io_op *ops, size_t n,
                    uint64_t end)
{
  const struct r5_geom *g = &a->geom;

  for (size_t i = 0; i < n; i++) {
    const struct io_op *op = &ops[i];
    uint64_t stop;

    if (op->kind == IO_READ || op->kind == IO_FSYNC || op->len == 0 ||
        op->off < g->data_offset || op->off >= end)
      continue;
    stop = op->off + op->len < end ? op->off + op->len : end;
    note_missed (&a->replace, (op->off - g->data_offset) / g->chunk,
                 (stop - 1 - g->data_offset) / g->chunk);
  }
}

size_t
replace_mirror (struct array *a, const struct io_op *ops, size_t n,
                struct io_op *extra)
{
  const struct r5_geom *g = &a->geom;
  int slot = a->replace.slot;
  uint64_t end = g->data_offset + a->replace.copied * g->chunk;
  size_t k = 0;

  if (slot < 0)
    return 0;
  /* Out of service (it never comes back while being replaced): the
   * batch was planned around it, or its write there failed.  Noted even
   * if the replacement failed meanwhile (promote then gives up on it).
   */
  if (health_out (&a->health) == slot) {
    note_writes_missed (a, ops, n, end);
    return 0;
  }
  if (a->replace.failed)
    return 0;
  for (size_t i = 0; i < n; i++) {
    const struct io_op *op = &ops[i];

    if ((int) op->member != slot || op->kind == IO_READ ||
        op->kind == IO_FSYNC || op->off >= end)
      continue;
    extra[k] = *op;
    extra[k].member = ARRAY_REPLACEMENT;
    extra[k].result = 0;
    if (op->off + op->len > end)
      extra[k].len = end - op->off;
    k++;
  }
  return k;
}

void
replace_mirrored (struct array *a, const struct io_op *extra, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (extra[i].result < 0 && !a->replace.failed) {
      a->replace.failed = true;
      array_log (a, ARRAY_LOG_ERROR, "the replacement (%s): write at %"
                 PRIu64 ": %s: the replace stops", replacement (a)->path,
                 extra[i].off, io_strerror (extra[i].result));
    }
}

void
replace_sync (struct array *a)
{
  struct io_op op = { .kind = IO_FSYNC, .member = ARRAY_REPLACEMENT };

  if (a->replace.slot < 0 || a->replace.failed)
    return;
  if (io_run (a->members, &op, 1, 0) < 0)
    replace_mirrored (a, &op, 1);
}

bool
replace_took (struct array *a, const struct io_op *ops, size_t n)
{
  bool others = false;

  for (size_t i = 0; i < n; i++) {
    if (ops[i].result == 0 || ops[i].result == -ECANCELED)
      continue;
    if (ops[i].member == ARRAY_REPLACEMENT)
      replace_mirrored (a, &ops[i], 1);
    else
      others = true;
  }
  return !others;
}

void
replace_free (struct replace *rp)
{
  forget_lost (rp);
  free (rp->buf);
  rp->buf = NULL;
  rp->buf_len = 0;
  if (rp->plan_made)
    r5_plan_free (&rp->plan);
  rp->plan_made = false;
}
