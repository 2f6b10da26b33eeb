/* array/meta-int.h -- what the meta files (meta.c, meta-bitmap.c,
 * meta-bblog.c, meta-load.c) share, and nobody else calls.  Every one
 * of them wants meta.lock held.
 */
#ifndef ARRAY_META_INT_H
#define ARRAY_META_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "array/meta.h"

struct array;

/* meta.c: write the superblocks (if sb) and the bitmap to every member
 * in service, durably; a member that fails the write is taken out of
 * service and recorded faulty.  With sb, every member in service (and a
 * replacement) is flushed first, as md's REQ_PREFLUSH: what the
 * superblocks record is durable before they say so.  0 or -errno (err
 * set).
 */
int meta_write_out (struct array *a, bool sb, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* meta.c: the same for a change of what the bitmap covers (the size,
 * the bitmap itself): the bitmap written first, then the superblocks
 * that count on it, as mdadm writes a new bitmap before it sets
 * bitmap/location -- a crash between them leaves superblocks that still
 * say the old thing, which the new bitmap serves too (it covers at least
 * the old size; its events are ahead, not behind).  meta.lock held.
 */
int meta_write_bitmap_first (struct array *a, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* meta.c: flush every member in service and a replacement; one that
 * fails is taken out of service (health) and, with record, marked faulty
 * in the live state, for the superblock write that follows to record.
 * 0, or -errno if the array failed (recorded).
 */
int meta_sync_members (struct array *a, bool record, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* meta.c: apply ev, and write the superblocks if it changed what they
 * say.  0 or -errno (err set).
 */
int meta_update (struct array *a, const struct md_event *ev,
                 struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* meta.c: the slot health has taken out recorded, if the superblocks do
 * not say so yet.  0 or -errno (err set).
 */
int meta_record_out_locked (struct array *a, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* meta.c: the array has failed: the slots that failed it recorded
 * faulty in the superblocks of the members left (meta_array_failed).
 */
void meta_record_failed_locked (struct array *a) __attribute__((nonnull));

/* meta.c: the slot the live state records as out of service, or -1. */
int meta_live_out (const struct array *a) __attribute__((nonnull));

/* meta.c: note what the superblocks now say about the slot out (right
 * after they were written, or at start before any write needs it).
 */
void meta_note_recorded (struct array *a) __attribute__((nonnull));

/* meta-bitmap.c: the bitmap's bits, after its header in bm_area. */
uint8_t *meta_bitmap_bits (struct meta *m) __attribute__((nonnull));

/* meta-bitmap.c: after a bitmap write reached every member in service:
 * what it held is durable.
 */
void meta_bits_durable (struct meta *m) __attribute__((nonnull));

/* meta-bitmap.c: the component grown from `from` to `to` sectors
 * (meta_resize), with meta.lock held and no write in flight: the bitmap
 * covers `to` (md's md_bitmap_resize: its chunk doubled until the bits
 * fit its room -- md_bitmap_space -- each old chunk's state carried into
 * the new one; its buffers widened to match), and with mark the chunks
 * of the new space are set, so that a resync taken up from the
 * superblocks visits all of it (md sets only chunks wholly past the old
 * ones: md_bitmap_resize's NEEDED_MASK).  In memory; the caller writes
 * it out.  0, or -ENOSPC (it would pass the bad-block log or the data)
 * or -ENOMEM, nothing changed (err set).
 */
int meta_bitmap_grow (struct array *a, uint64_t from, uint64_t to,
                      bool mark, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* The bitmap's area stamped with the array's events and encoded into
 * m->bm_area (meta_bitmap_stamp), and the write of that area to member
 * slot (meta_bitmap_op); meta.lock held.
 */
void meta_bitmap_stamp (struct meta *m) __attribute__((nonnull));
struct io_op meta_bitmap_op (const struct meta *m, unsigned slot)
  __attribute__((nonnull));

#endif /* ARRAY_META_INT_H */
