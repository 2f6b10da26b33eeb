/* tools/examine-bb.c -- raid5ctl examine: a member's md bad-block log
 * (raid/badblocks.h): read, judged as assembly judges it, and listed as
 * mdadm --examine-badblocks lists it (mdadm 4.2 super1.c
 * examine_badblocks_super1, Examine.c ExamineBadblocks).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "raid/badblocks.h"
#include "tools/examine.h"

/* mdadm lists logs of up to this many sectors (examine_badblocks_super1);
 * md reads only MD_BB_LOG_SECTORS.
 */
#define MDADM_BBLOG_MAX 100u

/* mdadm's "is a log configured" (examine_badblocks_super1). */
static bool
mdadm_has_log (const struct md_sb *sb)
{
  return sb->bblog_size != 0 && sb->bblog_size <= MDADM_BBLOG_MAX &&
    sb->bblog_offset != 0;
}

static int
bb_fail (struct exam *e, int err, const char *why)
{
  snprintf (e->bb_why, sizeof e->bb_why, "%s", why);
  return e->bb_err = err;
}

/* The words as stored, for mdadm's listing. */
static int
list_words (struct exam *e, const uint8_t *area, size_t bytes)
{
  unsigned n = md_bblog_list (area, bytes, e->sb.bblog_shift, NULL, 0);

  e->bb_list = calloc (n ? n : 1, sizeof *e->bb_list);
  if (e->bb_list == NULL)
    return bb_fail (e, -ENOMEM, "out of memory");
  e->bb_words = md_bblog_list (area, bytes, e->sb.bblog_shift, e->bb_list,
                               n);
  return 0;
}

/* The table assembly would load, and what it holds. */
static void
judge_table (struct exam *e, const uint8_t *area)
{
  struct md_bb_table *t = malloc (sizeof *t);
  char why[200];

  if (t == NULL) {
    bb_fail (e, -ENOMEM, "out of memory");
    return;
  }
  if ((e->bb_err = md_bblog_decode (&e->sb, area, e->size / 512, t, why,
                                    sizeof why)) < 0)
    bb_fail (e, e->bb_err, why);
  else {
    e->bb_ranges = t->count;
    e->bb_sectors = md_bb_sectors (t);
  }
  free (t);
}

void
examine_read_bblog (struct exam *e, const struct io_member *d)
{
  int64_t start = (int64_t) e->sb.super_offset + e->sb.bblog_offset;
  size_t bytes = (size_t) e->sb.bblog_size * 512;
  uint8_t *area;
  int r;

  e->has_bblog = mdadm_has_log (&e->sb);
  if (!e->has_bblog || !(e->sb.feature_map & MD_FEATURE_BAD_BLOCKS)) {
    judge_table (e, NULL);          /* only the log's place is checked */
    return;
  }
  if (start < 0 || (uint64_t) start * 512 + bytes > e->size) {
    judge_table (e, NULL);          /* md_bblog_check says why */
    if (e->bb_err == 0)
      bb_fail (e, -EBADMSG, "the log lies outside the disk");
    return;
  }
  if ((area = malloc (bytes)) == NULL) {
    bb_fail (e, -ENOMEM, "out of memory");
    return;
  }
  if ((r = io_member_pread (d, area, bytes, (uint64_t) start * 512)) < 0)
    bb_fail (e, r, "cannot read the log");
  else if (list_words (e, area, bytes) == 0)
    judge_table (e, area);
  free (area);
}

void
examine_print_badblocks (const struct exam *e)
{
  if (!mdadm_has_log (&e->sb))
    printf ("No bad-blocks list configured on %s\n", e->path);
  else if (!(e->sb.feature_map & MD_FEATURE_BAD_BLOCKS))
    printf ("Bad-blocks list is empty in %s\n", e->path);
  else {
    printf ("Bad-blocks on %s:\n", e->path);
    for (unsigned i = 0; i < e->bb_words; i++)
      printf ("%20" PRIu64 " for %d sectors\n", e->bb_list[i].sector,
              (int) e->bb_list[i].sectors);
  }
}
