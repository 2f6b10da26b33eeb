/* array/runplan.c -- run a plan on the members (see runplan.h). */
#include <config.h>

#include <stdlib.h>

#include "array/internal.h"
#include "array/runplan.h"
#include "io/view.h"
#include "raid/parity.h"

/* Scratch columns that live in a member's mapped pages instead.  A plan
 * with more mapped columns than this reads (or writes) the rest.
 */
#define MAX_ALIASES (2 * R5_MAX_MEMBERS + 2)

struct aliases {
  unsigned n;
  struct { uint64_t off, len; char *at; } a[MAX_ALIASES];
};

struct run {
  struct plan_run *x;
  struct aliases al;
};

static void *
buf_ptr (const struct run *r, struct r5_buf b)
{
  switch (b.kind) {
  case R5_BUF_CLIENT: return r->x->client + b.off;
  case R5_BUF_ZERO: return (void *) r->x->zero;
  case R5_BUF_SCRATCH:
    for (unsigned i = 0; i < r->al.n; i++)
      if (b.off >= r->al.a[i].off &&
          b.off < r->al.a[i].off + r->al.a[i].len)
        return r->al.a[i].at + (b.off - r->al.a[i].off);
    return r->x->scratch + b.off;
  }
  abort ();
}

/* Member m's mapped bytes at member offset off (len of them), or NULL. */
static char *
mapped (const struct plan_views *v, unsigned m, uint64_t off, uint64_t len)
{
  if (v == NULL || v->base[m] == NULL || off < v->off ||
      off + len > v->off + v->len)
    return NULL;
  return v->base[m] + (off - v->off);
}

static bool
alias (struct run *r, struct r5_buf b, uint64_t len, char *at)
{
  if (b.kind != R5_BUF_SCRATCH || r->al.n == MAX_ALIASES)
    return false;
  r->al.a[r->al.n++] = (typeof (r->al.a[0])) { b.off, len, at };
  return true;
}

/* Columns computed straight into the pages of the member mapped for
 * writing: the XOR writes there, and the write itself is not needed.
 */
static void
alias_written (struct run *r)
{
  const struct plan_views *v = r->x->views;
  const struct r5_plan *p = r->x->plan;

  if (v == NULL || v->writable < 0)
    return;
  for (size_t i = 0; i < p->nios; i++) {
    const struct r5_io *io = &p->ios[i];
    char *at;

    if (io->kind == R5_IO_WRITE && io->when == 0 &&
        (int) io->member == v->writable &&
        (at = mapped (v, io->member, io->member_off, io->len)) != NULL &&
        alias (r, io->buf, io->len, at))
      io_view_populate (at, io->len);
  }
}

static enum io_kind
io_kind (const struct plan_run *x, enum r5_io_kind kind)
{
  switch (kind) {
  case R5_IO_READ: return IO_READ;
  case R5_IO_WRITE: return IO_WRITE;
  case R5_IO_ZERO: return x->zero_punches ? IO_PUNCH : IO_ZERO;
  case R5_IO_TRIM: return IO_PUNCH;
  }
  abort ();
}

static bool
found_wrong (const struct plan_run *x, unsigned when)
{
  return when == 0 || x->cmp[when - 1].bad > 0;
}

static struct io_op
op_of (const struct run *r, const struct r5_io *io)
{
  bool no_buf = io->kind == R5_IO_ZERO || io->kind == R5_IO_TRIM;

  return (struct io_op) {
    .kind = io_kind (r->x, io->kind), .member = io->member,
    .buf = no_buf ? NULL : buf_ptr (r, io->buf),
    .off = io->member_off, .len = io->len,
  };
}

/* Phase 1: reads, or pointers into mapped members. */
static int
run_reads (struct array *a, struct run *r)
{
  const struct r5_plan *p = r->x->plan;
  size_t k = 0;

  for (size_t i = 0; i < p->nios; i++) {
    const struct r5_io *io = &p->ios[i];
    char *at;

    if (io->kind != R5_IO_READ)
      continue;
    if ((at = mapped (r->x->views, io->member, io->member_off, io->len)) &&
        alias (r, io->buf, io->len, at))
      continue;
    r->x->ops[k++] = op_of (r, io);
  }
  r->x->nops = k;
  return io_run (a->members, r->x->ops, k, 0);
}

/* Count the wrong units of one compare: data and parity XOR to zero
 * where parity is right.  One pass over the members' bytes, nothing
 * written (ISA-L's xor_check), as long as it can be (streams prefetch
 * well); unit by unit only from where it first is not.
 */
static void
compare (const struct run *r, const struct r5_cmp *c, struct plan_cmp_out *o)
{
  void *src[R5_MAX_MEMBERS], *v[R5_MAX_MEMBERS];

  *o = (struct plan_cmp_out) { 0, 0 };
  for (unsigned s = 0; s < c->nsrc; s++)
    src[s] = buf_ptr (r, c->src[s]);
  for (uint64_t u = 0; u < c->len; u += R5_CMP_UNIT) {
    size_t ok;

    for (unsigned s = 0; s < c->nsrc; s++)
      v[s] = (char *) src[s] + u;
    ok = r5_xor_check (c->nsrc, c->len - u, v);
    if (ok == c->len - u)
      return;
    u += ok / R5_CMP_UNIT * R5_CMP_UNIT;    /* the first wrong byte's unit */
    if (o->bad++ == 0)
      o->first = c->chunk_off + u;
  }
}

/* Phase 2: compares, then the XORs whose compare (if any) found wrong
 * parity.
 */
static void
run_compute (struct run *r)
{
  const struct r5_plan *p = r->x->plan;

  for (size_t i = 0; i < p->ncmps; i++)
    compare (r, &p->cmps[i], &r->x->cmp[i]);
  for (size_t i = 0; i < p->nxors; i++) {
    const struct r5_xor *x = &p->xors[i];
    void *v[R5_XOR_VECTS_MAX];

    if (!found_wrong (r->x, x->when))
      continue;
    for (unsigned s = 0; s < x->nsrc; s++)
      v[s] = buf_ptr (r, x->src[s]);
    v[x->nsrc] = buf_ptr (r, x->dst);
    r5_xor_gen (x->nsrc + 1, x->len, v);
  }
}

/* Phase 3: writes, zeroes, trims -- but those computed in place. */
static int
run_writes (struct array *a, struct run *r)
{
  const struct r5_plan *p = r->x->plan;
  size_t k = 0;

  for (size_t i = 0; i < p->nios; i++) {
    const struct r5_io *io = &p->ios[i];
    struct io_op op;

    if (io->kind == R5_IO_READ || !found_wrong (r->x, io->when))
      continue;
    op = op_of (r, io);
    if (io->kind == R5_IO_WRITE &&
        op.buf == mapped (r->x->views, io->member, io->member_off, io->len))
      continue;               /* computed in its pages */
    r->x->ops[k++] = op;
  }
  r->x->nops = k;
  return io_run (a->members, r->x->ops, k, r->x->io_flags);
}

int
plan_run (struct array *a, struct plan_run *x)
{
  struct run r = { .x = x };
  int e;

  alias_written (&r);
  if ((e = run_reads (a, &r)) < 0)
    return e;
  run_compute (&r);
  return run_writes (a, &r);
}
