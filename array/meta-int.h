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
 * service and recorded faulty.  0 or -errno (err set).
 */
int meta_write_out (struct array *a, bool sb, struct array_err *err)
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

#endif /* ARRAY_META_INT_H */
