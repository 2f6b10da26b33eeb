/* array/meta.c -- keep the md superblocks (and bitmap) of a live array up
 * to date: each change is an md_live event (raid/mdstate.h), and its
 * result is written to every member in service.  See meta.h.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "array/object.h"
#include "array/state.h"

/* A random UUID, as mdadm gives each device. */
void
meta_random_uuid (uint8_t uuid[16])
{
  if (getrandom (uuid, 16, 0) != 16)
    for (unsigned i = 0; i < 16; i++)
      uuid[i] = (uint8_t) rand ();
}

static uint8_t *
bitmap_bits (struct meta *m)
{
  return m->bm_area + MD_BITMAP_HEADER;
}

/* Bits may be tested by any writer while another sets them under
 * meta.lock, so every access is atomic.
 */
static void
bit_set (struct meta *m, uint64_t k)
{
  __atomic_fetch_or (&bitmap_bits (m)[k >> 3], (uint8_t) (1u << (k & 7)),
                     __ATOMIC_RELEASE);
}

/* Bitmap bits covering stripes first..last (their member range). */
static void
bits_of_stripes (const struct array *a, uint64_t first, uint64_t last,
                 uint64_t *k0, uint64_t *k1)
{
  uint64_t per_bit = a->meta.bm.chunksize;

  *k0 = first * a->geom.chunk / per_bit;
  *k1 = ((last + 1) * a->geom.chunk - 1) / per_bit;
}

/* Are the bits of stripes first..last set in bits (the in-memory bitmap,
 * or the copy of what is durable)?
 */
static bool
bits_all_set (struct array *a, const uint8_t *bits, uint64_t first,
              uint64_t last)
{
  uint64_t k0, k1;

  if (!a->meta.has_bitmap)
    return true;
  bits_of_stripes (a, first, last, &k0, &k1);
  for (uint64_t k = k0; k <= k1; k++)
    if (!((__atomic_load_n (&bits[k >> 3], __ATOMIC_ACQUIRE) >> (k & 7)) & 1))
      return false;
  return true;
}

/* After a bitmap write reached every member in service: what it held is
 * durable; meta.lock held (every bit is set under it).
 */
static void
bits_durable (struct meta *m)
{
  size_t len = m->bm_area_bytes - MD_BITMAP_HEADER;

  if (!m->has_bitmap)
    return;
  for (size_t i = 0; i < len; i++)
    __atomic_fetch_or (&m->bm_durable[i], bitmap_bits (m)[i],
                       __ATOMIC_RELEASE);
}

static void
set_bits (struct array *a, uint64_t first, uint64_t last)
{
  uint64_t k0, k1;

  bits_of_stripes (a, first, last, &k0, &k1);
  for (uint64_t k = k0; k <= k1; k++)
    bit_set (&a->meta, k);
}

bool
meta_stripe_marked (struct array *a, uint64_t stripe)
{
  return bits_all_set (a, bitmap_bits (&a->meta), stripe, stripe);
}

bool
meta_resync_visits (const struct array *a, uint64_t stripe)
{
  const struct meta *m = &a->meta;
  uint64_t k;

  if (m->resync_bits == NULL)
    return true;
  k = stripe * a->geom.chunk / m->bm.chunksize;
  return (m->resync_bits[k >> 3] >> (k & 7)) & 1;
}

/* The slot the live state records as out of service, or -1. */
static int
live_out (const struct array *a)
{
  for (unsigned s = 0; s < a->geom.members; s++)
    if (a->meta.live.slot[s].state != MD_SLOT_IN_SYNC)
      return (int) s;
  return -1;
}

/* What the superblocks now say about the slot out; meta.lock held, right
 * after they were written (or, at start, before any write needs it).
 */
static void
note_recorded (struct array *a)
{
  int out = live_out (a);

  a->meta.recorded_out = out;
  a->meta.recorded_lost = out >= 0 && !md_live_writes (&a->meta.live,
                                                       (unsigned) out);
}

/* The replacement's superblock (if sb) and bitmap (md writes both to
 * every device not faulty, a replacement too).
 */
static size_t
queue_replacement (struct array *a, bool sb, struct md_sb *mine,
                   struct io_op *ops)
{
  struct meta *m = &a->meta;
  int slot = a->replace.slot;
  size_t n = 0;

  if (slot < 0 || a->replace.failed || !m->live.slot[slot].repl.attached ||
      !io_member_is_open (&a->members[ARRAY_REPLACEMENT]))
    return 0;
  if (sb) {
    md_live_sb_repl (&m->live, (unsigned) slot, mine);
    md_sb_encode (mine, m->sb_buf[ARRAY_REPLACEMENT]);
    ops[n++] = (struct io_op) { .kind = IO_WRITE, .member = ARRAY_REPLACEMENT,
                                .buf = m->sb_buf[ARRAY_REPLACEMENT],
                                .off = MD_SB_OFFSET, .len = MD_SB_BLOCK };
  }
  if (m->has_bitmap)
    ops[n++] = (struct io_op) { .kind = IO_WRITE, .member = ARRAY_REPLACEMENT,
                                .buf = m->bm_area, .off = m->bm_offset,
                                .len = m->bm_area_bytes };
  return n;
}

/* Queue the writes of the superblock (if sb) and the bitmap for every
 * member in service.
 */
static size_t
queue_writes (struct array *a, bool sb, struct io_op *ops)
{
  struct meta *m = &a->meta;
  struct md_sb *mine = malloc (sizeof *mine);
  size_t n = 0;

  if (mine == NULL)
    abort ();                 /* 4 KiB; nothing sensible to do without it */
  for (unsigned s = 0; s < a->geom.members; s++) {
    if (!md_live_writes (&m->live, s) || !io_member_is_open (&a->members[s]))
      continue;
    if (sb) {
      md_live_sb (&m->live, s, mine);
      md_sb_encode (mine, m->sb_buf[s]);
      ops[n++] = (struct io_op) { .kind = IO_WRITE, .member = s,
                                  .buf = m->sb_buf[s], .off = MD_SB_OFFSET,
                                  .len = MD_SB_BLOCK };
    }
    if (m->has_bitmap)
      ops[n++] = (struct io_op) { .kind = IO_WRITE, .member = s,
                                  .buf = m->bm_area, .off = m->bm_offset,
                                  .len = m->bm_area_bytes };
  }
  n += queue_replacement (a, sb, mine, ops + n);
  free (mine);
  return n;
}

/* Slot's device failed, in the live state (MD_EV_FAIL).  One being
 * replaced: from now on writes are planned around the slot and miss the
 * replacement until it takes the slot (replace.h), so its superblock
 * stops claiming a copy -- written with the failure, before any such
 * write -- and a restart in between rebuilds it from the start rather
 * than from its old point.
 */
static bool
live_fail (struct md_live *live, unsigned slot)
{
  if (live->slot[slot].repl.attached)
    live->slot[slot].repl.recovery_offset = 0;  /* one event: the failure */
  return md_live_apply (live, &(struct md_event) { .kind = MD_EV_FAIL,
                                                   .slot = slot });
}

/* Write the superblocks (if sb) and the bitmap to every member in
 * service, durably; meta.lock held.  A member that fails the write is
 * taken out of service and the superblocks are written again, recording
 * it as faulty (md_error during md_update_sb does the same).
 */
static int
write_out (struct array *a, bool sb, struct array_err *err)
{
  struct meta *m = &a->meta;
  struct io_op ops[2 * ARRAY_MEMBERS];

  for (;;) {
    size_t n;
    int r, out;

    m->live.common.utime = (uint64_t) time (NULL);
    if (m->has_bitmap) {
      m->bm.events = m->live.common.events;
      md_bitmap_encode (&m->bm, m->bm_area);
    }
    n = queue_writes (a, sb, ops);
    r = io_run (a->members, ops, n, IO_FUA);
    if (r == 0) {
      m->dirty = m->live.dirty;
      note_recorded (a);
      bits_durable (m);
      return 0;
    }
    if (replace_took (a, ops, n))
      continue;               /* written again, without the replacement */
    if ((r = array_take_out (a, ops, n, r, NULL, err)) < 0)
      return r;
    out = health_out (&a->health);
    if (out < 0 || !md_live_writes (&m->live, (unsigned) out))
      return -EIO;            /* cannot happen: the failed one was written */
    live_fail (&m->live, (unsigned) out);
    sb = true;
  }
}

/* Apply ev and write the superblocks if it changed what they say;
 * meta.lock held.
 */
static int
update (struct array *a, const struct md_event *ev, struct array_err *err)
{
  if (ev->kind == MD_EV_FAIL)
    return live_fail (&a->meta.live, ev->slot) ? write_out (a, true, err) : 0;
  return md_live_apply (&a->meta.live, ev) ? write_out (a, true, err) : 0;
}

static int
update_locked (struct array *a, enum md_event_kind kind, unsigned slot,
               uint64_t sectors, struct array_err *err)
{
  int r;

  if (!a->meta.enabled)
    return 0;
  pthread_mutex_lock (&a->meta.lock);
  r = update (a, &(struct md_event) { .kind = kind, .slot = slot,
                                      .sectors = sectors }, err);
  pthread_mutex_unlock (&a->meta.lock);
  return r;
}

/* The slot health has taken out, recorded if the superblocks do not say
 * so yet; meta.lock held.
 */
static int
record_out (struct array *a, struct array_err *err)
{
  int out = health_out (&a->health);

  if (out < 0 || !md_live_writes (&a->meta.live, (unsigned) out) ||
      (health_state (&a->health, (unsigned) out) == MEMBER_REBUILDING &&
       a->meta.live.slot[out].state == MD_SLOT_RECOVERING))
    return 0;
  return update (a, &(struct md_event) { .kind = MD_EV_FAIL,
                                         .slot = (unsigned) out }, err);
}

/* Do the superblocks already say what health says of the out slot? */
static bool
recorded (const struct array *a, int out)
{
  const struct meta *m = &a->meta;

  return m->recorded_out == out &&
    (m->recorded_lost ||
     health_state (&a->health, (unsigned) out) == MEMBER_REBUILDING);
}

int
meta_record_out (struct array *a, struct array_err *err)
{
  struct meta *m = &a->meta;
  int out = health_out (&a->health), r;

  if (!m->enabled || out < 0 || recorded (a, out))
    return 0;
  pthread_mutex_lock (&m->lock);
  /* Under the lock the live state is what the disks say (every change is
   * written before the lock is let go; an absent slot is written with the
   * first write's dirty mark, which meta_write_begin made before this).
   */
  if ((r = record_out (a, err)) == 0)
    note_recorded (a);
  pthread_mutex_unlock (&m->lock);
  return r;
}

int
meta_write_begin (struct array *a, uint64_t first, uint64_t last,
                  struct array_err *err)
{
  struct meta *m = &a->meta;
  int r = 0;

  if (!m->enabled)
    return 0;
  pthread_rwlock_rdlock (&m->gate);
  if (m->dirty && bits_all_set (a, m->bm_durable, first, last))
    return 0;
  pthread_mutex_lock (&m->lock);
  if (!m->dirty || !bits_all_set (a, m->bm_durable, first, last)) {
    if (m->has_bitmap)
      set_bits (a, first, last);
    /* Already dirty: only the new bits must reach the disks first, as
     * md's bitmap unplug writes them without a superblock update.
     */
    r = m->live.dirty ? write_out (a, false, err)
      : update (a, &(struct md_event) { .kind = MD_EV_DIRTY }, err);
  }
  pthread_mutex_unlock (&m->lock);
  if (r < 0)
    pthread_rwlock_unlock (&m->gate);
  return r;
}

void
meta_write_end (struct array *a)
{
  if (!a->meta.enabled)
    return;
  a->meta.last_write_ns = array_now_ns ();
  pthread_rwlock_unlock (&a->meta.gate);
}

/* Sync every member in service; one that fails is taken out of service
 * (the superblock write that follows records it).
 */
static int
sync_members (struct array *a, struct array_err *err)
{
  struct io_op ops[R5_MAX_MEMBERS];

  for (;;) {
    size_t n = 0;
    int r;

    for (unsigned s = 0; s < a->geom.members; s++)
      if (md_live_writes (&a->meta.live, s) &&
          health_state (&a->health, s) != MEMBER_FAULTY)
        ops[n++] = (struct io_op) { .kind = IO_FSYNC, .member = s };
    r = io_run (a->members, ops, n, 0);
    if (r == 0) {
      replace_sync (a);
      return 0;
    }
    if ((r = array_take_out (a, ops, n, r, NULL, err)) < 0)
      return r;
  }
}

/* Bits can go once the data they guard is synced, unless a resync still
 * needs them or a slot is out (md keeps them for the member's return:
 * they are what a re-add rebuilds).
 */
static void
clear_bits (struct array *a)
{
  struct meta *m = &a->meta;

  if (!m->has_bitmap || health_out (&a->health) >= 0 || live_out (a) >= 0 ||
      m->live.resync_cp != MD_MAX_SECTOR)
    return;
  /* No writer is in flight (the gate is held): the fast path cannot be
   * reading the durable copy meanwhile.
   */
  memset (bitmap_bits (m), 0, m->bm_area_bytes - MD_BITMAP_HEADER);
  memset (m->bm_durable, 0, m->bm_area_bytes - MD_BITMAP_HEADER);
  /* md's bitmap_endwrite: events_cleared = mddev->events, the events
   * every member in service holds now (they were all synced just
   * before), not the clean event about to be written: a member whose
   * link drops during that very write holds every byte and the events
   * before it, and md re-adds it by its bitmap (super_1_validate:
   * refused only below events_cleared).
   */
  m->bm.events_cleared = m->live.common.events;
}

int
meta_mark_clean (struct array *a, bool only_if_idle, struct array_err *err)
{
  struct meta *m = &a->meta;
  int r = 0;

  if (!m->enabled || !m->dirty)
    return 0;
  if (only_if_idle) {
    if (array_now_ns () - m->last_write_ns < ARRAY_SAFE_MODE_MS * 1000000ULL ||
        pthread_rwlock_trywrlock (&m->gate) != 0)
      return 0;
  }
  else
    pthread_rwlock_wrlock (&m->gate);
  pthread_mutex_lock (&m->lock);
  if (m->live.dirty && (r = sync_members (a, err)) == 0 &&
      (r = record_out (a, err)) == 0) {
    if ((r = integrity_settle (a)) < 0)
      array_set_err (err, "integrity record %s: cannot sync: %s",
                     a->integrity.path, strerror (-r));
    else {
      clear_bits (a);
      /* With a resync due from sector 0 the superblocks say clean as
       * they say dirty: nothing is written (mdstate's MD_EV_CLEAN).
       */
      r = update (a, &(struct md_event) { .kind = MD_EV_CLEAN }, err);
      if (r == 0) {
        m->dirty = m->live.dirty;
        integrity_record_events (a);
      }
    }
  }
  pthread_mutex_unlock (&m->lock);
  pthread_rwlock_unlock (&m->gate);
  return r;
}

int
meta_member_failed (struct array *a, unsigned slot, uint32_t gen,
                    struct array_err *err)
{
  int r;

  if (!a->meta.enabled)
    return 0;
  pthread_mutex_lock (&a->meta.lock);
  /* A rebuild may have put another member into the slot meanwhile (its
   * superblocks recorded the old one out already): not that one.
   */
  r = md_live_writes (&a->meta.live, slot) &&
    health_gen (&a->health, slot) == gen
    ? update (a, &(struct md_event) { .kind = MD_EV_FAIL, .slot = slot }, err)
    : 0;
  pthread_mutex_unlock (&a->meta.lock);
  return r;
}

int
meta_replace (struct array *a, unsigned slot, enum md_event_kind kind,
              uint64_t sectors, struct array_err *err)
{
  struct meta *m = &a->meta;
  uint8_t uuid[16];
  int r;

  if (!m->enabled)
    return 0;
  meta_random_uuid (uuid);
  pthread_mutex_lock (&m->lock);
  /* A checkpoint that looked before the slot's member failed: the
   * failure recorded the copy at 0 (live_fail), and it stays there until
   * the replacement takes the slot.
   */
  if (kind == MD_EV_REPLACE_CP && sectors > 0 &&
      m->live.slot[slot].state == MD_SLOT_FAULTY) {
    pthread_mutex_unlock (&m->lock);
    return 0;
  }
  r = update (a, &(struct md_event) {
      .kind = kind, .slot = slot, .sectors = sectors, .device_uuid = uuid,
      .data_size = a->members[ARRAY_REPLACEMENT].size / 512 -
        m->live.common.data_offset,
    }, err);
  pthread_mutex_unlock (&m->lock);
  return r;
}

void
meta_note_corrected (struct array *a, unsigned slot, uint64_t sectors)
{
  if (!a->meta.enabled)
    return;
  pthread_mutex_lock (&a->meta.lock);
  (void) md_live_apply (&a->meta.live, &(struct md_event) {
      .kind = MD_EV_CORRECTED_READ, .slot = slot, .sectors = sectors });
  pthread_mutex_unlock (&a->meta.lock);
}

/* Slot's bad-block log written from its table (md_update_sb writes the
 * log of a device whose table changed beside its superblock); meta.lock
 * held.
 */
static int
write_bblog (struct array *a, unsigned slot, struct array_err *err)
{
  struct md_sb *sb = malloc (sizeof *sb);
  unsigned ranges;
  uint64_t sectors, at;
  void *area = NULL;
  size_t len;
  struct io_op op;
  int r;

  if (sb == NULL)
    return -ENOMEM;
  md_live_sb (&a->meta.live, slot, sb);
  r = array_bb_encode (a, slot, sb, &area, &len, &at);
  free (sb);
  if (r < 0) {
    array_set_err (err, "member %u (%s): cannot encode its md bad-block "
                   "log: %s", slot, array_member_path (a, slot),
                   strerror (-r));
    return r;
  }
  op = (struct io_op) { .kind = IO_WRITE, .member = slot, .buf = area,
                        .off = at, .len = len };
  r = io_run (a->members, &op, 1, IO_FUA);
  free (area);
  if (r < 0) {
    array_set_err (err, "member %u (%s): write of its md bad-block log at "
                   "offset %" PRIu64 ": %s", slot,
                   array_member_path (a, slot), at, strerror (-r));
    return r;
  }
  array_bb_count (a, slot, &ranges, &sectors);
  return update (a, &(struct md_event) { .kind = MD_EV_BAD_BLOCKS,
                                         .slot = slot,
                                         .sectors = ranges > 0 }, err);
}

int
meta_bb_write (struct array *a, unsigned slot, struct array_err *err)
{
  int r;

  if (!a->meta.enabled)
    return -ENOSPC;           /* no superblock, no log */
  pthread_mutex_lock (&a->meta.lock);
  r = md_live_writes (&a->meta.live, slot) ? write_bblog (a, slot, err)
                                           : 0;
  pthread_mutex_unlock (&a->meta.lock);
  return r;
}

/* Where mdadm --update=bbl would put a log on these members
 * (md_bblog_update), in *sb: the room after the bitmap (its area rounded
 * up to 4 KiB, mdadm's calc_bitmap_size) or after the PPL's.
 */
static bool
bblog_room (const struct meta *m, struct md_sb *sb)
{
  int64_t room_offset = 0;
  uint64_t room = 0;

  *sb = m->live.common;
  if (m->has_bitmap)
    room_offset = sb->bitmap_offset,
      room = (m->bm_area_bytes + 4095) / 4096 * 8;
  else if (sb->feature_map & MD_FEATURE_ANY_PPL)
    room_offset = sb->ppl_offset, room = sb->ppl_size;
  return md_bblog_update (sb, room_offset, room);
}

/* An empty log (all ones) on every member that gets superblocks; 0 or
 * the first error (err set).
 */
static int
write_empty_logs (struct array *a, const struct md_sb *sb,
                  struct array_err *err)
{
  struct io_op ops[ARRAY_MEMBERS];
  uint64_t at = (uint64_t) (MD_SB_SECTOR + sb->bblog_offset) * 512;
  size_t len = (size_t) sb->bblog_size * 512, n = 0;
  void *area;
  int r;

  if (posix_memalign (&area, 4096, len) != 0)
    return -ENOMEM;
  memset (area, 0xff, len);
  for (unsigned s = 0; s < ARRAY_MEMBERS; s++)
    if ((s == ARRAY_REPLACEMENT || (s < a->geom.members &&
                                    md_live_writes (&a->meta.live, s))) &&
        io_member_is_open (&a->members[s]))
      ops[n++] = (struct io_op) { .kind = IO_WRITE, .member = s, .buf = area,
                                  .off = at, .len = len };
  r = io_run (a->members, ops, n, IO_FUA);
  free (area);
  if (r < 0)
    array_set_err (err, "writing an empty md bad-block log at member "
                   "offset %" PRIu64 ": %s", at, strerror (-r));
  return r;
}

/* The log placed in *sb made the members' (empty logs written, then the
 * superblocks); meta.lock held.
 */
static int
add_bblog (struct array *a, const struct md_sb *sb, struct array_err *err)
{
  struct md_sb *c = &a->meta.live.common;
  int r;

  if ((r = write_empty_logs (a, sb, err)) < 0)
    return r;
  c->bblog_offset = sb->bblog_offset;
  c->bblog_size = sb->bblog_size;
  c->bblog_shift = sb->bblog_shift;
  return write_out (a, true, err);
}

int
meta_bb_reserve (struct array *a)
{
  struct meta *m = &a->meta;
  struct array_err err;
  struct md_sb *sb;
  int r = 0;

  /* Not mid-reshape: the data offset is about to move. */
  if (!m->enabled || md_bblog_area (&m->live.common, NULL, NULL) ||
      (m->live.common.feature_map & MD_FEATURE_RESHAPE_ACTIVE))
    return 0;
  if ((sb = malloc (sizeof *sb)) == NULL)
    return -ENOMEM;
  pthread_mutex_lock (&m->lock);
  if (!bblog_room (m, sb))
    array_log (a, ARRAY_LOG_NOTICE, "the members have no md bad-block log "
               "and no room for one before the data: a sector that cannot "
               "be rewritten fails its member");
  else if ((r = add_bblog (a, sb, &err)) < 0)
    array_log (a, ARRAY_LOG_ERROR, "no md bad-block log reserved: %s",
               err.msg);
  else
    array_log (a, ARRAY_LOG_NOTICE, "md bad-block log reserved on the "
               "members (as mdadm --update=bbl): %u sectors at %d sectors "
               "from the superblock", sb->bblog_size, sb->bblog_offset);
  pthread_mutex_unlock (&m->lock);
  free (sb);
  if (r == 0 && md_bblog_area (&m->live.common, NULL, NULL))
    for (unsigned s = 0; s < a->geom.members; s++)
      if (md_live_writes (&m->live, s))
        array_bb_new_member (a, s);
  return r;
}

bool
meta_resync_due (const struct array *a)
{
  return a->meta.enabled && a->meta.live.resync_cp != MD_MAX_SECTOR;
}

uint64_t
meta_resync_from (const struct array *a)
{
  return a->meta.live.resync_cp;
}

int
meta_resync_done (struct array *a, struct array_err *err)
{
  struct meta *m = &a->meta;
  bool idle;
  int r;

  if (!m->enabled)
    return 0;
  /* With no write in flight (the gate is free) the bits can go now;
   * otherwise the next mark-clean clears them.
   */
  idle = pthread_rwlock_trywrlock (&m->gate) == 0;
  pthread_mutex_lock (&m->lock);
  free (m->resync_bits);
  m->resync_bits = NULL;
  m->live.resync_cp = MD_MAX_SECTOR;
  if (idle && !m->live.dirty)
    clear_bits (a);
  r = update (a, &(struct md_event) { .kind = MD_EV_RESYNC_DONE }, err);
  pthread_mutex_unlock (&m->lock);
  if (idle)
    pthread_rwlock_unlock (&m->gate);
  return r;
}

void
meta_set_resync_cp (struct array *a, uint64_t sectors)
{
  if (!a->meta.enabled)
    return;
  pthread_mutex_lock (&a->meta.lock);
  md_live_apply (&a->meta.live, &(struct md_event) {
                   .kind = MD_EV_RESYNC_CP, .sectors = sectors });
  pthread_mutex_unlock (&a->meta.lock);
}

int
meta_apply (struct array *a, const struct md_event *ev, struct array_err *err)
{
  int r;

  if (!a->meta.enabled)
    return 0;
  pthread_mutex_lock (&a->meta.lock);
  r = update (a, ev, err);
  pthread_mutex_unlock (&a->meta.lock);
  return r;
}

/* Apply a recovery event to slot if it is being rebuilt (checked under
 * meta.lock: a failure may have been recorded meanwhile).
 */
static int
recovery_event (struct array *a, enum md_event_kind kind, unsigned slot,
                uint64_t sectors, struct array_err *err)
{
  int r = 0;

  if (!a->meta.enabled)
    return 0;
  pthread_mutex_lock (&a->meta.lock);
  if (a->meta.live.slot[slot].state == MD_SLOT_RECOVERING)
    r = update (a, &(struct md_event) { .kind = kind, .slot = slot,
                                        .sectors = sectors }, err);
  pthread_mutex_unlock (&a->meta.lock);
  return r;
}

int
meta_rebuild_progress (struct array *a, uint64_t stripe,
                       struct array_err *err)
{
  int out = health_out (&a->health);

  if (out < 0)
    return 0;
  return recovery_event (a, MD_EV_RECOVERY_CP, (unsigned) out,
                         stripe * a->geom.chunk / 512, err);
}

int
meta_rebuild_done (struct array *a, unsigned slot, struct array_err *err)
{
  return recovery_event (a, MD_EV_RECOVERY_DONE, slot, 0, err);
}

int
meta_add_member (struct array *a, unsigned slot, enum meta_join how,
                 const struct md_sb *dev, struct array_err *err)
{
  struct meta *m = &a->meta;
  uint8_t uuid[16];
  struct md_event ev = {
    .kind = how == META_JOIN_NEW ? MD_EV_ADD : MD_EV_RE_ADD, .slot = slot,
    .device_uuid = uuid, .bitmap = how == META_JOIN_RE_ADD,
    .data_size = a->members[slot].size / 512 - m->live.common.data_offset,
  };
  int r;

  if (!m->enabled)
    return 0;
  if ((r = ppl_init_member (a, slot, err)) < 0)
    return r;
  if (how == META_JOIN_NEW)
    meta_random_uuid (uuid);
  else {
    memcpy (uuid, dev->device_uuid, 16);
    ev.dev_number = dev->dev_number;
  }
  pthread_mutex_lock (&m->lock);
  /* Whatever the slot's device was doing (in sync, being rebuilt), it is
   * let go for this one.
   */
  if (md_live_writes (&m->live, slot))
    md_live_apply (&m->live, &(struct md_event) { .kind = MD_EV_FAIL,
                                                   .slot = slot });
  r = update (a, &ev, err);
  pthread_mutex_unlock (&m->lock);
  return r;
}

bool
meta_dev_number_taken (struct array *a, unsigned slot, uint32_t dev)
{
  bool taken;

  pthread_mutex_lock (&a->meta.lock);
  taken = md_live_dev_number_taken (&a->meta.live, dev, slot);
  pthread_mutex_unlock (&a->meta.lock);
  return taken;
}

int
meta_readd_check (struct array *a, unsigned slot, const struct md_sb *dev,
                  struct array_err *err)
{
  char why[200];
  int r;

  pthread_mutex_lock (&a->meta.lock);
  r = md_readd_check (&a->meta.live, &(struct md_readd) {
                        .dev = dev, .slot = slot,
                        .has_bitmap = a->meta.has_bitmap,
                        .events_cleared = a->meta.bm.events_cleared },
                      why, sizeof why);
  pthread_mutex_unlock (&a->meta.lock);
  if (r < 0)
    array_set_err (err, "%s", why);
  return r;
}

int
meta_read_sb (const struct io_member *m, const char *what, struct md_sb *sb,
              struct array_err *err)
{
  char why[200];
  void *block;
  int r;

  if (m->size < MD_SB_OFFSET + MD_SB_BLOCK)
    return 0;
  if (posix_memalign (&block, 4096, MD_SB_BLOCK) != 0)
    return -ENOMEM;
  r = io_member_pread (m, block, MD_SB_BLOCK, MD_SB_OFFSET);
  if (r < 0)
    array_set_err (err, "%s (%s): read at %u: %s", what, m->path,
                   MD_SB_OFFSET, strerror (-r));
  else {
    r = md_sb_decode (block, m->size / 512, sb, why, sizeof why);
    if (r == -EINVAL)
      r = 0;                  /* no superblock at all */
    else if (r < 0)
      array_set_err (err, "%s (%s): md superblock: %s", what, m->path, why);
    else
      r = 1;
  }
  free (block);
  return r;
}

int
meta_load_bitmap (struct array *a, const struct io_member *src,
                  struct array_err *err)
{
  struct meta *m = &a->meta;
  char why[160];
  int r;

  m->bm_offset = (MD_SB_SECTOR + (uint64_t) m->live.common.bitmap_offset) *
    512;
  if (posix_memalign ((void **) &m->bm_area, 4096, 4096) != 0)
    return -ENOMEM;
  if ((r = io_member_pread (src, m->bm_area, 4096, m->bm_offset)) < 0)
    snprintf (why, sizeof why, "%s", strerror (-r));
  else
    r = md_bitmap_decode (m->bm_area, m->live.common.set_uuid, &m->bm, why,
                          sizeof why);
  if (r < 0) {
    array_set_err (err, "member %s: md bitmap at %" PRIu64 ": %s", src->path,
                   m->bm_offset, why);
    return r;
  }
  m->bm_area_bytes = md_bitmap_area_bytes (&m->bm);
  if (m->bm.sync_size < m->live.common.size ||
      m->bm_offset + m->bm_area_bytes > m->live.common.data_offset * 512) {
    array_set_err (err, "member %s: md bitmap does not cover the array or "
                   "overlaps the data", src->path);
    return -EBADMSG;
  }
  free (m->bm_area);
  if (posix_memalign ((void **) &m->bm_area, 4096, m->bm_area_bytes) != 0) {
    m->bm_area = NULL;
    return -ENOMEM;
  }
  m->has_bitmap = true;
  return io_member_pread (src, m->bm_area, m->bm_area_bytes, m->bm_offset);
}

/* What a resync after an unclean stop must visit: every bit set on disk,
 * or everything when the bitmap is older than the superblocks.
 */
static int
take_resync_bits (struct array *a)
{
  struct meta *m = &a->meta;
  size_t len = m->bm_area_bytes - MD_BITMAP_HEADER;

  m->resync_bits = malloc (len);
  if (m->resync_bits == NULL)
    return -ENOMEM;
  if (m->bm.events < m->live.common.events ||
      (m->bm.state & MD_BITMAP_STALE)) {
    array_log (a, ARRAY_LOG_ERROR, "md bitmap is older than the "
               "superblocks (events %" PRIu64 " < %" PRIu64 "): resyncing "
               "everything", m->bm.events, m->live.common.events);
    memset (m->resync_bits, 0xff, len);
  }
  else
    memcpy (m->resync_bits, bitmap_bits (m), len);
  return 0;
}

int
meta_init (struct array *a, struct array_err *err)
{
  struct meta *m = &a->meta;

  m->dirty = m->live.dirty;
  /* The absent slot is recorded by the first write's dirty mark, which
   * every write waits for (meta_write_begin) before it may leave it out.
   */
  note_recorded (a);
  /* Every slot's, not only the members': a grow adds members. */
  for (unsigned s = 0; s < ARRAY_MEMBERS; s++)
    if (posix_memalign (&m->sb_buf[s], 4096, MD_SB_BLOCK) != 0)
      goto nomem;
  if (pthread_mutex_init (&m->lock, NULL) != 0)
    goto nomem;
  if (pthread_rwlock_init (&m->gate, NULL) != 0) {
    pthread_mutex_destroy (&m->lock);
    goto nomem;
  }
  m->locks_made = true;
  if (m->has_bitmap) {
    size_t len = m->bm_area_bytes - MD_BITMAP_HEADER;

    if ((m->bm_durable = malloc (len)) == NULL)
      goto nomem;
    memcpy (m->bm_durable, bitmap_bits (m), len);   /* as read from disk */
    if (m->live.resync_cp != MD_MAX_SECTOR && take_resync_bits (a) < 0)
      goto nomem;
  }
  return 0;

 nomem:
  array_set_err (err, "out of memory for the md metadata");
  return -ENOMEM;
}

int
meta_start (struct array *a, struct array_err *err)
{
  int r = meta_bb_reserve (a);

  if (r < 0) {
    array_set_err (err, "the superblocks could not be written (reserving "
                   "an md bad-block log): %s", strerror (-r));
    return r;
  }
  /* Like mdadm --assemble --force: the array is recorded clean at once,
   * so the next start does not refuse it again.
   */
  if (a->meta.forced)
    r = update_locked (a, MD_EV_FORCE_CLEAN, 0, 0, err);
  /* A replacement whose copy starts over (assembly, after an unclean
   * stop) says so before anything is written: writes past the copy's
   * point do not reach it, so a later start must not go on from its old
   * point.
   */
  if (r == 0 && a->replace.slot >= 0 && a->replace.copied == 0)
    r = meta_replace (a, (unsigned) a->replace.slot, MD_EV_REPLACE_CP, 0,
                      err);
  return r;
}

void
meta_free (struct meta *m)
{
  if (m->locks_made) {
    pthread_mutex_destroy (&m->lock);
    pthread_rwlock_destroy (&m->gate);
  }
  for (unsigned s = 0; s < ARRAY_MEMBERS; s++)
    free (m->sb_buf[s]);
  free (m->bm_area);
  free (m->bm_durable);
  free (m->resync_bits);
  memset (m, 0, sizeof *m);
}
