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
#include <stdlib.h>
#include <string.h>

#include "array/internal.h"
#include "raid/layout.h"
#include "raid/parity.h"

#define UNIT 4096u                /* md's stripe_head unit */
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

size_t
job_buf_bytes (const struct array *a)
{
  return (size_t) job_batch_stripes (a) * (a->geom.members + 1) *
    a->geom.chunk;
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

/* Read stripes [first, first+n) of every member but skip (or all, skip
 * -1) into their columns.  Returns 0, -ENODEV if a member failed (and was
 * taken out: the array goes on degraded), or -EIO.
 */
static int
read_batch (struct array *a, uint64_t first, unsigned n, int skip, char *buf,
            struct io_op *ops, struct array_err *err)
{
  unsigned members = a->geom.members;
  size_t k = 0;
  int r;

  for (unsigned i = 0; i < n; i++)
    for (unsigned m = 0; m < members; m++)
      if ((int) m != skip)
        ops[k++] = (struct io_op) {
          .kind = IO_READ, .member = m, .buf = col (a, buf, i, m),
          .off = r5_stripe_member_off (&a->geom, first + i),
          .len = a->geom.chunk,
        };
  if ((r = io_run (a->members, ops, k, 0)) == 0)
    return 0;
  return array_io_failed (a, ops, k, r, err) < 0 ? -EIO : -ENODEV;
}

static int
write_ops (struct array *a, struct io_op *ops, size_t k,
           struct array_err *err)
{
  int r;

  if (k == 0 || (r = io_run (a->members, ops, k, 0)) == 0)
    return 0;
  return array_io_failed (a, ops, k, r, err) < 0 ? -EIO : -ENODEV;
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

static void
record (struct array *a, uint64_t stripe, unsigned parity, uint64_t first,
        unsigned units, array_mismatch_fn found, void *opaque)
{
  struct job *j = &a->job;
  struct array_mismatch mm = {
    .stripe = stripe, .parity = parity, .units = units,
    .member_off = r5_stripe_member_off (&a->geom, stripe) + first,
    .array_off = stripe * a->geom.stripe_data,
    .array_len = a->geom.stripe_data,
  };

  /* job.lock is held by the caller of job_step. */
  j->mismatches += (uint64_t) units * (UNIT / 512);
  j->stripes_bad++;
  if (j->nfound < ARRAY_FOUND_MAX)
    j->found[j->nfound++] = mm;
  if (found)
    found (opaque, &mm);
}

/* Compare parity with the data of batch stripe i; queue a parity write
 * into ops if it is wrong and fix is set.  Returns the wrong units.
 */
static unsigned
compare_stripe (struct array *a, char *buf, unsigned i, uint64_t stripe,
                bool fix, struct io_op *ops, size_t *k,
                array_mismatch_fn found, void *opaque)
{
  unsigned pd = r5_parity_member (&a->geom, stripe), bad = 0;
  void *v[R5_MAX_MEMBERS];
  uint64_t first = 0;

  /* Data and parity together XOR to zero where parity is right: one pass
   * over the members' chunks, nothing written (ISA-L's xor_check).
   */
  for (uint64_t off = a->geom.chunk; off > 0; off -= UNIT) {
    for (unsigned m = 0; m < a->geom.members; m++)
      v[m] = col (a, buf, i, m) + off - UNIT;
    if (r5_xor_check (a->geom.members, UNIT, v) != UNIT)
      bad++, first = off - UNIT;
  }
  if (bad == 0)
    return 0;
  record (a, stripe, pd, first, bad, found, opaque);
  if (fix) {
    xor_others (a, buf, i, pd);
    ops[(*k)++] = (struct io_op) {
      .kind = IO_WRITE, .member = pd, .buf = col (a, buf, i, a->geom.members),
      .off = r5_stripe_member_off (&a->geom, stripe), .len = a->geom.chunk,
    };
  }
  return bad;
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

static int
scrub_locked (struct array *a, enum array_job_kind kind, uint64_t first,
              unsigned n, char *buf, struct io_op *ops,
              array_mismatch_fn found, void *opaque, struct array_err *err)
{
  bool fix = kind != ARRAY_JOB_CHECK;
  size_t k = 0;
  int r;

  if (a->out >= 0)
    return -ENODEV;
  if ((r = read_batch (a, first, n, -1, buf, ops, err)) < 0)
    return r;
  for (unsigned i = 0; i < n; i++)
    compare_stripe (a, buf, i, first + i, fix, ops, &k, found, opaque);
  return write_ops (a, ops, k, err);
}

static int
rebuild_locked (struct array *a, uint64_t first, unsigned n, char *buf,
                struct io_op *ops, struct array_err *err)
{
  int slot = a->job.slot, r;

  if (slot < 0 || a->state[slot] != MEMBER_REBUILDING)
    return -ECANCELED;        /* the new member failed: job_abort_rebuild */
  if ((r = read_batch (a, first, n, slot, buf, ops, err)) < 0)
    return r == -ENODEV ? -EIO : r;   /* a second member lost: failed */
  for (unsigned i = 0; i < n; i++) {
    xor_others (a, buf, i, (unsigned) slot);
    ops[i] = (struct io_op) {
      .kind = IO_WRITE, .member = (unsigned) slot,
      .buf = col (a, buf, i, a->geom.members),
      .off = r5_stripe_member_off (&a->geom, first + i),
      .len = a->geom.chunk,
    };
  }
  r = write_ops (a, ops, n, err);
  return r == -ENODEV ? -ECANCELED : r;
}

int
job_step (struct array *a, enum array_job_kind kind, char *buf,
          array_mismatch_fn found, void *opaque, struct array_err *err)
{
  struct stripe_range range;
  struct io_op *ops;
  uint64_t first;
  unsigned n = next_batch (a, kind, &first);
  int r;

  if (n == 0)
    return 0;
  ops = malloc ((size_t) n * a->geom.members * sizeof *ops);
  if (ops == NULL) {
    array_set_err (err, "out of memory");
    return -ENOMEM;
  }
  stripe_lock_range (&a->locks, first, first + n - 1, STRIPE_EXCLUSIVE,
                     &range);
  if (kind == ARRAY_JOB_REBUILD)
    r = rebuild_locked (a, first, n, buf, ops, err);
  else
    r = scrub_locked (a, kind, first, n, buf, ops, found, opaque, err);
  if (r == 0) {
    a->job.cursor = first + n;  /* still under the stripe locks */
    if (kind == ARRAY_JOB_REBUILD)
      a->job.rebuilt += n;
    else
      a->job.checked += n;
  }
  stripe_unlock_range (&a->locks, &range);
  free (ops);
  return r;
}
