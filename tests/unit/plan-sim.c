/* tests/unit/plan-sim.c -- in-memory members for the planner's tests;
 * see plan-sim.h.
 */
#include <config.h>

#undef NDEBUG
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "tests/unit/plan-sim.h"

/* xorshift64*; tests set sim_rng_state to a fixed seed */
uint64_t sim_rng_state = 1;

uint64_t
sim_rng (void)
{
  sim_rng_state ^= sim_rng_state >> 12;
  sim_rng_state ^= sim_rng_state << 25;
  sim_rng_state ^= sim_rng_state >> 27;
  return sim_rng_state * 0x2545f4914f6cdd1dull;
}

uint64_t
sim_rng_below (uint64_t n)
{
  return sim_rng () % n;
}

void
sim_fill_random (unsigned char *p, uint64_t len)
{
  uint64_t i, r;

  for (i = 0; i + 8 <= len; i += 8) {
    r = sim_rng ();
    memcpy (p + i, &r, 8);
  }
  for (r = sim_rng (); i < len; i++, r >>= 8)
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
unsigned
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
  case R5_PARITY_FIRST:
    return 0;
  case R5_PARITY_LAST:
    return n - 1;
  }
  abort ();
}

unsigned
md_data_member (const struct r5_geom *g, uint64_t stripe, unsigned dd)
{
  unsigned pd = md_parity (g, stripe);

  switch (g->layout) {
  case R5_LEFT_SYMMETRIC:
  case R5_RIGHT_SYMMETRIC:
    return (pd + 1 + dd) % g->members;
  case R5_LEFT_ASYMMETRIC:
  case R5_RIGHT_ASYMMETRIC:
    return dd < pd ? dd : dd + 1;
  case R5_PARITY_FIRST:
    return dd + 1;
  case R5_PARITY_LAST:
    return dd;
  }
  abort ();
}

/*----------------------------------------------------------------------
 * The simulator.
 */
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

void
sim_init (struct sim *s, unsigned n, uint64_t chunk, enum r5_layout layout,
          uint64_t data_offset, uint64_t stripes, uint64_t slack, int missing)
{
  memset (s, 0, sizeof *s);
  s->member_bytes = data_offset + stripes * chunk + slack;
  cr_assert_eq (r5_geom_init (&s->g, &(struct r5_geom_params) {
      .members = n, .chunk = chunk, .layout = layout,
      .data_offset = data_offset, .member_bytes = s->member_bytes }), 0);
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
  sim_fill_random (s->model, s->g.capacity);
  sim_build_members (s);
  r5_plan_init (&s->plan);
}

void
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

/* The units of a compare whose sources do not XOR to zero. */
static void
exec_cmp (struct sim *s, struct mem *mem, const struct r5_cmp *c,
          unsigned *bad, uint64_t *first)
{
  *bad = 0;
  *first = 0;
  for (uint64_t u = 0; u < c->len; u += R5_CMP_UNIT) {
    bool wrong = false;

    for (uint64_t b = 0; b < R5_CMP_UNIT && !wrong; b++) {
      unsigned char x = 0;

      for (unsigned i = 0; i < c->nsrc; i++)
        x ^= buf_ptr (s, mem, c->src[i])[u + b];
      wrong = x != 0;
    }
    if (wrong && (*bad)++ == 0)
      *first = c->chunk_off + u;
  }
}

static bool
wanted (const struct mem *mem, unsigned when)
{
  return when == 0 || mem->cmp_bad[when - 1] > 0;
}

/* The three phases.  Within a phase, ios run last to first: the plan must
 * not depend on their order.
 */
void
sim_exec_before_writes (struct sim *s, struct mem *mem)
{
  const struct r5_plan *p = &s->plan;

  cr_assert (p->ncmps == 0 || (mem->cmp_bad && mem->cmp_first));
  for (size_t i = p->nios; i-- > 0;)
    if (p->ios[i].kind == R5_IO_READ)
      exec_io (s, mem, &p->ios[i]);
  for (size_t i = 0; i < p->ncmps; i++)
    exec_cmp (s, mem, &p->cmps[i], &mem->cmp_bad[i], &mem->cmp_first[i]);
  for (size_t i = 0; i < p->nxors; i++)
    if (wanted (mem, p->xors[i].when))
      exec_xor (s, mem, &p->xors[i]);
}

void
sim_exec (struct sim *s, struct mem *mem)
{
  const struct r5_plan *p = &s->plan;

  sim_exec_before_writes (s, mem);
  for (size_t i = p->nios; i-- > 0;)
    if (p->ios[i].kind != R5_IO_READ && wanted (mem, p->ios[i].when))
      exec_io (s, mem, &p->ios[i]);
}

void
sim_exec_io_prefix (struct sim *s, struct mem *mem, size_t i, uint64_t len)
{
  struct r5_io io = s->plan.ios[i];

  cr_assert (io.kind != R5_IO_READ && len <= io.len);
  if (len == 0)
    return;
  io.len = len;
  exec_io (s, mem, &io);
}

unsigned char *
sim_buf (struct sim *s, struct mem *mem, struct r5_buf b)
{
  return buf_ptr (s, mem, b);
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
    cr_assert_eq (r5_plan_range (&s->plan, &s->g, &(struct r5_range) {
        c->op, c->off, end - c->off, c->req_off, c->missing, budget, 0, 0 }, &c->planned), 0);
    check_planned (&s->plan, &s->g, c, end - c->off, budget);
    check_plan (&s->plan, &s->g, c);
    check_choices (&s->plan, &s->g, c);
    mem.scratch = malloc (s->plan.scratch + 1);
    cr_assert_not_null (mem.scratch);
    sim_fill_random (mem.scratch, s->plan.scratch);
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

void
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
void
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
    sim_fill_random (client, len);
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
