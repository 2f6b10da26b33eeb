/* array/meta-load.c -- the md metadata of a live array at its start and
 * end (meta.h): a member's superblock read, the bitmap loaded, buffers
 * and locks made, the first superblock write; and all of it freed.  The
 * resync bits taken at the start, and what they leave unsynced.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array/meta-int.h"
#include "array/object.h"

static int
update_locked (struct array *a, enum md_event_kind kind, unsigned slot,
               uint64_t sectors, struct array_err *err)
{
  int r;

  if (!a->meta.enabled)
    return 0;
  pthread_mutex_lock (&a->meta.lock);
  r = meta_update (a, &(struct md_event) { .kind = kind, .slot = slot,
                                           .sectors = sectors }, err);
  pthread_mutex_unlock (&a->meta.lock);
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
  uint64_t data, move;
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
  /* Mid-grow the new shape's data starts lower (new_offset < 0). */
  data = m->live.common.data_offset * 512;
  move = md_sb_new_offset (&m->live.common) < 0
    ? (uint64_t) -(int64_t) md_sb_new_offset (&m->live.common) * 512 : 0;
  data = move < data ? data - move : 0;
  if (m->bm.sync_size < m->live.common.size ||
      m->bm_offset + m->bm_area_bytes > data) {
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

bool
meta_bitmap_stale (const struct meta *m)
{
  return m->bm.events < m->live.common.events ||
    (m->bm.state & MD_BITMAP_STALE);
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
  if (meta_bitmap_stale (m)) {
    array_log (a, ARRAY_LOG_ERROR, "md bitmap is older than the "
               "superblocks (events %" PRIu64 " < %" PRIu64 "): resyncing "
               "everything", m->bm.events, m->live.common.events);
    memset (m->resync_bits, 0xff, len);
  }
  else
    memcpy (m->resync_bits, meta_bitmap_bits (m), len);
  return 0;
}

/* The stripes from stripe `from` on that the resync would still visit,
 * and how many of the bitmap's regions they make (0 without a bitmap).
 */
static uint64_t
resync_left (const struct array *a, uint64_t from, uint64_t *regions)
{
  uint64_t left = 0, last_k = UINT64_MAX;

  *regions = 0;
  if (a->meta.resync_bits == NULL)
    return from < a->geom.stripes ? a->geom.stripes - from : 0;
  for (uint64_t s = from; s < a->geom.stripes; s++) {
    uint64_t k = s * a->geom.chunk / a->meta.bm.chunksize;

    if (!meta_resync_visits (a, s))
      continue;
    left++;
    *regions += k != last_k;
    last_k = k;
  }
  return left;
}

void
meta_warn_unsynced (struct array *a)
{
  uint64_t from = meta_resync_from (a) * 512 / a->geom.chunk, regions;
  uint64_t left = resync_left (a, from, &regions);
  char marked[64] = "";

  if (left == 0)
    return;
  if (regions)
    snprintf (marked, sizeof marked, ", in the %" PRIu64 " region%s the "
              "bitmap marks", regions, regions == 1 ? "" : "s");
  array_log (a, ARRAY_LOG_ERROR, "%" PRIu64 " stripes from stripe %" PRIu64
             "%s are not recorded as resynced since the unclean stop: where a "
             "write was cut short in one, slot %d's chunks there are computed "
             "from parity that may not hold it (the write hole; "
             "consistency-policy=ppl closes it)", left, from, marked,
             health_out (&a->health));
}

int
meta_init (struct array *a, struct array_err *err)
{
  struct meta *m = &a->meta;

  m->dirty = m->live.dirty;
  /* The absent slot is recorded by the first write's dirty mark, which
   * every write waits for (meta_write_begin) before it may leave it out.
   */
  meta_note_recorded (a);
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
    memcpy (m->bm_durable, meta_bitmap_bits (m), len);  /* as read from disk */
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
  int r;

  if (a->read_only)
    return 0;                 /* md_update_sb: not while read-only */
  if ((r = meta_bb_reserve (a)) < 0) {
    array_set_err (err, "the superblocks could not be written (reserving "
                   "an md bad-block log): %s", strerror (-r));
    return r;
  }
  /* Like mdadm --assemble --force: the array is recorded clean at once,
   * so the next start does not refuse it again.
   */
  if (a->meta.forced)
    r = update_locked (a, MD_EV_FORCE_CLEAN, 0, 0, err);
  /* A member forced back in sync (mdadm's "forcing event count"): every
   * superblock in service written now with it in its slot, the array's
   * events its own.
   */
  else if (a->meta.forced_in) {
    pthread_mutex_lock (&a->meta.lock);
    r = meta_write_out (a, true, err);
    pthread_mutex_unlock (&a->meta.lock);
  }
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
