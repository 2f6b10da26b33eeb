/* array/scrub.c -- a part of a job's step (scrub.h), in the thread that
 * runs it: parity checked or rewritten (resync, check, repair) or a
 * member's chunks reconstructed (rebuild).  With members on disks a part
 * reads its stripes as one io_uring batch; with members in memory it goes
 * a slice at a time, reading in place where the members are mapped.
 *
 * Counting follows md: RAID-5 compares in 4 KiB units and adds 8 sectors
 * to mismatch_cnt for each unit whose parity is wrong.  Repair (and
 * resync) rewrite parity from the data; data is never changed, since
 * parity cannot tell which member is wrong.
 */
#include <config.h>

#include <errno.h>
#include <stdatomic.h>

#include "array/scrub.h"
#include "raid/layout.h"
#include "raid/parity.h"

/* Chunk buffer of member column col (N = computed) of batch stripe i. */
static char *
col (const struct array *a, char *buf, unsigned i, unsigned c)
{
  return buf + ((size_t) i * (a->geom.members + 1) + c) * a->geom.chunk;
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

/* XOR len bytes at src[m] of every member m but skip into dst. */
static void
xor_except (const struct array *a, void *const src[], uint64_t len,
            unsigned skip, void *dst)
{
  void *v[R5_MAX_MEMBERS];
  unsigned nv = 0;

  for (unsigned m = 0; m < a->geom.members; m++)
    if (m != skip)
      v[nv++] = src[m];
  v[nv++] = dst;
  r5_xor_gen (nv, len, v);
}

/* XOR the members other than target (a member, or the parity) of batch
 * stripe i into column N.
 */
static void
xor_others (const struct array *a, char *buf, unsigned i, unsigned target)
{
  void *src[R5_MAX_MEMBERS];

  for (unsigned m = 0; m < a->geom.members; m++)
    src[m] = col (a, buf, i, m);
  xor_except (a, src, a->geom.chunk, target,
              col (a, buf, i, a->geom.members));
}

/* Bad stripe s, read whole into batch stripe i of buf: its parity
 * computed from the data into column N, and the op that writes it.
 */
static struct io_op
parity_rewrite (const struct array *a, char *buf, unsigned i,
                const struct bad_stripe *s)
{
  xor_others (a, buf, i, s->parity);
  return (struct io_op) {
    .kind = IO_WRITE, .member = s->parity,
    .buf = col (a, buf, i, a->geom.members),
    .off = r5_stripe_member_off (&a->geom, s->stripe),
    .len = a->geom.chunk,
  };
}

/* Bytes [off, off+len) of the chunks of part stripe i of every member
 * but skip (or all, skip -1) and the mapped ones into set (of the part's
 * scratch), len apart.
 */
static int
read_slice (struct part *p, char *set, unsigned i, uint64_t off,
            uint64_t len, int skip)
{
  struct array *a = p->a;
  uint64_t at = r5_stripe_member_off (&a->geom, p->first + i) + off;
  size_t k = 0;

  for (unsigned m = 0; m < a->geom.members; m++)
    if ((int) m != skip && p->base[m] == NULL)
      p->ops[k++] = (struct io_op) {
        .kind = IO_READ, .member = m, .buf = set + m * len,
        .off = at, .len = len,
      };
  return run_ops (a, p->ops, k, &p->err);
}

/* In v[m], where member m's bytes [off, off+len) of part stripe i are:
 * mapped, or in set after read_slice().
 */
static void
slice_ptrs (const struct part *p, char *set, unsigned i, uint64_t off,
            uint64_t len, void *v[])
{
  const struct array *a = p->a;

  for (unsigned m = 0; m < a->geom.members; m++)
    v[m] = p->base[m] ? p->base[m] + (uint64_t) i * a->geom.chunk + off
      : set + m * len;
}

/* Count the wrong 4 KiB units of parity in len bytes of every member's
 * chunk, at data[m] for member m and at offset off within the chunk,
 * into *bad; the chunk offset of the first in *first.
 */
static void
compare_units (const struct array *a, void *const data[], uint64_t off,
               uint64_t len, unsigned *bad, uint64_t *first)
{
  void *v[R5_MAX_MEMBERS];

  /* Data and parity together XOR to zero where parity is right: one pass
   * over the members' chunks, nothing written (ISA-L's xor_check), as
   * long as it can be (streams prefetch well); unit by unit only from
   * where it first is not.
   */
  for (uint64_t u = 0; u < len; u += SCRUB_UNIT) {
    size_t ok;

    for (unsigned m = 0; m < a->geom.members; m++)
      v[m] = (char *) data[m] + u;
    ok = r5_xor_check (a->geom.members, len - u, v);
    if (ok == len - u)
      return;
    u += ok / SCRUB_UNIT * SCRUB_UNIT;  /* the first wrong byte's unit */
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

  for (unsigned b = 0; b < p->nbad; b++)
    p->ops[b] = parity_rewrite (a, p->buf,
                                (unsigned) (p->bad[b].stripe - p->first),
                                &p->bad[b]);
  return p->nbad;
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

/* Compare part stripe i: already in the buffer (slice 0), or read a
 * slice at a time into the part's scratch.
 */
static int
scrub_stripe (struct part *p, unsigned i, uint64_t slice, unsigned *bad,
              uint64_t *first)
{
  struct array *a = p->a;
  void *data[R5_MAX_MEMBERS];
  int r;

  if (slice == 0) {
    for (unsigned m = 0; m < a->geom.members; m++)
      data[m] = col (a, p->buf, i, m);
    compare_units (a, data, 0, a->geom.chunk, bad, first);
    return 0;
  }
  for (uint64_t off = 0; off < a->geom.chunk; off += slice) {
    if ((r = read_slice (p, p->scratch, i, off, slice, -1)) < 0)
      return r;
    slice_ptrs (p, p->scratch, i, off, slice, data);
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

  if (health_out (&a->health) >= 0)
    return -ENODEV;
  if (slice == 0 &&
      (r = read_cols (a, p->first, p->n, -1, p->buf, p->ops,
                      &p->err)) < 0)
    return r;
  for (unsigned at = 0, i; next_of (p, &at, &i, p->n);) {
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
  if (p->kind == ARRAY_JOB_CHECK || slice)
    return 0;                 /* sliced: scrub_rewrite_bad() after */
  return run_ops (a, p->ops, queue_parity_writes (p), &p->err);
}

int
scrub_rewrite_bad (struct part *p, char *cols)
{
  struct array *a = p->a;

  for (unsigned b = 0; b < p->nbad && p->r == 0; b++) {
    const struct bad_stripe *s = &p->bad[b];

    p->r = read_cols (a, s->stripe, 1, -1, cols, p->ops, &p->err);
    if (p->r < 0)
      break;
    p->ops[0] = parity_rewrite (a, cols, 0, s);
    p->r = run_ops (a, p->ops, 1, &p->err);
  }
  return p->r;
}

/* Rebuild the step a slice at a time, taking slices (of any of its
 * stripes) from the shared counter: XOR the others' slices (mapped, or
 * read into the part's scratch) into the rebuilt member's -- straight
 * into its pages where it is mapped, else into the scratch and written
 * from there.  Returns 0, -EIO if another member failed, or -ECANCELED if
 * the rebuilt one did.
 */
static int
rebuild_sliced (struct part *p, unsigned slot)
{
  struct array *a = p->a;
  uint64_t slice = p->slice, per = a->geom.chunk / slice;
  unsigned at = 0, u;
  int r;

  while (next_of (p, &at, &u, (unsigned) (p->n * per))) {
    unsigned i = (unsigned) (u / per);
    uint64_t off = u % per * slice;
    void *v[R5_MAX_MEMBERS];
    bool mapped = p->base[slot] != NULL;    /* XOR into its pages */

    if ((r = read_slice (p, p->scratch, i, off, slice, (int) slot)) < 0)
      return r == -ENODEV ? -EIO : r;   /* a second member lost */
    slice_ptrs (p, p->scratch, i, off, slice, v);
    if (mapped)
      io_view_populate (v[slot], slice);
    xor_except (a, v, slice, slot, v[slot]);
    if (mapped)
      continue;
    p->ops[0] = (struct io_op) {
      .kind = IO_WRITE, .member = slot, .buf = v[slot], .len = slice,
      .off = r5_stripe_member_off (&a->geom, p->first + i) + off,
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
  int slot = p->a->job.slot;

  if (slot < 0 ||
      health_state (&p->a->health, (unsigned) slot) != MEMBER_REBUILDING)
    return -ECANCELED;        /* the new member failed: job_abort_rebuild */
  return slice ? rebuild_sliced (p, (unsigned) slot)
    : rebuild_batch (p, (unsigned) slot);
}

void *
scrub_run_part (void *arg)
{
  struct part *p = arg;

  p->r = p->kind == ARRAY_JOB_REBUILD ? rebuild_part (p) : scrub_part (p);
  return NULL;
}

