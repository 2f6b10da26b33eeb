/* array/meta.c -- keep the md superblocks (and bitmap) of a live array up
 * to date: dirty/clean, member failure, write-intent bits.  See meta.h.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "array/internal.h"

/* A random UUID, as mdadm gives each device. */
static void
random_uuid (uint8_t uuid[16])
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
static bool
bit_is_set (struct meta *m, uint64_t k)
{
  return (__atomic_load_n (&bitmap_bits (m)[k >> 3], __ATOMIC_ACQUIRE)
          >> (k & 7)) & 1;
}

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

static bool
bits_all_set (struct array *a, uint64_t first, uint64_t last)
{
  uint64_t k0, k1;

  if (!a->meta.has_bitmap)
    return true;
  bits_of_stripes (a, first, last, &k0, &k1);
  for (uint64_t k = k0; k <= k1; k++)
    if (!bit_is_set (&a->meta, k))
      return false;
  return true;
}

static void
set_bits (struct array *a, uint64_t first, uint64_t last)
{
  uint64_t k0, k1;

  bits_of_stripes (a, first, last, &k0, &k1);
  for (uint64_t k = k0; k <= k1; k++)
    bit_set (&a->meta, k);
}

static void
encode_for_slot (struct array *a, unsigned s)
{
  struct md_sb *sb = malloc (sizeof *sb);

  if (sb == NULL)
    abort ();                 /* 4 KiB; nothing sensible to do without it */
  *sb = a->meta.common;
  sb->dev_number = a->meta.dev_number[s];
  memcpy (sb->device_uuid, a->meta.device_uuid[s], 16);
  sb->data_size = a->meta.data_size[s];
  sb->feature_map &= ~(uint32_t) (MD_FEATURE_RECOVERY_OFFSET |
                                  MD_FEATURE_RECOVERY_BITMAP);
  sb->recovery_offset = 0;
  if (a->state[s] == MEMBER_REBUILDING) {
    /* md's partly recovered member: its own superblock says how far. */
    sb->feature_map |= MD_FEATURE_RECOVERY_OFFSET;
    sb->recovery_offset = a->job.cursor * a->geom.chunk / 512;
  }
  md_sb_encode (sb, a->meta.sb_buf[s]);
  free (sb);
}

/* Queue the superblock (and bitmap) writes for every member in service. */
static size_t
queue_sb_writes (struct array *a, struct io_op *ops)
{
  struct meta *m = &a->meta;
  size_t n = 0;

  for (unsigned s = 0; s < a->geom.members; s++) {
    if (((int) s == a->out && a->state[s] != MEMBER_REBUILDING) ||
        a->members[s].fd < 0)
      continue;
    encode_for_slot (a, s);
    ops[n++] = (struct io_op) { .kind = IO_WRITE, .member = s,
                                .buf = m->sb_buf[s], .off = MD_SB_OFFSET,
                                .len = MD_SB_BLOCK };
    if (m->has_bitmap)
      ops[n++] = (struct io_op) { .kind = IO_WRITE, .member = s,
                                  .buf = m->bm_area, .off = m->bm_offset,
                                  .len = m->bm_area_bytes };
  }
  return n;
}

/* Write superblock (and bitmap) to every member in service; meta.lock
 * held.  events+1, as md does on every superblock update.  A member that
 * fails the write is taken out of service and the superblocks are
 * written again, recording it as faulty.
 */
static int
write_sbs (struct array *a, bool dirty, struct array_err *err)
{
  struct meta *m = &a->meta;
  struct io_op ops[2 * R5_MAX_MEMBERS];

  for (;;) {
    size_t n;
    int r;

    if (a->out >= 0 && a->state[a->out] == MEMBER_FAULTY)
      m->common.dev_roles[m->dev_number[a->out]] = MD_ROLE_FAULTY;
    m->common.events++;
    m->common.utime = (uint64_t) time (NULL);
    m->common.resync_offset = dirty ? 0 : m->resync_cp;
    if (m->has_bitmap) {
      m->bm.events = m->common.events;
      md_bitmap_encode (&m->bm, m->bm_area);
    }
    n = queue_sb_writes (a, ops);
    r = io_run (a->members, ops, n, IO_FUA);
    if (r == 0 || (r = array_take_out (a, ops, n, r, err)) < 0)
      return r;
  }
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
  if (m->dirty && bits_all_set (a, first, last))
    return 0;
  pthread_mutex_lock (&m->lock);
  if (!m->dirty || !bits_all_set (a, first, last)) {
    if (m->has_bitmap)
      set_bits (a, first, last);
    r = write_sbs (a, true, err);
    if (r == 0)
      m->dirty = true;
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
      if ((int) s != a->out)
        ops[n++] = (struct io_op) { .kind = IO_FSYNC, .member = s };
    r = io_run (a->members, ops, n, 0);
    if (r == 0 || (r = array_take_out (a, ops, n, r, err)) < 0)
      return r;
  }
}

/* Bits can go once the data they guard is synced, unless a resync still
 * needs them or a member is missing (md keeps them for its return).
 */
static void
clear_bits (struct array *a)
{
  struct meta *m = &a->meta;

  if (!m->has_bitmap || a->out >= 0 || m->resync_cp != MD_MAX_SECTOR)
    return;
  memset (bitmap_bits (m), 0, m->bm_area_bytes - MD_BITMAP_HEADER);
  m->bm.events_cleared = m->common.events + 1;
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
  if (m->dirty && (r = sync_members (a, err)) == 0) {
    clear_bits (a);
    if ((r = write_sbs (a, false, err)) == 0)
      m->dirty = false;
  }
  pthread_mutex_unlock (&m->lock);
  pthread_rwlock_unlock (&m->gate);
  return r;
}

int
meta_resync_done (struct array *a, struct array_err *err)
{
  struct meta *m = &a->meta;
  int r;

  if (!m->enabled)
    return 0;
  /* With no write in flight (the gate is free) the bits can go now;
   * otherwise the next mark-clean clears them.
   */
  bool idle = pthread_rwlock_trywrlock (&m->gate) == 0;

  pthread_mutex_lock (&m->lock);
  m->resync_cp = MD_MAX_SECTOR;
  free (m->resync_bits);
  m->resync_bits = NULL;
  if (idle && !m->dirty)
    clear_bits (a);
  r = write_sbs (a, m->dirty, err);
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
  a->meta.resync_cp = sectors;
  pthread_mutex_unlock (&a->meta.lock);
}

int
meta_checkpoint (struct array *a, struct array_err *err)
{
  int r;

  if (!a->meta.enabled)
    return 0;
  pthread_mutex_lock (&a->meta.lock);
  r = write_sbs (a, a->meta.dirty, err);
  pthread_mutex_unlock (&a->meta.lock);
  return r;
}

/* A dev_number no member uses: one past the highest in use, as md
 * numbers new devices.
 */
static int
new_dev_number (struct array *a, struct array_err *err)
{
  uint32_t next = 0;

  for (unsigned s = 0; s < a->geom.members; s++)
    if (a->meta.dev_number[s] + 1 > next)
      next = a->meta.dev_number[s] + 1;
  for (uint32_t i = next; i < a->meta.common.max_dev; i++)
    if (a->meta.common.dev_roles[i] >= MD_ROLE_MAX)
      return (int) i;
  array_set_err (err, "no free device number in the superblock (max_dev "
                 "%" PRIu32 ")", a->meta.common.max_dev);
  return -ENOSPC;
}

int
meta_add_member (struct array *a, unsigned slot, bool fresh,
                 struct array_err *err)
{
  struct meta *m = &a->meta;
  int r = 0, dev;

  if (!m->enabled)
    return 0;
  pthread_mutex_lock (&m->lock);
  if (fresh) {
    if ((dev = new_dev_number (a, err)) < 0) {
      pthread_mutex_unlock (&m->lock);
      return dev;
    }
    /* Whatever device held the slot before (maybe never opened here:
     * disk=missing, or left out) is faulty from now on.
     */
    for (uint32_t i = 0; i < m->common.max_dev; i++)
      if (m->common.dev_roles[i] == slot)
        m->common.dev_roles[i] = MD_ROLE_FAULTY;
    m->dev_number[slot] = (uint32_t) dev;
    random_uuid (m->device_uuid[slot]);
    m->data_size[slot] = a->members[slot].size / 512 - m->common.data_offset;
  }
  m->common.dev_roles[m->dev_number[slot]] = (uint16_t) slot;
  r = write_sbs (a, m->dirty, err);
  pthread_mutex_unlock (&m->lock);
  return r;
}

int
meta_member_failed (struct array *a, unsigned slot, struct array_err *err)
{
  struct meta *m = &a->meta;
  int r;

  if (!m->enabled)
    return 0;
  pthread_mutex_lock (&m->lock);
  m->common.dev_roles[m->dev_number[slot]] = MD_ROLE_FAULTY;
  r = write_sbs (a, m->dirty, err);
  pthread_mutex_unlock (&m->lock);
  return r;
}

/* Read the bitmap from the first member in service. */
static int
load_bitmap (struct array *a, struct array_err *err)
{
  struct meta *m = &a->meta;
  const struct io_member *src = &a->members[a->out == 0 ? 1 : 0];
  char why[160];
  int r;

  m->bm_offset = (MD_SB_SECTOR + (uint64_t) m->common.bitmap_offset) * 512;
  if (posix_memalign ((void **) &m->bm_area, 4096, 4096) != 0)
    return -ENOMEM;
  if ((r = io_member_pread (src, m->bm_area, 4096, m->bm_offset)) < 0)
    snprintf (why, sizeof why, "%s", strerror (-r));
  else
    r = md_bitmap_decode (m->bm_area, m->common.set_uuid, &m->bm, why,
                          sizeof why);
  if (r < 0) {
    array_set_err (err, "member %s: md bitmap at %" PRIu64 ": %s", src->path,
                   m->bm_offset, why);
    return r;
  }
  m->bm_area_bytes = md_bitmap_area_bytes (&m->bm);
  if (m->bm.sync_size < m->common.size ||
      m->bm_offset + m->bm_area_bytes > m->common.data_offset * 512) {
    array_set_err (err, "member %s: md bitmap does not cover the array or "
                   "overlaps the data", src->path);
    return -EBADMSG;
  }
  free (m->bm_area);
  if (posix_memalign ((void **) &m->bm_area, 4096, m->bm_area_bytes) != 0) {
    m->bm_area = NULL;
    return -ENOMEM;
  }
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
  if (m->bm.events < m->common.events || (m->bm.state & MD_BITMAP_STALE)) {
    array_log (a, ARRAY_LOG_ERROR, "md bitmap is older than the "
               "superblocks (events %" PRIu64 " < %" PRIu64 "): resyncing "
               "everything", m->bm.events, m->common.events);
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
  int r;

  m->resync_cp = m->common.resync_offset;
  for (unsigned s = 0; s < a->geom.members; s++)
    if (posix_memalign (&m->sb_buf[s], 4096, MD_SB_BLOCK) != 0)
      goto nomem;
  if (pthread_mutex_init (&m->lock, NULL) != 0)
    goto nomem;
  if (pthread_rwlock_init (&m->gate, NULL) != 0) {
    pthread_mutex_destroy (&m->lock);
    goto nomem;
  }
  m->locks_made = true;
  if (m->common.feature_map & MD_FEATURE_BITMAP_OFFSET) {
    if ((r = load_bitmap (a, err)) < 0)
      return r;
    m->has_bitmap = true;
    if (m->resync_cp != MD_MAX_SECTOR && (r = take_resync_bits (a)) < 0)
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
  struct meta *m = &a->meta;
  int r;

  if (!m->forced)
    return 0;
  /* Like mdadm --assemble --force: the array is recorded clean at once,
   * so the next start does not refuse it again.
   */
  pthread_mutex_lock (&m->lock);
  r = write_sbs (a, false, err);
  pthread_mutex_unlock (&m->lock);
  return r;
}

void
meta_free (struct meta *m)
{
  if (m->locks_made) {
    pthread_mutex_destroy (&m->lock);
    pthread_rwlock_destroy (&m->gate);
  }
  for (unsigned s = 0; s < R5_MAX_MEMBERS; s++)
    free (m->sb_buf[s]);
  free (m->bm_area);
  free (m->resync_bits);
  memset (m, 0, sizeof *m);
}
