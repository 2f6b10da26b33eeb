/* array/runplan.c -- run a plan on the members (see runplan.h). */
#include <config.h>

#include <errno.h>
#include <stdlib.h>

#include "array/object.h"
#include "array/requests.h"
#include "array/runplan.h"
#include "array/writepath.h"
#include "io/sigbus.h"
#include "io/view.h"
#include "raid/parity.h"

#include "raid/layout.h"

void *
plan_run_ptr (const struct plan_run *x, struct r5_buf b)
{
  switch (b.kind) {
  case R5_BUF_CLIENT: return x->client + b.off;
  case R5_BUF_ZERO: return (void *) x->zero;
  case R5_BUF_SCRATCH:
    for (unsigned i = 0; i < x->al.n; i++)
      if (b.off >= x->al.a[i].off &&
          b.off < x->al.a[i].off + x->al.a[i].len)
        return x->al.a[i].at + (b.off - x->al.a[i].off);
    return x->scratch + b.off;
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
alias (struct plan_run *x, struct r5_buf b, uint64_t len, char *at)
{
  if (b.kind != R5_BUF_SCRATCH || x->al.n == PLAN_MAX_ALIASES)
    return false;
  x->al.a[x->al.n++] = (typeof (x->al.a[0])) { b.off, len, at };
  return true;
}

/* Columns computed straight into the pages of the member mapped for
 * writing: the XOR writes there, and the write itself is not needed.
 */
static void
alias_written (struct plan_run *x)
{
  const struct plan_views *v = x->views;
  const struct r5_plan *p = x->plan;

  if (v == NULL || v->writable < 0)
    return;
  for (size_t i = 0; i < p->nios; i++) {
    const struct r5_io *io = &p->ios[i];
    char *at;

    if (io->kind == R5_IO_WRITE && io->when == 0 &&
        (int) io->member == v->writable &&
        (at = mapped (v, io->member, io->member_off, io->len)) != NULL &&
        alias (x, io->buf, io->len, at))
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
op_of (const struct plan_run *x, const struct r5_io *io)
{
  bool no_buf = io->kind == R5_IO_ZERO || io->kind == R5_IO_TRIM;

  return (struct io_op) {
    .kind = io_kind (x, io->kind), .member = io->member,
    .buf = no_buf ? NULL : plan_run_ptr (x, io->buf),
    .off = io->member_off, .len = io->len,
  };
}

/* Phase 1: reads, or pointers into mapped members. */
static int
run_reads (struct array *a, struct plan_run *x)
{
  const struct r5_plan *p = x->plan;
  size_t k = 0;
  int r;

  for (size_t i = 0; i < p->nios; i++) {
    const struct r5_io *io = &p->ios[i];
    char *at;

    if (io->kind != R5_IO_READ)
      continue;
    if ((at = mapped (x->views, io->member, io->member_off, io->len)) &&
        alias (x, io->buf, io->len, at))
      continue;
    x->ops[k++] = op_of (x, io);
  }
  x->nops = k;
  r = io_run (a->members, x->ops, k, x->io_flags & IO_CALLS);
  if (k > 0)                  /* ops may be NULL with none (a trim) */
    array_reads_succeeded (a, x->ops, k);
  return r;
}

/* Phase 1's reads against their checksums: -EBADMSG with x->bad at the
 * first unit that fails.
 */
static int
verify_reads (struct array *a, struct plan_run *x)
{
  const struct r5_plan *p = x->plan;

  for (size_t i = 0; i < p->nios; i++) {
    const struct r5_io *io = &p->ios[i];

    if (io->kind == R5_IO_READ &&
        !wp_verify (a, io->member, io->member_off,
                    plan_run_ptr (x, io->buf), io->len, &x->bad))
      return -EBADMSG;
  }
  return 0;
}

/* Count the wrong units of one compare: data and parity XOR to zero
 * where parity is right.  One pass over the members' bytes, nothing
 * written (ISA-L's xor_check), as long as it can be (streams prefetch
 * well); unit by unit only from where it first is not.
 */
static void
compare (const struct plan_run *x, const struct r5_cmp *c, struct plan_cmp_out *o)
{
  void *src[R5_MAX_MEMBERS], *v[R5_MAX_MEMBERS];

  *o = (struct plan_cmp_out) { 0, 0, 0 };
  for (unsigned s = 0; s < c->nsrc; s++)
    src[s] = plan_run_ptr (x, c->src[s]);
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
    o->last = c->chunk_off + u;
  }
}

/* Phase 2: compares, then the XORs whose compare (if any) found wrong
 * parity.
 */
static void
run_compute (struct plan_run *x)
{
  const struct r5_plan *p = x->plan;

  for (size_t i = 0; i < p->ncmps; i++)
    compare (x, &p->cmps[i], &x->cmp[i]);
  for (size_t i = 0; i < p->nxors; i++) {
    const struct r5_xor *xr = &p->xors[i];
    void *v[R5_XOR_VECTS_MAX];

    if (!found_wrong (x, xr->when))
      continue;
    for (unsigned s = 0; s < xr->nsrc; s++)
      v[s] = plan_run_ptr (x, xr->src[s]);
    v[xr->nsrc] = plan_run_ptr (x, xr->dst);
    r5_xor_gen (xr->nsrc + 1, xr->len, v);
  }
}

/* A fault at byte at of member m's mapped bytes: x->ops[0] made the op
 * that stands for it, as a read (or the written member's write) of its
 * page would have failed -- -ENXIO when m is shorter than it was
 * (truncated under the server), else -ENOMEM: a page the tmpfs could not
 * give (a hole another process punched, the tmpfs full).  Neither is an
 * error of the range (io_op_range_error), which would be read again
 * into the op's buffer, and this op has none: the member is taken out.
 */
static int
view_faulted (struct array *a, struct plan_run *x, unsigned m, uint64_t at)
{
  const struct plan_views *v = x->views;
  bool gone = io_view_fault_shrunk (&a->members[m]);

  x->ops[0] = (struct io_op) {
    .kind = (int) m == v->writable ? IO_WRITE : IO_READ, .member = m,
    .off = v->off + at / PLAN_FAULT_PAGE * PLAN_FAULT_PAGE,
    .len = PLAN_FAULT_PAGE, .result = gone ? -ENXIO : -ENOMEM,
  };
  x->nops = 1;
  return x->ops[0].result;
}

int
plan_run_guarded (struct array *a, struct plan_run *x, void (*fn) (void *),
                  void *arg)
{
  const struct plan_views *v = x->views;
  struct io_sigbus_range ranges[R5_MAX_MEMBERS];
  unsigned slot[R5_MAX_MEMBERS], n = 0, which;
  const char *at;

  for (unsigned m = 0; v != NULL && m < a->geom.members; m++)
    if (v->base[m] != NULL) {
      ranges[n] = (struct io_sigbus_range) { v->base[m],
                                             v->base[m] + v->len };
      slot[n++] = m;
    }
  if (n == 0) {
    fn (arg);
    return 0;
  }
  if (io_sigbus_run (ranges, n, fn, arg, &which, &at) == 0)
    return 0;
  return view_faulted (a, x, slot[which],
                       (uint64_t) (at - v->base[slot[which]]));
}

static void
compute (void *x)
{
  run_compute (x);
}

/* The parity member of the stripe io is in (its row on the members). */
static unsigned
group_of (const struct array *a, const struct r5_io *io)
{
  const struct r5_geom *g = &a->geom;

  return r5_parity_member (g, (io->member_off - g->data_offset) / g->chunk);
}

static bool
is_write (const struct plan_run *x, const struct r5_io *io)
{
  return io->kind != R5_IO_READ && found_wrong (x, io->when);
}

/* Writes: ops[0..n+noted) issued through the write path's hooks
 * (writepath.h: the record notes their checksums), ops[0..n) run (the
 * rest were computed in a member's pages), then the hooks told.
 */
static int
run_issued (struct array *a, struct io_op *ops, size_t n, unsigned flags,
            size_t noted)
{
  int e;

  if (n + noted == 0)
    return 0;
  e = wp_issue (a, ops, n + noted);
  if (e == 0)
    e = wp_run_writes (a, ops, n, noted, flags);
  wp_issued (a);
  return e;
}

bool
plan_run_has_writes (const struct array *a, const struct plan_run *x,
                     unsigned group)
{
  const struct r5_plan *p = x->plan;

  for (size_t i = 0; i < p->nios; i++)
    if (is_write (x, &p->ios[i]) && group_of (a, &p->ios[i]) == group)
      return true;
  return false;
}

/* Phase 3: writes, zeroes, trims of group (or all: -1) -- but those
 * computed in place.
 */
int
plan_run_writes (struct array *a, struct plan_run *x, int group)
{
  const struct r5_plan *p = x->plan;
  size_t k = 0;

  for (size_t i = 0; i < p->nios; i++) {
    const struct r5_io *io = &p->ios[i];
    struct io_op op;

    if (!is_write (x, io) ||
        (group >= 0 && group_of (a, io) != (unsigned) group))
      continue;
    op = op_of (x, io);
    if (io->kind == R5_IO_WRITE &&
        op.buf == mapped (x->views, io->member, io->member_off, io->len)) {
      (void) run_issued (a, &op, 0, 0, 1);   /* computed in its pages */
      continue;
    }
    x->ops[k++] = op;
  }
  x->nops = k;
  return run_issued (a, x->ops, k, x->io_flags, 0);
}

int
plan_run_prepare (struct array *a, struct plan_run *x)
{
  int e;

  x->al.n = 0;
  alias_written (x);
  if ((e = run_reads (a, x)) < 0)
    return e;
  if (x->verify && (e = verify_reads (a, x)) < 0)
    return e;
  return plan_run_guarded (a, x, compute, x);
}

int
plan_run (struct array *a, struct plan_run *x)
{
  int e = plan_run_prepare (a, x);

  return e < 0 ? e : plan_run_writes (a, x, -1);
}
