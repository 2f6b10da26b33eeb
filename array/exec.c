/* array/exec.c -- carry out requests: plan a batch of stripes, lock them,
 * run the plan's three phases through io/, and survive a member failing.
 *
 * Member failure, and why requests re-check health under the lock: a write
 * that fails on member m has already changed the other members of its
 * stripe, and m's bytes there are now stale; from then on the stripe is
 * only right when m is treated as absent.  So m is marked out of service
 * BEFORE the failing request lets go of its stripe lock, and every request
 * compares the health it planned with against the health it sees once it
 * holds its own lock, replanning if they differ.  Then no request ever
 * reads a stale member byte.  The failed request itself is redone degraded
 * (writes are idempotent), so the client never sees the failure while one
 * member is lost.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array/exec-int.h"
#include "array/object.h"
#include "array/requests.h"
#include "array/state.h"
#include "array/runplan.h"
#include "array/writepath.h"

void
array_worker_free (void *p)
{
  struct worker *w = p;

  if (w == NULL)
    return;
  r5_plan_free (&w->plan);
  free (w->ops);
  free (w);
}

struct worker *
array_worker (struct array *a)
{
  struct worker *w = pthread_getspecific (a->worker_key);

  if (w != NULL)
    return w;
  w = calloc (1, sizeof *w);
  if (w == NULL)
    return NULL;
  r5_plan_init (&w->plan);
  if (pthread_setspecific (a->worker_key, w) != 0) {
    free (w);
    return NULL;
  }
  return w;
}

/* Let go of the request's scratch buffer, if it holds one. */
static void
scratch_put (struct worker *w)
{
  if (w->scratch != NULL)
    scratch_pool_put (w->scratch_from, w->scratch);
  w->scratch = NULL;
}

/* Room for the plan: a buffer of the small pool if the plan fits one,
 * else of the big pool (a request holding a small one that now needs
 * more swaps it), taken before any stripe lock; and ops.
 */
static int
reserve (struct array *a, struct worker *w)
{
  size_t nops = w->plan.nios;
  bool small = w->plan.scratch <= a->small.buf_bytes;

  if (w->plan.scratch > a->pool.buf_bytes)
    return -ENOMEM;             /* cannot happen: the budget is the buffer */
  if (w->plan.scratch > 0 && w->scratch != NULL && !small &&
      w->scratch_from == &a->small)
    scratch_put (w);
  if (w->plan.scratch > 0 && w->scratch == NULL) {
    w->scratch_from = small ? &a->small : &a->pool;
    if ((w->scratch = scratch_pool_get (w->scratch_from)) == NULL)
      return -ENOMEM;
  }
  if (nops > w->ops_cap) {
    struct io_op *ops = realloc (w->ops, nops * sizeof *ops);

    if (ops == NULL)
      return -ENOMEM;
    w->ops = ops;
    w->ops_cap = nops;
  }
  return 0;
}

/* The plan's three phases, by the one executor (runplan.h); on failure
 * *nops says how many ops of w->ops ran last.
 */
static int
execute (struct request *rq, size_t *nops, struct integrity_bad *bad)
{
  struct plan_run x = {
    .plan = &rq->w->plan, .client = rq->buf, .scratch = rq->w->scratch,
    .zero = rq->a->zero, .io_flags = rq->flags & ARRAY_FUA ? IO_FUA : 0,
    .zero_punches = (rq->flags & ARRAY_MAY_TRIM) != 0, .ops = rq->w->ops,
    .verify = true,
  };
  int r = wp_run (rq->a, &x);

  *nops = x.nops;
  *bad = x.bad;
  return r;
}

static int
handle_failure (struct request *rq, size_t nops, int r)
{
  return array_io_failed (rq->a, rq->w->ops, nops, r, rq->err);
}

static enum stripe_lock_mode
lock_mode (const struct request *rq, bool *needed)
{
  *needed = rq->op != R5_OP_READ ||
    rq->w->plan.segs[R5_SEG_DEGRADED_READ] > 0;
  return rq->op == R5_OP_READ ? STRIPE_SHARED : STRIPE_EXCLUSIVE;
}

static void
count_segments (struct array *a, const struct r5_plan *p)
{
  for (unsigned k = 0; k < R5_SEG_KINDS; k++)
    if (p->segs[k])
      a->count.segs[k] += p->segs[k];
}

/* Plan the stripes from pos, with member out treated as absent, in the
 * geometry the write path says (b); a batch stops at limit (a stripe),
 * where a rebuilt region ends.
 */
static int
plan_batch (struct request *rq, uint64_t pos, int out, uint64_t limit,
            struct wp_batch *b, uint64_t *planned)
{
  struct array *a = rq->a;
  struct worker *w = rq->w;
  uint64_t len = rq->off + rq->len - pos;
  int r;

  if (limit != UINT64_MAX && limit * a->geom.stripe_data - pos < len)
    len = limit * a->geom.stripe_data - pos;
  if (pos < rq->pieces_end && ROW_BYTES - pos % ROW_BYTES < len)
    len = ROW_BYTES - pos % ROW_BYTES;
  *b->range = (struct r5_range) {
    .op = rq->op, .off = pos, .len = len, .req_off = rq->off,
    .missing = out, .budget = a->pool.buf_bytes,
  };
  b->plan = &w->plan;
  b->geom = &a->geom;
  b->lock_reads = false;
  b->bb_version = a->bb.version;
  b->bb_member = -1;
  r5_plan_reset (&w->plan);
  if ((r = wp_shape (a, b, rq->err)) < 0)
    return r;
  r = r5_plan_range (&w->plan, b->geom, b->range, planned);
  if (r == 0)
    r = reserve (a, w);
  if (r < 0)
    array_set_err (rq->err, "cannot plan the request: %s", strerror (-r));
  return r;
}

/* What a batch's try asks next: nothing (done), to be planned again, or
 * a unit healed or a read error corrected first (with no stripe lock
 * held), and then planned again.
 */
enum batch_next {
  BATCH_DONE, BATCH_AGAIN, BATCH_HEAL, BATCH_CORRECT,
  BATCH_RECORD,               /* degraded: unreadable pages to record */
};
struct batch_fix {
  struct integrity_bad bad;
  struct read_error re;
  unsigned records;           /* times its failed writes (or, degraded,
                                 reads) were recorded */
  int around;                 /* read-only: a member read around, or -1 */
  uint64_t end;               /* the array byte where the batch ends */
  size_t nops;                /* BATCH_RECORD: the failed phase's ops */
  const struct r5_geom *geom; /* ... and the shape they ran in */
};

/* What a batch whose ops[0..nops) failed with *r asks next, its locks
 * still held: a read error corrected (or read around), a write failure
 * or a degraded read error recorded, or the member taken out.
 */
static enum batch_next
on_failure (struct request *rq, const struct r5_geom *geom, size_t nops,
            struct batch_fix *fix, int *r)
{
  struct array *a = rq->a;

  if (array_read_error (a, geom, rq->w->ops, nops, &fix->re))
    return BATCH_CORRECT;
  if (fix->records < CORRECT_TRIES &&
      array_bb_write_failed (a, rq->w->ops, nops, rq->err)) {
    fix->records++;
    return BATCH_AGAIN;
  }
  if (fix->records < CORRECT_TRIES && exec_unreadable_degraded (rq, nops, r)) {
    fix->records++;
    fix->nops = nops;
    fix->geom = geom ? geom : &a->geom;
    return *r == 0 ? BATCH_RECORD : BATCH_DONE;
  }
  return (*r = handle_failure (rq, nops, *r)) == 0 ? BATCH_AGAIN : BATCH_DONE;
}

/* Plan the stripes starting at pos, lock them, and run them unless
 * health (the rebuild cursor, the reshape line, the bad-block tables)
 * changed meanwhile; a write failing on part of a member is recorded in
 * its bad-block log, as is a read that cannot be corrected on a degraded
 * array (exec-fix.c), a member failing otherwise is taken out (the batch
 * is then redone degraded); listed bytes met are rewritten after.
 * *done: the bytes the batch covers; *r: 0 or the request's error.
 */
static enum batch_next
try_batch (struct request *rq, uint64_t pos, uint64_t *done,
           struct batch_fix *fix, int *r)
{
  struct array *a = rq->a;
  const uint64_t sd = a->geom.stripe_data;
  struct stripe_range range = { 0, 0, false };
  struct r5_range planned;
  struct wp_batch b = { .range = &planned };
  uint64_t limit, limit2, bsd;
  int missing = health_missing_for (&a->health, pos / sd, &limit);
  /* A member read around is one of the batch's shape, which the slot out
   * is not then (a slot a grow adds, ahead of its line: array_read_error
   * found no member of the row out).
   */
  int out = fix->around >= 0 ? fix->around : missing;
  enum batch_next next = BATCH_DONE;
  enum stripe_lock_mode mode;
  size_t nops = 0;
  bool lock;

  if (health_failed (&a->health)) {
    *r = array_mark_failed (a, rq->err, "two members are out of service", "");
    return BATCH_DONE;
  }
  /* A write that leaves a member out is acknowledged only once the
   * superblocks say it is out (md holds it while MD_SB_CHANGE_PENDING).
   */
  if ((out >= 0 && rq->op != R5_OP_READ &&
       (*r = meta_record_out (a, rq->err)) < 0) ||
      (*r = plan_batch (rq, pos, out, limit, &b, done)) < 0)
    return BATCH_DONE;
  fix->end = pos + *done;
  mode = lock_mode (rq, &lock);
  bsd = b.geom->stripe_data;
  if (lock || b.lock_reads)
    stripe_lock_range (&a->locks, pos / bsd, (pos + *done - 1) / bsd, mode,
                       &range);
  if (missing != health_missing_for (&a->health, pos / sd, &limit2) ||
      !wp_holds (a, &b))
    next = BATCH_AGAIN;
  else if ((*r = execute (rq, &nops, &fix->bad)) == -EBADMSG)
    next = BATCH_HEAL;
  else if (*r < 0)
    next = on_failure (rq, b.geom, nops, fix, r);
  else
    count_segments (a, &rq->w->plan);
  stripe_unlock_range (&a->locks, &range);
  if (next == BATCH_HEAL || next == BATCH_CORRECT || next == BATCH_AGAIN ||
      next == BATCH_RECORD)
    *r = 0;
  else if (*r == 0 && b.bb_member >= 0)
    bb_rewrite_met (a, &b);
  return next;
}

/* Plan and run the stripes starting at pos, redoing them degraded if a
 * member fails.  Sets *done to the bytes finished.
 */
static int
run_batch (struct request *rq, uint64_t pos, uint64_t *done)
{
  struct correct_tries corrections = { 0, 0, 0, 0 };
  unsigned heals = 0;
  enum batch_next next = BATCH_AGAIN;
  struct batch_fix fix = { .records = 0, .around = -1, .geom = NULL };
  int r = 0;

  while (next != BATCH_DONE && r == 0) {
    next = try_batch (rq, pos, done, &fix, &r);
    if (next == BATCH_HEAL)
      r = exec_heal (rq, &fix.bad, &heals);
    else if (next == BATCH_CORRECT && rq->a->read_only)
      r = exec_read_around (rq, &fix.re, &fix.around, fix.end);
    else if (next == BATCH_CORRECT)
      r = exec_correct (rq, &fix.re, &corrections);
    else if (next == BATCH_RECORD)
      r = exec_record_unreadable (rq, fix.nops, fix.geom);
  }
  return r;
}

static int run_request (struct request rq);

/* A write or zero that is not of whole units of the write path's pad
 * (writepath.h: md's log counts sectors, a record whole units) is made
 * one, its edge pieces read first -- under pad_lock, so that two such
 * writes sharing a sector (or unit) do not lose each other's bytes.
 */

static int
read_piece (const struct request *rq, char *to, uint64_t off, uint64_t len)
{
  return run_request ((struct request) { .a = rq->a, .op = R5_OP_READ,
                                         .buf = to, .off = off, .len = len,
                                         .err = rq->err });
}

static int
run_padded (struct request rq)
{
  struct array *a = rq.a;
  uint64_t u = wp_pad (a, false);
  uint64_t first = rq.off / u * u;
  uint64_t end = (rq.off + rq.len + u - 1) / u * u;
  bool head = rq.off > first, tail = rq.off + rq.len < end;
  char *buf;
  int r = 0;

  if ((buf = malloc (end - first)) == NULL) {
    array_set_err (rq.err, "out of memory");
    return -ENOMEM;
  }
  pthread_mutex_lock (&a->pad_lock);
  if (head)
    r = read_piece (&rq, buf, first, u);
  if (r == 0 && tail && !(head && end - u == first))
    r = read_piece (&rq, buf + (end - u - first), end - u, u);
  if (rq.buf != NULL)
    memcpy (buf + (rq.off - first), rq.buf, rq.len);
  else
    memset (buf + (rq.off - first), 0, rq.len);
  if (r == 0)
    r = run_request ((struct request) { .a = a, .op = R5_OP_WRITE,
                                        .flags = rq.flags & ARRAY_FUA,
                                        .buf = buf, .off = first,
                                        .len = end - first, .err = rq.err });
  pthread_mutex_unlock (&a->pad_lock);
  free (buf);
  return r;
}

/* A read that is not of whole units of the read pad (only whole units
 * can be verified) reads them and gives back its part.
 */
static int
run_padded_read (struct request rq)
{
  uint64_t u = wp_pad (rq.a, true);
  uint64_t first = rq.off / u * u;
  uint64_t end = (rq.off + rq.len + u - 1) / u * u;
  char *buf = malloc (end - first);
  int r;

  if (buf == NULL) {
    array_set_err (rq.err, "out of memory");
    return -ENOMEM;
  }
  r = read_piece (&rq, buf, first, end - first);
  if (r == 0)
    memcpy (rq.buf, buf + (rq.off - first), rq.len);
  free (buf);
  return r;
}

/* Run the client's request rq (all but its worker filled in). */
static int
run_request (struct request rq)
{
  struct array *a = rq.a;
  struct array_err *err = rq.err;
  enum r5_op op = rq.op;
  uint64_t off = rq.off, len = rq.len, pos = off, done, epoch, started, pad;
  struct meta_marks marks;
  int r;

  if (len == 0)
    return 0;
  rq.w = array_worker (a);
  if (rq.w == NULL) {
    array_set_err (err, "out of memory");
    return -ENOMEM;
  }
  if (off > array_capacity (a) || len > array_capacity (a) - off) {
    array_set_err (err, "request [%" PRIu64 ", +%" PRIu64 ") is beyond the "
                   "end of the array (%" PRIu64 " bytes)", off, len,
                   array_capacity (a));
    return -EINVAL;
  }
  pad = op == R5_OP_TRIM ? 1 : wp_pad (a, op == R5_OP_READ);
  if (off % pad || len % pad)
    return op == R5_OP_READ ? run_padded_read (rq) : run_padded (rq);
  /* What the client waits for, the bitmap's marks included. */
  started = a->job.pacer.target_us ? array_now_ns () : 0;
  if (op != R5_OP_READ) {
    grow_write_stripes (a, off, len, &marks);
    if ((r = wp_begin (a, &marks, err)) < 0)
      return r;
  }
  a->job.clients.inflight++;
  epoch = epoch_enter (&a->epochs);
  r = 0;
  while (r == 0 && pos < off + len) {
    r = run_batch (&rq, pos, &done);
    pos += r == 0 ? done : 0;
  }
  epoch_exit (&a->epochs, epoch);
  scratch_put (rq.w);
  a->job.clients.inflight--;
  a->job.clients.last_ns = array_now_ns ();
  if (started)
    a->job.clients.lat[r5_lat_bucket ((a->job.clients.last_ns - started) / 1000)]++;
  if (op != R5_OP_READ)
    wp_end (a);
  return r;
}

/* A client's request, under the shape lock (object.h). */
static int
serve (struct request rq)
{
  int r;

  if (rq.a->read_only && rq.op != R5_OP_READ) {
    array_set_err (rq.err, "a %s of %" PRIu64 " bytes at %" PRIu64 ": the "
                   "array is read-only", rq.op == R5_OP_WRITE ? "write"
                   : rq.op == R5_OP_ZERO ? "zero" : "trim", rq.len, rq.off);
    return -EROFS;
  }
  pthread_rwlock_rdlock (&rq.a->shape_lock);
  r = run_request (rq);
  pthread_rwlock_unlock (&rq.a->shape_lock);
  return r;
}

int
array_read (struct array *a, void *buf, uint64_t len, uint64_t off,
            struct array_err *err)
{
  a->count.reads++;
  return serve ((struct request) { .a = a, .op = R5_OP_READ, .buf = buf,
                                   .off = off, .len = len, .err = err });
}

int
array_write (struct array *a, const void *buf, uint64_t len, uint64_t off,
             unsigned flags, struct array_err *err)
{
  /* Only phase-3 writes use the client buffer then; it is never written. */
  a->count.writes++;
  return serve ((struct request) { .a = a, .op = R5_OP_WRITE,
                                   .flags = flags, .buf = (char *) buf,
                                   .off = off, .len = len, .err = err });
}

int
array_zero (struct array *a, uint64_t len, uint64_t off, unsigned flags,
            struct array_err *err)
{
  a->count.zeroes++;
  return serve ((struct request) { .a = a, .op = R5_OP_ZERO, .flags = flags,
                                   .off = off, .len = len, .err = err });
}

int
array_trim (struct array *a, uint64_t len, uint64_t off, unsigned flags,
            struct array_err *err)
{
  a->count.trims++;
  return serve ((struct request) { .a = a, .op = R5_OP_TRIM,
                                   .flags = flags | ARRAY_MAY_TRIM,
                                   .off = off, .len = len, .err = err });
}

static int flush_members (struct array *a, struct array_err *err);

int
array_flush (struct array *a, struct array_err *err)
{
  int r;

  a->count.flushes++;
  if (a->read_only)
    return 0;                 /* nothing was written */
  pthread_rwlock_rdlock (&a->shape_lock);
  r = array_sync (a, err);
  pthread_rwlock_unlock (&a->shape_lock);
  return r;
}

int
array_sync (struct array *a, struct array_err *err)
{
  uint64_t epoch = epoch_enter (&a->epochs);
  int r = flush_members (a, err);

  epoch_exit (&a->epochs, epoch);
  return r;
}

static int
flush_members (struct array *a, struct array_err *err)
{
  struct io_op ops[R5_MAX_MEMBERS];
  int r;

  for (;;) {
    size_t n = 0;

    if (health_failed (&a->health))
      return array_mark_failed (a, err, "two members are out of service",
                                "");
    for (unsigned m = 0; m < a->geom.members; m++)
      if (health_takes_writes (&a->health, m))
        ops[n++] = (struct io_op) { .kind = IO_FSYNC, .member = m };
    r = io_run (a->members, ops, n, 0);
    if (r == 0)
      replace_sync (a);       /* what it was given is durable too */
    if (r == 0 || (r = array_io_failed (a, ops, n, r, err)) < 0)
      return r;
  }
}
