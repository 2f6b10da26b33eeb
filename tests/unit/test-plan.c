/* tests/unit/test-plan.c -- the RAID-5 planner.
 *
 * Two halves.  First, small cases that pin down the planner's choices
 * (RCW, RMW, full stripe, degraded variants, zero, trim) and the member
 * I/O they cost.  Second, a simulator: members are byte arrays, plans are
 * executed exactly as raid/plan.h says (all reads, then the XORs in order,
 * then writes/zero/trim), and after every request the members are checked
 * against a model of the array with an independent copy of md's layout
 * formulas: data where md puts it, parity = XOR (or, with a member
 * missing, the survivors reconstruct the model).  Every plan is also
 * checked for the header's invariants before it runs.
 */
#include <config.h>

#undef NDEBUG
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "raid/geom.h"
#include "raid/plan.h"

#define KiB 1024ull

/* xorshift64*, fixed seeds */
static uint64_t rng_state;

static uint64_t
rng (void)
{
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545f4914f6cdd1dull;
}

static uint64_t
rng_below (uint64_t n)
{
  return rng () % n;
}

static void
fill_random (unsigned char *p, uint64_t len)
{
  uint64_t i, r;

  for (i = 0; i + 8 <= len; i += 8) {
    r = rng ();
    memcpy (p + i, &r, 8);
  }
  for (r = rng (); i < len; i++, r >>= 8)
    p[i] = (unsigned char) r;
}

/* dst ^= src, len bytes */
static void
xor_into (unsigned char *dst, const unsigned char *src, uint64_t len)
{
  uint64_t i = 0;

  for (; i + 8 <= len; i += 8) {
    uint64_t a, b;

    memcpy (&a, dst + i, 8);
    memcpy (&b, src + i, 8);
    a ^= b;
    memcpy (dst + i, &a, 8);
  }
  for (; i < len; i++)
    dst[i] ^= src[i];
}

/*----------------------------------------------------------------------
 * md's layouts again, written from the reference's formulas and not
 * through raid/layout.h, so the simulator does not trust the code under
 * test to say where data belongs.
 */
static unsigned
md_parity (const struct r5_geom *g, uint64_t stripe)
{
  unsigned n = g->members, rot = (unsigned) (stripe % n);

  switch (g->layout) {
  case R5_LEFT_ASYMMETRIC:
  case R5_LEFT_SYMMETRIC:
    return n - 1 - rot;
  case R5_RIGHT_ASYMMETRIC:
  case R5_RIGHT_SYMMETRIC:
    return rot;
  }
  abort ();
}

static unsigned
md_data_member (const struct r5_geom *g, uint64_t stripe, unsigned dd)
{
  unsigned pd = md_parity (g, stripe);

  if (g->layout == R5_LEFT_SYMMETRIC || g->layout == R5_RIGHT_SYMMETRIC)
    return (pd + 1 + dd) % g->members;
  return dd < pd ? dd : dd + 1;
}

/*----------------------------------------------------------------------
 * Plans: invariants and accounting.
 */

/* What one plan call is allowed to do, and what it covered. */
struct call {
  enum r5_op op;
  uint64_t req_off, req_len;  /* the whole client request */
  uint64_t off, planned;      /* this call's part */
  int missing;
};

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

/* Buffer bytes [b.off, b.off + len) exist; returns false if b is not a
 * buffer at all.
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

static void
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
static void
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

static void
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
static void
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

/*----------------------------------------------------------------------
 * The simulator.
 */
struct sim {
  struct r5_geom g;
  uint64_t member_bytes;
  int missing;
  unsigned char *member[R5_MAX_MEMBERS];
  unsigned char *pristine[R5_MAX_MEMBERS];  /* members as first built */
  unsigned char *model;       /* the array as the client sees it */
  unsigned char *zero;        /* R5_BUF_ZERO, one chunk */
  struct r5_plan plan;
};

/* Bytes outside [data_offset, data_offset + member_data), and every byte
 * of a missing member, hold this and must keep it.
 */
static unsigned char
outside (unsigned m, uint64_t i)
{
  return (unsigned char) ((i * 131 + m * 7) ^ 0x5a);
}

static unsigned char *
member_chunk (struct sim *s, unsigned m, uint64_t stripe)
{
  return s->member[m] + s->g.data_offset + stripe * s->g.chunk;
}

static unsigned char *
model_chunk (struct sim *s, uint64_t stripe, unsigned dd)
{
  return s->model + (stripe * s->g.data_members + dd) * s->g.chunk;
}

/* Lay the model out on the members with parity, as md would. */
static void
sim_build_members (struct sim *s)
{
  const uint64_t c = s->g.chunk;

  for (unsigned m = 0; m < s->g.members; m++)
    for (uint64_t i = 0; i < s->member_bytes; i++)
      s->member[m][i] = outside (m, i);
  for (uint64_t st = 0; st < s->g.stripes; st++) {
    unsigned char *par = member_chunk (s, md_parity (&s->g, st), st);

    memset (par, 0, c);
    for (unsigned dd = 0; dd < s->g.data_members; dd++) {
      unsigned char *d = member_chunk (s, md_data_member (&s->g, st, dd), st);

      memcpy (d, model_chunk (s, st, dd), c);
      xor_into (par, d, c);
    }
  }
  if (s->missing >= 0)          /* lost: poison it */
    for (uint64_t i = 0; i < s->member_bytes; i++)
      s->member[s->missing][i] = outside ((unsigned) s->missing, i);
  for (unsigned m = 0; m < s->g.members; m++)
    memcpy (s->pristine[m], s->member[m], s->member_bytes);
}

static void
sim_init (struct sim *s, unsigned n, uint64_t chunk, enum r5_layout layout,
          uint64_t data_offset, uint64_t stripes, uint64_t slack, int missing)
{
  memset (s, 0, sizeof *s);
  s->member_bytes = data_offset + stripes * chunk + slack;
  cr_assert_eq (r5_geom_init (&s->g, n, chunk, layout, data_offset,
                              s->member_bytes), 0);
  cr_assert_eq (s->g.stripes, stripes);
  s->missing = missing;
  for (unsigned m = 0; m < n; m++) {
    s->member[m] = malloc (s->member_bytes);
    s->pristine[m] = malloc (s->member_bytes);
    cr_assert (s->member[m] && s->pristine[m]);
  }
  s->model = malloc (s->g.capacity);
  s->zero = calloc (1, chunk);
  cr_assert (s->model && s->zero);
  fill_random (s->model, s->g.capacity);
  sim_build_members (s);
  r5_plan_init (&s->plan);
}

static void
sim_free (struct sim *s)
{
  for (unsigned m = 0; m < s->g.members; m++) {
    free (s->member[m]);
    free (s->pristine[m]);
  }
  free (s->model);
  free (s->zero);
  r5_plan_free (&s->plan);
}

/* Memory a plan runs on. */
struct mem {
  unsigned char *client, *scratch;
};

static unsigned char *
buf_ptr (struct sim *s, struct mem *mem, struct r5_buf b)
{
  switch (b.kind) {
  case R5_BUF_CLIENT: return mem->client + b.off;
  case R5_BUF_SCRATCH: return mem->scratch + b.off;
  case R5_BUF_ZERO: return s->zero + b.off;
  }
  abort ();
}

static void
exec_io (struct sim *s, struct mem *mem, const struct r5_io *io)
{
  unsigned char *dev = s->member[io->member] + io->member_off;

  switch (io->kind) {
  case R5_IO_READ: memcpy (buf_ptr (s, mem, io->buf), dev, io->len); break;
  case R5_IO_WRITE: memcpy (dev, buf_ptr (s, mem, io->buf), io->len); break;
  case R5_IO_ZERO:
  case R5_IO_TRIM: memset (dev, 0, io->len); break;
  }
}

static void
exec_xor (struct sim *s, struct mem *mem, const struct r5_xor *x)
{
  unsigned char *acc = calloc (1, x->len);

  cr_assert_not_null (acc);
  for (unsigned i = 0; i < x->nsrc; i++)
    xor_into (acc, buf_ptr (s, mem, x->src[i]), x->len);
  memcpy (buf_ptr (s, mem, x->dst), acc, x->len);
  free (acc);
}

/* The three phases.  Within a phase, ios run last to first: the plan must
 * not depend on their order.
 */
static void
sim_exec (struct sim *s, struct mem *mem)
{
  const struct r5_plan *p = &s->plan;

  for (size_t i = p->nios; i-- > 0;)
    if (p->ios[i].kind == R5_IO_READ)
      exec_io (s, mem, &p->ios[i]);
  for (size_t i = 0; i < p->nxors; i++)
    exec_xor (s, mem, &p->xors[i]);
  for (size_t i = p->nios; i-- > 0;)
    if (p->ios[i].kind != R5_IO_READ)
      exec_io (s, mem, &p->ios[i]);
}

/* Plan and run [off, off + len) piece by piece, as array/ will. */
static void
sim_run (struct sim *s, struct call *c, unsigned char *client,
         uint64_t budget)
{
  uint64_t end = c->req_off + c->req_len;

  for (c->off = c->req_off; c->off < end; c->off += c->planned) {
    struct mem mem = { .client = client };

    r5_plan_reset (&s->plan);
    cr_assert_eq (r5_plan_range (&s->plan, &s->g, c->op, c->off,
                                 end - c->off, c->req_off, c->missing,
                                 budget, &c->planned), 0);
    check_planned (&s->plan, &s->g, c, end - c->off, budget);
    check_plan (&s->plan, &s->g, c);
    check_choices (&s->plan, &s->g, c);
    mem.scratch = malloc (s->plan.scratch + 1);
    cr_assert_not_null (mem.scratch);
    fill_random (mem.scratch, s->plan.scratch);
    sim_exec (s, &mem);
    free (mem.scratch);
  }
}

/* Every stripe: data where md puts it, parity = XOR; with a member missing,
 * the survivors reconstruct its data; bytes outside the data area (and the
 * missing member) untouched.
 */
static void
sim_check_stripe (struct sim *s, uint64_t st, uint64_t *acc)
{
  const uint64_t words = s->g.chunk / 8;
  int missing_dd = -1;

  memset (acc, 0, s->g.chunk);
  for (unsigned m = 0; m < s->g.members; m++)
    if ((int) m != s->missing)
      xor_into ((unsigned char *) acc, member_chunk (s, m, st), s->g.chunk);
  for (unsigned dd = 0; dd < s->g.data_members; dd++) {
    unsigned m = md_data_member (&s->g, st, dd);

    if ((int) m == s->missing)
      missing_dd = (int) dd;
    else
      cr_assert_arr_eq (member_chunk (s, m, st), model_chunk (s, st, dd),
                        s->g.chunk, "stripe %llu D%u on member %u is wrong",
                        (unsigned long long) st, dd, m);
  }
  if (missing_dd >= 0)
    cr_assert_arr_eq (acc, model_chunk (s, st, (unsigned) missing_dd),
                      s->g.chunk, "stripe %llu: survivors do not rebuild D%d",
                      (unsigned long long) st, missing_dd);
  else if (s->missing < 0) {
    uint64_t i = 0;

    while (i < words && acc[i] == 0)
      i++;
    cr_assert_eq (i, words, "stripe %llu: parity wrong near byte %llu",
                  (unsigned long long) st, (unsigned long long) i * 8);
  }
}

static void
expect_pristine (struct sim *s, unsigned m, uint64_t from, uint64_t to)
{
  cr_assert (memcmp (s->member[m] + from, s->pristine[m] + from,
                     to - from) == 0,
             "member %u%s: bytes in [%llu,%llu) touched", m,
             (int) m == s->missing ? " (missing)" : "",
             (unsigned long long) from, (unsigned long long) to);
}

static void
sim_check_outside (struct sim *s)
{
  const uint64_t data_end = s->g.data_offset + s->g.member_data;

  for (unsigned m = 0; m < s->g.members; m++)
    if ((int) m == s->missing)
      expect_pristine (s, m, 0, s->member_bytes);
    else {
      expect_pristine (s, m, 0, s->g.data_offset);
      expect_pristine (s, m, data_end, s->member_bytes);
    }
}

static void
sim_check (struct sim *s)
{
  uint64_t *acc = malloc (s->g.chunk);

  cr_assert_not_null (acc);
  for (uint64_t st = 0; st < s->g.stripes; st++)
    sim_check_stripe (s, st, acc);
  free (acc);
  sim_check_outside (s);
}

/* Run one request against the simulator and the model. */
static void
sim_request (struct sim *s, enum r5_op op, uint64_t off, uint64_t len,
             uint64_t budget)
{
  struct call c = { .op = op, .req_off = off, .req_len = len,
                    .missing = s->missing };
  unsigned char *client = NULL, *copy = NULL;

  cr_assert (len > 0 && off + len <= s->g.capacity);
  if (op == R5_OP_READ || op == R5_OP_WRITE) {
    client = malloc (len);
    copy = malloc (len);
    cr_assert (client && copy);
    fill_random (client, len);
    if (op == R5_OP_READ)       /* every byte differs from the answer */
      for (uint64_t i = 0; i < len; i++)
        client[i] = s->model[off + i] ^ 0xff;
    memcpy (copy, client, len);
  }
  sim_run (s, &c, client, budget);
  switch (op) {
  case R5_OP_READ:
    cr_assert_arr_eq (client, s->model + off, len, "read [%llu,+%llu) wrong",
                      (unsigned long long) off, (unsigned long long) len);
    break;
  case R5_OP_WRITE:
    cr_assert_arr_eq (client, copy, len, "write changed the client buffer");
    memcpy (s->model + off, client, len);
    break;
  case R5_OP_ZERO:
    memset (s->model + off, 0, len);
    break;
  case R5_OP_TRIM: {            /* whole stripes only */
    uint64_t sd = s->g.stripe_data;
    uint64_t a = (off + sd - 1) / sd * sd, b = (off + len) / sd * sd;

    if (a < b)
      memset (s->model + a, 0, b - a);
    break;
  }
  }
  cr_assert (s->zero[0] == 0 &&
             memcmp (s->zero, s->zero + 1, s->g.chunk - 1) == 0,
             "the zero source was written");
  free (client);
  free (copy);
  sim_check (s);
}

/*----------------------------------------------------------------------
 * Planner choices, case by case.
 */

/* Plan a whole request in one call on a fresh simulator geometry. */
static void
plan1 (struct sim *s, enum r5_op op, uint64_t off, uint64_t len)
{
  uint64_t planned = 0;

  r5_plan_reset (&s->plan);
  cr_assert_eq (r5_plan_range (&s->plan, &s->g, op, off, len, off,
                               s->missing, UINT64_MAX, &planned), 0);
  cr_assert_eq (planned, len);
}

static size_t
count_ios (const struct r5_plan *p, enum r5_io_kind kind, uint64_t *bytes)
{
  size_t n = 0;

  *bytes = 0;
  for (size_t i = 0; i < p->nios; i++)
    if (p->ios[i].kind == kind) {
      n++;
      *bytes += p->ios[i].len;
    }
  return n;
}

/* The one io of this kind on this member, which must exist. */
static const struct r5_io *
find_io (const struct r5_plan *p, enum r5_io_kind kind, unsigned member,
         uint64_t member_off)
{
  for (size_t i = 0; i < p->nios; i++)
    if (p->ios[i].kind == kind && p->ios[i].member == member &&
        p->ios[i].member_off == member_off)
      return &p->ios[i];
  cr_assert_fail ("no io of kind %d on member %u at %llu", (int) kind, member,
                  (unsigned long long) member_off);
  return NULL;
}

static uint64_t
segs_total (const struct r5_plan *p)
{
  uint64_t n = 0;

  for (int k = 0; k < R5_SEG_KINDS; k++)
    n += p->segs[k];
  return n;
}

/* Geometry for the case tests: 64K chunk, data_offset 1 MiB, 4 stripes,
 * left-symmetric, so stripe 0 is D0..Dk on members 0..k and P on N-1.
 */
#define DOFF (1024 * KiB)
#define C64 (64 * KiB)

static void
case_sim (struct sim *s, unsigned n, int missing)
{
  rng_state = 100 + n;
  sim_init (s, n, C64, R5_LEFT_SYMMETRIC, DOFF, 4, 0, missing);
}

Test (plan, header_example)
{
  struct sim s;
  const struct r5_io *io;
  uint64_t bytes;

  case_sim (&s, 3, -1);
  plan1 (&s, R5_OP_WRITE, 60 * KiB, 8 * KiB);
  cr_assert_eq (s.plan.segs[R5_SEG_RCW], 2);
  cr_assert_eq (segs_total (&s.plan), 2);
  /* each segment reads the untouched chunk: D1 [60K,64K), D0 [0,4K) */
  cr_assert_eq (count_ios (&s.plan, R5_IO_READ, &bytes), 2);
  cr_assert_eq (bytes, 8 * KiB);
  cr_assert_eq (find_io (&s.plan, R5_IO_READ, 1, DOFF + 60 * KiB)->len,
                4 * KiB);
  cr_assert_eq (find_io (&s.plan, R5_IO_READ, 0, DOFF)->len, 4 * KiB);
  /* parity only at [0,4K) and [60K,64K) of member 2 */
  cr_assert_eq (count_ios (&s.plan, R5_IO_WRITE, &bytes), 4);
  cr_assert_eq (bytes, 16 * KiB);
  io = find_io (&s.plan, R5_IO_WRITE, 2, DOFF);
  cr_assert_eq (io->len, 4 * KiB);
  io = find_io (&s.plan, R5_IO_WRITE, 2, DOFF + 60 * KiB);
  cr_assert_eq (io->len, 4 * KiB);
  sim_request (&s, R5_OP_WRITE, 60 * KiB, 8 * KiB, UINT64_MAX);
  sim_free (&s);
}

/* N=3: one touched chunk, one untouched: RCW reads 1, RMW would read 2. */
Test (plan, small_write_3_is_rcw)
{
  struct sim s;
  uint64_t bytes;

  case_sim (&s, 3, -1);
  plan1 (&s, R5_OP_WRITE, 8 * KiB, 4 * KiB);
  cr_assert_eq (s.plan.segs[R5_SEG_RCW], 1);
  cr_assert_eq (segs_total (&s.plan), 1);
  cr_assert_eq (count_ios (&s.plan, R5_IO_READ, &bytes), 1);
  cr_assert_eq (bytes, 4 * KiB);
  find_io (&s.plan, R5_IO_READ, 1, DOFF + 8 * KiB);
  cr_assert_eq (count_ios (&s.plan, R5_IO_WRITE, &bytes), 2);
  find_io (&s.plan, R5_IO_WRITE, 0, DOFF + 8 * KiB);
  find_io (&s.plan, R5_IO_WRITE, 2, DOFF + 8 * KiB);
  sim_request (&s, R5_OP_WRITE, 8 * KiB, 4 * KiB, UINT64_MAX);
  sim_free (&s);
}

/* N=5: RMW reads old D0 and old P (2); RCW would read 3. */
Test (plan, small_write_5_is_rmw)
{
  struct sim s;
  uint64_t bytes;

  case_sim (&s, 5, -1);
  plan1 (&s, R5_OP_WRITE, 4 * KiB + 100, 1000);
  cr_assert_eq (s.plan.segs[R5_SEG_RMW], 1);
  cr_assert_eq (segs_total (&s.plan), 1);
  cr_assert_eq (count_ios (&s.plan, R5_IO_READ, &bytes), 2);
  cr_assert_eq (bytes, 2000);
  find_io (&s.plan, R5_IO_READ, 0, DOFF + 4 * KiB + 100);
  find_io (&s.plan, R5_IO_READ, 4, DOFF + 4 * KiB + 100);
  cr_assert_eq (count_ios (&s.plan, R5_IO_WRITE, &bytes), 2);
  cr_assert_eq (bytes, 2000);
  sim_request (&s, R5_OP_WRITE, 4 * KiB + 100, 1000, UINT64_MAX);
  sim_free (&s);
}

/* N=4, D0 and D1 whole: RCW reads only D2. */
Test (plan, two_of_three_chunks_is_rcw)
{
  struct sim s;
  uint64_t bytes;

  case_sim (&s, 4, -1);
  plan1 (&s, R5_OP_WRITE, 0, 2 * C64);
  cr_assert_eq (s.plan.segs[R5_SEG_RCW], 1);
  cr_assert_eq (segs_total (&s.plan), 1);
  cr_assert_eq (count_ios (&s.plan, R5_IO_READ, &bytes), 1);
  cr_assert_eq (find_io (&s.plan, R5_IO_READ, 2, DOFF)->len, C64);
  cr_assert_eq (count_ios (&s.plan, R5_IO_WRITE, &bytes), 3);
  cr_assert_eq (bytes, 3 * C64);
  sim_request (&s, R5_OP_WRITE, 0, 2 * C64, UINT64_MAX);
  sim_free (&s);
}

/* RCW when D-k <= k+1, else RMW; ties go to RCW. */
Test (plan, rcw_or_rmw_by_chunks_touched)
{
  static const struct { unsigned n, k; enum r5_seg_kind kind; } cases[] = {
    { 3, 1, R5_SEG_RCW }, { 4, 1, R5_SEG_RCW }, { 4, 2, R5_SEG_RCW },
    { 5, 1, R5_SEG_RMW }, { 5, 2, R5_SEG_RCW }, { 6, 1, R5_SEG_RMW },
    { 6, 2, R5_SEG_RCW }, { 8, 2, R5_SEG_RMW }, { 8, 3, R5_SEG_RCW },
  };

  for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct sim s;
    uint64_t len = cases[i].k * C64;

    case_sim (&s, cases[i].n, -1);
    plan1 (&s, R5_OP_WRITE, C64, len);   /* D1 .. Dk */
    cr_assert_eq (s.plan.segs[cases[i].kind], 1, "N=%u k=%u", cases[i].n,
                  cases[i].k);
    cr_assert_eq (segs_total (&s.plan), 1);
    sim_request (&s, R5_OP_WRITE, C64, len, UINT64_MAX);
    sim_free (&s);
  }
}

Test (plan, full_stripe_reads_nothing)
{
  struct sim s;
  uint64_t bytes;

  case_sim (&s, 4, -1);
  plan1 (&s, R5_OP_WRITE, s.g.stripe_data, 2 * s.g.stripe_data);
  cr_assert_eq (s.plan.segs[R5_SEG_FULL_WRITE], 2);
  cr_assert_eq (segs_total (&s.plan), 2);
  cr_assert_eq (count_ios (&s.plan, R5_IO_READ, &bytes), 0);
  count_ios (&s.plan, R5_IO_WRITE, &bytes);
  cr_assert_eq (bytes, 2 * 4 * C64);
  sim_request (&s, R5_OP_WRITE, s.g.stripe_data, 2 * s.g.stripe_data,
               UINT64_MAX);
  sim_free (&s);
}

/* Parity member missing: write the data, nothing else. */
Test (plan, missing_parity_is_data_only)
{
  struct sim s;
  uint64_t bytes;

  case_sim (&s, 5, 4);          /* stripe 0's parity */
  plan1 (&s, R5_OP_WRITE, C64 + 10, 3000);
  cr_assert_eq (s.plan.segs[R5_SEG_DATA_ONLY], 1);
  cr_assert_eq (segs_total (&s.plan), 1);
  cr_assert_eq (count_ios (&s.plan, R5_IO_READ, &bytes), 0);
  cr_assert_eq (count_ios (&s.plan, R5_IO_WRITE, &bytes), 1);
  cr_assert_eq (find_io (&s.plan, R5_IO_WRITE, 1, DOFF + 10)->len, 3000);
  cr_assert_eq (s.plan.nxors, 0);
  sim_request (&s, R5_OP_WRITE, C64 + 10, 3000, UINT64_MAX);
  sim_free (&s);
}

/* The touched chunk's member is missing: only RCW can compute parity. */
Test (plan, missing_touched_forces_rcw)
{
  struct sim s;
  uint64_t bytes;

  case_sim (&s, 5, 1);
  plan1 (&s, R5_OP_WRITE, C64 + 512, 512);
  cr_assert_eq (s.plan.segs[R5_SEG_RCW], 1);
  cr_assert_eq (segs_total (&s.plan), 1);
  cr_assert_eq (count_ios (&s.plan, R5_IO_READ, &bytes), 3);
  cr_assert_eq (bytes, 3 * 512);
  cr_assert_eq (count_ios (&s.plan, R5_IO_WRITE, &bytes), 1);
  find_io (&s.plan, R5_IO_WRITE, 4, DOFF + 512);
  sim_request (&s, R5_OP_WRITE, C64 + 512, 512, UINT64_MAX);
  sim_free (&s);
}

/* An untouched chunk's member is missing: only RMW avoids reading it. */
Test (plan, missing_untouched_forces_rmw)
{
  struct sim s;
  uint64_t bytes;

  case_sim (&s, 3, 1);
  plan1 (&s, R5_OP_WRITE, 4096, 4096);
  cr_assert_eq (s.plan.segs[R5_SEG_RMW], 1);
  cr_assert_eq (segs_total (&s.plan), 1);
  cr_assert_eq (count_ios (&s.plan, R5_IO_READ, &bytes), 2);
  find_io (&s.plan, R5_IO_READ, 0, DOFF + 4096);
  find_io (&s.plan, R5_IO_READ, 2, DOFF + 4096);
  cr_assert_eq (count_ios (&s.plan, R5_IO_WRITE, &bytes), 2);
  sim_request (&s, R5_OP_WRITE, 4096, 4096, UINT64_MAX);
  sim_free (&s);
}

Test (plan, healthy_read_goes_straight)
{
  struct sim s;
  uint64_t bytes;

  case_sim (&s, 4, -1);
  plan1 (&s, R5_OP_READ, C64 - 100, 200);
  cr_assert_eq (s.plan.segs[R5_SEG_DEGRADED_READ], 0);
  cr_assert_geq (s.plan.segs[R5_SEG_READ], 1);
  cr_assert_eq (count_ios (&s.plan, R5_IO_READ, &bytes), 2);
  cr_assert_eq (bytes, 200);
  cr_assert_eq (find_io (&s.plan, R5_IO_READ, 0, DOFF + C64 - 100)->buf.kind,
                R5_BUF_CLIENT);
  cr_assert_eq (find_io (&s.plan, R5_IO_READ, 1, DOFF)->buf.off, 100);
  cr_assert_eq (s.plan.nios, 2);
  cr_assert_eq (s.plan.nxors, 0);
  sim_request (&s, R5_OP_READ, C64 - 100, 200, UINT64_MAX);
  sim_free (&s);
}

Test (plan, degraded_read)
{
  struct sim s;
  uint64_t bytes;

  case_sim (&s, 4, 1);
  plan1 (&s, R5_OP_READ, C64 + 7, 333);
  cr_assert_eq (s.plan.segs[R5_SEG_DEGRADED_READ], 1);
  cr_assert_eq (segs_total (&s.plan), 1);
  cr_assert_eq (count_ios (&s.plan, R5_IO_READ, &bytes), 3);
  cr_assert_eq (bytes, 3 * 333);
  cr_assert_eq (s.plan.nxors, 1);
  cr_assert_eq (s.plan.xors[0].nsrc, 3);
  cr_assert_eq (s.plan.xors[0].dst.kind, R5_BUF_CLIENT);
  sim_request (&s, R5_OP_READ, C64 + 7, 333, UINT64_MAX);
  /* the same array, a chunk on a present member: no reconstruction */
  plan1 (&s, R5_OP_READ, 2 * C64, 4096);
  cr_assert_eq (s.plan.segs[R5_SEG_DEGRADED_READ], 0);
  cr_assert_eq (s.plan.nxors, 0);
  sim_free (&s);
}

Test (plan, zero_whole_stripes)
{
  struct sim s;
  uint64_t bytes;

  case_sim (&s, 3, -1);
  plan1 (&s, R5_OP_ZERO, 0, 3 * s.g.stripe_data);
  cr_assert_eq (s.plan.segs[R5_SEG_ZERO_STRIPE], 3);
  cr_assert_eq (segs_total (&s.plan), 3);
  cr_assert_eq (count_ios (&s.plan, R5_IO_ZERO, &bytes), 9);
  cr_assert_eq (bytes, 9 * C64);
  cr_assert_eq (count_ios (&s.plan, R5_IO_READ, &bytes), 0);
  cr_assert_eq (count_ios (&s.plan, R5_IO_WRITE, &bytes), 0);
  cr_assert_eq (s.plan.nxors, 0);
  sim_request (&s, R5_OP_ZERO, 0, 3 * s.g.stripe_data, UINT64_MAX);
  sim_free (&s);
}

Test (plan, zero_partial_writes_zeroes)
{
  struct sim s;
  uint64_t bytes;
  size_t from_zero = 0;

  case_sim (&s, 4, -1);
  plan1 (&s, R5_OP_ZERO, 4096, 8192);
  cr_assert_eq (s.plan.segs[R5_SEG_ZERO_STRIPE], 0);
  cr_assert_eq (s.plan.segs[R5_SEG_RCW] + s.plan.segs[R5_SEG_RMW], 1);
  cr_assert_eq (count_ios (&s.plan, R5_IO_ZERO, &bytes), 0);
  for (size_t i = 0; i < s.plan.nios; i++)
    if (s.plan.ios[i].kind == R5_IO_WRITE &&
        s.plan.ios[i].buf.kind == R5_BUF_ZERO)
      from_zero++;
  cr_assert_eq (from_zero, 1);
  sim_request (&s, R5_OP_ZERO, 4096, 8192, UINT64_MAX);
  sim_request (&s, R5_OP_ZERO, 100, s.g.stripe_data, UINT64_MAX);
  sim_free (&s);
}

Test (plan, trim_partial_does_nothing)
{
  struct sim s;

  case_sim (&s, 3, -1);
  plan1 (&s, R5_OP_TRIM, 4096, s.g.stripe_data);
  cr_assert_eq (s.plan.nios, 0);
  cr_assert_eq (s.plan.nxors, 0);
  cr_assert_eq (segs_total (&s.plan), 0);
  sim_request (&s, R5_OP_TRIM, 4096, s.g.stripe_data, UINT64_MAX);
  sim_free (&s);
}

Test (plan, trim_whole_stripes)
{
  struct sim s;
  uint64_t bytes;

  case_sim (&s, 5, 2);
  /* stripe 1 whole, stripe 2 partial */
  plan1 (&s, R5_OP_TRIM, s.g.stripe_data - 1, s.g.stripe_data + 2);
  cr_assert_eq (s.plan.segs[R5_SEG_TRIM_STRIPE], 1);
  cr_assert_eq (segs_total (&s.plan), 1);
  cr_assert_eq (count_ios (&s.plan, R5_IO_TRIM, &bytes), 4);
  cr_assert_eq (bytes, 4 * C64);
  cr_assert_eq (s.plan.nios, 4);
  cr_assert_eq (s.plan.nxors, 0);
  sim_request (&s, R5_OP_TRIM, s.g.stripe_data - 1, s.g.stripe_data + 2,
               UINT64_MAX);
  sim_free (&s);
}

/* A tiny budget still plans one stripe and stops at its end. */
Test (plan, budget_splits_on_stripes)
{
  struct sim s;
  uint64_t planned = 0;

  case_sim (&s, 3, -1);
  r5_plan_reset (&s.plan);
  cr_assert_eq (r5_plan_range (&s.plan, &s.g, R5_OP_WRITE, 1000,
                               3 * s.g.stripe_data, 1000, -1, 0, &planned), 0);
  cr_assert_eq (planned, s.g.stripe_data - 1000);
  r5_plan_reset (&s.plan);
  cr_assert_eq (r5_plan_range (&s.plan, &s.g, R5_OP_WRITE, 0,
                               3 * s.g.stripe_data, 0, -1, 0, &planned), 0);
  cr_assert_eq (planned, s.g.stripe_data);
  sim_free (&s);
}

/* "fits within scratch_budget": a budget one byte more than the first
 * stripe needs must not take in a second stripe that needs as much again.
 */
Test (plan, budget_is_not_exceeded)
{
  struct sim s;
  uint64_t planned = 0, one;

  case_sim (&s, 3, -1);
  plan1 (&s, R5_OP_WRITE, 0, s.g.stripe_data);
  one = s.plan.scratch;
  cr_assert_gt (one, 0);
  r5_plan_reset (&s.plan);
  cr_assert_eq (r5_plan_range (&s.plan, &s.g, R5_OP_WRITE, 0,
                               2 * s.g.stripe_data, 0, -1, one + 1,
                               &planned), 0);
  cr_assert_leq (s.plan.scratch, one + 1, "scratch %llu, budget %llu",
                 (unsigned long long) s.plan.scratch,
                 (unsigned long long) one + 1);
  cr_assert_eq (planned, s.g.stripe_data);
  sim_free (&s);
}

Test (plan, lifecycle)
{
  struct r5_plan p, zeroed;
  struct sim s;
  uint64_t planned;
  size_t cap;

  memset (&zeroed, 0, sizeof zeroed);
  r5_plan_free (&zeroed);
  r5_plan_init (&p);
  cr_assert_eq (p.nios, 0);
  cr_assert_eq (p.nxors, 0);
  cr_assert_eq (p.scratch, 0);
  cr_assert_eq (segs_total (&p), 0);
  case_sim (&s, 4, 3);
  cr_assert_eq (r5_plan_range (&p, &s.g, R5_OP_WRITE, 0, 100, 0, 3,
                               UINT64_MAX, &planned), 0);
  cr_assert_eq (p.missing, 3);
  cr_assert_gt (p.nios, 0);
  cap = p.ios_cap;
  r5_plan_reset (&p);
  cr_assert_eq (p.nios, 0);
  cr_assert_eq (p.nxors, 0);
  cr_assert_eq (p.scratch, 0);
  cr_assert_eq (segs_total (&p), 0);
  cr_assert_eq (p.ios_cap, cap, "reset must keep the memory");
  r5_plan_free (&p);
  sim_free (&s);
}

Test (plan, seg_kind_names)
{
  for (int i = 0; i < R5_SEG_KINDS; i++) {
    const char *a = r5_seg_kind_name ((enum r5_seg_kind) i);

    cr_assert (a != NULL && *a != '\0');
    for (int j = 0; j < i; j++)
      cr_assert_str_neq (a, r5_seg_kind_name ((enum r5_seg_kind) j));
  }
  cr_assert_str_eq (r5_seg_kind_name (R5_SEG_RCW), "rcw");
  cr_assert_str_eq (r5_seg_kind_name (R5_SEG_FULL_WRITE), "full-stripe");
}

/*----------------------------------------------------------------------
 * Random requests.
 */
static const enum r5_layout layouts[] = {
  R5_LEFT_ASYMMETRIC, R5_RIGHT_ASYMMETRIC, R5_LEFT_SYMMETRIC,
  R5_RIGHT_SYMMETRIC,
};

static void
random_sim (struct sim *s, bool degraded)
{
  unsigned n = 3 + (unsigned) rng_below (4);
  uint64_t chunk = 4096ull << rng_below (5);
  uint64_t doff = 512 * rng_below (17);
  uint64_t stripes = 1 + rng_below (4);
  uint64_t slack = rng_below (2) ? 0 : rng_below (chunk);
  int missing = degraded ? (int) rng_below (n) : -1;

  sim_init (s, n, chunk, layouts[rng_below (4)], doff, stripes, slack,
            missing);
}

static void
random_range (const struct r5_geom *g, uint64_t *off, uint64_t *len)
{
  const uint64_t cap = g->capacity, c = g->chunk, sd = g->stripe_data;

  switch (rng_below (6)) {
  case 0:                       /* a few bytes anywhere */
    *off = rng_below (cap);
    *len = 1 + rng_below (16);
    break;
  case 1:                       /* inside one chunk */
    *off = rng_below (cap);
    *len = 1 + rng_below (c - *off % c);
    break;
  case 2:                       /* whole chunks */
    *off = rng_below (cap / c) * c;
    *len = c * (1 + rng_below (g->data_members + 1));
    break;
  case 3:                       /* whole stripes */
    *off = rng_below (g->stripes) * sd;
    *len = sd * (1 + rng_below (g->stripes));
    break;
  case 4:                       /* sectors */
    *off = rng_below (cap / 512) * 512;
    *len = 512 * (1 + rng_below (2 * sd / 512));
    break;
  default:                      /* anything */
    *off = rng_below (cap);
    *len = 1 + rng_below (cap - *off);
    break;
  }
  if (*len > cap - *off)
    *len = cap - *off;
}

static uint64_t
random_budget (const struct r5_geom *g)
{
  const uint64_t budgets[] = {
    0, 1, 512, g->chunk / 2, g->chunk, g->stripe_data, 3 * g->chunk,
    UINT64_MAX, UINT64_MAX,
  };

  return budgets[rng_below (sizeof budgets / sizeof budgets[0])];
}

static void
random_session (uint64_t seed, bool degraded, unsigned requests)
{
  static const enum r5_op ops[] = {
    R5_OP_READ, R5_OP_READ, R5_OP_READ, R5_OP_WRITE, R5_OP_WRITE,
    R5_OP_WRITE, R5_OP_WRITE, R5_OP_ZERO, R5_OP_ZERO, R5_OP_TRIM,
  };
  struct sim s;

  rng_state = seed;
  random_sim (&s, degraded);
  for (unsigned i = 0; i < requests; i++) {
    uint64_t off, len;

    random_range (&s.g, &off, &len);
    sim_request (&s, ops[rng_below (10)], off, len, random_budget (&s.g));
  }
  sim_free (&s);
}

#define SESSIONS 250
#define REQUESTS 25

Test (plan_random, healthy_a)
{
  for (uint64_t seed = 1; seed <= SESSIONS; seed++)
    random_session (seed * 7919, false, REQUESTS);
  expect_no_overruns ();
}

Test (plan_random, healthy_b)
{
  for (uint64_t seed = 1; seed <= SESSIONS; seed++)
    random_session (seed * 104729 + 1, false, REQUESTS);
  expect_no_overruns ();
}

Test (plan_random, degraded_a)
{
  for (uint64_t seed = 1; seed <= SESSIONS; seed++)
    random_session (seed * 15485863, true, REQUESTS);
  expect_no_overruns ();
}

Test (plan_random, degraded_b)
{
  for (uint64_t seed = 1; seed <= SESSIONS; seed++)
    random_session (seed * 32452843 + 3, true, REQUESTS);
  expect_no_overruns ();
}
