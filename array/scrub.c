/* array/scrub.c -- one step of a job: a batch of stripes read in one
 * io_uring batch (every member, all stripes), then parity checked or
 * rewritten (resync, check, repair) or a member's chunks reconstructed
 * (rebuild), all under the batch's stripe locks so that clients keep
 * reading and writing around it.
 *
 * Counting follows md: RAID-5 compares in 4 KiB units and adds 8 sectors
 * to mismatch_cnt for each unit whose parity is wrong.  Repair (and
 * resync) rewrite parity from the data; data is never changed, since
 * parity cannot tell which member is wrong.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array/internal.h"
#include "raid/layout.h"
#include "raid/parity.h"

#define UNIT 4096u                /* md's stripe_head unit */
#define MAX_PARTS 4               /* threads per step, at most */
#define MEMORY_SCRATCH (512u << 10)   /* a part's slices, all members */
/* Scratch for one step: all members' chunks of a batch of stripes plus
 * one computed chunk each.  16 MiB keeps several MiB in flight on every
 * member of a small array (deep enough for disks to stream) and bounds
 * memory on wide ones.
 */
#define STEP_BUFFER (16u << 20)

unsigned
job_batch_stripes (const struct array *a)
{
  uint64_t b = STEP_BUFFER / ((a->geom.members + 1) * a->geom.chunk);

  return b ? (unsigned) b : 1;
}

/* The batch's columns, then (members in memory) each part's slices. */
static size_t
cols_bytes (const struct array *a)
{
  return (size_t) job_batch_stripes (a) * (a->geom.members + 1) *
    a->geom.chunk;
}

size_t
job_buf_bytes (const struct array *a)
{
  return cols_bytes (a) + MAX_PARTS * MEMORY_SCRATCH;
}

/* Chunk buffer of member column col (N = computed) of batch stripe i. */
static char *
col (const struct array *a, char *buf, unsigned i, unsigned c)
{
  return buf + ((size_t) i * (a->geom.members + 1) + c) * a->geom.chunk;
}

/* Does a bitmap-guided resync skip this stripe? */
static bool
bitmap_skips (const struct array *a, uint64_t stripe)
{
  const struct meta *m = &a->meta;
  uint64_t k;

  if (m->resync_bits == NULL)
    return false;
  k = stripe * a->geom.chunk / m->bm.chunksize;
  return !((m->resync_bits[k >> 3] >> (k & 7)) & 1);
}

/* Run a batch of ops of the step.  Returns 0, -ENODEV if a member failed
 * (and was taken out: the array goes on degraded), or -EIO.
 */
static int
run_ops (struct array *a, struct io_op *ops, size_t k, struct array_err *err)
{
  int r;

  if (k == 0 || (r = io_run (a->members, ops, k, 0)) == 0)
    return 0;
  return array_io_failed (a, ops, k, r, err) < 0 ? -EIO : -ENODEV;
}

/* Read the chunks of stripes [first, first+n) of every member but skip
 * (or all, skip -1) into their columns; run_ops' results.
 */
static int
read_cols (struct array *a, uint64_t first, unsigned n, int skip, char *buf,
           struct io_op *ops, struct array_err *err)
{
  size_t k = 0;

  for (unsigned i = 0; i < n; i++)
    for (unsigned m = 0; m < a->geom.members; m++)
      if ((int) m != skip)
        ops[k++] = (struct io_op) {
          .kind = IO_READ, .member = m, .buf = col (a, buf, i, m),
          .off = r5_stripe_member_off (&a->geom, first + i),
          .len = a->geom.chunk,
        };
  return run_ops (a, ops, k, err);
}

/* Members in memory (tmpfs) are "read" by the kernel copying pages: then
 * a part goes a slice of each chunk at a time into a small scratch of its
 * own, so that the copy lands in the processor's cache and XOR finds it
 * there.  Disks get the whole part as one batch, deep enough to stream.
 * Returns the slice's bytes, or 0 for whole batches.
 */
static uint64_t
slice_bytes (const struct array *a)
{
  uint64_t slice = a->geom.chunk;   /* a power of two >= 4 KiB */

  for (unsigned m = 0; m < a->geom.members; m++)
    if (!a->members[m].in_memory)
      return 0;
  while (slice > UNIT && slice * a->geom.members > MEMORY_SCRATCH)
    slice /= 2;
  return slice;
}

/* XOR the members other than target (a member, or the parity) of batch
 * stripe i into column N.
 */
static void
xor_others (struct array *a, char *buf, unsigned i, unsigned target)
{
  void *v[R5_MAX_MEMBERS + 1];
  unsigned nv = 0;

  for (unsigned m = 0; m < a->geom.members; m++)
    if (m != target)
      v[nv++] = col (a, buf, i, m);
  v[nv++] = col (a, buf, i, a->geom.members);
  r5_xor_gen (nv, a->geom.chunk, v);
}

/* A stripe whose parity was wrong, kept until the step ends. */
struct bad_stripe {
  uint64_t stripe, first;     /* first: offset of the first wrong unit */
  unsigned parity, units;
};

/* One part of a step's batch, done by one thread: the step's stripes are
 * cut into as many parts as there are processors, because with members
 * in memory a scrub is memory copies and XOR, bound by one core each.
 */
struct part {
  struct array *a;
  enum array_job_kind kind;
  uint64_t first;             /* its first stripe */
  unsigned n;                 /* its stripes */
  char *buf;                  /* its columns within the step's buffer */
  uint64_t slice;             /* slice_bytes(): 0 reads whole batches */
  char *scratch;              /* members in memory: a slice of each */
  /* Members in memory: every part has the whole step and takes its
   * stripes one at a time from this shared counter, so that a part whose
   * thread is held up (a busy processor) leaves the rest to the others
   * rather than to wait for.  NULL: the part's own n stripes, in order.
   */
  _Atomic unsigned *next;
  struct io_op *ops;          /* room for n * members ops */
  struct bad_stripe *bad;     /* room for n */
  unsigned nbad;
  int r;
  struct array_err err;
};

static void
record (struct array *a, const struct bad_stripe *b, array_mismatch_fn found,
        void *opaque)
{
  struct job *j = &a->job;
  struct array_mismatch mm = {
    .stripe = b->stripe, .parity = b->parity, .units = b->units,
    .member_off = r5_stripe_member_off (&a->geom, b->stripe) + b->first,
    .array_off = b->stripe * a->geom.stripe_data,
    .array_len = a->geom.stripe_data,
  };

  /* job.lock is held by the caller of job_step. */
  j->mismatches += (uint64_t) b->units * (UNIT / 512);
  j->stripes_bad++;
  if (j->nfound < ARRAY_FOUND_MAX)
    j->found[j->nfound++] = mm;
  if (found)
    found (opaque, &mm);
}

/* Bytes [off, off+len) of the chunks of part stripe i of every member
 * but skip (or all, skip -1) into the part's scratch, len apart.
 */
static int
read_slice (struct part *p, unsigned i, uint64_t off, uint64_t len, int skip)
{
  struct array *a = p->a;
  uint64_t at = r5_stripe_member_off (&a->geom, p->first + i) + off;
  size_t k = 0;

  for (unsigned m = 0; m < a->geom.members; m++)
    if ((int) m != skip)
      p->ops[k++] = (struct io_op) {
        .kind = IO_READ, .member = m, .buf = p->scratch + m * len,
        .off = at, .len = len,
      };
  return run_ops (a, p->ops, k, &p->err);
}

/* Count the wrong 4 KiB units of parity in len bytes of every member's
 * chunk, at data[m] for member m and at offset off within the chunk,
 * into *bad; the chunk offset of the first in *first.
 */
static void
compare_units (const struct array *a, char *const data[], uint64_t off,
               uint64_t len, unsigned *bad, uint64_t *first)
{
  void *v[R5_MAX_MEMBERS];

  /* Data and parity together XOR to zero where parity is right: one pass
   * over the members' chunks, nothing written (ISA-L's xor_check), as
   * long as it can be (streams prefetch well); unit by unit only from
   * where it first is not.
   */
  for (uint64_t u = 0; u < len; u += UNIT) {
    size_t ok;

    for (unsigned m = 0; m < a->geom.members; m++)
      v[m] = data[m] + u;
    ok = r5_xor_check (a->geom.members, len - u, v);
    if (ok == len - u)
      return;
    u += ok / UNIT * UNIT;      /* the unit holding the first wrong byte */
    if ((*bad)++ == 0)
      *first = off + u;
  }
}

/* Rewrite the parity of the part's stripes found wrong (repair, resync):
 * computed from the data now in the buffer.  Returns the ops queued.
 */
static size_t
queue_parity_writes (struct part *p)
{
  struct array *a = p->a;

  for (unsigned b = 0; b < p->nbad; b++) {
    const struct bad_stripe *s = &p->bad[b];
    unsigned i = (unsigned) (s->stripe - p->first);

    xor_others (a, p->buf, i, s->parity);
    p->ops[b] = (struct io_op) {
      .kind = IO_WRITE, .member = s->parity,
      .buf = col (a, p->buf, i, a->geom.members),
      .off = r5_stripe_member_off (&a->geom, s->stripe),
      .len = a->geom.chunk,
    };
  }
  return p->nbad;
}

/* Stripes the next step covers: up to a batch, and for a bitmap-guided
 * resync only stripes whose bit is set (clear ones are skipped here).
 */
static unsigned
next_batch (struct array *a, enum array_job_kind kind, uint64_t *first)
{
  uint64_t c = a->job.cursor, end = a->geom.stripes;
  unsigned n = 0, max = job_batch_stripes (a);

  if (kind == ARRAY_JOB_RESYNC)
    while (c < end && bitmap_skips (a, c))
      c++;
  a->job.cursor = c;          /* skipped stripes need no lock */
  while (n < max && c + n < end &&
         !(kind == ARRAY_JOB_RESYNC && bitmap_skips (a, c + n)))
    n++;
  *first = c;
  return n;
}

/* The part's next stripe into *i (at counts its own), or false. */
static bool
next_stripe (struct part *p, unsigned *at, unsigned *i)
{
  *i = p->next ? atomic_fetch_add (p->next, 1) : (*at)++;
  return *i < p->n;
}

/* Compare part stripe i: already in the buffer (slice 0), or read a
 * slice at a time into the part's scratch.
 */
static int
scrub_stripe (struct part *p, unsigned i, uint64_t slice, unsigned *bad,
              uint64_t *first)
{
  struct array *a = p->a;
  char *data[R5_MAX_MEMBERS];
  int r;

  for (unsigned m = 0; m < a->geom.members; m++)
    data[m] = slice ? p->scratch + m * slice : col (a, p->buf, i, m);
  if (slice == 0) {
    compare_units (a, data, 0, a->geom.chunk, bad, first);
    return 0;
  }
  for (uint64_t off = 0; off < a->geom.chunk; off += slice) {
    if ((r = read_slice (p, i, off, slice, -1)) < 0)
      return r;
    compare_units (a, data, off, slice, bad, first);
  }
  return 0;
}

static int
scrub_part (struct part *p)
{
  struct array *a = p->a;
  uint64_t slice = p->slice;
  int r;

  if (a->out >= 0)
    return -ENODEV;
  if (slice == 0 &&
      (r = read_cols (a, p->first, p->n, -1, p->buf, p->ops,
                      &p->err)) < 0)
    return r;
  for (unsigned at = 0, i; next_stripe (p, &at, &i);) {
    unsigned bad = 0;
    uint64_t first = 0;

    if ((r = scrub_stripe (p, i, slice, &bad, &first)) < 0)
      return r;
    if (bad)
      p->bad[p->nbad++] = (struct bad_stripe) {
        p->first + i, first, r5_parity_member (&a->geom, p->first + i),
        bad,
      };
  }
  if (p->kind == ARRAY_JOB_CHECK)
    return 0;
  /* Sliced, only the wrong stripes are needed whole: read them now. */
  for (unsigned b = 0; slice && b < p->nbad; b++) {
    unsigned i = (unsigned) (p->bad[b].stripe - p->first);

    if ((r = read_cols (a, p->bad[b].stripe, 1, -1,
                        col (a, p->buf, i, 0), p->ops, &p->err)) < 0)
      return r;
  }
  return run_ops (a, p->ops, queue_parity_writes (p), &p->err);
}

/* Rebuild part stripe i a slice at a time, all in the part's scratch:
 * read the others' slices, XOR them into the rebuilt member's own slot of
 * the scratch (it is not read) and write that.  Returns 0, -EIO if another
 * member failed, or -ECANCELED if the rebuilt one did.
 */
static int
rebuild_sliced (struct part *p, unsigned i, unsigned slot, uint64_t slice)
{
  struct array *a = p->a;
  uint64_t at = r5_stripe_member_off (&a->geom, p->first + i);
  void *v[R5_MAX_MEMBERS];
  unsigned nv = 0;
  int r;

  for (unsigned m = 0; m < a->geom.members; m++)
    if (m != slot)
      v[nv++] = p->scratch + m * slice;
  v[nv++] = p->scratch + slot * slice;
  for (uint64_t off = 0; off < a->geom.chunk; off += slice) {
    if ((r = read_slice (p, i, off, slice, (int) slot)) < 0)
      return r == -ENODEV ? -EIO : r;
    r5_xor_gen (nv, slice, v);
    p->ops[0] = (struct io_op) {
      .kind = IO_WRITE, .member = slot, .buf = v[nv - 1], .off = at + off,
      .len = slice,
    };
    if ((r = run_ops (a, p->ops, 1, &p->err)) < 0)
      return r == -ENODEV ? -ECANCELED : r;
  }
  return 0;
}

/* Rebuild the part's stripes as one batch: read the others' chunks, XOR
 * each stripe's into column N, write those.
 */
static int
rebuild_batch (struct part *p, unsigned slot)
{
  struct array *a = p->a;
  int r;

  if ((r = read_cols (a, p->first, p->n, (int) slot, p->buf,
                      p->ops, &p->err)) < 0)
    return r == -ENODEV ? -EIO : r;   /* a second member lost: failed */
  for (unsigned i = 0; i < p->n; i++) {
    xor_others (a, p->buf, i, slot);
    p->ops[i] = (struct io_op) {
      .kind = IO_WRITE, .member = slot,
      .buf = col (a, p->buf, i, a->geom.members),
      .off = r5_stripe_member_off (&a->geom, p->first + i),
      .len = a->geom.chunk,
    };
  }
  r = run_ops (a, p->ops, p->n, &p->err);
  return r == -ENODEV ? -ECANCELED : r;
}

static int
rebuild_part (struct part *p)
{
  uint64_t slice = p->slice;
  int slot = p->a->job.slot, r = 0;

  if (slot < 0 || p->a->state[slot] != MEMBER_REBUILDING)
    return -ECANCELED;        /* the new member failed: job_abort_rebuild */
  if (slice == 0)
    return rebuild_batch (p, (unsigned) slot);
  for (unsigned at = 0, i; r == 0 && next_stripe (p, &at, &i);)
    r = rebuild_sliced (p, i, (unsigned) slot, slice);
  return r;
}

static void *
run_part (void *arg)
{
  struct part *p = arg;

  p->r = p->kind == ARRAY_JOB_REBUILD ? rebuild_part (p) : scrub_part (p);
  return NULL;
}

static long online_cpus;
static pthread_once_t online_once = PTHREAD_ONCE_INIT;

static void
count_cpus (void)
{
  online_cpus = sysconf (_SC_NPROCESSORS_ONLN);
}

static unsigned
parts_for (unsigned n)
{
  long cpus;
  unsigned k;

  pthread_once (&online_once, count_cpus);   /* sysconf reads /sys */
  cpus = online_cpus;
  k = cpus > MAX_PARTS ? MAX_PARTS : cpus > 1 ? (unsigned) cpus : 1;
  return k < n ? k : n;
}

/* Cut stripes [first, first+n) into k parts: on disks each its own
 * share, read as one batch; in memory each the whole step, its stripes
 * taken through *next.  ops has room for k * n * members, bad for k * n.
 */
static void
cut_parts (struct array *a, enum array_job_kind kind, uint64_t first,
           unsigned n, char *buf, struct io_op *ops, struct bad_stripe *bad,
           _Atomic unsigned *next, struct part *parts, unsigned k)
{
  size_t col_bytes = (size_t) (a->geom.members + 1) * a->geom.chunk;
  uint64_t slice = slice_bytes (a);
  bool shared = slice != 0;
  unsigned at = 0;

  for (unsigned i = 0; i < k; i++) {
    unsigned len = shared ? n : n / k + (i < n % k);

    parts[i] = (struct part) {
      .a = a, .kind = kind, .first = first + at, .n = len, .slice = slice,
      .buf = buf + at * col_bytes,
      .scratch = buf + cols_bytes (a) + (size_t) i * MEMORY_SCRATCH,
      .ops = ops + (size_t) i * n * a->geom.members,
      .bad = bad + (size_t) i * n,
      .next = shared ? next : NULL,
    };
    at += shared ? 0 : len;
  }
}

static int
by_stripe (const void *x, const void *y)
{
  const struct bad_stripe *a = x, *b = y;

  return (a->stripe > b->stripe) - (a->stripe < b->stripe);
}

/* Record the parts' wrong stripes, in stripe order. */
static void
record_parts (struct array *a, struct part *parts, unsigned k,
              array_mismatch_fn found, void *opaque)
{
  struct bad_stripe *all = parts[0].bad;
  unsigned n = parts[0].nbad;

  for (unsigned i = 1; i < k; i++)
    for (unsigned b = 0; b < parts[i].nbad; b++)
      all[n++] = parts[i].bad[b];   /* parts[0].bad has room for k * n */
  qsort (all, n, sizeof *all, by_stripe);
  for (unsigned b = 0; b < n; b++)
    record (a, &all[b], found, opaque);
}

/* Run the parts, the first in this thread.  Returns the first error. */
static int
run_parts (struct part *parts, unsigned k)
{
  pthread_t tid[MAX_PARTS];
  bool started[MAX_PARTS] = { false };
  int r = 0;

  for (unsigned i = 1; i < k; i++)
    started[i] = pthread_create (&tid[i], NULL, run_part, &parts[i]) == 0;
  for (unsigned i = 1; i < k; i++)
    if (!started[i])
      run_part (&parts[i]);   /* no thread: do it here */
  run_part (&parts[0]);
  for (unsigned i = 1; i < k; i++)
    if (started[i])
      pthread_join (tid[i], NULL);
  for (unsigned i = 0; i < k && r == 0; i++)
    r = parts[i].r;
  return r;
}

int
job_step (struct array *a, enum array_job_kind kind, char *buf,
          array_mismatch_fn found, void *opaque, struct array_err *err)
{
  struct part parts[MAX_PARTS];
  struct stripe_range range;
  struct bad_stripe *bad;
  struct io_op *ops;
  uint64_t first;
  unsigned n = next_batch (a, kind, &first), k;
  _Atomic unsigned next = 0;
  int r;

  if (n == 0)
    return 0;
  k = parts_for (n);
  ops = malloc ((size_t) k * n * a->geom.members * sizeof *ops);
  bad = malloc ((size_t) k * n * sizeof *bad);
  if (ops == NULL || bad == NULL) {
    free (ops);
    free (bad);
    array_set_err (err, "out of memory");
    return -ENOMEM;
  }
  cut_parts (a, kind, first, n, buf, ops, bad, &next, parts, k);
  stripe_lock_range (&a->locks, first, first + n - 1, STRIPE_EXCLUSIVE,
                     &range);
  r = run_parts (parts, k);
  record_parts (a, parts, k, found, opaque);
  if (r == 0) {
    a->job.cursor = first + n;  /* still under the stripe locks */
    if (kind == ARRAY_JOB_REBUILD)
      a->job.rebuilt += n;
    else
      a->job.checked += n;
  }
  stripe_unlock_range (&a->locks, &range);
  for (unsigned i = 0; i < k && r < 0; i++)
    if (parts[i].r == r)
      *err = parts[i].err;
  free (ops);
  free (bad);
  return r;
}
