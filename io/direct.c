/* io/direct.c -- O_DIRECT for ops that are not aligned.
 *
 * The kernel rejects O_DIRECT I/O whose buffer, offset or length is not a
 * multiple of the member's alignment, but nbdkit's buffers are only
 * 16-byte aligned and RAID segments are byte-granular.  Unaligned ops are
 * therefore rewritten into aligned "device ops" on bounce buffers:
 *   - a read covers the aligned span around it and is copied out after;
 *   - writes to one member whose aligned spans touch are merged into one
 *     span (two writes may share an edge block: each must keep the other's
 *     bytes); if the writes do not cover the span, it is read first
 *     (phase A), then the writes are copied in and the span written
 *     (phase B).
 * Aligned ops, zeroes and syncs pass through unchanged.  Writes of one
 * batch never overlap (io_run's contract), and the caller's stripe lock
 * keeps other batches off these blocks while the read-modify-write runs.
 */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io/bounce.h"
#include "io/engine.h"

struct dev_plan {
  struct io_op *pre;          /* phase A: reads of partly written spans */
  size_t npre;
  struct io_op *dev;          /* phase B */
  size_t ndev;
  size_t *map;                /* user op -> dev op index */
  size_t *order;              /* user write ops sorted by (member, off) */
  void **bounce;              /* one per dev op, NULL if none */
  size_t *bounce_cap;         /* its size, for io_bounce_put */
};

static uint64_t
align_down (uint64_t v, unsigned a)
{
  return v - v % a;
}

static uint64_t
align_up (uint64_t v, unsigned a)
{
  return align_down (v + a - 1, a);
}

static bool
aligned (const struct io_member *m, const struct io_op *op)
{
  unsigned a = m->dio_align;

  return op->off % a == 0 && op->len % a == 0 && (uintptr_t) op->buf % a == 0;
}

/* Does this op need a bounce buffer? */
static bool
needs_bounce (const struct io_member *members, const struct io_op *op)
{
  const struct io_member *m = &members[op->member];

  return m->direct && (op->kind == IO_READ || op->kind == IO_WRITE) &&
    !aligned (m, op);
}

int
io_direct_needed (const struct io_member *members, const struct io_op *ops,
                  size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (needs_bounce (members, &ops[i]))
      return 1;
  return 0;
}

static void
plan_free (struct dev_plan *d, bool ran_well)
{
  /* After a failed run the bounces are freed, not pooled: if the ring
   * itself failed (engine.c retires it), the kernel may still be moving
   * bytes into them, and the pool would hand them out again at once.
   */
  for (size_t i = 0; d->bounce && d->bounce_cap && i < d->ndev; i++)
    io_bounce_put (d->bounce[i], ran_well ? d->bounce_cap[i] : 0);
  free (d->pre);
  free (d->dev);
  free (d->map);
  free (d->order);
  free (d->bounce);
  free (d->bounce_cap);
}

static int
plan_alloc (struct dev_plan *d, size_t n)
{
  memset (d, 0, sizeof *d);
  d->pre = calloc (n, sizeof *d->pre);
  d->dev = calloc (n, sizeof *d->dev);
  d->map = calloc (n, sizeof *d->map);
  d->order = calloc (n, sizeof *d->order);
  d->bounce = calloc (n, sizeof *d->bounce);
  d->bounce_cap = calloc (n, sizeof *d->bounce_cap);
  if (!d->pre || !d->dev || !d->map || !d->order || !d->bounce ||
      !d->bounce_cap)
    return -ENOMEM;
  return 0;
}

/* Add a device op over [start, end) of member with a bounce (bounce.h). */
static int
add_bounced (struct dev_plan *d, const struct io_member *members,
             enum io_kind kind, unsigned member, uint64_t start, uint64_t end)
{
  size_t i = d->ndev;
  void *buf;

  if ((buf = io_bounce_get (end - start, members[member].dio_align,
                            &d->bounce_cap[i])) == NULL)
    return -ENOMEM;
  d->bounce[i] = buf;
  d->dev[i] = (struct io_op) { .kind = kind, .member = member, .buf = buf,
                               .off = start, .len = end - start };
  d->ndev++;
  return 0;
}

static int
cmp_member_off (const void *pa, const void *pb, void *arg)
{
  const struct io_op *ops = arg;
  const struct io_op *a = &ops[*(const size_t *) pa];
  const struct io_op *b = &ops[*(const size_t *) pb];

  if (a->member != b->member)
    return a->member < b->member ? -1 : 1;
  return a->off < b->off ? -1 : a->off > b->off;
}

/* Sort the unaligned writes; returns how many there are. */
static size_t
sort_writes (struct dev_plan *d, const struct io_member *members,
             const struct io_op *ops, size_t n)
{
  size_t nw = 0;

  for (size_t i = 0; i < n; i++)
    if (ops[i].kind == IO_WRITE && needs_bounce (members, &ops[i]))
      d->order[nw++] = i;
  qsort_r (d->order, nw, sizeof d->order[0], cmp_member_off, (void *) ops);
  return nw;
}

/* One group of sorted writes [first, last] sharing blocks of one member. */
static int
add_write_group (struct dev_plan *d, const struct io_member *members,
                 const struct io_op *ops, size_t first, size_t last)
{
  const struct io_op *op0 = &ops[d->order[first]];
  unsigned a = members[op0->member].dio_align;
  uint64_t start = align_down (op0->off, a), end = start, covered = start;
  bool gap = false;
  int r;

  for (size_t k = first; k <= last; k++) {
    const struct io_op *op = &ops[d->order[k]];

    gap |= op->off > covered;
    if (op->off + op->len > covered)
      covered = op->off + op->len;
    if (align_up (op->off + op->len, a) > end)
      end = align_up (op->off + op->len, a);
  }
  if ((r = add_bounced (d, members, IO_WRITE, op0->member, start, end)) < 0)
    return r;
  if (gap || covered < end)
    d->pre[d->npre++] = (struct io_op) {
      .kind = IO_READ, .member = op0->member, .buf = d->bounce[d->ndev - 1],
      .off = start, .len = end - start
    };
  for (size_t k = first; k <= last; k++)
    d->map[d->order[k]] = d->ndev - 1;
  return 0;
}

static int
plan_writes (struct dev_plan *d, const struct io_member *members,
             const struct io_op *ops, size_t n)
{
  size_t nw = sort_writes (d, members, ops, n), first = 0;
  int r;

  for (size_t k = 1; k <= nw; k++) {
    const struct io_op *prev = &ops[d->order[k - 1]];
    unsigned a = members[prev->member].dio_align;

    if (k < nw) {
      const struct io_op *op = &ops[d->order[k]];

      if (op->member == prev->member &&
          align_down (op->off, a) < align_up (prev->off + prev->len, a))
        continue;             /* shares a block with the group */
    }
    if ((r = add_write_group (d, members, ops, first, k - 1)) < 0)
      return r;
    first = k;
  }
  return 0;
}

static int
plan_others (struct dev_plan *d, const struct io_member *members,
             const struct io_op *ops, size_t n)
{
  int r;

  for (size_t i = 0; i < n; i++) {
    const struct io_op *op = &ops[i];
    unsigned a = members[op->member].dio_align;

    if (!needs_bounce (members, op)) {
      d->map[i] = d->ndev;
      d->dev[d->ndev++] = *op;
    }
    else if (op->kind == IO_READ) {
      d->map[i] = d->ndev;
      r = add_bounced (d, members, IO_READ, op->member,
                       align_down (op->off, a), align_up (op->off + op->len, a));
      if (r < 0)
        return r;
    }
  }
  return 0;
}

static void
copy_writes_in (struct dev_plan *d, const struct io_op *ops, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    const struct io_op *dev = &d->dev[d->map[i]];

    if (ops[i].kind == IO_WRITE && d->bounce[d->map[i]] != NULL)
      memcpy ((char *) dev->buf + (ops[i].off - dev->off), ops[i].buf,
              ops[i].len);
  }
}

static void
copy_reads_out (struct dev_plan *d, struct io_op *ops, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    const struct io_op *dev = &d->dev[d->map[i]];

    ops[i].result = dev->result;
    if (ops[i].kind == IO_READ && d->bounce[d->map[i]] != NULL &&
        dev->result == 0)
      memcpy (ops[i].buf, (char *) dev->buf + (ops[i].off - dev->off),
              ops[i].len);
  }
}

/* A failed pre-read fails the writes of its span. */
static void
charge_pre_failures (struct dev_plan *d, struct io_op *ops, size_t n)
{
  for (size_t p = 0; p < d->npre; p++)
    for (size_t i = 0; i < n; i++)
      if (d->pre[p].result < 0 && d->dev[d->map[i]].buf == d->pre[p].buf)
        ops[i].result = d->pre[p].result;
}

int
io_direct_run (const struct io_member *members, struct io_op *ops, size_t n,
               unsigned flags)
{
  struct dev_plan d;
  int r;

  if ((r = plan_alloc (&d, n)) < 0 ||
      (r = plan_others (&d, members, ops, n)) < 0 ||
      (r = plan_writes (&d, members, ops, n)) < 0) {
    plan_free (&d, true);          /* nothing ran */
    for (size_t i = 0; i < n; i++)
      ops[i].result = -ECANCELED;
    return r;
  }
  r = io_engine_run (members, d.pre, d.npre, 0);
  if (r < 0) {
    for (size_t i = 0; i < n; i++)
      ops[i].result = -ECANCELED;
    charge_pre_failures (&d, ops, n);
  }
  else {
    copy_writes_in (&d, ops, n);
    r = io_engine_run (members, d.dev, d.ndev, flags);
    copy_reads_out (&d, ops, n);
  }
  plan_free (&d, r == 0);
  return r;
}
