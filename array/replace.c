/* array/replace.c -- hot replace (replace.h): its start and the copy.
 * Its end is in replace-end.c, the writes mirrored to the replacement in
 * replace-mirror.c (replace-int.h between them).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array/badblocks.h"
#include "array/guard.h"
#include "array/jobs.h"
#include "array/object.h"
#include "array/replace-int.h"
#include "array/replace.h"
#include "array/requests.h"
#include "array/runplan.h"
#include "array/state.h"
#include "raid/jobplan.h"
#include "raid/layout.h"

/* A copy step moves at most this much of each member. */
#define REPLACE_STEP_BYTES (1u << 20)

struct io_member *
replace_replacement (struct array *a)
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
  rp->last_lost = UINT64_MAX;
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
  struct io_member *m = replace_replacement (a);
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

  if ((r = array_writable (a, "replace", err)) < 0)
    return r;
  pthread_mutex_lock (&a->job.lock);
  if (a->replace.slot == (int) slot &&
      io_member_named (replace_replacement (a), path)) {
    pthread_mutex_unlock (&a->job.lock);
    return 0;                 /* asked again: it goes on (--wait follows) */
  }
  if (slot < a->geom.members && a->replace.slot != (int) slot &&
      health_state (&a->health, slot) == MEMBER_ACTIVE &&
      io_member_named (&a->members[slot], path)) {
    pthread_mutex_unlock (&a->job.lock);
    array_set_err (err, "slot %u is %s already: nothing to replace", slot,
                   path);
    return -EALREADY;         /* asked again after its end: done */
  }
  if ((r = check_replaceable (a, slot, err)) == 0 &&
      (r = open_replacement (a, path, force, err)) == 0) {
    a->job.cursor = 0;        /* nothing is mirrored below 0 */
    a->replace.copied = 0;
    a->replace.nmissed = 0;
    forget_lost (&a->replace);
    a->replace.failed = false;
    a->replace.slot = (int) slot;
    if ((r = ppl_init_member (a, ARRAY_REPLACEMENT, err)) < 0 ||
        (r = meta_replace (a, slot, MD_EV_REPLACE_ADD, 0, err)) < 0) {
      a->replace.slot = -1;
      epoch_quiesce (&a->epochs);
      io_member_close (replace_replacement (a));
    }
    else {
      a->replace.checkpoint_ns = array_now_ns ();
      job_begin (a, R5_JOB_REPLACE);
      array_log (a, ARRAY_LOG_NOTICE, "slot %u (%s): being replaced by %s",
                 slot, a->members[slot].path, replace_replacement (a)->path);
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

int
replace_make_room (struct replace *rp, size_t len, struct array_err *err)
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

/* Slot's page at member offset off lost (it cannot be copied nor
 * computed): zeros in dst, kept for the replacement's table (md records
 * such a page bad on a replacement, handle_failed_sync), and logged with
 * why.  0, or -ENOSPC (err set).
 */
static int
lose_page (struct array *a, unsigned slot, uint64_t off, char *dst,
           const char *why, struct array_err *err)
{
  struct replace *rp = &a->replace;
  uint64_t s = array_member_stripe (a, off);

  memset (dst, 0, 4096);
  if (rp->lost == NULL && (rp->lost = malloc (sizeof *rp->lost)) != NULL)
    md_bb_init (rp->lost, a->meta.live.common.bblog_shift);
  if (rp->lost == NULL || md_bb_add (rp->lost, off / 512, 8) < 0) {
    array_set_err (err, "stripe %" PRIu64 ": slot %u's bytes there are "
                   "lost (%s), and the replacement's bad-block table cannot "
                   "take them", s, slot, why);
    return -ENOSPC;
  }
  if (rp->first_lost > s)
    rp->first_lost = s;
  if (rp->last_lost != s) {   /* the report: stripes not wholly copied */
    rp->last_lost = s;
    a->job.tally.bb_stripes++;
  }
  array_log (a, ARRAY_LOG_ERROR, "replace of slot %u: member bytes %" PRIu64
             "+4096 %s: not copied, recorded bad on the replacement", slot,
             off, why);
  return 0;
}

/* Slot's page at off, computed from its row into the last of scratch's
 * columns, while the slot lists it: where the row vouches for it
 * (integrity.h), the integrity record takes its checksum for the slot --
 * the one it had may be from before a write that went around the page,
 * and the replacement that gets these bytes holds the slot next.  0 or
 * -errno.
 */
static int
record_computed (struct array *a, unsigned slot, uint64_t off,
                 char *scratch)
{
  const struct r5_geom *g = &a->geom;
  struct io_op as_slot = {
    .kind = IO_WRITE, .member = slot, .off = off, .len = 4096,
    .buf = scratch + r5_job_column (g, 0, g->members, 4096),
  };
  int r;

  if (!a->integrity.on ||
      !integrity_row_vouches (a, g, slot, off, 4096, scratch))
    return 0;
  integrity_writes_begin (a);
  r = integrity_note_writes (a, &as_slot, 1);
  integrity_writes_end (a);
  return r;
}

/* Slot's 4 KiB page co of stripe s computed from the rest of the row
 * into dst.  0; -ENODATA another member's read failed (the array is
 * whole: md counts two failed devices in the stripe_head and records
 * nothing on that member, handle_failed_sync); -EAGAIN it failed and was
 * recorded on that member (degraded, the slot out: md's set_bad), so the
 * page is to be looked at again; or -EIO (err set).
 */
static int
compute_page (struct array *a, unsigned slot, uint64_t s, uint64_t co,
              char *dst, struct array_err *err)
{
  const struct r5_geom *g = &a->geom;
  struct r5_job_span span = { .job = R5_JOB_REBUILD, .first = s, .n = 1,
                              .chunk_off = co, .len = 4096, .slot = slot };
  struct replace *rp = &a->replace;
  struct io_op ops[R5_MAX_MEMBERS + 1];
  char *scratch = NULL;
  struct plan_run x;
  int r;

  if (!rp->plan_made) {
    r5_plan_init (&rp->plan);
    rp->plan_made = true;
  }
  r5_plan_reset (&rp->plan);
  if ((r = r5_plan_job (&rp->plan, g, &span)) < 0 ||
      posix_memalign ((void **) &scratch, 4096, (g->members + 1) * 4096)) {
    array_set_err (err, "stripe %" PRIu64 ": cannot plan its computation",
                   s);
    return -EIO;
  }
  x = (struct plan_run) { .plan = &rp->plan, .scratch = scratch,
                          .zero = a->zero, .ops = ops, .io_flags = IO_CALLS };
  err->msg[0] = '\0';          /* a record that fails says why in it */
  if ((r = plan_run_prepare (a, &x)) == 0) {
    if ((r = record_computed (a, slot, r5_stripe_member_off (g, s) + co,
                              scratch)) == 0)
      memcpy (dst, scratch + r5_job_column (g, 0, g->members, 4096), 4096);
    else
      array_set_err (err, "stripe %" PRIu64 ": the integrity record cannot "
                     "take slot %u's computed page: %s", s, slot,
                     strerror (-r));
  }
  else if (health_out (&a->health) != (int) slot)
    r = array_failed_reads (a, ops, x.nops) ? -ENODATA : -EIO;
  else
    r = bb_reads_failed (a, ops, x.nops, slot, err) ? -EAGAIN : -EIO;
  if (r == -EIO && err->msg[0] == '\0')
    array_set_err (err, "stripe %" PRIu64 ": slot %u's member cannot be "
                   "read there, nor the rest of its row", s, slot);
  free (scratch);
  return r;
}

/* Slot's page co of stripe s into dst, md's unit (a stripe_head is 4
 * KiB): the slot's own bytes where its member, in service, reads them
 * and does not list them; else computed from the row -- unless another
 * member lists the row or fails to read it: lost.  0, or -errno.
 */
static int
copy_page (struct array *a, unsigned slot, uint64_t s, uint64_t co,
           char *dst, struct array_err *err)
{
  uint64_t off = r5_stripe_member_off (&a->geom, s) + co, listed;
  struct io_op op = { .kind = IO_READ, .member = slot, .buf = dst,
                      .off = off, .len = 4096 };
  char why[64];
  int r = -EAGAIN;

  if (health_out (&a->health) != (int) slot &&
      !array_member_bad (a, slot, off, 4096, NULL) &&
      io_run (a->members, &op, 1, IO_CALLS) == 0)
    return 0;
  for (unsigned tries = 0; r == -EAGAIN && tries <= CORRECT_TRIES; tries++) {
    if ((listed = bb_row_listed (a, &a->geom, s, co, 4096, (int) slot)) != 0) {
      snprintf (why, sizeof why, "are bad on it and on member %u",
                (unsigned) __builtin_ctzll (listed));
      return lose_page (a, slot, off, dst, why, err);
    }
    r = compute_page (a, slot, s, co, dst, err);
  }
  if (r == -ENODATA)
    return lose_page (a, slot, off, dst, "are bad on it and another "
                      "member cannot read its own", err);
  return r == -EAGAIN ? -EIO : r;
}

/* Slot's chunk of stripe s into dst, a page at a time (copy_page): its
 * member could not read all of it, lists some of it, or is out of
 * service.  0, or -errno.
 */
int
replace_compute_chunk (struct array *a, unsigned slot, uint64_t s, char *dst,
                       struct array_err *err)
{
  int out = health_out (&a->health), r = 0;

  if (out >= 0 && out != (int) slot) {
    array_set_err (err, "stripe %" PRIu64 ": slot %u's member cannot be "
                   "read there and slot %d is out of service: nothing to "
                   "compute it from", s, slot, out);
    return -EIO;
  }
  for (uint64_t co = 0; r == 0 && co < a->geom.chunk; co += 4096)
    r = copy_page (a, slot, s, co, dst + co, err);
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
      r = replace_compute_chunk (a, slot, first + i, op.buf, err);
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
  if (io_run (a->members, &w, 1, IO_JOB) == 0)
    return 0;
  return replace_write_failed (a, &w, err);
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
                   replace_replacement (a)->path);
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
  if ((r = replace_make_room (rp, n * g->chunk, err)) < 0)
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
