/* array/heal.c -- a member's bytes put right from the other members of
 * their row: a unit that failed its checksum (integrity_heal,
 * integrity.h), or bytes the member could not read (array_correct_read,
 * requests.h).
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

#include "array/badblocks.h"
#include "array/grow.h"
#include "array/integrity.h"
#include "array/object.h"
#include "array/requests.h"
#include "array/runplan.h"
#include "array/state.h"
#include "raid/jobplan.h"

/* One heal's plan and room: the row's columns (members + 1 units) in
 * shape g (the array's, or a grow's old one ahead of its line).
 */
struct heal {
  struct array *a;
  const struct r5_geom *g;
  struct r5_job_span span;
  struct r5_plan plan;
  char *scratch;
  struct io_op ops[R5_MAX_MEMBERS + 1];
  struct plan_cmp_out cmp[1];
};

/* The span of stripe's bytes [chunk_off, chunk_off + len), and its room;
 * -ENOMEM.
 */
static int
heal_init (struct heal *h, struct array *a, const struct r5_geom *g,
           uint64_t stripe, uint64_t chunk_off, uint64_t len)
{
  *h = (struct heal) {
    .a = a, .g = g, .span = { .first = stripe, .n = 1, .len = len,
                              .chunk_off = chunk_off },
  };
  r5_plan_init (&h->plan);
  h->scratch = aligned_alloc (4096, (size_t) (g->members + 1) * len);
  return h->scratch ? 0 : -ENOMEM;
}

static void
heal_free (struct heal *h)
{
  r5_plan_free (&h->plan);
  free (h->scratch);
}

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
  return r5_plan_job (&h->plan, h->g, &h->span);
}

/* Column c of the row: member c's unit, or (c = members) the computed. */
static const char *
column (const struct heal *h, unsigned c)
{
  return h->scratch + r5_job_column (h->g, 0, c, h->span.len);
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
  x.io_flags = IO_FUA | IO_FIXED_SIZE;
  return (e = plan_run_writes (h->a, &x, -1)) < 0 ? e : 1;
}

/* b's own unit read again, the stripe held: is it right now?  A read
 * that needs no other member takes no stripe lock, and a write records
 * its checksums before its bytes land (integrity.h): such a read may
 * meet the new checksum over the old bytes.  With every member in
 * service read_row finds it so; with one out it cannot read the row.
 */
static bool
own_unit_right (struct heal *h, const struct integrity_bad *b)
{
  struct io_op op = { .kind = IO_READ, .member = b->member,
                      .buf = h->scratch, .off = b->off, .len = R5I_UNIT };

  return io_run (h->a->members, &op, 1, 0) == 0 &&
    integrity_verify (h->a, b->member, b->off, h->scratch, R5I_UNIT, NULL);
}

static int
heal_row (struct heal *h, const struct integrity_bad *b, struct array_err *err)
{
  struct array *a = h->a;
  struct integrity *t = &a->integrity;
  uint64_t mask = 0;
  int e = read_row (h, b->off, &mask);

  if ((e == 0 && mask == 0) || (e == -ENODEV && own_unit_right (h, b)))
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

/* The stripe's exclusive lock into *held, unless the caller holds it
 * (locked): *held then holds nothing, and stripe_unlock_range of it does
 * nothing.
 */
static void
lock_stripe (struct array *a, uint64_t stripe, bool locked,
             struct stripe_range *held)
{
  *held = (struct stripe_range) { 0, 0, false };
  if (!locked)
    stripe_lock_range (&a->locks, stripe, stripe, STRIPE_EXCLUSIVE, held);
}

int
integrity_heal (struct array *a, const struct integrity_bad *b, bool locked,
                struct array_err *err)
{
  const struct r5_geom *g = &a->geom;
  uint64_t stripe = array_member_stripe (a, b->off);
  struct stripe_range range;
  struct heal h;
  int e;

  if (heal_init (&h, a, g, stripe, (b->off - g->data_offset) % g->chunk,
                 R5I_UNIT) < 0) {
    heal_free (&h);
    array_set_err (err, "out of memory");
    return -ENOMEM;
  }
  lock_stripe (a, stripe, locked, &range);
  e = heal_row (&h, b, err);
  stripe_unlock_range (&a->locks, &range);
  heal_free (&h);
  return e;
}

/* --- read errors corrected (md: handle_stripe, R5_ReWrite) ------------ */

/* Member m's bytes [off, off + len) within one stripe: computed from the
 * row, written (durably), read again and compared (R5_ReWrite, then
 * R5_ReRead).  0, or -errno with *failed the op that failed (a
 * comparison that differs: a read of -EIO).  With an integrity record
 * the computed bytes are written only if they are what m's checksums
 * say: else -EILSEQ, *failed m's read (another unit of the row is wrong,
 * and md would write what it computes; the row's units are left as they
 * are, for a scrub to name).
 */
static int
rewrite_piece (struct heal *h, unsigned m, uint64_t off, struct io_op *failed)
{
  struct array *a = h->a;
  uint64_t len = h->span.len;
  const char *want = column (h, h->g->members);
  char *back = h->scratch + r5_job_column (h->g, 0, m, len);
  struct plan_run x;
  int e;

  if ((e = plan_row (h, R5_JOB_REBUILD, m, &x)) < 0)
    return e;
  if ((e = plan_run_prepare (a, &x)) == 0 &&
      !integrity_verify (a, m, off, want, len, NULL) &&
      !integrity_row_vouches (a, h->g, m, off, len, h->scratch)) {
    *failed = (struct io_op) { .kind = IO_READ, .member = m, .buf = back,
                               .off = off, .len = len, .result = -EILSEQ };
    return -EILSEQ;
  }
  if (e == 0) {
    x.io_flags = IO_FUA | IO_FIXED_SIZE;
    e = plan_run_writes (a, &x, -1);
  }
  if (e < 0) {                /* another member's read, or the rewrite */
    for (size_t i = 0; i < x.nops; i++)
      if (h->ops[i].result < 0 && h->ops[i].result != -ECANCELED)
        *failed = h->ops[i];
    return e;
  }
  *failed = (struct io_op) { .kind = IO_READ, .member = m, .buf = back,
                             .off = off, .len = len };
  if ((e = io_run (a->members, failed, 1, 0)) < 0)
    return e;
  if (memcmp (back, want, len) != 0) {
    failed->result = -EIO;
    return -EIO;
  }
  return 0;
}

/* Is stripe (of shape g) still in that shape, its lock held?  A grow's
 * old shape holds while any of its bytes lies ahead of the line (a line
 * recorded by md may cut an old stripe: grow-line.c ahead runs it in the
 * old shape whole): the job moves a window with its old stripes' locks
 * held, and the line before it lets them go; a stripe of the array's
 * shape stays so.
 */
bool
array_shape_holds (const struct array *a, const struct r5_geom *g,
                   uint64_t stripe)
{
  uint64_t line;

  if (g != &a->grow.r.from)
    return true;
  line = grow_line (a);
  return a->grow.active && (stripe + 1) * g->stripe_data > line;
}

bool
array_lock_in_shape (struct array *a, const struct r5_geom *g, uint64_t off,
                     bool locked, struct stripe_range *held)
{
  uint64_t stripe = (off - g->data_offset) / g->chunk;

  lock_stripe (a, stripe, locked, held);
  if (array_shape_holds (a, g, stripe))
    return true;
  stripe_unlock_range (&a->locks, held);
  return false;
}

/* How fix_page goes about it: the caller holds the stripe's lock
 * (FIX_LOCKED, else it is taken here); the page is read again first
 * (FIX_REREAD).
 */
enum { FIX_LOCKED = 1u, FIX_REREAD = 2u };

/* The 4 KiB page of member m at off, in shape g, its stripe locked
 * exclusively: read again alone (md retries a failed read page by page,
 * R5_ReadNoMerge) with FIX_REREAD; if that fails too, or without it,
 * rewritten from the row.  1 rewritten, 0 it read well, -ENODEV a member
 * of the row is out of service or the row changed shape (nothing done),
 * -ENODATA another member lists the row bad (md: two failed devices in
 * the stripe, handle_failed_stripe: m's page cannot be computed; *failed
 * its read, -EIO), or -errno with *failed the op that failed.
 */
static int
fix_page (struct array *a, const struct r5_geom *g, unsigned m, uint64_t off,
          unsigned how, struct io_op *failed)
{
  uint64_t stripe = (off - g->data_offset) / g->chunk;
  struct stripe_range held;
  struct heal h;
  int e;

  if ((e = heal_init (&h, a, g, stripe, (off - g->data_offset) % g->chunk,
                      4096)) == 0) {
    lock_stripe (a, stripe, how & FIX_LOCKED, &held);
    *failed = (struct io_op) {
      .kind = IO_READ, .member = m, .off = off, .len = 4096,
      .buf = h.scratch + r5_job_column (g, 0, m, 4096),
    };
    /* Looked at again with the stripe held: a member taken out since
     * the caller looked (a write failed on it, a rebuild stopped) may
     * hold stale bytes, and a row a grow has moved since holds other
     * bytes: neither may be used to compute the page.
     */
    if (array_row_missing (a, g, stripe) >= 0 ||
        !array_shape_holds (a, g, stripe))
      e = -ENODEV;
    else if (bb_row_listed (a, g, stripe, h.span.chunk_off, 4096, (int) m)) {
      failed->result = -EIO;
      e = -ENODATA;
    }
    else if ((how & FIX_REREAD) && io_run (a->members, failed, 1, 0) == 0)
      e = 0;
    else if ((e = rewrite_piece (&h, m, off, failed)) == 0)
      e = 1;
    stripe_unlock_range (&a->locks, &held);
  }
  heal_free (&h);
  return e;
}

/* Each 4 KiB page of re fixed (fix_page); 0 with *pages rewritten, or
 * -errno with *failed the op that failed.
 */
static int
rewrite_range (struct array *a, const struct read_error *re, bool locked,
               struct io_op *failed, unsigned *pages)
{
  const struct r5_geom *g = re->geom ? re->geom : &a->geom;
  uint64_t off = (re->off - g->data_offset) / 4096 * 4096 + g->data_offset;
  int e = 0;

  *pages = 0;
  for (; e >= 0 && off < re->off + re->len; off += 4096)
    if ((e = fix_page (a, g, re->member, off,
                       FIX_REREAD | (locked ? FIX_LOCKED : 0), failed)) > 0)
      ++*pages;
  return e < 0 ? e : 0;
}

/* A page that could not be corrected: recorded in its member's bad-block
 * log (md: a failed R5_ReWrite or R5_ReRead sets the bad block,
 * rdev_set_badblocks), under its stripe's lock in its shape g (a grow's
 * old one ahead of the line: recorded only while that shape still holds
 * the stripe, as the grow may have moved it meanwhile and its offsets
 * hold other bytes now); the member fails only when it cannot be
 * recorded, or when it is being rebuilt (md sets a bad block on a device
 * in sync only, and fails one that is not: md_error).
 */
static int
record_uncorrected (struct array *a, const struct r5_geom *g,
                    const struct io_op *failed, bool locked,
                    struct array_err *err)
{
  const struct r5_geom *shape = g ? g : &a->geom;
  unsigned m = failed->member;
  struct stripe_range held;
  int e = -ENOSPC;

  if (io_op_range_error (failed) && failed->off >= shape->data_offset &&
      health_state (&a->health, m) == MEMBER_ACTIVE &&
      array_bb_has_log (a, m)) {
    if (!array_lock_in_shape (a, shape, failed->off, locked, &held))
      return 0;               /* moved meanwhile: redone in its new shape */
    e = array_bb_record (a, m, failed->off, failed->len, err);
    stripe_unlock_range (&a->locks, &held);
  }
  if (e == 0) {
    if (failed->kind == IO_WRITE)   /* md's WriteErrorSeen */
      a->bb.write_error[m] = true;
    return 0;
  }
  if (e != -ENOSPC)
    array_log (a, ARRAY_LOG_ERROR, "%s", err->msg);
  return array_io_failed (a, failed, 1, failed->result, err);
}

/* re could not be corrected (why: fix_page's -errno): failed is the op
 * that failed (the rewrite, the read back, or another member's read of
 * the row), or m's own read when another member lists the row.  Each
 * page lost is recorded (record_uncorrected).
 */
static int
uncorrected (struct array *a, const struct read_error *re, int why,
             const struct io_op *failed, bool locked, struct array_err *err)
{
  unsigned m = re->member;
  struct io_op own = *failed;
  int e;

  if (why == -ENODATA)
    array_log (a, ARRAY_LOG_ERROR, "member %u (%s): read error at member "
               "offset %" PRIu64 " NOT corrected: another member lists "
               "that row bad in its md bad-block log, so it cannot be "
               "computed", m, array_member_path (a, m), failed->off);
  else if (why == -EILSEQ)
    array_log (a, ARRAY_LOG_ERROR, "member %u (%s): read error at member "
               "offset %" PRIu64 " NOT corrected: what the other members "
               "compute fails its checksum (another unit of the row is "
               "wrong), so nothing is written", m,
               array_member_path (a, m), failed->off);
  else
    array_log (a, ARRAY_LOG_ERROR, "member %u (%s): read error at member "
               "offset %" PRIu64 " NOT corrected: %s of the bytes computed "
               "from the other members failed", m, array_member_path (a, m),
               re->off, failed->kind == IO_WRITE ? "the rewrite"
                                                 : "the read");
  if (why == -EILSEQ) {
    own.result = re->result;  /* a member failed for it fails for that */
    return record_uncorrected (a, re->geom, &own, locked, err);
  }
  if (failed->kind != IO_READ || failed->member == m)
    return record_uncorrected (a, re->geom, failed, locked, err);
  /* Another member's read of the row failed: two members fail in it,
   * and md sets a bad block on each (handle_failed_stripe): m's page
   * cannot be computed either.
   */
  own.member = m;
  own.result = re->result;
  own.link_lost = false;
  if ((e = record_uncorrected (a, re->geom, failed, locked, err)) < 0)
    return e;
  return record_uncorrected (a, re->geom, &own, locked, err);
}

int
array_correct_read (struct array *a, const struct read_error *re,
                    bool locked, struct array_err *err)
{
  struct io_op failed = { .kind = IO_READ, .member = re->member,
                          .off = re->off, .len = re->len,
                          .result = re->result };
  unsigned m = re->member, pages;
  uint64_t sectors;
  int e;

  /* md rewrites a read error only on a writable array (handle_stripe:
   * R5_ReWrite needs !mddev->ro).
   */
  if (a->read_only) {
    array_set_err (err, "member %u (%s): read error at member offset %"
                   PRIu64 ": not corrected, the array is read-only (a "
                   "repair of it opened writable rewrites it from the "
                   "other members)", m,
                   array_member_path (a, m), re->off);
    return -EROFS;
  }
  if (array_read_errors_too_many (a, re, err, &e))
    return e;
  if ((e = rewrite_range (a, re, locked, &failed, &pages)) == -ENOMEM) {
    array_set_err (err, "out of memory");
    return e;
  }
  if (e < 0 && e != -ENODEV)   /* -ENODEV: redone around a member out */
    return uncorrected (a, re, e, &failed, locked, err);
  if (e == 0)
    a->read_errors[m] = 0;
  if (pages == 0)
    return 0;                 /* it reads well now, page by page */
  sectors = pages * 8ULL;     /* md counts STRIPE_SECTORS a page */
  a->count.corrected[m] += sectors;
  meta_note_corrected (a, m, sectors);
  /* The member did fail a read: said as an error, as md's kernel log
   * line is (however the correction went).
   */
  array_log (a, ARRAY_LOG_ERROR, "member %u (%s): read error corrected (%"
             PRIu64 " sectors in member bytes %" PRIu64 "+%" PRIu64 "): "
             "rewritten from the other members and read back", m,
             array_member_path (a, m), sectors, re->off, re->len);
  return 0;
}

int
array_rewrite_page (struct array *a, unsigned m, uint64_t off, bool locked,
                    struct io_op *failed)
{
  uint64_t stripe = array_member_stripe (a, off);
  struct stripe_range held;
  struct array_err err;
  int e;

  *failed = (struct io_op) { .kind = IO_WRITE, .member = m, .off = off,
                             .len = 4096 };
  lock_stripe (a, stripe, locked, &held);
  /* Looked at again with the stripe held: a member taken out since the
   * caller looked (a write of this row failed on it) leaves the row
   * unable to compute the page.
   */
  if (health_out (&a->health) >= 0)
    e = -ENODEV;
  else if (array_member_bad (a, m, off, 4096, NULL) == MD_BB_NONE)
    e = 0;                    /* put right meanwhile by another request */
  else if ((e = fix_page (a, &a->geom, m, off, FIX_LOCKED, failed)) >= 0) {
    /* Cleared before the stripe is let go: a write planned with the page
     * listed, waiting for the lock, must find the table changed
     * (bb_holds) and plan again, or it would run with m missing there
     * and leave the page stale once it is no longer listed.  A table
     * that cannot split an entry (-ENOSPC) keeps it listed; a log that
     * cannot be written keeps it listed on the disk only (logged).
     */
    if ((e = array_bb_clear (a, m, off, 4096, &err)) < 0)
      array_log (a, ARRAY_LOG_ERROR, "%s", err.msg);
    if (e != -ENOSPC)
      e = 0;
  }
  stripe_unlock_range (&a->locks, &held);
  return e;
}
