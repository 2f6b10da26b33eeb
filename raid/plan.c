/* raid/plan.c -- the RAID-5 planner; see plan.h for the model. */
#include <config.h>

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "raid/layout.h"
#include "raid/plan.h"
#include "raid/plan-stripe.h"

static const char *const seg_kind_names[R5_SEG_KINDS] = {
  [R5_SEG_READ] = "read",
  [R5_SEG_DEGRADED_READ] = "degraded-read",
  [R5_SEG_FULL_WRITE] = "full-stripe",
  [R5_SEG_RCW] = "rcw",
  [R5_SEG_RMW] = "rmw",
  [R5_SEG_DATA_ONLY] = "data-only",
  [R5_SEG_ZERO_STRIPE] = "zero-stripe",
  [R5_SEG_TRIM_STRIPE] = "trim-stripe",
};

const char *
r5_seg_kind_name (enum r5_seg_kind kind)
{
  return (unsigned) kind < R5_SEG_KINDS ? seg_kind_names[kind] : "unknown";
}

void
r5_plan_init (struct r5_plan *p)
{
  memset (p, 0, sizeof *p);
  p->missing = -1;
  p->rcw_from = UINT64_MAX;
}

void
r5_plan_reset (struct r5_plan *p)
{
  p->nios = 0;
  p->ncmps = 0;
  p->nxors = 0;
  p->nppl = 0;
  p->scratch = 0;
  memset (p->segs, 0, sizeof p->segs);
  p->missing = -1;
  p->rcw_from = UINT64_MAX;
  p->ppl = false;
}

void
r5_plan_free (struct r5_plan *p)
{
  free (p->ios);
  free (p->cmps);
  free (p->xors);
  free (p->ppl_entries);
  r5_plan_init (p);
}

static int
grow (void **array, size_t *cap, size_t need, size_t elem)
{
  size_t ncap;
  void *n;

  if (need <= *cap)
    return 0;
  ncap = *cap ? *cap * 2 : 64;
  while (ncap < need)
    ncap *= 2;
  n = realloc (*array, ncap * elem);
  if (n == NULL)
    return -ENOMEM;
  *array = n;
  *cap = ncap;
  return 0;
}

/* Append elem (size bytes) to the array *v of *n, room *cap. */
int
plan_append (void **v, size_t *n, size_t *cap, const void *elem, size_t size)
{
  if (grow (v, cap, *n + 1, size) < 0)
    return -ENOMEM;
  memcpy ((char *) *v + *n * size, elem, size);
  (*n)++;
  return 0;
}

int
r5_plan_add_io (struct r5_plan *p, const struct r5_io *io)
{
  return plan_append ((void **) &p->ios, &p->nios, &p->ios_cap, io, sizeof *io);
}

int
r5_plan_add_cmp (struct r5_plan *p, const struct r5_cmp *c)
{
  return plan_append ((void **) &p->cmps, &p->ncmps, &p->cmps_cap, c, sizeof *c);
}

int
r5_plan_add_xor (struct r5_plan *p, const struct r5_xor *x)
{
  return plan_append ((void **) &p->xors, &p->nxors, &p->xors_cap, x, sizeof *x);
}

static bool
mergeable (const struct r5_io *prev, const struct r5_io *io)
{
  if (prev->kind != io->kind || prev->member != io->member ||
      prev->when != io->when ||
      prev->member_off + prev->len != io->member_off ||
      prev->buf.kind != io->buf.kind)
    return false;
  if (io->kind != R5_IO_READ && io->kind != R5_IO_WRITE)
    return true;
  return io->buf.kind == R5_BUF_ZERO ||
    prev->buf.off + prev->len == io->buf.off;
}

/* Append an I/O, or extend an earlier one of the same stripe. */
static int
add_io (struct stripe *s, enum r5_io_kind kind, unsigned member,
        uint64_t member_off, uint64_t len, struct r5_buf buf)
{
  struct r5_plan *p = s->p;
  struct r5_io io = { kind, member, member_off, len, buf, 0 };

  assert (len > 0 && (int) member != p->missing);
  for (size_t i = p->nios; i > s->first_io; i--)
    if (mergeable (&p->ios[i - 1], &io)) {
      p->ios[i - 1].len += len;
      return 0;
    }
  if (grow ((void **) &p->ios, &p->ios_cap, p->nios + 1, sizeof io) < 0)
    return -ENOMEM;
  p->ios[p->nios++] = io;
  return 0;
}

static struct r5_buf
client_buf (const struct stripe *s, unsigned dd, uint64_t x)
{
  uint64_t off = s->array_base + dd * s->g->chunk + x;

  assert (off >= s->req_off);
  return (struct r5_buf) { R5_BUF_CLIENT, off - s->req_off };
}

/* The new bytes for data index dd at chunk offset x. */
static struct r5_buf
new_data_buf (const struct stripe *s, unsigned dd, uint64_t x)
{
  if (s->op == R5_OP_ZERO)
    return (struct r5_buf) { R5_BUF_ZERO, 0 };
  return client_buf (s, dd, x);
}

/* Scratch column col (a member, or N for the new parity) of the current
 * segment.
 */
struct r5_buf
plan_scratch_buf (struct stripe *s, unsigned col)
{
  if (s->column[col] == UINT64_MAX) {
    s->column[col] = s->p->scratch;
    s->p->scratch += s->active_len;
  }
  return (struct r5_buf) { R5_BUF_SCRATCH, s->column[col] + s->seg_pos };
}

/* Read member's bytes of the current segment into its scratch column. */
static int
read_to_scratch (struct stripe *s, const struct segment *seg, unsigned member,
                 struct r5_buf *out)
{
  *out = plan_scratch_buf (s, member);
  return add_io (s, R5_IO_READ, member, s->member_base + seg->x,
                 seg->y - seg->x, *out);
}

/* XOR the sources of a segment into a buffer holding the result: zero
 * sources drop out; one source is its own result (no copy); otherwise a
 * new XOR step fills scratch column col (COL_PARITY, COL_PP).
 */
int
plan_xor_to (struct stripe *s, const struct segment *seg, const struct r5_buf *src,
        unsigned nsrc, unsigned col, struct r5_buf *out)
{
  struct r5_plan *p = s->p;
  struct r5_xor *x;
  unsigned n = 0;

  if (grow ((void **) &p->xors, &p->xors_cap, p->nxors + 1, sizeof *x) < 0)
    return -ENOMEM;
  x = &p->xors[p->nxors];
  for (unsigned i = 0; i < nsrc; i++)
    if (src[i].kind != R5_BUF_ZERO)
      x->src[n++] = src[i];
  if (n <= 1) {
    *out = n == 1 ? x->src[0] : (struct r5_buf) { R5_BUF_ZERO, 0 };
    return 0;
  }
  x->len = seg->y - seg->x;
  x->nsrc = n;
  x->dst = *out = plan_scratch_buf (s, col);
  x->when = 0;
  p->nxors++;
  return 0;
}

static int
xor_into (struct stripe *s, const struct segment *seg,
          const struct r5_buf *src, unsigned nsrc, struct r5_buf *out)
{
  return plan_xor_to (s, seg, src, nsrc, COL_PARITY (s), out);
}


/* Data index held by the missing member in this stripe, -1 if it holds
 * parity or nothing is missing.
 */
static int
missing_dd (const struct stripe *s)
{
  if (s->p->missing < 0)
    return -1;
  return r5_data_index (s->g, s->index, (unsigned) s->p->missing);
}

static int
plan_read (struct stripe *s, const struct segment *seg)
{
  const struct r5_geom *g = s->g;
  int lost = missing_dd (s);
  struct r5_buf src[R5_XOR_MAX_SRC];
  unsigned nsrc = 0;
  int r;

  for (unsigned dd = 0; dd < g->data_members; dd++)
    if (plan_touched (seg, dd) && (int) dd != lost &&
        (r = add_io (s, R5_IO_READ, r5_data_member (g, s->index, dd),
                     s->member_base + seg->x, seg->y - seg->x,
                     client_buf (s, dd, seg->x))) < 0)
      return r;
  if (lost < 0 || !plan_touched (seg, (unsigned) lost)) {
    s->p->segs[R5_SEG_READ]++;
    return 0;
  }

  /* Rebuild the lost chunk from every other member. */
  s->p->segs[R5_SEG_DEGRADED_READ]++;
  for (unsigned m = 0; m < g->members; m++) {
    int dd = r5_data_index (g, s->index, m);

    if ((int) m == s->p->missing)
      continue;
    if (dd >= 0 && plan_touched (seg, (unsigned) dd))
      src[nsrc++] = client_buf (s, (unsigned) dd, seg->x);
    else if ((r = read_to_scratch (s, seg, m, &src[nsrc++])) < 0)
      return r;
  }
  if (grow ((void **) &s->p->xors, &s->p->xors_cap, s->p->nxors + 1,
            sizeof (struct r5_xor)) < 0)
    return -ENOMEM;
  struct r5_xor *x = &s->p->xors[s->p->nxors++];
  x->len = seg->y - seg->x;
  x->nsrc = nsrc;
  memcpy (x->src, src, nsrc * sizeof src[0]);
  x->dst = client_buf (s, (unsigned) lost, seg->x);
  x->when = 0;
  return 0;
}

/* Write the touched data chunks of a segment (not the missing member). */
static int
write_data (struct stripe *s, const struct segment *seg)
{
  const struct r5_geom *g = s->g;
  int r;

  for (unsigned dd = 0; dd < g->data_members; dd++) {
    unsigned m = r5_data_member (g, s->index, dd);

    if (plan_touched (seg, dd) && (int) m != s->p->missing &&
        (r = add_io (s, R5_IO_WRITE, m, s->member_base + seg->x,
                     seg->y - seg->x, new_data_buf (s, dd, seg->x))) < 0)
      return r;
  }
  return 0;
}

static int
write_parity (struct stripe *s, const struct segment *seg, struct r5_buf buf)
{
  return add_io (s, R5_IO_WRITE, s->parity, s->member_base + seg->x,
                 seg->y - seg->x, buf);
}

/* Parity from the new data of touched chunks and the old data of the
 * others (all of them, for a full-stripe write).
 */
static int
plan_rcw (struct stripe *s, const struct segment *seg, struct r5_buf *parity)
{
  const struct r5_geom *g = s->g;
  struct r5_buf src[R5_XOR_MAX_SRC];
  unsigned nsrc = 0;
  int r;

  for (unsigned dd = 0; dd < g->data_members; dd++) {
    if (plan_touched (seg, dd))
      src[nsrc++] = new_data_buf (s, dd, seg->x);
    else if ((r = read_to_scratch (s, seg, r5_data_member (g, s->index, dd),
                                   &src[nsrc++])) < 0)
      return r;
  }
  return xor_into (s, seg, src, nsrc, parity);
}

/* Parity = old parity ^ old data ^ new data, over the touched chunks. */
static int
plan_rmw (struct stripe *s, const struct segment *seg, struct r5_buf *parity)
{
  const struct r5_geom *g = s->g;
  struct r5_buf src[R5_XOR_MAX_SRC];
  unsigned nsrc = 0;
  int r;

  if ((r = read_to_scratch (s, seg, s->parity, &src[nsrc++])) < 0)
    return r;
  for (unsigned dd = 0; dd < g->data_members; dd++) {
    if (!plan_touched (seg, dd))
      continue;
    if ((r = read_to_scratch (s, seg, r5_data_member (g, s->index, dd),
                              &src[nsrc++])) < 0)
      return r;
    src[nsrc++] = new_data_buf (s, dd, seg->x);
  }
  return xor_into (s, seg, src, nsrc, parity);
}

static enum r5_seg_kind
choose_write (const struct stripe *s, const struct segment *seg)
{
  unsigned k = (unsigned) __builtin_popcountll (seg->mask);
  unsigned d = s->g->data_members;
  int lost = missing_dd (s);

  if (s->p->missing == (int) s->parity)
    return R5_SEG_DATA_ONLY;
  if (k == d)
    return R5_SEG_FULL_WRITE;
  if (lost >= 0)
    return plan_touched (seg, (unsigned) lost) ? R5_SEG_RCW : R5_SEG_RMW;
  if (s->index >= s->p->rcw_from)
    return R5_SEG_RCW;
  return d - k <= k + 1 ? R5_SEG_RCW : R5_SEG_RMW;
}

static int
plan_write (struct stripe *s, const struct segment *seg)
{
  enum r5_seg_kind kind = choose_write (s, seg);
  struct r5_buf parity;
  int r;

  s->p->segs[kind]++;
  if (kind == R5_SEG_DATA_ONLY)
    return write_data (s, seg);
  r = kind == R5_SEG_RMW ? plan_rmw (s, seg, &parity)
                         : plan_rcw (s, seg, &parity);
  if (r == 0 && s->p->ppl)
    r = plan_ppl_segment (s, seg, kind);
  if (r < 0 || (r = write_data (s, seg)) < 0)
    return r;
  return write_parity (s, seg, parity);
}

/* Zero or trim a whole stripe: every present member's chunk. */
static int
plan_whole_stripe (struct stripe *s)
{
  enum r5_io_kind kind = s->op == R5_OP_TRIM ? R5_IO_TRIM : R5_IO_ZERO;
  int r;

  s->p->segs[s->op == R5_OP_TRIM ? R5_SEG_TRIM_STRIPE : R5_SEG_ZERO_STRIPE]++;
  if (s->p->ppl && s->p->missing != (int) s->parity &&
      (r = plan_ppl_whole (s)) < 0)
    return r;
  for (unsigned m = 0; m < s->g->members; m++)
    if ((int) m != s->p->missing &&
        (r = add_io (s, kind, m, s->member_base, s->g->chunk,
                     (struct r5_buf) { R5_BUF_ZERO, 0 })) < 0)
      return r;
  return 0;
}

/* Cut the touched range [a, b) of a stripe into at most three segments. */
static unsigned
cut_segments (const struct stripe *s, struct segment *seg)
{
  uint64_t c = s->g->chunk;
  unsigned dd0 = (unsigned) (s->a / c), dd1 = (unsigned) ((s->b - 1) / c);
  uint64_t lo0 = s->a - dd0 * c, hi1 = s->b - dd1 * c;
  uint64_t pt[4] = { 0, lo0 < hi1 ? lo0 : hi1, lo0 < hi1 ? hi1 : lo0, c };
  unsigned n = 0;

  for (unsigned i = 0; i < 3; i++) {
    uint64_t x = pt[i], y = pt[i + 1], mask = 0;

    if (x == y)
      continue;
    for (unsigned dd = dd0; dd <= dd1; dd++) {
      uint64_t lo = dd == dd0 ? lo0 : 0, hi = dd == dd1 ? hi1 : c;

      if (lo <= x && y <= hi)
        mask |= UINT64_C (1) << dd;
    }
    if (mask != 0)
      seg[n++] = (struct segment) { x, y, mask };
  }
  return n;
}

static int
plan_stripe (struct stripe *s)
{
  struct segment seg[3];
  unsigned n;
  int r = 0;

  if ((s->op == R5_OP_ZERO || s->op == R5_OP_TRIM) &&
      s->a == 0 && s->b == s->g->stripe_data)
    return plan_whole_stripe (s);
  if (s->op == R5_OP_TRIM)
    return 0;                   /* partial trim: advisory, nothing to do */

  n = cut_segments (s, seg);
  for (unsigned m = 0; m <= s->g->members + 1; m++)
    s->column[m] = UINT64_MAX;
  s->active_len = 0;
  for (unsigned i = 0; i < n; i++)
    s->active_len += seg[i].y - seg[i].x;
  s->seg_pos = 0;
  for (unsigned i = 0; i < n && r == 0; i++) {
    r = s->op == R5_OP_READ ? plan_read (s, &seg[i]) : plan_write (s, &seg[i]);
    s->seg_pos += seg[i].y - seg[i].x;
  }
  return r;
}

/* What a plan holds before a stripe is added, to take the stripe back. */
struct mark {
  size_t nios, nxors, nppl;
  uint64_t scratch;
  uint64_t segs[R5_SEG_KINDS];
};

static void
mark_save (const struct r5_plan *p, struct mark *m)
{
  *m = (struct mark) { p->nios, p->nxors, p->nppl, p->scratch, { 0 } };
  memcpy (m->segs, p->segs, sizeof m->segs);
}

static void
mark_restore (struct r5_plan *p, const struct mark *m)
{
  p->nios = m->nios;
  p->nxors = m->nxors;
  p->nppl = m->nppl;
  p->scratch = m->scratch;
  memcpy (p->segs, m->segs, sizeof m->segs);
}

/* Plan the stripe holding array byte pos, up to end (or the stripe's
 * end: *stop says which).
 */
static int
plan_one (struct r5_plan *p, const struct r5_geom *g, const struct r5_range *q,
          uint64_t pos, uint64_t *stop)
{
  uint64_t index = pos / g->stripe_data, end = q->off + q->len;
  uint64_t array_base = index * g->stripe_data;
  struct stripe s = {
    .g = g, .p = p, .op = q->op, .index = index,
    .member_base = r5_stripe_member_off (g, index),
    .array_base = array_base, .req_off = q->req_off,
    .a = pos - array_base,
    .parity = r5_parity_member (g, index),
    .first_io = p->nios,
  };

  *stop = array_base + g->stripe_data < end ? array_base + g->stripe_data
                                            : end;
  s.b = *stop - array_base;
  return plan_stripe (&s);
}

/* Has the plan more log entries, or partial parity, than q allows? */
static bool
over_ppl (const struct r5_plan *p, const struct r5_range *q, size_t from)
{
  uint64_t bytes = 0;

  if (q->ppl_entries > 0 && p->nppl - from > q->ppl_entries)
    return true;
  for (size_t i = from; i < p->nppl && q->ppl_bytes > 0; i++)
    bytes += p->ppl_entries[i].pp_len;
  return q->ppl_bytes > 0 && bytes > q->ppl_bytes;
}

int
r5_plan_range (struct r5_plan *p, const struct r5_geom *g,
               const struct r5_range *q, uint64_t *planned)
{
  uint64_t off = q->off, end = q->off + q->len, pos = off, stop;
  uint64_t start_scratch = p->scratch;
  size_t start_ppl = p->nppl;
  struct mark mark;
  int r;

  assert (q->len > 0 && end <= g->capacity && q->req_off <= off);
  assert (q->missing < (int) g->members);
  if (p->ppl && (q->op == R5_OP_WRITE || q->op == R5_OP_ZERO) &&
      (q->off % 512 || q->len % 512))
    return -EINVAL;             /* md's log counts sectors */
  p->missing = q->missing;
  do {
    mark_save (p, &mark);
    if ((r = plan_one (p, g, q, pos, &stop)) < 0)
      return r;
    if (pos > off && (p->scratch - start_scratch > q->budget ||
                      over_ppl (p, q, start_ppl))) {
      mark_restore (p, &mark);  /* over budget: leave it for next time */
      break;
    }
    pos = stop;
  } while (pos < end);
  *planned = pos - off;
  return 0;
}
