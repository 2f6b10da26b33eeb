/* tests/unit/plan-check.c -- what every plan must satisfy, and the
 * segments and I/O it should have, worked out from raid/plan.h's rules
 * independently of raid/plan.c.  See plan-sim.h.
 */
#include <config.h>

#undef NDEBUG
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "tests/unit/plan-sim.h"

/*----------------------------------------------------------------------
 * Plans: invariants and accounting.
 */

static bool
io_allowed (enum r5_op op, enum r5_io_kind kind)
{
  switch (op) {
  case R5_OP_READ: return kind == R5_IO_READ;
  case R5_OP_WRITE: return kind == R5_IO_READ || kind == R5_IO_WRITE;
  case R5_OP_ZERO: return kind != R5_IO_TRIM;
  case R5_OP_TRIM: return kind == R5_IO_TRIM;
  }
  return false;
}

/* Buffer bytes [b.off, b.off + len) exist and may be used this way
 * (dst: written by a read or an XOR).
 */
static void
check_buf (const struct r5_plan *p, const struct r5_geom *g,
           const struct call *c, struct r5_buf b, uint64_t len, bool dst)
{
  switch (b.kind) {
  case R5_BUF_CLIENT:
    cr_assert (c->op == R5_OP_READ || c->op == R5_OP_WRITE,
               "client buffer used by a zero or trim");
    cr_assert (!dst || c->op == R5_OP_READ,
               "plan writes into the client's write buffer");
    cr_assert (b.off <= c->req_len && len <= c->req_len - b.off,
               "client ref [%llu,+%llu) outside %llu bytes",
               (unsigned long long) b.off, (unsigned long long) len,
               (unsigned long long) c->req_len);
    return;
  case R5_BUF_SCRATCH:
    cr_assert (b.off <= p->scratch && len <= p->scratch - b.off,
               "scratch ref [%llu,+%llu) outside %llu bytes",
               (unsigned long long) b.off, (unsigned long long) len,
               (unsigned long long) p->scratch);
    return;
  case R5_BUF_ZERO:
    cr_assert (!dst, "plan writes into the zero source");
    cr_assert (b.off <= g->chunk && len <= g->chunk - b.off,
               "zero ref [%llu,+%llu) beyond one chunk",
               (unsigned long long) b.off, (unsigned long long) len);
    return;
  }
  cr_assert_fail ("bad buffer kind %d", (int) b.kind);
}

static void
check_io (const struct r5_plan *p, const struct r5_geom *g,
          const struct call *c, const struct r5_io *io)
{
  uint64_t rel;

  cr_assert (io_allowed (c->op, io->kind), "op %d plans io kind %d",
             (int) c->op, (int) io->kind);
  cr_assert_gt (io->len, 0);
  cr_assert_lt (io->member, g->members);
  cr_assert_neq ((int) io->member, c->missing,
                 "io kind %d on the missing member %d", (int) io->kind,
                 c->missing);
  cr_assert_geq (io->member_off, g->data_offset, "io before data_offset");
  rel = io->member_off - g->data_offset;
  cr_assert (rel <= g->member_data && io->len <= g->member_data - rel,
             "io [%llu,+%llu) past member_data %llu",
             (unsigned long long) rel, (unsigned long long) io->len,
             (unsigned long long) g->member_data);
  cr_assert_eq (rel / g->chunk, (rel + io->len - 1) / g->chunk,
                "io [%llu,+%llu) crosses a chunk", (unsigned long long) rel,
                (unsigned long long) io->len);
  if (io->kind == R5_IO_READ || io->kind == R5_IO_WRITE)
    check_buf (p, g, c, io->buf, io->len, io->kind == R5_IO_READ);
}

static bool
bufs_overlap (struct r5_buf a, uint64_t alen, struct r5_buf b, uint64_t blen)
{
  return a.kind == b.kind && a.kind != R5_BUF_ZERO &&
    a.off < b.off + blen && b.off < a.off + alen;
}

static void
check_xor (const struct r5_plan *p, const struct r5_geom *g,
           const struct call *c, const struct r5_xor *x)
{
  cr_assert (c->op != R5_OP_TRIM, "trim needs no XOR");
  cr_assert_geq (x->nsrc, 2);
  cr_assert_leq (x->nsrc, R5_XOR_MAX_SRC);
  cr_assert_gt (x->len, 0);
  check_buf (p, g, c, x->dst, x->len, true);
  for (unsigned i = 0; i < x->nsrc; i++) {
    check_buf (p, g, c, x->src[i], x->len, false);
    cr_assert (!bufs_overlap (x->dst, x->len, x->src[i], x->len),
               "xor destination overlaps source %u", i);
  }
}

static bool
member_ranges_overlap (const struct r5_io *a, const struct r5_io *b)
{
  return a->member == b->member && a->member_off < b->member_off + b->len &&
    b->member_off < a->member_off + a->len;
}

/* Reads of phase 1 run in parallel: their destinations must not overlap
 * (and no member byte needs reading twice).  Phase 3 runs in parallel too:
 * no two member ranges may overlap.
 */
static void
check_no_races (const struct r5_plan *p)
{
  for (size_t i = 0; i < p->nios; i++)
    for (size_t j = i + 1; j < p->nios; j++) {
      const struct r5_io *a = &p->ios[i], *b = &p->ios[j];
      bool ra = a->kind == R5_IO_READ, rb = b->kind == R5_IO_READ;

      if (ra && rb) {
        cr_assert (!bufs_overlap (a->buf, a->len, b->buf, b->len),
                   "reads %zu and %zu fill the same buffer bytes", i, j);
        cr_assert (!member_ranges_overlap (a, b),
                   "reads %zu and %zu read the same bytes of member %u",
                   i, j, a->member);
      }
      if (!ra && !rb)
        cr_assert (!member_ranges_overlap (a, b),
                   "writes %zu and %zu overlap on member %u", i, j,
                   a->member);
    }
}

void
check_plan (const struct r5_plan *p, const struct r5_geom *g,
            const struct call *c)
{
  cr_assert_eq (p->missing, c->missing);
  for (size_t i = 0; i < p->nios; i++)
    check_io (p, g, c, &p->ios[i]);
  for (size_t i = 0; i < p->nxors; i++)
    check_xor (p, g, c, &p->xors[i]);
  check_no_races (p);
}

/* Plans over the scratch budget.  Counted rather than asserted on the
 * spot, so that the random tests go on to check everything else; each
 * random test reports the count at its end.
 */
static unsigned overruns;
static char first_overrun[160];

/* The part one call covered: a non-empty prefix ending on a stripe
 * boundary (or the end), within the scratch budget unless it is a single
 * stripe.
 */
void
check_planned (const struct r5_plan *p, const struct r5_geom *g,
               const struct call *c, uint64_t len, uint64_t budget)
{
  uint64_t end = c->off + c->planned;

  cr_assert_gt (c->planned, 0);
  cr_assert_leq (c->planned, len);
  cr_assert (c->planned == len || end % g->stripe_data == 0,
             "planned [%llu,%llu) does not end on a stripe",
             (unsigned long long) c->off, (unsigned long long) end);
  if (p->scratch > budget &&
      c->off / g->stripe_data != (end - 1) / g->stripe_data &&
      overruns++ == 0)
    snprintf (first_overrun, sizeof first_overrun,
              "scratch %llu > budget %llu for [%llu,%llu), stripe %llu bytes",
              (unsigned long long) p->scratch, (unsigned long long) budget,
              (unsigned long long) c->off, (unsigned long long) end,
              (unsigned long long) g->stripe_data);
}

void
expect_no_overruns (void)
{
  cr_expect_eq (overruns, 0, "%u plans over budget with more than one "
                "stripe; first: %s", overruns, first_overrun);
}

/*----------------------------------------------------------------------
 * Expected segments, computed independently from the header's rules.
 */
struct tally {
  uint64_t segs[R5_SEG_KINDS];
  uint64_t ambiguous;         /* full stripes with the parity missing */
  uint64_t read_bytes, write_bytes, zero_bytes, trim_bytes;
  bool touches_missing;       /* a read needs the missing member's data */
};

static unsigned
popcount64 (uint64_t v)
{
  return (unsigned) __builtin_popcountll (v);
}

/* Data chunks dd touched by the stripe-local range [a, b) at chunk offsets
 * [lo, hi): a mask.
 */
static uint64_t
touched_in (const struct r5_geom *g, uint64_t a, uint64_t b, uint64_t lo,
            uint64_t hi)
{
  uint64_t mask = 0;

  for (unsigned dd = 0; dd < g->data_members; dd++) {
    uint64_t base = dd * g->chunk;

    if (a <= base + lo && base + hi <= b)
      mask |= 1ull << dd;
  }
  return mask;
}

static int
cmp_u64 (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

  return x < y ? -1 : x > y;
}

/* Chunk-offset cut points of the stripe-local range [a, b). */
static unsigned
cut_points (const struct r5_geom *g, uint64_t a, uint64_t b, uint64_t *cut)
{
  unsigned n = 0;

  cut[n++] = 0;
  cut[n++] = g->chunk;
  for (unsigned dd = 0; dd < g->data_members; dd++) {
    uint64_t base = dd * g->chunk;

    if (a > base && a < base + g->chunk)
      cut[n++] = a - base;
    if (b > base && b < base + g->chunk)
      cut[n++] = b - base;
  }
  qsort (cut, n, sizeof cut[0], cmp_u64);
  return n;
}

static enum r5_seg_kind
write_kind (const struct r5_geom *g, uint64_t stripe, uint64_t mask,
            int missing)
{
  unsigned k = popcount64 (mask), d = g->data_members;

  if (k == d)
    return R5_SEG_FULL_WRITE;
  if (missing >= 0) {
    if ((unsigned) missing == md_parity (g, stripe))
      return R5_SEG_DATA_ONLY;
    for (unsigned dd = 0; dd < d; dd++)
      if (md_data_member (g, stripe, dd) == (unsigned) missing)
        return mask & (1ull << dd) ? R5_SEG_RCW : R5_SEG_RMW;
  }
  return d - k <= k + 1 ? R5_SEG_RCW : R5_SEG_RMW;
}

/* Members written by a segment: the touched data members and parity,
 * except the missing one.
 */
static unsigned
members_written (const struct r5_geom *g, uint64_t stripe, uint64_t mask,
                 int missing)
{
  unsigned w = (int) md_parity (g, stripe) != missing;

  for (unsigned dd = 0; dd < g->data_members; dd++)
    if (mask & (1ull << dd))
      w += (int) md_data_member (g, stripe, dd) != missing;
  return w;
}

static void
tally_write_segment (const struct r5_geom *g, uint64_t stripe, uint64_t mask,
                     uint64_t seglen, int missing, struct tally *t)
{
  enum r5_seg_kind kind = write_kind (g, stripe, mask, missing);
  unsigned k = popcount64 (mask), d = g->data_members;

  t->segs[kind]++;
  if (kind == R5_SEG_FULL_WRITE &&
      missing == (int) md_parity (g, stripe))
    t->ambiguous++;
  if (kind == R5_SEG_RCW)
    t->read_bytes += (d - k) * seglen;
  else if (kind == R5_SEG_RMW)
    t->read_bytes += (k + 1) * seglen;
  t->write_bytes += members_written (g, stripe, mask, missing) * seglen;
}

static void
tally_read_stripe (const struct r5_geom *g, uint64_t stripe, uint64_t a,
                   uint64_t b, int missing, struct tally *t)
{
  for (unsigned dd = 0; dd < g->data_members; dd++) {
    uint64_t lo = dd * g->chunk, hi = lo + g->chunk;

    if (a < hi && lo < b &&
        (int) md_data_member (g, stripe, dd) == missing)
      t->touches_missing = true;
  }
  t->read_bytes += b - a;
}

/* One stripe's share of a request: stripe-local array bytes [a, b). */
static void
tally_stripe (const struct r5_geom *g, enum r5_op op, uint64_t stripe,
              uint64_t a, uint64_t b, int missing, struct tally *t)
{
  uint64_t cut[2 * R5_MAX_MEMBERS + 2];
  unsigned ncut, present = g->members - (missing >= 0);

  if (op == R5_OP_READ) {
    tally_read_stripe (g, stripe, a, b, missing, t);
    return;
  }
  if (a == 0 && b == g->stripe_data && op == R5_OP_ZERO) {
    t->segs[R5_SEG_ZERO_STRIPE]++;
    t->zero_bytes += present * g->chunk;
    return;
  }
  if (op == R5_OP_TRIM) {
    if (a == 0 && b == g->stripe_data) {
      t->segs[R5_SEG_TRIM_STRIPE]++;
      t->trim_bytes += present * g->chunk;
    }
    return;
  }
  ncut = cut_points (g, a, b, cut);
  for (unsigned i = 0; i + 1 < ncut; i++) {
    uint64_t mask = touched_in (g, a, b, cut[i], cut[i + 1]);

    if (cut[i] < cut[i + 1] && mask != 0)
      tally_write_segment (g, stripe, mask, cut[i + 1] - cut[i], missing, t);
  }
}

static void
expected_tally (const struct r5_geom *g, const struct call *c,
                struct tally *t)
{
  uint64_t off = c->off, end = c->off + c->planned;

  memset (t, 0, sizeof *t);
  while (off < end) {
    uint64_t stripe = off / g->stripe_data;
    uint64_t base = stripe * g->stripe_data;
    uint64_t stop = end < base + g->stripe_data ? end : base + g->stripe_data;

    tally_stripe (g, c->op, stripe, off - base, stop - base, c->missing, t);
    off = stop;
  }
}

static void
actual_tally (const struct r5_plan *p, struct tally *t)
{
  memset (t, 0, sizeof *t);
  memcpy (t->segs, p->segs, sizeof t->segs);
  for (size_t i = 0; i < p->nios; i++) {
    const struct r5_io *io = &p->ios[i];

    switch (io->kind) {
    case R5_IO_READ: t->read_bytes += io->len; break;
    case R5_IO_WRITE: t->write_bytes += io->len; break;
    case R5_IO_ZERO: t->zero_bytes += io->len; break;
    case R5_IO_TRIM: t->trim_bytes += io->len; break;
    }
  }
}

static void
check_segs_exact (const struct tally *want, const struct tally *got)
{
  for (int k = 0; k < R5_SEG_KINDS; k++) {
    if (k == R5_SEG_FULL_WRITE || k == R5_SEG_DATA_ONLY)
      continue;
    cr_assert_eq (got->segs[k], want->segs[k], "%s segments: %llu, want %llu",
                  r5_seg_kind_name ((enum r5_seg_kind) k),
                  (unsigned long long) got->segs[k],
                  (unsigned long long) want->segs[k]);
  }
  /* a full stripe with its parity missing may count either way */
  cr_assert_eq (got->segs[R5_SEG_FULL_WRITE] + got->segs[R5_SEG_DATA_ONLY],
                want->segs[R5_SEG_FULL_WRITE] + want->segs[R5_SEG_DATA_ONLY]);
  cr_assert_leq (got->segs[R5_SEG_FULL_WRITE], want->segs[R5_SEG_FULL_WRITE]);
  cr_assert_geq (got->segs[R5_SEG_FULL_WRITE] + want->ambiguous,
                 want->segs[R5_SEG_FULL_WRITE]);
}

/* Segment kinds and I/O volume are what the header's rules give. */
void
check_choices (const struct r5_plan *p, const struct r5_geom *g,
               const struct call *c)
{
  struct tally want, got;

  expected_tally (g, c, &want);
  actual_tally (p, &got);
  if (c->op == R5_OP_READ) {
    cr_assert_eq (got.segs[R5_SEG_DEGRADED_READ] > 0, want.touches_missing,
                  "degraded read segments: %llu",
                  (unsigned long long) got.segs[R5_SEG_DEGRADED_READ]);
    if (!want.touches_missing)
      cr_assert_eq (got.read_bytes, want.read_bytes, "healthy read reads "
                    "%llu bytes for %llu", (unsigned long long) got.read_bytes,
                    (unsigned long long) want.read_bytes);
    for (int k = R5_SEG_FULL_WRITE; k < R5_SEG_KINDS; k++)
      cr_assert_eq (got.segs[k], 0);
    return;
  }
  check_segs_exact (&want, &got);
  cr_assert_eq (got.segs[R5_SEG_READ] + got.segs[R5_SEG_DEGRADED_READ], 0);
  cr_assert_eq (got.read_bytes, want.read_bytes, "reads %llu bytes, want %llu",
                (unsigned long long) got.read_bytes,
                (unsigned long long) want.read_bytes);
  cr_assert_eq (got.write_bytes, want.write_bytes,
                "writes %llu bytes, want %llu",
                (unsigned long long) got.write_bytes,
                (unsigned long long) want.write_bytes);
  cr_assert_eq (got.zero_bytes, want.zero_bytes);
  cr_assert_eq (got.trim_bytes, want.trim_bytes);
}
