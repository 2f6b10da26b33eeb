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
 * parity cannot tell which member is wrong -- but where a member's
 * bad-block log lists a page, which md reads as a failed device there:
 * a scrub writes it from the rest of its row, as md's sync does.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "array/badblocks.h"
#include "array/runplan.h"
#include "array/scrub.h"
#include "raid/jobplan.h"
#include "raid/layout.h"

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
    .parity = c->parity, .units = o->bad, .csum_member = -1,
  };
}

/* The part's entry of stripe, or NULL: its parity was right. */
static struct bad_stripe *
bad_of (struct part *p, uint64_t stripe)
{
  for (unsigned i = p->nbad; i-- > 0;)
    if (p->bad[i].stripe == stripe)
      return &p->bad[i];
  return NULL;
}

/* A unit failed its checksum: named in its stripe's entry; with repair
 * (the stripe locks held by the step) rewritten from the others.
 */
static void
note_csum (struct part *p, const struct integrity_bad *u)
{
  struct array *a = p->a;
  uint64_t stripe = array_member_stripe (a, u->off);
  struct bad_stripe *b = bad_of (p, stripe);
  struct array_err err;
  bool healed = false;

  if (p->kind == R5_JOB_REBUILD) {
    a->integrity.failures++;
    a->integrity.unhealable++;
    /* The step still holds the stripe: nobody has read the unit. */
    integrity_poison (a, (unsigned) job_slot (a), u->off);
    array_log (a, ARRAY_LOG_ERROR, "member %u (%s): 4 KiB at member offset "
               "%" PRIu64 " fails its checksum: the unit rebuilt from it into "
               "slot %d is wrong too, and reads of it fail", u->member,
               array_member_path (a, u->member), u->off, job_slot (a));
    return;
  }
  if (p->kind != R5_JOB_CHECK)
    healed = integrity_heal (a, u, true, &err) == 0;
  else
    a->integrity.failures++;
  if (!healed && p->kind != R5_JOB_CHECK)
    array_log (a, ARRAY_LOG_ERROR, "%s", err.msg);
  if (b == NULL) {
    array_log (a, ARRAY_LOG_NOTICE, "member %u (%s): 4 KiB at member offset "
               "%" PRIu64 " fails its checksum, though its row's parity is "
               "right%s", u->member, array_member_path (a, u->member),
               u->off, healed ? " (rewritten from the others)" : "");
    return;
  }
  if (b->csum_units++ == 0)
    b->csum_off = u->off;
  b->csum_member = (int) u->member;
  b->csum_healed += healed;
}

/* One read's units from at on, against their checksums, to the first
 * that fails (u); run guarded (plan_run_guarded): the units may be a
 * member's mapped pages.
 */
struct csum_scan {
  struct array *a;
  const struct r5_io *io;
  const char *buf;
  uint64_t at;
  bool ok;
  struct integrity_bad u;
};

static void
scan_rest (void *arg)
{
  struct csum_scan *c = arg;

  c->ok = integrity_verify (c->a, c->io->member, c->io->member_off + c->at,
                            c->buf + c->at, c->io->len - c->at, &c->u);
}

/* Every unit the piece read, against its checksum: 0, or a member's
 * mapped bytes faulted (x->ops says which: plan_run_guarded).
 */
static int
scan_csums (struct part *p, struct plan_run *x)
{
  const struct r5_plan *pl = x->plan;

  for (size_t i = 0; i < pl->nios; i++) {
    struct csum_scan c = { .a = p->a, .io = &pl->ios[i] };
    int r;

    if (c.io->kind != R5_IO_READ)
      continue;
    c.buf = plan_run_ptr (x, c.io->buf);
    while (c.at + R5I_UNIT <= c.io->len) {
      if ((r = plan_run_guarded (p->a, x, scan_rest, &c)) < 0)
        return r;
      if (c.ok)
        break;
      note_csum (p, &c.u);
      c.at = c.u.off - c.io->member_off + R5I_UNIT;
    }
  }
  return 0;
}

/* A member failed in a piece: taken out of service (the array goes on
 * degraded).  A scrub can go no further (-ENODEV); a rebuild has lost a
 * second member (-EIO) or the one it rebuilds (-ECANCELED).
 */
static int
failed (struct part *p, const struct plan_run *x, int r)
{
  int slot = job_slot (p->a);
  bool ours = false;

  for (size_t i = 0; i < x->nops; i++)
    ours |= x->ops[i].result < 0 && x->ops[i].result != -ECANCELED &&
      (int) x->ops[i].member == slot;
  if (array_io_failed (p->a, x->ops, x->nops, r, &p->err) < 0)
    return -EIO;
  if (p->kind != R5_JOB_REBUILD)
    return -ENODEV;
  return ours ? -ECANCELED : -EIO;
}

/* Plan and run the piece of the part that span says (its stripes and
 * their chunks' bytes; the job and slot are the part's, or a check with
 * checksums), in scratch; note what the compares found (note), and the
 * units that fail their checksums (checksums).
 */
static int
run_plan (struct part *p, struct r5_job_span span, char *scratch,
          bool checksums, bool note)
{
  struct array *a = p->a;
  struct plan_run x = {
    .plan = &p->plan, .scratch = scratch, .zero = a->zero,
    .views = p->views, .ops = p->ops, .cmp = p->cmp, .io_flags = IO_JOB,
  };
  struct correct_tries corrections = { 0, 0, 0, 0 };
  int r;

  span.job = checksums && p->kind != R5_JOB_REBUILD ? R5_JOB_CHECK
                                                      : p->kind;
  span.slot = p->kind == R5_JOB_REBUILD ? (unsigned) job_slot (a) : 0;
  r5_plan_reset (&p->plan);
  r = r5_plan_job (&p->plan, &a->geom, &span);
  if (r < 0) {
    array_set_err (&p->err, "cannot plan the %s: %s",
                   r5_job_name (p->kind), strerror (-r));
    return r;
  }
  for (unsigned tries = 0; (r = plan_run (a, &x)) < 0; tries++) {
    struct read_error re;

    /* A read error is corrected as a request's is (md does so in a
     * check too), the step's locks held, and the piece run again.
     */
    if (tries < CORRECT_TRIES && p->kind == R5_JOB_REBUILD &&
        bb_reads_failed (a, x.ops, x.nops, (unsigned) job_slot (a),
                         &p->err))
      return -EAGAIN;
    if (!array_read_error (a, NULL, x.ops, x.nops, &re) ||
        array_correct_try (&corrections, &re) > CORRECT_TRIES)
      return failed (p, &x, r);
    if (a->read_only) {
      p->unread = re;
      return -ENODATA;
    }
    if (array_correct_read (a, &re, true, &p->err) < 0)
      return -EIO;
    if (health_out (&a->health) >= 0)
      return p->kind == R5_JOB_REBUILD ? -EIO : -ENODEV;
    /* Recorded rather than corrected (its rewrite failed, or what its
     * row computes fails its checksum): this plan would read it again
     * and fail the member; the piece is run again around it.
     */
    if (array_member_bad (a, re.member, re.off, re.len, NULL) != MD_BB_NONE)
      return -EAGAIN;
  }
  for (size_t i = 0; note && i < p->plan.ncmps; i++)
    if (x.cmp[i].bad)
      note_wrong (p, &p->plan.cmps[i], &x.cmp[i]);
  if (checksums && (r = scan_csums (p, &x)) < 0)
    return failed (p, &x, r);
  return 0;
}

/* Plan and run a piece.  With an integrity record a scrub first checks
 * it and verifies every unit it read (naming the member of a wrong
 * row); a repair rewrites the units that fail from the other members
 * and only then the parity still wrong.
 */
static int
run_plain (struct part *p, struct r5_job_span span, char *scratch)
{
  int r;

  if (!p->a->integrity.on)
    return run_plan (p, span, scratch, false, true);
  if (p->kind == R5_JOB_REBUILD)   /* the reads are verified, at least */
    return run_plan (p, span, scratch, true, true);
  if ((r = run_plan (p, span, scratch, true, true)) < 0 ||
      p->kind == R5_JOB_CHECK)
    return r;
  return run_plan (p, span, scratch, false, false);
}

/* Read-only, a check may not correct a read error (md rewrites one only
 * on a writable array), and stopping there would leave the rest of a
 * decaying disk unchecked: the piece is given up (run_plan: -ENODATA),
 * run again a stripe at a time (run_listed), and each stripe whose read
 * fails is skipped, its member and offset named, and counted.
 */
static void
skip_unread (struct part *p, uint64_t stripe)
{
  struct array *a = p->a;
  const struct read_error *re = &p->unread;

  if (p->unread_stripe == stripe)
    return;                   /* said in an earlier slice of it */
  p->unread_stripe = stripe;
  a->job.tally.unread_stripes++;
  if (p->listed_stripe == stripe)
    a->job.tally.bb_stripes--;      /* counted once: as unread */
  array_log (a, ARRAY_LOG_ERROR, "%s: stripe %" PRIu64 " skipped: member %u "
             "(%s): read error at member offset %" PRIu64 ": not corrected, "
             "the array is read-only (repair rewrites it from the other "
             "members), so its parity cannot be judged", r5_job_name (p->kind),
             stripe, re->member, array_member_path (a, re->member), re->off);
}

/* The members but slot (a mask) that list row [co, co + 4 KiB) of
 * stripe s, within the span's end.
 */
static uint64_t
row_mask (const struct array *a, uint64_t s, uint64_t co, uint64_t end,
          int slot)
{
  uint64_t next = (co / 4096 + 1) * 4096;

  return bb_row_listed (a, &a->geom, s, co, (next < end ? next : end) - co,
                        slot);
}

/* Rows [co, co + len) of stripe s that the members bad (but slot) list:
 * counted once a stripe (in the part that meets its first such rows: an
 * earlier try of the stripe, its rows listed before co, or a read error
 * that skipped it counted it already); a scrub skips them (their parity
 * cannot be judged), a rebuild records them on its slot
 * (bb_rebuild_lost).
 */
static int
listed_rows (struct part *p, uint64_t s, uint64_t co, uint64_t len, int slot,
             uint64_t bad)
{
  struct array *a = p->a;
  char who[64];

  if (p->listed_stripe != s && p->unread_stripe != s &&
      (co == 0 || !bb_row_listed (a, &a->geom, s, 0, co, slot))) {
    p->listed_stripe = s;
    a->job.tally.bb_stripes++;
  }
  if (p->kind == R5_JOB_REBUILD)
    return bb_rebuild_lost (a, (unsigned) slot, s, co, len, &p->err);
  array_log (a, ARRAY_LOG_NOTICE, "%s: stripe %" PRIu64 ": member bytes %"
             PRIu64 "+%" PRIu64 " skipped: %s list%s them bad (md bad-block "
             "log%s), so their parity cannot be judged", r5_job_name (p->kind),
             s, r5_stripe_member_off (&a->geom, s) + co, len,
             bb_members_named (bad, who, sizeof who),
             bad & (bad - 1) ? "" : "s", bb_scrub_unrewritten (a, bad));
  return 0;
}

/* Stripe one.first's rows [chunk_off, chunk_off + len) in runs of rows
 * the same members (but slot) list, or none: the runs not listed are run
 * as usual, the listed ones go to listed_rows.  md counts a device
 * failed in a stripe_head (a 4 KiB row) it lists bad and does not read
 * it there (analyse_stripe): a scrub cannot judge such a row's parity,
 * and a rebuild cannot compute it with the slot rebuilt missing too
 * (md's handle_failed_sync: rdev_set_badblocks on the device being
 * recovered, its listed bytes left unread -- a disk's bad sector would
 * fail again).  A read-only check's run that a read error gives up
 * (-ENODATA) does not stop the rest: -ENODATA is returned at the end.
 */
static int
run_rows (struct part *p, struct r5_job_span one, char *scratch, int slot)
{
  uint64_t end = one.chunk_off + one.len;
  bool unread = false;
  int r = 0;

  for (uint64_t co = one.chunk_off, run_end; r == 0 && co < end;
       co = run_end) {
    struct r5_job_span piece = one;
    uint64_t bad = row_mask (p->a, one.first, co, end, slot);

    run_end = co;
    do
      run_end = (run_end / 4096 + 1) * 4096;
    while (run_end < end && row_mask (p->a, one.first, run_end, end,
                                      slot) == bad);
    if (run_end > end)
      run_end = end;
    piece.chunk_off = co;
    piece.len = run_end - co;
    r = bad ? listed_rows (p, one.first, co, piece.len, slot, bad)
            : run_plain (p, piece, scratch);
    if (r == -ENODATA) {
      unread = true;
      r = 0;
    }
  }
  return r == 0 && unread ? -ENODATA : r;
}

/* Stripe s of span around the bad blocks its row lists (badblocks.h):
 * a scrub first has the rows one member lists rewritten from the others
 * (bb_scrub_rewrite, as md does), then runs the rest around what is
 * still listed; a rebuild computes its rows not listed and records on the
 * rebuilt member the rows it cannot compute.
 */
static int
listed_stripe (struct part *p, struct r5_job_span span, uint64_t s,
               char *scratch)
{
  struct array *a = p->a;
  int slot = p->kind == R5_JOB_REBUILD ? job_slot (a) : -1, r;
  struct r5_job_span one = span;

  one.first = s;
  one.n = 1;
  if (slot < 0 && bb_row_listed (a, &a->geom, s, span.chunk_off, span.len,
                                 -1))
    a->job.tally.bb_rewritten +=
      bb_scrub_rewrite (a, r5_job_name (p->kind), s, span.chunk_off,
                        span.len);
  r = bb_row_listed (a, &a->geom, s, span.chunk_off, span.len, slot)
    ? run_rows (p, one, scratch, slot) : run_plain (p, one, scratch);
  if (r == -ENODATA) {
    skip_unread (p, s);
    r = 0;
  }
  return r;
}

/* How often a piece may be run again for read errors recorded in it
 * (-EAGAIN): a rebuild records other members' failed pages a batch at a
 * time; a scrub records one page a time that it could not correct, so it
 * may meet every page of its stripe's row.
 */
static unsigned
reruns (const struct part *p)
{
  const struct r5_geom *g = &p->a->geom;

  return p->kind == R5_JOB_REBUILD ? CORRECT_TRIES
    : CORRECT_TRIES + (unsigned) (g->chunk / 4096) * g->members;
}

/* The compares a part noted, taken back when a piece is run again (it
 * notes them again): the count of stripes and the last one's entry, which
 * the piece may have added to.
 */
struct noted {
  unsigned nbad;
  struct bad_stripe last;
};

static void
noted_save (const struct part *p, struct noted *n)
{
  n->nbad = p->nbad;
  if (p->nbad)
    n->last = p->bad[p->nbad - 1];
}

static void
noted_restore (struct part *p, const struct noted *n)
{
  p->nbad = n->nbad;
  if (n->nbad)
    p->bad[n->nbad - 1] = n->last;
}

/* Read errors recorded in stripe keep coming: the part stops. */
static int
gave_up (struct part *p, uint64_t stripe)
{
  array_set_err (&p->err, "stripe %" PRIu64 ": read errors %s keep coming "
                 "after %u records", stripe, p->kind == R5_JOB_REBUILD
                 ? "on the other members" : "that cannot be corrected",
                 reruns (p) + 1);
  return -EIO;
}

/* Read errors recorded in a stripe (-EAGAIN) have that stripe run again
 * around them, not the whole span: a decaying member may lose pages in
 * many of its stripes.
 */
static int
run_listed (struct part *p, struct r5_job_span span, char *scratch)
{
  int r = 0;

  for (uint64_t s = span.first; r == 0 && s < span.first + span.n; s++) {
    unsigned tries = 0;
    struct noted n;

    do {
      noted_save (p, &n);
      if ((r = listed_stripe (p, span, s, scratch)) == -EAGAIN)
        noted_restore (p, &n);
    } while (r == -EAGAIN && tries++ < reruns (p));
    if (r == -EAGAIN)
      r = gave_up (p, s);
  }
  return r;
}

/* A piece, around the bad blocks listed in it; read errors recorded in
 * it (a rebuild's on the other members, a scrub's it could not correct)
 * and the piece run again.
 */
static int
run_piece (struct part *p, struct r5_job_span span, char *scratch)
{
  int r = -EAGAIN;
  struct noted n;

  for (unsigned tries = 0; r == -EAGAIN && tries <= CORRECT_TRIES; tries++) {
    noted_save (p, &n);
    r = p->a->bb.listed > 0 ? run_listed (p, span, scratch)
                            : run_plain (p, span, scratch);
    if (r == -EAGAIN)
      noted_restore (p, &n);
  }
  if (r == -ENODATA)
    r = run_listed (p, span, scratch);
  if (r == -EAGAIN)
    r = gave_up (p, span.first);
  return r;
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
  bool rebuild = p->kind == R5_JOB_REBUILD;
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

void
scrub_run_part (struct part *p)
{
  struct array *a = p->a;
  int slot = job_slot (a);

  if (p->kind == R5_JOB_REBUILD
      ? slot < 0 || health_state (&a->health, (unsigned) slot)
        != MEMBER_REBUILDING
      : health_out (&a->health) >= 0)
    p->r = p->kind == R5_JOB_REBUILD ? -ECANCELED : -ENODEV;
  else if (p->slice)
    p->r = run_sliced (p);
  else
    p->r = run_piece (p, (struct r5_job_span) {
                        .first = p->first, .n = p->n, .len = a->geom.chunk },
                      p->buf);
}
