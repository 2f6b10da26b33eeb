/* raid/layout.h -- where md's six RAID-5 layouts put data and parity.
 *
 * A stripe is one chunk on every member, all at the same member offset
 * (data_offset + stripe * chunk).  Its N-1 data chunks hold consecutive
 * array data, numbered by their data index dd = 0..N-2; one member holds
 * their XOR, the parity chunk.  N = 3, stripes 0..2, repeating:
 *
 *   left-symmetric   (md 2)   [D0 D1 P] [D3 P D2] [P D4 D5]
 *   left-asymmetric  (md 0)   [D0 D1 P] [D2 P D3] [P D4 D5]
 *   right-symmetric  (md 3)   [P D0 D1] [D3 P D2] [D4 D5 P]
 *   right-asymmetric (md 1)   [P D0 D1] [D2 P D3] [D4 D5 P]
 *   parity-first     (md 4)   [P D0 D1] [P D2 D3] [P D4 D5]
 *   parity-last      (md 5)   [D0 D1 P] [D2 D3 P] [D4 D5 P]
 *
 * Left: parity starts on the last member and moves left; right: it starts
 * on the first and moves right.  Symmetric: data continues on the member
 * after parity and wraps; asymmetric: data fills members in order, skipping
 * parity.  Parity-first and parity-last never move parity (RAID-4's
 * placement: that member takes a write for every write to the array); data
 * fills the other members in order.  Formulas are md's
 * raid5_compute_sector() / raid5_compute_blocknr(), quoted in layout.c.
 *
 * Pure functions over a geometry accepted by r5_geom_init(); callers pass
 * stripe < g->stripes and indices in range (checked only by assert).
 */
#ifndef RAID_LAYOUT_H
#define RAID_LAYOUT_H

#include <stdint.h>

#include "raid/geom.h"

/* Member holding the parity chunk of a stripe. */
unsigned r5_parity_member (const struct r5_geom *g, uint64_t stripe)
  __attribute__((nonnull));

/* Member holding data index dd (0 <= dd < N-1) of a stripe. */
unsigned r5_data_member (const struct r5_geom *g, uint64_t stripe, unsigned dd)
  __attribute__((nonnull));

/* Inverse of r5_data_member: the data index a member holds in a stripe, or
 * -1 if it holds that stripe's parity.
 */
int r5_data_index (const struct r5_geom *g, uint64_t stripe, unsigned member)
  __attribute__((nonnull));

/* Where one array byte lives. */
struct r5_loc {
  uint64_t stripe;
  unsigned dd;                /* data index within the stripe */
  unsigned member;            /* member holding the byte */
  unsigned parity;            /* member holding the stripe's parity */
  uint64_t chunk_off;         /* offset within the chunk */
  uint64_t member_off;        /* byte offset on the member (includes data_offset) */
};

/* Map array byte offset off to its location.
 * Returns 0, or -EINVAL if off >= g->capacity (*loc untouched).
 */
int r5_map (const struct r5_geom *g, uint64_t off, struct r5_loc *loc)
  __attribute__((nonnull, warn_unused_result));

/* Stripes after which the pattern of data and parity repeats: N when
 * parity moves (left-*, right-*), 1 when it stays (parity-first, -last).
 */
unsigned r5_layout_period (const struct r5_geom *g)
  __attribute__((nonnull));

/* Array byte offset of a stripe's first data byte (stripe * stripe_data). */
uint64_t r5_stripe_array_off (const struct r5_geom *g, uint64_t stripe)
  __attribute__((nonnull));

/* Member byte offset where a stripe begins (data_offset + stripe * chunk). */
uint64_t r5_stripe_member_off (const struct r5_geom *g, uint64_t stripe)
  __attribute__((nonnull));

/* Layout names: md's ("left-symmetric") and mdadm's short forms ("ls";
 * parity-first and parity-last have none).  r5_layout_parse returns 0, or
 * -EINVAL for an unknown name.  R5_LAYOUT_NAMES lists the names for error
 * messages ("expected " R5_LAYOUT_NAMES).
 */
#define R5_LAYOUT_NAMES "left-symmetric, left-asymmetric, right-symmetric, " \
  "right-asymmetric, parity-first or parity-last"

const char *r5_layout_name (enum r5_layout layout);
int r5_layout_parse (const char *name, enum r5_layout *layout)
  __attribute__((nonnull, warn_unused_result));

#endif /* RAID_LAYOUT_H */
