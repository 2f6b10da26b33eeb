/* raid/plan-stripe.h -- the planner's state for one stripe, shared by
 * raid/plan.c and raid/plan-ppl.c.  Internal to raid/.
 */
#ifndef RAID_PLAN_STRIPE_H
#define RAID_PLAN_STRIPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "raid/geom.h"
#include "raid/plan.h"

/* One stripe being planned.  Scratch for a stripe is made of columns of
 * active_len bytes, each taken from the plan's scratch area when first
 * needed: column m holds what is read from member m, column N the new
 * parity, column N+1 the partial parity (with a PPL).  Segments are packed in order inside each column, so a member's
 * reads of adjacent segments are adjacent in scratch too and coalesce
 * into one I/O.
 */
struct stripe {
  const struct r5_geom *g;
  struct r5_plan *p;
  enum r5_op op;
  uint64_t index;             /* stripe number */
  uint64_t member_base;       /* member offset of the stripe */
  uint64_t array_base;        /* array offset of its first data byte */
  uint64_t req_off;           /* array offset of client buffer byte 0 */
  uint64_t a, b;              /* touched bytes, stripe-data coordinates */
  unsigned parity;
  uint64_t active_len;        /* total length of the active segments */
  uint64_t column[R5_MAX_MEMBERS + 2];  /* scratch offsets; UINT64_MAX = none */
  uint64_t seg_pos;           /* current segment's position in a column */
  size_t first_io;            /* ios before this index belong to earlier stripes */
};

/* A segment: chunk offsets [x, y), touched data indices as a bitmask. */
struct segment {
  uint64_t x, y;
  uint64_t mask;
};

/* Scratch columns beyond the members': the new parity, the partial
 * parity.
 */
#define COL_PARITY(s) ((s)->g->members)
#define COL_PP(s) ((s)->g->members + 1)

static inline bool
plan_touched (const struct segment *seg, unsigned dd)
{
  return (seg->mask >> dd) & 1;
}

/* Append elem (size bytes) to the vector *v of *n, capacity *cap.
 * 0, or -ENOMEM.
 */
int plan_append (void **v, size_t *n, size_t *cap, const void *elem,
                 size_t size);

/* Scratch column col of the stripe's current segment. */
struct r5_buf plan_scratch_buf (struct stripe *s, unsigned col);

/* XOR nsrc sources of the segment into column col (zero sources drop
 * out, one source is its own result); the result in *out.  0, -ENOMEM.
 */
int plan_xor_to (struct stripe *s, const struct segment *seg,
                 const struct r5_buf *src, unsigned nsrc, unsigned col,
                 struct r5_buf *out);

/* With a PPL: the partial parity and log entry of a write segment of
 * the given kind (not DATA_ONLY), planned after its reads; and the entry
 * of a whole-stripe zero or trim.  0, or -ENOMEM.
 */
int plan_ppl_segment (struct stripe *s, const struct segment *seg,
                      enum r5_seg_kind kind);
int plan_ppl_whole (struct stripe *s);

#endif /* RAID_PLAN_STRIPE_H */
