/* raid/reshape.h -- growing a RAID-5 by members, as md reshapes it
 * (raid5.c reshape_request; mdadm Grow.c): two geometries either side of
 * a moving line, the plan that moves one window across it, and the rule
 * that keeps every byte findable after a crash.
 *
 * Units: BYTES (array addresses, member offsets), as in geom.h; md's
 * superblock keeps the same in sectors (reshape_position, new_offset).
 *
 * An array growing from N to N+k members has two geometries: `from` (N
 * members, data at from.data_offset) and `to` (N+k members, data at
 * to.data_offset = from.data_offset - shift, same chunk and layout, the
 * same whole stripes per member: md keeps the component size).  Array
 * bytes below the line (md's reshape_position) are laid out in `to`, the
 * rest in `from`.  The reshape moves one WINDOW at a time: the least
 * length that is whole stripes of both (mdadm's backup_blocks, the LCM of
 * the two stripes' data), read in `from` and written in `to`.  Bytes at
 * or past from.capacity were never stored: md writes them as zeroes (and
 * their parity), so the new space is in sync when the reshape ends at
 * to.capacity.
 *
 * Moving the data offset down ("reshape without backup", mdadm 3.3) is
 * what makes a crash safe: the superblocks record a line `safe`, and
 * after a crash bytes below it are read in `to`, the rest in `from`.  A
 * window's writes must therefore never land on `from` bytes at or past
 * safe; r5_reshape_must_record() says when the line must be recorded
 * again first (raid5.c: the superblock update before writepos passes
 * safepos).  With shift >= r5_reshape_min_shift() recording the window's
 * own start always suffices.
 *
 * Pure: no I/O, no locks.  Errors: -EINVAL (a shape md cannot grow to),
 * -ENOSPC (members without room for the shift), -ENOMEM.
 */
#ifndef RAID_RESHAPE_H
#define RAID_RESHAPE_H

#include <stdbool.h>
#include <stdint.h>

#include "raid/geom.h"
#include "raid/plan.h"

struct r5_reshape {
  struct r5_geom from, to;
  uint64_t window;            /* array bytes moved per window */
  uint64_t end;               /* to.capacity: where the reshape ends */
};

/* The least the data offset must move down to grow g by add members
 * without a backup: one window's share of an old member (mdadm's
 * min_offset_change = backup_blocks / old data disks).  Bytes.
 */
uint64_t r5_reshape_min_shift (const struct r5_geom *g, unsigned add)
  __attribute__((nonnull));

/* Fill *r for growing `from` by add members (1 or more, at most
 * R5_MAX_MEMBERS in all) with the data offset moved down by shift bytes
 * (a multiple of 512, at least r5_reshape_min_shift, at most
 * from.data_offset).  0, -EINVAL or -ENOSPC; *r untouched on error.
 */
int r5_reshape_init (struct r5_reshape *r, const struct r5_geom *from,
                     unsigned add, uint64_t shift)
  __attribute__((nonnull, warn_unused_result));

/* Fill *r for growing `from` by add members keeping the data offset
 * (md's reshape with mdadm's --backup-file: no room to move it).  Its
 * first windows are critical (below); the rest are made safe by
 * recording.  0, -EINVAL; *r untouched on error.
 */
int r5_reshape_init_kept (struct r5_reshape *r, const struct r5_geom *from,
                          unsigned add)
  __attribute__((nonnull, warn_unused_result));

/* Is the window at line critical: would its writes reach `from` bytes at
 * or past line even with line recorded -- its own bytes not moved yet?
 * No record can make it safe then (raid5.c reshape_request: "If
 * 'readpos' is then behind 'writepos', there is no way that we can
 * ensure safety in the face of a crash - that must be done by userspace
 * making a backup of the data"): its bytes must be in a backup first.
 * Never with shift >= r5_reshape_min_shift.
 */
bool r5_reshape_critical (const struct r5_reshape *r, uint64_t line)
  __attribute__((nonnull));

/* The geometry array byte addr is in while the line is at `line`. */
static inline const struct r5_geom *
r5_reshape_geom_at (const struct r5_reshape *r, uint64_t line, uint64_t addr)
{
  return addr < line ? &r->to : &r->from;
}

/* The array bytes from line (a multiple of r->to.stripe_data below
 * r->end) to the next window boundary or the end: a whole window when
 * line is on a boundary.  md records lines between boundaries too (its
 * reshape_position moves a new stripe at a time), so a restart may begin
 * with the rest of a window.
 */
uint64_t r5_reshape_window_len (const struct r5_reshape *r, uint64_t line)
  __attribute__((nonnull));

/* Member offset just past the `to` stripes holding array bytes below
 * addr (a `to` stripe boundary): where the new shape's writes reach.
 */
uint64_t r5_reshape_to_member_end (const struct r5_reshape *r, uint64_t addr)
  __attribute__((nonnull));

/* Member offset where the `from` stripe holding array byte addr begins:
 * `from` bytes at or past addr lie at or past it, on every member.
 */
uint64_t r5_reshape_from_member_start (const struct r5_reshape *r,
                                       uint64_t addr)
  __attribute__((nonnull));

/* Must the superblocks record line as the new safe line before the
 * window at line is written?  True when its writes would reach `from`
 * bytes at or past safe (their member offsets, on any member).
 */
bool r5_reshape_must_record (const struct r5_reshape *r, uint64_t safe,
                             uint64_t line)
  __attribute__((nonnull));

/* Which member of the old shape a window computes rather than reads in
 * `from` stripe's row at chunk offset off, len bytes (the whole chunk,
 * then each R5_AROUND_PAGE of it where one is named): -1 none, the member
 * (one whose bad-block log lists bytes there: md's analyse_stripe treats
 * it as failed in that stripe), or R5_AROUND_TWO when more than one.
 * The caller's lookup; ctx is its own.
 */
#define R5_AROUND_PAGE 4096u
#define R5_AROUND_TWO (-2)
struct r5_around {
  int (*fn) (void *ctx, uint64_t stripe, uint64_t off, uint64_t len);
  /* Or NULL.  A page of a `from` row fn found two members out of (or one
   * and the member missing): lost is asked which (a mask, the missing one
   * in it), and the window moves it anyway, the data pages of those
   * members as zeroes -- the caller keeps them unreadable in the new
   * shape.  0: the window cannot move (-ENODATA).
   */
  uint64_t (*lost) (void *ctx, uint64_t stripe, uint64_t off, uint64_t len);
  void *ctx;
};

/* Append to p the moving of the window (or its rest) at line: the `from`
 * stripes holding it read
 * (the data; with a member missing, the others and parity, the missing
 * data computed), the `to` stripes' parity computed, every `to` chunk
 * written but the missing member's.  missing: a slot absent from both
 * geometries (< from.members), a new slot absent from `to`, or -1.
 * around (or NULL): a page a member is named for in its `from` row is
 * computed from the others, that member's `to` chunks written as every
 * other's.  Scratch: the window's data in array order, then each `to`
 * stripe's parity, then each `from` stripe's parity (where a member is
 * computed).  0, -EINVAL (line not a `to` stripe boundary below r->end,
 * missing out of range, around with chunks not whole pages), -ENODATA (a
 * page of a `from` row has two members out: named by around, or named
 * and missing; and around->lost did not take it), -ENOMEM.
 */
int r5_plan_reshape (struct r5_plan *p, const struct r5_reshape *r,
                     uint64_t line, int missing,
                     const struct r5_around *around)
  __attribute__((nonnull (1, 2), warn_unused_result));

#endif /* RAID_RESHAPE_H */
