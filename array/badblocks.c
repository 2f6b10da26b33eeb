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

void
array_bb_attach (struct array *a, unsigned slot, struct md_bb_table *t)
{
  free (a->bb.table[slot]);
  a->bb.table[slot] = t;
  a->bb.gen[slot] = health_gen (&a->health, slot);
}

void
array_bb_free (struct array *a)
{
  for (unsigned i = 0; i < R5_MAX_MEMBERS; i++) {
    free (a->bb.table[i]);
    a->bb.table[i] = NULL;
  }
}

enum md_bb_hit
array_member_bad (const struct array *a, unsigned slot, uint64_t offset,
                  uint64_t len, uint64_t *first_bad)
{
  const struct md_bb_table *t = slot < R5_MAX_MEMBERS ? a->bb.table[slot]
                                                      : NULL;
  uint64_t first, end = offset + len;
  enum md_bb_hit h;

  if (t == NULL || len == 0 || end < offset ||
      a->bb.gen[slot] != health_gen (&a->health, slot))
    return MD_BB_NONE;
  h = md_bb_check (t, offset / 512, end / 512 + (end % 512 != 0) - offset / 512,
                   &first, NULL);
  if (h != MD_BB_NONE && first_bad != NULL)
    *first_bad = first * 512 > offset ? first * 512 : offset;
  return h;
}
