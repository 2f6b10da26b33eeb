/* raid/jobplan.c -- check, repair and rebuild as plans (see jobplan.h). */
#include <config.h>

#include <errno.h>

#include "raid/jobplan.h"
#include "raid/layout.h"

static struct r5_buf
column (const struct r5_geom *g, unsigned i, unsigned c, uint64_t len)
{
  return (struct r5_buf) { R5_BUF_SCRATCH, r5_job_column (g, i, c, len) };
}

/* Read every member's bytes of stripe i (but skip, or none: -1). */
static int
read_members (struct r5_plan *p, const struct r5_geom *g, uint64_t stripe,
              unsigned i, uint64_t chunk_off, uint64_t len, int skip)
{
  uint64_t at = r5_stripe_member_off (g, stripe) + chunk_off;
  int r = 0;

  for (unsigned m = 0; m < g->members && r == 0; m++)
    if ((int) m != skip)
      r = r5_plan_add_io (p, &(struct r5_io) {
          .kind = R5_IO_READ, .member = m, .member_off = at, .len = len,
          .buf = column (g, i, m, len) });
  return r;
}

/* Compute into column N the XOR of every member's column but target;
 * when: as r5_xor's.
 */
static int
xor_but (struct r5_plan *p, const struct r5_geom *g, unsigned i,
         uint64_t len, unsigned target, unsigned when)
{
  struct r5_xor x = { .len = len, .dst = column (g, i, g->members, len),
                      .when = when };

  for (unsigned m = 0; m < g->members; m++)
    if (m != target)
      x.src[x.nsrc++] = column (g, i, m, len);
  return r5_plan_add_xor (p, &x);
}

/* The compare of stripe i, and (repair) the conditional rewrite. */
static int
plan_scrub (struct r5_plan *p, const struct r5_geom *g, enum r5_job job,
            uint64_t stripe, unsigned i, uint64_t chunk_off, uint64_t len)
{
  unsigned parity = r5_parity_member (g, stripe);
  struct r5_cmp c = { .stripe = stripe, .parity = parity,
                      .chunk_off = chunk_off, .len = len,
                      .nsrc = g->members };
  unsigned when;
  int r;

  for (unsigned m = 0; m < g->members; m++)
    c.src[m] = column (g, i, m, len);
  if ((r = read_members (p, g, stripe, i, chunk_off, len, -1)) < 0 ||
      (r = r5_plan_add_cmp (p, &c)) < 0 || job == R5_JOB_CHECK)
    return r;
  when = (unsigned) p->ncmps;         /* this compare, plus one */
  if ((r = xor_but (p, g, i, len, parity, when)) < 0)
    return r;
  return r5_plan_add_io (p, &(struct r5_io) {
      .kind = R5_IO_WRITE, .member = parity,
      .member_off = r5_stripe_member_off (g, stripe) + chunk_off,
      .len = len, .buf = column (g, i, g->members, len), .when = when });
}

static int
plan_rebuild (struct r5_plan *p, const struct r5_geom *g, uint64_t stripe,
              unsigned i, uint64_t chunk_off, uint64_t len, unsigned slot)
{
  int r;

  if ((r = read_members (p, g, stripe, i, chunk_off, len, (int) slot)) < 0 ||
      (r = xor_but (p, g, i, len, slot, 0)) < 0)
    return r;
  return r5_plan_add_io (p, &(struct r5_io) {
      .kind = R5_IO_WRITE, .member = slot,
      .member_off = r5_stripe_member_off (g, stripe) + chunk_off,
      .len = len, .buf = column (g, i, g->members, len) });
}

int
r5_plan_job (struct r5_plan *p, const struct r5_geom *g, enum r5_job job,
             uint64_t first, unsigned n, uint64_t chunk_off, uint64_t len,
             unsigned slot)
{
  uint64_t end;
  int r = 0;

  if (len == 0 || chunk_off > g->chunk || len > g->chunk - chunk_off ||
      first > g->stripes || n > g->stripes - first ||
      (job == R5_JOB_REBUILD && slot >= g->members) ||
      (job != R5_JOB_REBUILD &&
       (len % R5_CMP_UNIT != 0 || chunk_off % R5_CMP_UNIT != 0)))
    return -EINVAL;
  end = r5_job_column (g, n, 0, len);
  if (end > p->scratch)
    p->scratch = end;
  for (unsigned i = 0; i < n && r == 0; i++)
    r = job == R5_JOB_REBUILD
      ? plan_rebuild (p, g, first + i, i, chunk_off, len, slot)
      : plan_scrub (p, g, job, first + i, i, chunk_off, len);
  return r;
}
