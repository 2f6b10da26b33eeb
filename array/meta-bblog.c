/* array/meta-bblog.c -- the members' md bad-block logs (meta.h): a
 * slot's log written from its table, and a log reserved at start where
 * the members have none (as mdadm --update=bbl).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "array/meta-int.h"
#include "array/object.h"

/* Slot's bad-block log written from its table (md_update_sb writes the
 * log of a device whose table changed beside its superblock); meta.lock
 * held.
 */
static int
write_bblog (struct array *a, unsigned slot, struct array_err *err)
{
  struct md_sb *sb;
  unsigned ranges;
  uint64_t sectors, at;
  void *area = NULL;
  size_t len;
  struct io_op op;
  int r;

  if (a->read_only) {
    array_set_err (err, "member %u (%s): its bad-block log is not written: "
                   "the array is read-only", slot,
                   array_member_path (a, slot));
    return -EROFS;
  }
  if ((sb = malloc (sizeof *sb)) == NULL)
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
  return meta_update (a, &(struct md_event) { .kind = MD_EV_BAD_BLOCKS,
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
  return meta_write_out (a, true, err);
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
