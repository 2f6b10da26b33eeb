/* raid/plan-ppl.c -- the planner's part for a partial parity log: each
 * write segment's partial parity and the entry to log (plan.h,
 * r5_ppl_entry; raid/ppl.h for md's format).
 */
#include <config.h>

#include <stdbool.h>
#include <stdint.h>

#include "raid/layout.h"
#include "raid/plan.h"
#include "raid/plan-stripe.h"

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
