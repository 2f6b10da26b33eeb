/* raid/jobplan.c -- check, repair and rebuild as plans (see jobplan.h). */
#include <config.h>

#include <errno.h>
#include <stdbool.h>

#include "raid/jobplan.h"
#include "raid/layout.h"

static const char *const job_names[R5_JOB_KINDS] = {
  [R5_JOB_NONE] = "idle", [R5_JOB_RESYNC] = "resync",
  [R5_JOB_CHECK] = "check", [R5_JOB_REPAIR] = "repair",
  [R5_JOB_REBUILD] = "rebuild",
  [R5_JOB_RESHAPE] = "reshape", [R5_JOB_REPLACE] = "replace",
};

const char *
r5_job_name (enum r5_job job)
{
  return (unsigned) job < R5_JOB_KINDS ? job_names[job] : "unknown";
}

static struct r5_buf
column (const struct r5_geom *g, unsigned i, unsigned c, uint64_t len)
{
  return (struct r5_buf) { R5_BUF_SCRATCH, r5_job_column (g, i, c, len) };
}

/* The piece being planned: a job span's stripe i. */
struct piece {
  struct r5_plan *p;
  const struct r5_geom *g;
  const struct r5_job_span *span;
  unsigned i;
  uint64_t stripe;
};

/* Where the piece's bytes are on every member. */
static uint64_t
member_at (const struct piece *c)
{
  return r5_stripe_member_off (c->g, c->stripe) + c->span->chunk_off;
}

static struct r5_buf
col_of (const struct piece *c, unsigned col)
{
  return column (c->g, c->i, col, c->span->len);
}

/* Read every member's bytes of the piece (but skip, or none: -1). */
static int
read_members (const struct piece *c, int skip)
{
  int r = 0;

  for (unsigned m = 0; m < c->g->members && r == 0; m++)
    if ((int) m != skip)
      r = r5_plan_add_io (c->p, &(struct r5_io) {
          .kind = R5_IO_READ, .member = m, .member_off = member_at (c),
          .len = c->span->len, .buf = col_of (c, m) });
  return r;
}

/* Compute into column N the XOR of every member's column but target;
 * when: as r5_xor's.
 */
static int
xor_but (const struct piece *c, unsigned target, unsigned when)
{
  struct r5_xor x = { .len = c->span->len, .dst = col_of (c, c->g->members),
                      .when = when };

  for (unsigned m = 0; m < c->g->members; m++)
    if (m != target)
      x.src[x.nsrc++] = col_of (c, m);
  return r5_plan_add_xor (c->p, &x);
}

/* Write column N to member (when: as r5_io's). */
static int
write_computed (const struct piece *c, unsigned member, unsigned when)
{
  return r5_plan_add_io (c->p, &(struct r5_io) {
      .kind = R5_IO_WRITE, .member = member, .member_off = member_at (c),
      .len = c->span->len, .buf = col_of (c, c->g->members), .when = when });
}

/* The compare of the piece, and (repair) the conditional rewrite. */
static int
plan_scrub (const struct piece *c)
{
  unsigned parity = r5_parity_member (c->g, c->stripe), when;
  struct r5_cmp cmp = { .stripe = c->stripe, .parity = parity,
                        .chunk_off = c->span->chunk_off, .len = c->span->len,
                        .nsrc = c->g->members };
  int r;

  for (unsigned m = 0; m < c->g->members; m++)
    cmp.src[m] = col_of (c, m);
  if ((r = read_members (c, -1)) < 0 ||
      (r = r5_plan_add_cmp (c->p, &cmp)) < 0 || c->span->job == R5_JOB_CHECK)
    return r;
  when = (unsigned) c->p->ncmps;      /* this compare, plus one */
  if ((r = xor_but (c, parity, when)) < 0)
    return r;
  return write_computed (c, parity, when);
}

static int
plan_rebuild (const struct piece *c)
{
  int r;

  if ((r = read_members (c, (int) c->span->slot)) < 0 ||
      (r = xor_but (c, c->span->slot, 0)) < 0)
    return r;
  return write_computed (c, c->span->slot, 0);
}

static bool
span_ok (const struct r5_geom *g, const struct r5_job_span *s)
{
  if (s->len == 0 || s->chunk_off > g->chunk ||
      s->len > g->chunk - s->chunk_off || s->first > g->stripes ||
      s->n > g->stripes - s->first)
    return false;
  if (s->job == R5_JOB_REBUILD)
    return s->slot < g->members;
  return s->len % R5_CMP_UNIT == 0 && s->chunk_off % R5_CMP_UNIT == 0;
}

int
r5_plan_job (struct r5_plan *p, const struct r5_geom *g,
             const struct r5_job_span *span)
{
  uint64_t end;
  int r = 0;

  if (span->job < R5_JOB_RESYNC || span->job > R5_JOB_REBUILD ||
      !span_ok (g, span))
    return -EINVAL;
  end = r5_job_column (g, span->n, 0, span->len);
  if (end > p->scratch)
    p->scratch = end;
  for (unsigned i = 0; i < span->n && r == 0; i++) {
    struct piece c = { p, g, span, i, span->first + i };

    r = span->job == R5_JOB_REBUILD ? plan_rebuild (&c) : plan_scrub (&c);
  }
  return r;
}
