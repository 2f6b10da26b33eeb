/* array/meta-bitmap.c -- the write-intent bitmap of a live array (meta.h):
 * its bits set before a write (with the dirty mark) and cleared with the
 * clean mark when idle, and the resync a crash leaves due.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "array/meta-int.h"
#include "array/object.h"
#include "array/state.h"

uint8_t *
meta_bitmap_bits (struct meta *m)
{
  return m->bm_area + MD_BITMAP_HEADER;
}

/* Bits may be tested by any writer while another sets them under
 * meta.lock, so every access is atomic.
 */
static void
bit_set (struct meta *m, uint64_t k)
{
  __atomic_fetch_or (&meta_bitmap_bits (m)[k >> 3],
                     (uint8_t) (1u << (k & 7)), __ATOMIC_RELEASE);
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
void
meta_bits_durable (struct meta *m)
{
  size_t len = m->bm_area_bytes - MD_BITMAP_HEADER;

  if (!m->has_bitmap)
    return;
  for (size_t i = 0; i < len; i++)
    __atomic_fetch_or (&m->bm_durable[i], meta_bitmap_bits (m)[i],
                       __ATOMIC_RELEASE);
}

static void
set_bits (struct array *a, const struct meta_marks *marks)
{
  uint64_t k0, k1;

  for (unsigned i = 0; i < marks->n; i++) {
    bits_of_stripes (a, marks->r[i].first, marks->r[i].last, &k0, &k1);
    for (uint64_t k = k0; k <= k1; k++)
      bit_set (&a->meta, k);
  }
}

/* Are the bits of every range of marks durable? */
static bool
marks_durable (struct array *a, const struct meta_marks *marks)
{
  for (unsigned i = 0; i < marks->n; i++)
    if (!bits_all_set (a, a->meta.bm_durable, marks->r[i].first,
                       marks->r[i].last))
      return false;
  return true;
}

bool
meta_stripe_marked (struct array *a, uint64_t stripe)
{
  return bits_all_set (a, meta_bitmap_bits (&a->meta), stripe, stripe);
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

int
meta_write_begin (struct array *a, const struct meta_marks *marks,
                  struct array_err *err)
{
  struct meta *m = &a->meta;
  int r = 0;

  if (!m->enabled)
    return 0;
  pthread_rwlock_rdlock (&m->gate);
  if (m->dirty && marks_durable (a, marks))
    return 0;
  pthread_mutex_lock (&m->lock);
  if (!m->dirty || !marks_durable (a, marks)) {
    if (m->has_bitmap)
      set_bits (a, marks);
    /* Already dirty: only the new bits must reach the disks first, as
     * md's bitmap unplug writes them without a superblock update.
     */
    r = m->live.dirty ? meta_write_out (a, false, err)
      : meta_update (a, &(struct md_event) { .kind = MD_EV_DIRTY }, err);
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

/* Bits can go once the data they guard is synced, unless a resync still
 * needs them or a slot is out (md keeps them for the member's return:
 * they are what a re-add rebuilds).  True if they went.
 */
static bool
clear_bits (struct array *a)
{
  struct meta *m = &a->meta;

  m->bits_stale = false;
  if (!m->has_bitmap || health_out (&a->health) >= 0 ||
      meta_live_out (a) >= 0 || m->live.resync_cp != MD_MAX_SECTOR)
    return false;
  /* No writer is in flight (the gate is held): the fast path cannot be
   * reading the durable copy meanwhile.
   */
  memset (meta_bitmap_bits (m), 0, m->bm_area_bytes - MD_BITMAP_HEADER);
  memset (m->bm_durable, 0, m->bm_area_bytes - MD_BITMAP_HEADER);
  /* md's bitmap_endwrite: events_cleared = mddev->events, the events
   * every member in service holds now (they were all synced just
   * before), not the clean event about to be written: a member whose
   * link drops during that very write holds every byte and the events
   * before it, and md re-adds it by its bitmap (super_1_validate:
   * refused only below events_cleared).
   */
  m->bm.events_cleared = m->live.common.events;
  return true;
}

/* The flush before the clean mark.  At the stop, a member failing it
 * that fails the array (a second out) does not keep the clean mark from
 * the members left: md marks the array clean at its stop whatever has
 * failed (__md_stop_writes: in_sync = 1, then md_update_sb to the
 * members still in it), and mdadm --assemble --force then starts it
 * without the dirty-degraded refusal.  The flush is made again without
 * the member just taken out, as often as members fail it.
 */
static int
sync_before_clean (struct array *a, bool at_stop, struct array_err *err)
{
  int r = meta_sync_members (a, false, err);

  for (unsigned i = 0; r < 0 && at_stop && health_failed (&a->health) &&
       i < a->geom.members; i++) {
    array_log (a, ARRAY_LOG_ERROR, "%s; marked clean at the stop all the "
               "same, as md does", err->msg);
    r = meta_sync_members (a, false, err);
  }
  return r;
}

int
meta_mark_clean (struct array *a, bool only_if_idle, struct array_err *err)
{
  struct meta *m = &a->meta;
  int r = 0;

  if (!m->enabled || !(m->dirty || m->bits_stale) || a->read_only)
    return 0;
  if (only_if_idle) {
    if (array_now_ns () - m->last_write_ns < ARRAY_SAFE_MODE_MS * 1000000ULL ||
        pthread_rwlock_trywrlock (&m->gate) != 0)
      return 0;
  }
  else
    pthread_rwlock_wrlock (&m->gate);
  pthread_mutex_lock (&m->lock);
  if (m->live.dirty && (r = sync_before_clean (a, !only_if_idle, err)) == 0 &&
      (r = meta_record_out_locked (a, err)) == 0) {
    if ((r = integrity_settle (a)) < 0)
      array_set_err (err, "integrity record %s: cannot sync: %s",
                     a->integrity.path, strerror (-r));
    else {
      (void) clear_bits (a);
      /* With a resync due from sector 0 the superblocks say clean as
       * they say dirty: nothing is written (mdstate's MD_EV_CLEAN).
       */
      r = meta_update (a, &(struct md_event) { .kind = MD_EV_CLEAN }, err);
      if (r == 0) {
        m->dirty = m->live.dirty;
        integrity_record_events (a);
      }
    }
  }
  else if (!m->live.dirty && m->bits_stale) {
    /* Clean, a rebuild just ended: its bits go, the bitmap alone
     * written (md_bitmap_daemon_work) -- once what they guard, the
     * rebuilt bytes, is durable (md flushes first: REQ_PREFLUSH).
     */
    if ((r = meta_sync_members (a, false, err)) == 0 && clear_bits (a))
      r = meta_write_out (a, false, err);
  }
  pthread_mutex_unlock (&m->lock);
  pthread_rwlock_unlock (&m->gate);
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
  r = meta_update (a, &(struct md_event) { .kind = MD_EV_RESYNC_DONE }, err);
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

/* bits (nbits of them) regrouped into chunks f times as big: bit j set
 * if any of bits j*f .. j*f+f-1 was (md_bitmap_resize carries each old
 * chunk's state into the new chunk that holds it).  In place: bit j is
 * written after every bit it is made of was read.
 */
static void
regroup (uint8_t *bits, uint64_t nbits, uint64_t f)
{
  uint64_t j;

  if (bits == NULL || f == 1)
    return;
  for (j = 0; j * f < nbits; j++) {
    bool any = false;

    for (uint64_t k = j * f; k < j * f + f && k < nbits; k++)
      any |= md_bitmap_test (bits, k);
    if (any)
      md_bitmap_set (bits, j);
    else
      md_bitmap_clear (bits, j);
  }
  for (; j < nbits; j++)
    md_bitmap_clear (bits, j);
}

static void
mark_sectors (uint8_t *bits, uint64_t per_bit, uint64_t from, uint64_t to)
{
  if (bits != NULL)
    for (uint64_t k = from / per_bit; k <= (to - 1) / per_bit; k++)
      md_bitmap_set (bits, k);
}

/* *p, of old bytes, made bytes long, the new part zeroed; p may be NULL
 * (then it stays so).  0 or -ENOMEM (*p as it was).
 */
static int
widen (uint8_t **p, size_t old, size_t bytes, bool aligned)
{
  uint8_t *q;

  if (*p == NULL || bytes <= old)
    return 0;
  if (aligned ? posix_memalign ((void **) &q, 4096, bytes) != 0
              : (q = malloc (bytes)) == NULL)
    return -ENOMEM;
  memcpy (q, *p, old);
  memset (q + old, 0, bytes - old);
  free (*p);
  *p = q;
  return 0;
}

/* Where a bitmap at byte at must end: the bad-block log -- past it, or
 * for a new bitmap (new) anywhere (one before at leaves no room) -- else
 * the data, less for a new bitmap the 8 sectors mdadm leaves for a log
 * to come (add_internal_bitmap1: bbl_size 8).
 */
static uint64_t
bitmap_end (const struct md_sb *c, uint64_t at, bool new)
{
  uint64_t bblog = (MD_SB_SECTOR + (uint64_t) c->bblog_offset) * 512;
  uint64_t data = c->data_offset * 512;

  if (c->bblog_size && c->bblog_offset > 0 && (new || bblog > at))
    return bblog;
  if (new)
    return data > 8 * 512 ? data - 8 * 512 : 0;
  return data;
}

/* The bitmap's buffers (its area, the durable copy, the resync bits)
 * made room for an area of bytes: it may outgrow them, as md lets it
 * fill the sectors recorded in its header (sectors_reserved), not only
 * those its bits filled when it was loaded.  The area must end before
 * the bad-block log (or the data).  0, -ENOSPC or -ENOMEM (err set).
 */
static int
bitmap_room (struct array *a, size_t bytes, struct array_err *err)
{
  struct meta *m = &a->meta;
  const struct md_sb *c = &m->live.common;
  uint64_t limit = bitmap_end (c, m->bm_offset, false);
  size_t old = m->bm_area_bytes, h = MD_BITMAP_HEADER;

  if (m->bm_offset + bytes > limit) {
    array_set_err (err, "the grown bitmap (%zu bytes at byte %" PRIu64 ") "
                   "would pass the %s at byte %" PRIu64, bytes, m->bm_offset,
                   limit < c->data_offset * 512 ? "bad-block log" : "data",
                   limit);
    return -ENOSPC;
  }
  if (bytes <= old)
    return 0;
  if (widen (&m->bm_area, old, bytes, true) < 0 ||
      widen (&m->bm_durable, old - h, bytes - h, false) < 0 ||
      widen (&m->resync_bits, old - h, bytes - h, false) < 0) {
    array_set_err (err, "out of memory for the grown bitmap");
    return -ENOMEM;
  }
  m->bm_area_bytes = bytes;
  return 0;
}

int
meta_bitmap_grow (struct array *a, uint64_t from, uint64_t to, bool mark,
                  struct array_err *err)
{
  struct meta *m = &a->meta;
  struct md_bitmap_sb next;
  uint64_t nbits, f;
  int r;

  if (!m->has_bitmap)
    return 0;
  nbits = md_bitmap_bits (&m->bm);
  next = m->bm;
  next.sectors_reserved = md_bitmap_space (&m->bm);   /* md keeps it */
  next.chunksize = md_bitmap_resize_chunk (&next, to);
  next.sync_size = to;
  if ((r = bitmap_room (a, md_bitmap_area_bytes (&next), err)) < 0)
    return r;
  f = next.chunksize / m->bm.chunksize;
  m->bm.sectors_reserved = next.sectors_reserved;
  regroup (meta_bitmap_bits (m), nbits, f);
  regroup (m->bm_durable, nbits, f);
  regroup (m->resync_bits, nbits, f);
  m->bm.chunksize *= (uint32_t) f;
  m->bm.sync_size = to;
  if (mark) {
    mark_sectors (meta_bitmap_bits (m), m->bm.chunksize / 512, from, to);
    mark_sectors (m->resync_bits, m->bm.chunksize / 512, from, to);
  }
  return 0;
}

/* The bitmap mdadm --grow --bitmap=internal adds (add_internal_bitmap1):
 * 8 sectors after the superblock, its chunk as at create for the room
 * before the bad-block log (or the data), every bit set.  0, or -ENOSPC
 * with err set when no bitmap fits.
 */
static int
new_bitmap (struct array *a, struct array_err *err)
{
  struct meta *m = &a->meta;
  const struct md_sb *c = &m->live.common;
  uint64_t at = (MD_SB_SECTOR + (uint64_t) MD_BITMAP_SB_OFFSET) * 512;
  uint64_t limit = bitmap_end (c, at, true), room;
  /* md finds the new bitmap older than the array (mdadm writes its
   * events as 0), does a full recovery of it and takes the array's
   * events as those cleared (md_bitmap_read_sb: BITMAP_STALE).
   */
  struct md_bitmap_sb bm = {
    .version = MD_BITMAP_VERSION, .sync_size = c->size,
    .daemon_sleep = MD_BITMAP_DAEMON_SLEEP, .events_cleared = c->events,
  };

  room = limit > at ? (limit - at) / 512 : 0;
  if (md_bitmap_room (c->size) < room)
    room = md_bitmap_room (c->size);
  bm.chunksize = md_bitmap_default_chunk (c->size, room);
  memcpy (bm.uuid, c->set_uuid, 16);
  if (room * 512 <= MD_BITMAP_HEADER ||
      at + md_bitmap_area_bytes (&bm) > limit) {
    char where[96];

    if (c->bblog_size && c->bblog_offset > 0)
      snprintf (where, sizeof where, "where the bad-block log starts");
    else
      snprintf (where, sizeof where, "4 KiB before the data at byte %"
                PRIu64 ", room mdadm keeps for a bad-block log",
                c->data_offset * 512);
    array_set_err (err, "no room for an internal bitmap: it goes at byte "
                   "%" PRIu64 " (8 sectors after the superblock, as mdadm "
                   "puts it) and must end by byte %" PRIu64 " (%s)%s", at,
                   limit, where, room * 512 > MD_BITMAP_HEADER
                   ? "; it needs more" : "");
    return -ENOSPC;
  }
  m->bm = bm;
  m->bm_offset = at;
  m->bm_area_bytes = md_bitmap_area_bytes (&bm);
  if (posix_memalign ((void **) &m->bm_area, 4096, m->bm_area_bytes) != 0 ||
      (m->bm_durable = calloc (1, m->bm_area_bytes - MD_BITMAP_HEADER)) == NULL) {
    free (m->bm_area);
    m->bm_area = NULL;
    array_set_err (err, "out of memory for the bitmap");
    return -ENOMEM;
  }
  memset (m->bm_area, 0, m->bm_area_bytes);
  for (uint64_t k = 0; k < md_bitmap_bits (&bm); k++)
    md_bitmap_set (meta_bitmap_bits (m), k);
  return 0;
}

int
meta_set_bitmap (struct array *a, bool on, struct array_err *err)
{
  struct meta *m = &a->meta;
  int r = 0;

  pthread_rwlock_wrlock (&m->gate);
  pthread_mutex_lock (&m->lock);
  if (on && (r = new_bitmap (a, err)) == 0)
    m->has_bitmap = true;
  if (r == 0) {
    if (!on)
      m->has_bitmap = false;
    md_live_apply (&m->live, &(struct md_event) { .kind = MD_EV_BITMAP,
                                                  .sectors = on });
    r = meta_write_bitmap_first (a, err);
  }
  if (!m->has_bitmap) {
    free (m->bm_area);
    free (m->bm_durable);
    m->bm_area = m->bm_durable = NULL;
  }
  pthread_mutex_unlock (&m->lock);
  pthread_rwlock_unlock (&m->gate);
  return r;
}

void
meta_bitmap_stamp (struct meta *m)
{
  m->bm.events = m->live.common.events;
  md_bitmap_encode (&m->bm, m->bm_area);
}

struct io_op
meta_bitmap_op (const struct meta *m, unsigned slot)
{
  return (struct io_op) { .kind = IO_WRITE, .member = slot,
                          .buf = m->bm_area, .off = m->bm_offset,
                          .len = m->bm_area_bytes };
}

int
meta_bitmap_to_new (struct array *a, unsigned first, unsigned n,
                    struct array_err *err)
{
  struct meta *m = &a->meta;
  struct io_op ops[R5_MAX_MEMBERS];
  int r;

  if (!m->has_bitmap)
    return 0;
  pthread_mutex_lock (&m->lock);
  meta_bitmap_stamp (m);
  for (unsigned i = 0; i < n; i++)
    ops[i] = meta_bitmap_op (m, first + i);
  r = io_run (a->members, ops, n, IO_FUA);
  pthread_mutex_unlock (&m->lock);
  for (unsigned i = 0; r < 0 && i < n; i++)
    if (ops[i].result < 0) {
      array_set_err (err, "new member %s: write of its bitmap at byte %"
                     PRIu64 ": %s", a->members[first + i].path,
                     m->bm_offset, io_strerror (ops[i].result));
      break;
    }
  return r;
}
