/* array/meta.h -- md v1.2 metadata of a live array (internal to array/):
 * the superblocks and the write-intent bitmap, kept as md keeps them.
 *
 * What each superblock says is decided by raid/mdstate.h (md_live_*);
 * this file turns the array's events into md_live events, writes the
 * result to every member in service (FUA) and keeps the bitmap:
 *   clean -> dirty   before the first write after the array was clean:
 *                    events+1, resync_offset 0, and the roles as they are
 *                    (a slot out of service reads 0xffff or 0xfffe from
 *                    then on), before the write proceeds;
 *   dirty -> clean   when idle (no write for ARRAY_SAFE_MODE_MS) and on
 *                    shutdown: members synced, bitmap bits cleared (unless
 *                    a slot is out), events+1, resync_offset MaxSector;
 *   member failure   its role becomes 0xfffe in the survivors, events+1,
 *                    before any write that leaves it out is acknowledged
 *                    (meta_record_out; md holds writes while
 *                    MD_SB_CHANGE_PENDING is set);
 *   rebuild          the new member's own superblock carries its progress
 *                    (recovery_offset), written every few seconds; at its
 *                    end, once idle, the bitmap's bits are cleared even
 *                    on a clean array (no slot out: nothing needs them).
 * With an internal bitmap, a write first sets (and persists) the bits
 * covering its stripes: after a crash a resync visits only those, and a
 * member that missed writes is re-added by rebuilding only those.
 *
 * Locking: meta.lock serialises every superblock and bitmap write and
 * guards the live state; a slot's member struct (a->members[], the
 * replacement's) is swapped out only under it too, as meta_write_out may
 * be writing through it from a thread that is no request.  meta.gate is
 * held shared by every write request for its whole duration and
 * exclusively by the transition to clean, so the array is never marked
 * clean with a write in flight.  With metadata
 * off (raw members) every function here is a no-op.
 */
#ifndef ARRAY_META_H
#define ARRAY_META_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "array/array.h"
#include "io/member.h"
#include "raid/mdbitmap.h"
#include "raid/mdsb.h"
#include "raid/mdstate.h"

#define ARRAY_SAFE_MODE_MS 200    /* md's safe_mode_delay */

struct meta {
  bool enabled;
  struct md_live live;        /* what the superblocks say (meta.lock) */
  pthread_mutex_t lock;
  pthread_rwlock_t gate;
  bool locks_made;
  bool forced;                /* force=true started it dirty and degraded */
  bool forced_in;             /* ... or took a member left out back in
                               * sync: the superblocks say so at once */
  _Atomic bool dirty;         /* live.dirty, for the writers' fast path */
  _Atomic bool bits_stale;    /* a rebuild ended: the bits it rebuilt by
                               * go at the next idle mark, clean or not
                               * (md's bitmap daemon clears them) */
  _Atomic int recorded_out;   /* the slot the superblocks record as out of
                               * service (absent, faulty or rebuilding),
                               * or -1 ... */
  _Atomic bool recorded_lost; /* ... and whether they record it absent or
                               * faulty (not rebuilding) */
  _Atomic uint64_t last_write_ns;
  bool has_bitmap;
  struct md_bitmap_sb bm;
  uint8_t *bm_area;           /* header + bits, bm_area_bytes, aligned */
  uint8_t *bm_durable;        /* the bits known to be on every member in
                               * service (writers' fast path) */
  uint64_t bm_area_bytes;
  uint64_t bm_offset;         /* bytes from the member start */
  uint8_t *resync_bits;       /* bits a pending resync must visit, or NULL */
  void *sb_buf[R5_MAX_MEMBERS + 1];   /* MD_SB_BLOCK aligned buffers, a
                                       * replacement's last */
};

struct array;

/* With cfg->metadata auto, read the members' superblocks; if they have
 * any, assemble from them (raid/mdstate.h decides): put the opened
 * members (given order, in *opened) into a->members in slot order and
 * set a->geom, a->health and a->meta; members left out are named in a
 * log line each (why, and what to do) and remembered for a re-add.
 * Without superblocks (or metadata none) leave everything to the caller
 * and return 0 with a->meta.enabled false.  Returns 0 or -errno with err
 * set.
 */
int meta_assemble (struct array *a, const struct array_config *cfg,
                   struct io_member *opened, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Read the bitmap (header and bits) from src, a member in service
 * (meta_assemble, once live is set).  Returns 0 or -errno with err set.
 */
int meta_load_bitmap (struct array *a, const struct io_member *src,
                      struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Is the bitmap loaded older than the superblocks (its events below
 * theirs, or marked stale)?  Then it cannot say what changed since (md's
 * BITMAP_STALE, md_bitmap_read_sb).
 */
bool meta_bitmap_stale (const struct meta *m) __attribute__((nonnull));

/* Buffers and locks (after meta_assemble, which loaded the bitmap). */
int meta_init (struct array *a, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Once the members are locked: an md bad-block log reserved where the
 * members have none (meta_bb_reserve), and the first superblock write if
 * assembly asked for one (force=true records the array clean, as mdadm
 * --force).
 */
int meta_start (struct array *a, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* The stripes a write marks in the bitmap before it goes out (a stripe:
 * one chunk of each member, the bitmap's unit): n ranges, inclusive --
 * one, or during a grow two, the new shape's and the old's
 * (grow_write_stripes).
 */
struct meta_marks {
  unsigned n;
  struct { uint64_t first, last; } r[2];
};

/* The bitmap written to slots [first, first + n) alone: members about to
 * join, before a superblock names them.  0, or -errno with err naming
 * the member; a no-op without a bitmap.  Takes meta.lock.
 */
int meta_bitmap_to_new (struct array *a, unsigned first, unsigned n,
                        struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Runtime; see the header comment.  Return 0 or -errno (err set). */
int meta_write_begin (struct array *a, const struct meta_marks *marks,
                      struct array_err *err)
  __attribute__((nonnull, warn_unused_result));
void meta_write_end (struct array *a) __attribute__((nonnull));
int meta_mark_clean (struct array *a, bool only_if_idle,
                     struct array_err *err)
  __attribute__((nonnull, warn_unused_result));
/* The array has failed (health): the members that failed it recorded
 * faulty in the others' superblocks, as md records them, so that a later
 * start refuses it without force=true.  Best effort; takes meta.lock.
 */
void meta_array_failed (struct array *a) __attribute__((nonnull));
/* The gen-th member of slot (health_gen) failed: record it faulty, unless
 * the slot has had another member since.
 */
int meta_member_failed (struct array *a, unsigned slot, uint32_t gen,
                        struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* A write about to leave out the slot health says is out: make sure the
 * superblocks record it first.  Cheap when they do.
 */
int meta_record_out (struct array *a, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Is a resync due, and from which member sector? */
bool meta_resync_due (const struct array *a) __attribute__((nonnull));
uint64_t meta_resync_from (const struct array *a) __attribute__((nonnull));

/* The resync has finished (or was dropped): record resync_offset
 * MaxSector in the superblocks.
 */
int meta_resync_done (struct array *a, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));
/* A resync's progress, written with the next superblock update. */
void meta_set_resync_cp (struct array *a, uint64_t sectors)
  __attribute__((nonnull));

/* How a member joins the out slot to be rebuilt. */
enum meta_join {
  META_JOIN_NEW,              /* a new device: new number and uuid */
  META_JOIN_OLD,              /* the slot's old device, rebuilt whole */
  META_JOIN_RE_ADD,           /* its old device, only what the bitmap marks */
};

/* Add (on) or remove the internal bitmap (array_set_bitmap; mdadm
 * --grow --bitmap=internal|none), with no request in flight: added where
 * and as mdadm adds it, every bit set; the superblocks (and the bitmap)
 * written.  0 or -errno (err set; -ENOSPC: no room for one).
 */
int meta_set_bitmap (struct array *a, bool on, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Record the component grown to `to` sectors (array_resize; md's
 * update_size): with no request in flight, the bitmap covers it (see
 * meta_bitmap_grow), each member's data_size becomes sizes[slot], the
 * new space is due a resync from the old size unless clean (mdadm
 * --assume-clean), and the superblocks and bitmap are written.  0 or
 * -errno (err set).
 */
int meta_resize (struct array *a, uint64_t to, const uint64_t *sizes,
                 bool clean, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* A member takes slot (already in a->members[slot]) and is rebuilt; dev
 * is its own superblock for OLD and RE_ADD (NULL for NEW).  Superblocks
 * written: its own says how far it is rebuilt.
 */
int meta_add_member (struct array *a, unsigned slot, enum meta_join how,
                     const struct md_sb *dev, struct array_err *err)
  __attribute__((nonnull (1, 5), warn_unused_result));

/* The rebuild reached stripe (kept in the new member's superblock), or
 * finished (the member is in sync).
 */
int meta_rebuild_progress (struct array *a, uint64_t stripe,
                           struct array_err *err)
  __attribute__((nonnull, warn_unused_result));
int meta_rebuild_done (struct array *a, unsigned slot, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Apply ev to the live state and write the superblocks if it says so
 * (meta.lock taken here).  0, or -errno from the write.
 */
int meta_apply (struct array *a, const struct md_event *ev,
                struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* A replace's event (REPLACE_ADD, _CP, _DONE, _DROP: raid/mdstate.h) for
 * slot, sectors for _CP, recorded in the superblocks (and the
 * replacement's, a->members[ARRAY_REPLACEMENT], while it is attached).
 * 0 or -errno; a no-op without superblocks.
 */
int meta_replace (struct array *a, unsigned slot, enum md_event_kind kind,
                  uint64_t sectors, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* slot's device had sectors of read errors corrected: its
 * cnt_corrected_read grows, written with the next superblock write (md
 * writes none for it).  Any thread; a no-op without superblocks.
 */
void meta_note_corrected (struct array *a, unsigned slot, uint64_t sectors)
  __attribute__((nonnull));

/* Slot's md bad-block log written from its table (badblocks.h), then
 * the superblocks, feature 0x8 in slot's while the table lists anything
 * (md_update_sb after rdev_set_badblocks).  0; -ENOSPC without
 * superblocks; -errno with err set when the log cannot be written (the
 * caller fails the member) or the superblocks.  Any thread; takes
 * meta.lock.
 */
int meta_bb_write (struct array *a, unsigned slot, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Members with no md bad-block log get one where mdadm --update=bbl puts
 * it, if there is room before the data and no reshape runs (an empty log
 * written first, then the superblocks), and empty tables (badblocks.h).
 * Says what it did in the log.  0, or -errno when the superblocks could
 * not be written (a member failed, as for any superblock write).  At
 * start, before requests.
 */
int meta_bb_reserve (struct array *a)
  __attribute__((nonnull, warn_unused_result));

/* A random device UUID, as mdadm gives each device. */
void meta_random_uuid (uint8_t uuid[16]) __attribute__((nonnull));

/* Must the pending resync visit stripe?  With a bitmap only the stripes
 * of the bits set at the crash; without one, all.
 */
bool meta_resync_visits (const struct array *a, uint64_t stripe)
  __attribute__((nonnull));

/* A resync due is about to be dropped (slot health_out is out: no
 * parity to resync): log the stripes it had still to visit, whose
 * parity may not hold a write cut short there -- the out slot's chunks
 * computed from it may be wrong (the write hole).  md says nothing.
 */
void meta_warn_unsynced (struct array *a) __attribute__((nonnull));

/* Might a stripe have been written since the bitmap was last cleared?
 * (Its bit is set; always true without a bitmap.)
 */
bool meta_stripe_marked (struct array *a, uint64_t stripe)
  __attribute__((nonnull));

/* Does a device other than slot's use device number dev? */
bool meta_dev_number_taken (struct array *a, unsigned slot, uint32_t dev)
  __attribute__((nonnull));

/* Can dev (a member's own superblock) be re-added into slot?  0, or
 * -EINVAL with err saying why.
 */
int meta_readd_check (struct array *a, unsigned slot, const struct md_sb *dev,
                      struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Read, decode and check the superblock of member m.  Returns 1 (found),
 * 0 (no md superblock), or -errno with err naming the member.
 */
int meta_read_sb (const struct io_member *m, const char *what,
                  struct md_sb *sb, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

void meta_free (struct meta *m) __attribute__((nonnull));

#endif /* ARRAY_META_H */
