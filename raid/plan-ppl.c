/* raid/plan-ppl.c -- the planner's part for a partial parity log: each
 * write segment's partial parity and the entry to log (plan.h,
 * r5_ppl_entry; raid/ppl.h for md's format).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>

#include "raid/layout.h"
#include "raid/le.h"
#include "raid/plan.h"
#include "raid/plan-stripe.h"
#include "raid/ppl.h"

/* The PPL entry of a write segment (p->ppl): the touched chunks are
 * consecutive, so md's data_sector is the first one's at seg->x; pp is
 * the partial parity (a zero buffer for a full-stripe write, whose
 * entry has no PP).
 */
static int
add_ppl_entry (struct stripe *s, const struct segment *seg, struct r5_buf pp,
               bool full)
{
  struct r5_plan *p = s->p;
  unsigned first = (unsigned) __builtin_ctzll (seg->mask);
  unsigned k = (unsigned) __builtin_popcountll (seg->mask);
  uint64_t len = seg->y - seg->x;
  struct r5_ppl_entry e = {
    .parity = s->parity, .stripe = s->index,
    .data_sector = (s->array_base + first * s->g->chunk + seg->x) / 512,
    .pp_len = full ? 0 : (uint32_t) len, .data_len = (uint32_t) (k * len),
    .pp = pp,
  };

  return plan_append ((void **) &p->ppl_entries, &p->nppl, &p->ppl_cap, &e, sizeof e);
}

/* Partial parity of an RCW segment: the XOR of the untouched chunks as
 * they are (read already); of an RMW segment: old parity ^ old touched
 * data, the same bytes (md's ops_run_partial_parity).  read[] are the
 * segment's reads in the order plan_rcw/plan_rmw made them.
 */
int
plan_ppl_segment (struct stripe *s, const struct segment *seg,
                  enum r5_seg_kind kind)
{
  const struct r5_geom *g = s->g;
  struct r5_buf src[R5_XOR_MAX_SRC], pp;
  unsigned nsrc = 0;
  int r;

  if (kind == R5_SEG_FULL_WRITE)
    return add_ppl_entry (s, seg, (struct r5_buf) { R5_BUF_ZERO, 0 }, true);
  if (kind == R5_SEG_RMW)
    src[nsrc++] = plan_scratch_buf (s, s->parity);
  for (unsigned dd = 0; dd < g->data_members; dd++)
    if (plan_touched (seg, dd) == (kind == R5_SEG_RMW))
      src[nsrc++] = plan_scratch_buf (s, r5_data_member (g, s->index, dd));
  if ((r = plan_xor_to (s, seg, src, nsrc, COL_PP (s), &pp)) < 0)
    return r;
  return add_ppl_entry (s, seg, pp, false);
}

int
plan_ppl_whole (struct stripe *s)
{
  const struct segment all = {
    0, s->g->chunk, (UINT64_C (1) << s->g->data_members) - 1,
  };

  return add_ppl_entry (s, &all, (struct r5_buf) { R5_BUF_ZERO, 0 }, true);
}

/* ---- recovery: md's ppl_recover_entry as a plan ---- */

/* Bytes of chunk d (of the entry's) that the entry covers, from pl->off. */
static uint64_t
chunk_part (const struct r5_geom *g, const struct ppl_extent *x, unsigned d)
{
  uint64_t start = x->first + (uint64_t) d * (g->chunk / 512);
  uint64_t end = start + x->strip < x->last ? start + x->strip : x->last;

  return end > start ? (end - start) * 512 : 0;
}

/* Where a logged entry lies in g: its stripe, first data index, chunk
 * offset (bytes); -EBADMSG unless it is one stripe's, with its parity
 * where it says (md BUG_ONs on that).
 */
struct placed {
  uint64_t stripe, off;
  unsigned dd0;
};

static int
place (const struct r5_geom *g, const struct ppl_entry *e,
       const struct ppl_extent *x, struct placed *pl, char *why, size_t len)
{
  uint64_t first = x->first * 512, in;
  unsigned covered = 0;           /* chunks with bytes below x->last */

  if (x->first >= g->capacity / 512)
    return le_bad (why, len, -EBADMSG, "PPL entry at sector %" PRIu64
                   " lies past the array", x->first);
  pl->stripe = first / g->stripe_data;
  in = first % g->stripe_data;
  pl->dd0 = (unsigned) (in / g->chunk);
  pl->off = in % g->chunk;
  for (unsigned d = 0; d < x->data_disks; d++)
    covered += chunk_part (g, x, d) > 0;
  if (pl->dd0 + covered > g->data_members ||
      pl->off + (uint64_t) x->strip * 512 > g->chunk ||
      r5_parity_member (g, pl->stripe) != e->parity_disk)
    return le_bad (why, len, -EBADMSG, "PPL entry at sector %" PRIu64
                   " (%u chunks of %" PRIu32 " sectors, parity on %" PRIu32
                   ") is not one stripe's of this array", x->first,
                   covered, x->strip, e->parity_disk);
  return 0;
}

static struct r5_buf
take_scratch (struct r5_plan *p, uint64_t len)
{
  struct r5_buf b = { R5_BUF_SCRATCH, p->scratch };

  p->scratch += len;
  return b;
}

/* One entry's recovery being planned. */
struct recovery {
  struct r5_plan *p;
  const struct r5_geom *g;
  const struct ppl_extent *x;
  const struct placed *pl;
  const struct r5_ppl_recovery *rec;
};

/* Parity over [u, v) of the strip, from the chunks covering all of it. */
static int
recover_piece (const struct recovery *c, uint64_t u, uint64_t v)
{
  struct r5_plan *p = c->p;
  const struct r5_geom *g = c->g;
  const struct ppl_extent *x = c->x;
  const struct placed *pl = c->pl;
  const struct ppl_entry *e = c->rec->e;
  struct r5_buf pp = c->rec->pp;
  int missing = c->rec->missing;
  uint64_t base = r5_stripe_member_off (g, pl->stripe) + pl->off;
  struct r5_xor xr = { .len = v - u };
  int r;

  for (unsigned d = 0; d < x->data_disks; d++)
    if (chunk_part (g, x, d) >= v &&
        (int) r5_data_member (g, pl->stripe, pl->dd0 + d) == missing)
      return 0;                 /* md skips the block: no data to use */
  for (unsigned d = 0; d < x->data_disks; d++) {
    unsigned m;
    struct r5_buf b;

    if (chunk_part (g, x, d) < v)
      continue;
    m = r5_data_member (g, pl->stripe, pl->dd0 + d);
    b = take_scratch (p, v - u);
    if ((r = r5_plan_add_io (p, &(struct r5_io) {
           R5_IO_READ, m, base + u, v - u, b, 0 })) < 0)
      return r;
    xr.src[xr.nsrc++] = b;
  }
  if (e->pp_size > 0)
    xr.src[xr.nsrc++] = (struct r5_buf) { pp.kind, pp.off + u };
  if (xr.nsrc >= 2) {
    xr.dst = take_scratch (p, v - u);
    if ((r = r5_plan_add_xor (p, &xr)) < 0)
      return r;
  }
  else
    xr.dst = xr.src[0];
  return r5_plan_add_io (p, &(struct r5_io) {
      R5_IO_WRITE, e->parity_disk, base + u, v - u, xr.dst, 0 });
}

int
r5_plan_ppl_recover (struct r5_plan *p, const struct r5_geom *g,
                     const struct r5_ppl_recovery *rec, char *why,
                     size_t why_len)
{
  const struct ppl_entry *e = rec->e;
  struct ppl_extent x;
  struct placed pl = { 0, 0, 0 };
  struct recovery c = { p, g, &x, &pl, rec };
  uint64_t cut[R5_MAX_MEMBERS + 1], u = 0;
  unsigned ncut = 0;
  int r;

  if ((r = ppl_entry_extent (e, g->members, (uint32_t) (g->chunk / 512), &x,
                             why, why_len)) < 0 ||
      (r = place (g, e, &x, &pl, why, why_len)) < 0)
    return r;
  if ((int) e->parity_disk == rec->missing)
    return 0;                   /* nowhere to put the parity */
  /* The strip cut where chunks stop covering it (only the last can stop
   * early): each piece has one set of chunks.
   */
  for (unsigned d = 0; d < x.data_disks; d++)
    if (chunk_part (g, &x, d) > 0)
      cut[ncut++] = chunk_part (g, &x, d);
  for (unsigned i = 0; i < ncut; i++)
    for (unsigned j = i + 1; j < ncut; j++)
      if (cut[j] < cut[i]) {
        uint64_t t = cut[i];
        cut[i] = cut[j];
        cut[j] = t;
      }
  for (unsigned i = 0; i < ncut && r == 0; i++) {
    if (cut[i] > u)
      r = recover_piece (&c, u, cut[i]);
    u = cut[i] > u ? cut[i] : u;
  }
  return r;
}
