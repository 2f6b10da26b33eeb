/* array/badblocks.c -- members' md bad-block tables (see badblocks.h). */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "array/badblocks.h"
#include "array/object.h"

/* The log's bytes from m, in *area (aligned, allocated). */
static int
read_log (const struct io_member *m, const struct md_sb *sb,
          const char *what, uint8_t **area, struct array_err *err)
{
  uint64_t sector;
  uint32_t sectors;
  int r;

  md_bblog_area (sb, &sector, &sectors);
  if (posix_memalign ((void **) area, 4096, (size_t) sectors * 512) != 0)
    return -ENOMEM;
  r = io_member_pread (m, *area, (size_t) sectors * 512, sector * 512);
  if (r < 0)
    array_set_err (err, "%s (%s): md bad-block log: read at %" PRIu64
                   ": %s", what, m->path, sector * 512, strerror (-r));
  return r;
}

int
array_bb_read (const struct io_member *m, const struct md_sb *sb,
               const char *what, struct md_bb_table **out,
               struct array_err *err)
{
  uint8_t *area = NULL;
  char why[200];
  int r = 0;

  *out = NULL;
  if (!md_bblog_area (sb, NULL, NULL))
    return 0;
  if ((*out = malloc (sizeof **out)) == NULL)
    return -ENOMEM;
  if (sb->feature_map & MD_FEATURE_BAD_BLOCKS)
    r = read_log (m, sb, what, &area, err);
  if (r == 0 &&
      (r = md_bblog_decode (sb, area, m->size / 512, *out, why,
                            sizeof why)) < 0)
    array_set_err (err, "%s (%s): md %s", what, m->path, why);
  free (area);
  if (r < 0) {
    free (*out);
    *out = NULL;
  }
  return r;
}

/* How many tables list something; lock held for writing (or no
 * request running).
 */
static void
recount (struct array *a)
{
  unsigned n = 0;

  for (unsigned i = 0; i < R5_MAX_MEMBERS; i++)
    n += a->bb.table[i] != NULL && a->bb.table[i]->count > 0;
  a->bb.listed = n;
  a->bb.version++;
}

int
array_bb_init (struct array *a)
{
  int r = pthread_rwlock_init (&a->bb.lock, NULL);

  a->bb.lock_made = r == 0;
  return -r;
}

void
array_bb_attach (struct array *a, unsigned slot, struct md_bb_table *t)
{
  pthread_rwlock_wrlock (&a->bb.lock);
  free (a->bb.table[slot]);
  a->bb.table[slot] = t;
  a->bb.gen[slot] = health_gen (&a->health, slot);
  a->bb.write_error[slot] = false;
  recount (a);
  pthread_rwlock_unlock (&a->bb.lock);
}

void
array_bb_new_member (struct array *a, unsigned slot)
{
  struct md_bb_table *t = NULL;

  if (a->meta.enabled && md_bblog_area (&a->meta.live.common, NULL, NULL) &&
      (t = malloc (sizeof *t)) != NULL)
    md_bb_init (t, a->meta.live.common.bblog_shift);
  array_bb_attach (a, slot, t);
}

void
array_bb_free (struct array *a)
{
  for (unsigned i = 0; i < R5_MAX_MEMBERS; i++) {
    free (a->bb.table[i]);
    a->bb.table[i] = NULL;
  }
  if (a->bb.lock_made)
    pthread_rwlock_destroy (&a->bb.lock);
  a->bb.lock_made = false;
}

/* Slot's table if it is the member in service's (its generation). */
static struct md_bb_table *
table_of (const struct array *a, unsigned slot)
{
  struct md_bb_table *t = slot < R5_MAX_MEMBERS ? a->bb.table[slot] : NULL;

  return t && a->bb.gen[slot] == health_gen (&a->health, slot) ? t : NULL;
}

bool
array_bb_has_log (const struct array *a, unsigned slot)
{
  struct array *w = (struct array *) a;       /* the lock only */
  bool has;

  pthread_rwlock_rdlock (&w->bb.lock);
  has = table_of (a, slot) != NULL;
  pthread_rwlock_unlock (&w->bb.lock);
  return has;
}

/* Add (record) or clear member bytes [off, off + len) in slot's table,
 * then write its log.
 */
static int
change (struct array *a, unsigned slot, uint64_t off, uint64_t len,
        bool add, struct array_err *err)
{
  uint64_t first = off / 512, n = (off + len + 511) / 512 - first;
  struct md_bb_table *t;
  int r;

  pthread_rwlock_wrlock (&a->bb.lock);
  if ((t = table_of (a, slot)) == NULL)
    r = -ENOSPC;
  else if ((r = add ? md_bb_add (t, first, n)
                    : md_bb_clear (t, (off + 511) / 512,
                                   (off + len) / 512 - (off + 511) / 512)) == 0)
    recount (a);
  pthread_rwlock_unlock (&a->bb.lock);
  if (r == -ENOSPC && add)
    array_set_err (err, "member %u (%s): %s: cannot record %" PRIu64
                   " bad sectors at sector %" PRIu64, slot,
                   array_member_path (a, slot),
                   t ? "its md bad-block log is full"
                     : "it has no md bad-block log", n, first);
  else if (r == -ENOSPC)
    array_set_err (err, "member %u (%s): %" PRIu64 " sectors at sector %"
                   PRIu64 " stay listed: clearing them would split an entry "
                   "of its md bad-block log, which is full", slot,
                   array_member_path (a, slot), n, first);
  if (r == 0)
    r = meta_bb_write (a, slot, err);
  return r;
}

int
array_bb_record (struct array *a, unsigned slot, uint64_t off, uint64_t len,
                 struct array_err *err)
{
  int r = change (a, slot, off, len, true, err);

  if (r == 0)
    array_log (a, ARRAY_LOG_ERROR, "member %u (%s): %" PRIu64 " bytes at "
               "member offset %" PRIu64 " recorded in its md bad-block log: "
               "served from the other members from now on", slot,
               array_member_path (a, slot), len, off);
  return r;
}

int
array_bb_clear (struct array *a, unsigned slot, uint64_t off, uint64_t len,
                struct array_err *err)
{
  int r = change (a, slot, off, len, false, err);

  if (r == 0)
    array_log (a, ARRAY_LOG_NOTICE, "member %u (%s): %" PRIu64 " bytes at "
               "member offset %" PRIu64 " good again (written well): "
               "cleared from its md bad-block log", slot,
               array_member_path (a, slot), len, off);
  return r;
}

int
array_bb_encode (struct array *a, unsigned slot, const struct md_sb *sb,
                 void **area, size_t *len, uint64_t *at)
{
  uint64_t sector;
  uint32_t sectors;
  struct md_bb_table *t;
  int r = -ENOENT;

  if (!md_bblog_area (sb, &sector, &sectors))
    return -ENOENT;
  *len = (size_t) sectors * 512;
  *at = sector * 512;
  if (posix_memalign (area, 4096, *len) != 0)
    return -ENOMEM;
  pthread_rwlock_rdlock (&a->bb.lock);
  if ((t = table_of (a, slot)) != NULL)
    r = md_bblog_encode (sb, t, *area);
  pthread_rwlock_unlock (&a->bb.lock);
  if (r < 0) {
    free (*area);
    *area = NULL;
  }
  return r;
}

void
array_bb_count (struct array *a, unsigned slot, unsigned *ranges,
                uint64_t *sectors)
{
  const struct md_bb_table *t;

  pthread_rwlock_rdlock (&a->bb.lock);
  t = table_of (a, slot);
  *ranges = t ? t->count : 0;
  *sectors = t ? md_bb_sectors (t) : 0;
  pthread_rwlock_unlock (&a->bb.lock);
}

enum md_bb_hit
array_member_bad (const struct array *a, unsigned slot, uint64_t offset,
                  uint64_t len, uint64_t *first_bad)
{
  struct array *w = (struct array *) a;       /* the lock only */
  const struct md_bb_table *t;
  uint64_t first, end = offset + len;
  enum md_bb_hit h = MD_BB_NONE;

  if (a->bb.listed == 0 || len == 0 || end < offset)
    return MD_BB_NONE;
  pthread_rwlock_rdlock (&w->bb.lock);
  if ((t = table_of (a, slot)) != NULL)
    h = md_bb_check (t, offset / 512,
                     end / 512 + (end % 512 != 0) - offset / 512, &first,
                     NULL);
  pthread_rwlock_unlock (&w->bb.lock);
  if (h != MD_BB_NONE && first_bad != NULL)
    *first_bad = first * 512 > offset ? first * 512 : offset;
  return h;
}
