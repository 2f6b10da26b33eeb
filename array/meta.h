/* array/meta.h -- md v1.2 metadata of a live array (internal to array/).
 *
 * Assembly follows md's rules: the member with the highest events counter
 * among active members is the freshest; a member more than one event
 * behind is stale and left out; roles (slots) come from the freshest
 * superblock's dev_roles, so the order of disk= does not matter.
 *
 * Lifecycle, persisted as md does it:
 *   clean -> dirty   before the first write after the array was clean:
 *                    events+1, resync_offset 0, written to every member in
 *                    service (FUA) before the write proceeds;
 *   dirty -> clean   when idle (no write for ARRAY_SAFE_MODE_MS) and on
 *                    shutdown: members are synced, bitmap bits cleared,
 *                    then events+1 and resync_offset MaxSector;
 *   member failure   the member's role becomes faulty (0xfffe) in the
 *                    survivors' superblocks, events+1.
 * With an internal bitmap, a write first sets (and persists) the bits
 * covering its stripes, so a resync after a crash visits only those.
 *
 * Locking: meta.lock serialises every superblock and bitmap write and
 * guards the in-memory copies.  meta.gate is held shared by every write
 * request for its whole duration and exclusively by the transition to
 * clean, so the array is never marked clean with a write in flight.
 * With metadata off (raw members) every function here is a no-op.
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

#define ARRAY_SAFE_MODE_MS 200    /* md's safe_mode_delay */

struct meta {
  bool enabled;
  struct md_sb common;        /* array-wide fields, from the freshest sb */
  uint32_t dev_number[R5_MAX_MEMBERS];        /* per slot */
  uint8_t device_uuid[R5_MAX_MEMBERS][16];
  uint64_t data_size[R5_MAX_MEMBERS];         /* sectors, per slot */
  pthread_mutex_t lock;
  pthread_rwlock_t gate;
  bool locks_made;
  bool forced;                /* force=true started it dirty and degraded */
  _Atomic bool dirty;         /* on disk: resync_offset != MaxSector */
  uint64_t resync_cp;         /* member sectors known in sync from 0 */
  _Atomic uint64_t last_write_ns;
  bool has_bitmap;
  struct md_bitmap_sb bm;
  uint8_t *bm_area;           /* header + bits, bm_area_bytes, aligned */
  uint64_t bm_area_bytes;
  uint64_t bm_offset;         /* bytes from the member start */
  uint8_t *resync_bits;       /* bits a pending resync must visit, or NULL */
  uint64_t rebuild_from;      /* stripes: a partly rebuilt member's progress */
  void *sb_buf[R5_MAX_MEMBERS];   /* MD_SB_BLOCK aligned buffers */
};

struct array;

/* With cfg->metadata auto, read the members' superblocks; if they have
 * any, assemble from them: put the opened members (given order, in
 * *opened) into a->members in slot order and set a->geom, a->out,
 * a->state and a->meta.  Without superblocks (or metadata none) leave
 * everything to the caller and return 0 with a->meta.enabled false.
 * Returns 0 or -errno with err set.
 */
int meta_assemble (struct array *a, const struct array_config *cfg,
                   struct io_member *opened, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* After meta_assemble: resync checkpoint, buffers, locks, bitmap. */
int meta_init (struct array *a, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Once the members are locked: the first superblock write, if assembly
 * asked for one (force=true records the array clean, as mdadm --force).
 */
int meta_start (struct array *a, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Runtime; see the header comment.  Return 0 or -errno (err set). */
int meta_write_begin (struct array *a, uint64_t first_stripe,
                      uint64_t last_stripe, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));
void meta_write_end (struct array *a) __attribute__((nonnull));
int meta_mark_clean (struct array *a, bool only_if_idle,
                     struct array_err *err)
  __attribute__((nonnull, warn_unused_result));
int meta_member_failed (struct array *a, unsigned slot,
                        struct array_err *err)
  __attribute__((nonnull, warn_unused_result));
/* The resync has finished (or was dropped): record resync_offset
 * MaxSector in the superblocks.
 */
int meta_resync_done (struct array *a, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));
/* A resync's progress, written with the next superblock update. */
void meta_set_resync_cp (struct array *a, uint64_t sectors)
  __attribute__((nonnull));

/* Write the superblocks now (rebuild progress, the end of a rebuild). */
int meta_checkpoint (struct array *a, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* A member (a new one if fresh, else the one that was there) takes slot
 * and is rebuilt: new device number and uuid, role = slot, superblocks
 * written (its own says how far it is rebuilt).
 */
int meta_add_member (struct array *a, unsigned slot, bool fresh,
                     struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

void meta_free (struct meta *m) __attribute__((nonnull));

#endif /* ARRAY_META_H */
