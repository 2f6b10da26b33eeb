/* array/health.h -- the one owner of member health in a live array: each
 * slot's state, the slot out of service, whether the array has failed,
 * and how far a rebuilding member is rebuilt.  Every room asks it, and
 * nothing else: requests (exec.c, ppl*.c, integrity*.c, heal.c) which
 * members to plan around; jobs (job.c, runner.c, scrub.c, rebuild.c)
 * which to rebuild and how far; state (assemble.c, fail.c, comeback.c,
 * keepalive.c, meta.c) who changes; status.c what to show.  It changes
 * only through array.c and assemble.c (at start), fail.c (a member out,
 * the array failed), rebuild.c and job.c (a rebuild begun, done or
 * stopped) and runner.c (how far it is).
 *
 * RAID-5 survives one slot out of service.  The out slot changes from -1
 * to a slot once (health_take_out, by compare-and-swap), and back to -1
 * only when that slot's rebuild finishes (health_rebuild_done).  A second
 * slot lost fails the array for good: every request after that gets EIO
 * rather than wrong bytes.
 *
 * A rebuilding member is in service below the rebuilt mark (stripes) and
 * absent from it on.  The mark moves only while the rebuild holds the
 * stripe locks of the stripes it passes, so a request holding a stripe's
 * lock sees whether that stripe is rebuilt; requests re-check
 * health_missing_for under their lock and replan when it changed.
 *
 * Thread safety: every function may be called from any thread; fields are
 * atomic.  Changes of state other than health_take_out are made by the
 * job's thread or under job.lock (rebuild start and end).
 */
#ifndef ARRAY_HEALTH_H
#define ARRAY_HEALTH_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "array/array.h"

struct health {
  _Atomic int state[R5_MAX_MEMBERS];  /* enum member_state */
  _Atomic int out;                    /* slot out of service, or -1 */
  _Atomic bool failed;
  _Atomic uint64_t rebuilt;           /* stripes: rebuilt below this */
  _Atomic bool bitmap_rebuild;        /* the rebuild is a bitmap re-add */
  _Atomic uint32_t gen[R5_MAX_MEMBERS];   /* members the slot has had */
};

/* Every slot active, none out. */
void health_init (struct health *h) __attribute__((nonnull));

enum member_state health_state (const struct health *h, unsigned slot)
  __attribute__((nonnull));
/* Which member of the slot it is: bumped when a rebuild puts one in, so
 * that a failure noticed on the one before is not pinned on the new one.
 */
uint32_t health_gen (const struct health *h, unsigned slot)
  __attribute__((nonnull));
int health_out (const struct health *h) __attribute__((nonnull));
/* Does slot take writes: active, or being rebuilt (below the mark)?  A
 * sync of the members written must include it.
 */
bool health_takes_writes (const struct health *h, unsigned slot)
  __attribute__((nonnull));
bool health_failed (const struct health *h) __attribute__((nonnull));
bool health_rebuilding (const struct health *h) __attribute__((nonnull));

/* At assembly, before any request: slot has no member (MISSING) or a
 * partly rebuilt one (REBUILDING, rebuilt below stripe from; bitmap: a
 * re-add, resumed bitmap-guided).
 */
void health_set_out (struct health *h, unsigned slot, enum member_state st,
                     uint64_t from, bool bitmap) __attribute__((nonnull));

/* A replacement took slot (in service, as its member was): a new member
 * there (health_gen).
 */
void health_member_replaced (struct health *h, unsigned slot)
  __attribute__((nonnull));

/* The slot treated as absent for requests on stripes from first, or -1,
 * and in *limit the stripe a request must stop before (UINT64_MAX: none):
 * a rebuilding member is in service below the rebuilt mark only.
 */
int health_missing_for (const struct health *h, uint64_t first,
                        uint64_t *limit) __attribute__((nonnull));

enum health_taken {
  HEALTH_TAKEN,               /* this call took the slot out */
  HEALTH_ALREADY,             /* it was out already */
  HEALTH_REBUILD_LOST,        /* it was being rebuilt: it is faulty now */
  HEALTH_SECOND,              /* another slot is out: the array failed */
};

/* Take slot out of service after an I/O error (faulty). */
enum health_taken health_take_out (struct health *h, unsigned slot)
  __attribute__((nonnull));

/* Fail the whole array (two members lost at once). */
void health_fail_array (struct health *h) __attribute__((nonnull));

/* The out slot gets a member to rebuild from stripe `from` (0, or where
 * a replacement's copy got when it takes the slot: it is in service below)
 * (bitmap: only the regions the bitmap marks, a re-add).  With no request
 * planned around the slot in flight, when from > 0 (the shape lock).  The
 * rebuild failed: faulty again.
 * It moved on: rebuilt below stripe (under the stripe locks).  It is done:
 * the slot is active and none is out.
 */
void health_rebuild_begin (struct health *h, unsigned slot, bool bitmap,
                           uint64_t from) __attribute__((nonnull));
void health_rebuild_failed (struct health *h) __attribute__((nonnull));
void health_rebuilt_to (struct health *h, uint64_t stripe)
  __attribute__((nonnull));
void health_rebuild_done (struct health *h) __attribute__((nonnull));

/* md's [UU_] and the number of U: a slot in service (not rebuilding). */
void health_ud (const struct health *h, unsigned members, char *buf)
  __attribute__((nonnull));
unsigned health_in_service (const struct health *h, unsigned members)
  __attribute__((nonnull));

#endif /* ARRAY_HEALTH_H */
