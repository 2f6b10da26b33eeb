/* raid/badblocks.c -- md's bad-block table and log (see badblocks.h). */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "raid/badblocks.h"
#include "raid/le.h"

#define WORD_LEN_BITS 10u       /* md.c super_1_load: bb & 0x3ff, bb >> 10 */
#define WORD_LEN_MASK ((1u << WORD_LEN_BITS) - 1)

/* ---- Blocks and sectors ---- */

static uint64_t
range_end (const struct md_bb_range *r)
{
  return r->start + r->len;
}

/* Blocks to sectors, saturating at UINT64_MAX. */
static uint64_t
to_sectors (uint64_t blocks, unsigned shift)
{
  return blocks > (UINT64_MAX >> shift) ? UINT64_MAX : blocks << shift;
}

/* The blocks holding sectors [sector, end): start rounded down, end up
 * (badblocks_set, badblocks_check).
 */
static void
blocks_covering (unsigned shift, uint64_t sector, uint64_t end,
                 uint64_t *s, uint64_t *e)
{
  *s = sector >> shift;
  *e = ((end - 1) >> shift) + 1;
}

/* The first entry ending after block b (entries are disjoint and sorted,
 * so their ends rise too); t->count if none.
 */
static unsigned
first_ending_after (const struct md_bb_table *t, uint64_t b)
{
  unsigned lo = 0, hi = t->count;

  while (lo < hi) {
    unsigned mid = lo + (hi - lo) / 2;

    if (range_end (&t->r[mid]) > b)
      hi = mid;
    else
      lo = mid + 1;
  }
  return lo;
}

/* The first entry at or after i starting after block b. */
static unsigned
first_starting_after (const struct md_bb_table *t, unsigned i, uint64_t b)
{
  while (i < t->count && t->r[i].start <= b)
    i++;
  return i;
}

/* Replace entries [i, j) by n new ones (room checked by the caller). */
static void
splice (struct md_bb_table *t, unsigned i, unsigned j, unsigned n)
{
  memmove (&t->r[i + n], &t->r[j], (t->count - j) * sizeof t->r[0]);
  t->count = t->count - (j - i) + n;
}

void
md_bb_init (struct md_bb_table *t, unsigned shift)
{
  t->shift = shift;
  t->count = 0;
}

/* ---- The table: md's operations ---- */

int
md_bb_add (struct md_bb_table *t, uint64_t sector, uint64_t sectors)
{
  uint64_t s, e, n;
  unsigned i, j;

  if (sectors == 0 || sector > UINT64_MAX - sectors)
    return -EINVAL;
  blocks_covering (t->shift, sector, sector + sectors, &s, &e);
  /* Every entry overlapping or touching [s, e) joins it, and so (one
   * run of bad blocks) does every entry touching those.
   */
  i = first_ending_after (t, s == 0 ? 0 : s - 1);
  j = first_starting_after (t, i, e);
  if (i < j && t->r[i].start < s)
    s = t->r[i].start;
  if (i < j && range_end (&t->r[j - 1]) > e)
    e = range_end (&t->r[j - 1]);
  for (; i > 0 && range_end (&t->r[i - 1]) == s; i--)
    s = t->r[i - 1].start;
  for (; j < t->count && t->r[j].start == e; j++)
    e = range_end (&t->r[j]);
  n = (e - s + MD_BB_MAX_LEN - 1) / MD_BB_MAX_LEN;
  if (n > MD_BB_MAX - (t->count - (j - i)))
    return -ENOSPC;
  splice (t, i, j, (unsigned) n);
  for (unsigned k = 0; k < n; k++, s += MD_BB_MAX_LEN)
    t->r[i + k] = (struct md_bb_range) {
      s, (uint32_t) (e - s < MD_BB_MAX_LEN ? e - s : MD_BB_MAX_LEN) };
  return 0;
}

int
md_bb_clear (struct md_bb_table *t, uint64_t sector, uint64_t sectors)
{
  uint64_t unit = UINT64_C (1) << t->shift, s, e;
  struct md_bb_range head, tail;
  unsigned i, j, n = 0;

  if (sectors == 0 || sector > UINT64_MAX - sectors ||
      sector > UINT64_MAX - (unit - 1))
    return sectors == 0 ? 0 : -EINVAL;
  s = (sector + unit - 1) >> t->shift;      /* badblocks_clear: start up, */
  e = (sector + sectors) >> t->shift;       /* end down */
  if (e <= s)
    return 0;
  i = first_ending_after (t, s);
  j = first_starting_after (t, i, e - 1);
  if (i == j)
    return 0;
  head = (struct md_bb_range) { t->r[i].start, 0 };
  if (head.start < s)
    head.len = (uint32_t) (s - head.start);
  tail = (struct md_bb_range) { e, 0 };
  if (range_end (&t->r[j - 1]) > e)
    tail.len = (uint32_t) (range_end (&t->r[j - 1]) - e);
  n = (head.len > 0) + (tail.len > 0);
  if (n > MD_BB_MAX - (t->count - (j - i)))
    return -ENOSPC;               /* only a split of one entry gets here */
  splice (t, i, j, n);
  if (head.len > 0)
    t->r[i++] = head;
  if (tail.len > 0)
    t->r[i] = tail;
  return 0;
}

enum md_bb_hit
md_bb_check (const struct md_bb_table *t, uint64_t sector, uint64_t sectors,
             uint64_t *first_bad, uint64_t *bad_run)
{
  uint64_t s, e, end, first, run_end;
  unsigned i;

  if (sectors == 0 || t->count == 0)
    return MD_BB_NONE;
  end = sector > UINT64_MAX - sectors ? UINT64_MAX : sector + sectors;
  blocks_covering (t->shift, sector, end, &s, &e);
  i = first_ending_after (t, s);
  if (i == t->count || t->r[i].start >= e)
    return MD_BB_NONE;
  first = to_sectors (t->r[i].start, t->shift);
  first = first > sector ? first : sector;
  run_end = range_end (&t->r[i]);
  while (++i < t->count && t->r[i].start <= run_end && run_end < e)
    run_end = range_end (&t->r[i]);     /* touching entries: one run */
  run_end = to_sectors (run_end, t->shift);
  run_end = run_end < end ? run_end : end;
  if (first_bad != NULL)
    *first_bad = first;
  if (bad_run != NULL)
    *bad_run = run_end - first;
  return first == sector && run_end == end ? MD_BB_ALL : MD_BB_SOME;
}

uint64_t
md_bb_sectors (const struct md_bb_table *t)
{
  uint64_t blocks = 0;

  for (unsigned i = 0; i < t->count; i++)
    blocks += t->r[i].len;
  return to_sectors (blocks, t->shift);
}

/* ---- The log area ---- */

bool
md_bblog_area (const struct md_sb *sb, uint64_t *sector, uint32_t *sectors)
{
  int64_t start = (int64_t) sb->super_offset + sb->bblog_offset;

  if (sb->bblog_offset == 0 || sb->bblog_size == 0 || start < 0)
    return false;
  if (sector != NULL)
    *sector = (uint64_t) start;
  if (sectors != NULL)
    *sectors = sb->bblog_size;
  return true;
}

/* Do [a, a + alen) and [b, b + blen) share a sector? */
static bool
overlaps (uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
  return a < b + blen && b < a + alen;
}

/* The log lies inside the member and clear of the superblock and data. */
static int
check_place (const struct md_sb *sb, uint64_t member_sectors, char *why,
             size_t wl)
{
  int64_t start = (int64_t) sb->super_offset + sb->bblog_offset;
  uint64_t sb_sectors = (256 + 2 * (uint64_t) sb->max_dev + 511) / 512;

  if (start < 0 || (uint64_t) start + sb->bblog_size > member_sectors)
    return le_bad (why, wl, -EBADMSG, "bad-block log at offset %" PRId32
                   " (%" PRIu16 " sectors) lies outside the member (%"
                   PRIu64 " sectors)", sb->bblog_offset, sb->bblog_size,
                   member_sectors);
  if (overlaps ((uint64_t) start, sb->bblog_size, sb->super_offset,
                sb_sectors))
    return le_bad (why, wl, -EBADMSG, "bad-block log at offset %" PRId32
                   " overlaps the superblock", sb->bblog_offset);
  if (overlaps ((uint64_t) start, sb->bblog_size, sb->data_offset,
                sb->data_size))
    return le_bad (why, wl, -EBADMSG, "bad-block log at sector %" PRId64
                   " overlaps the data (sectors %" PRIu64 " to %" PRIu64 ")",
                   start, sb->data_offset, sb->data_offset + sb->data_size);
  return 0;
}

int
md_bblog_check (const struct md_sb *sb, uint64_t member_sectors, char *why,
                size_t wl)
{
  bool present = sb->feature_map & MD_FEATURE_BAD_BLOCKS;

  if (sb->bblog_offset == 0 || sb->bblog_size == 0)
    return !present ? 0 : le_bad (why, wl, -EBADMSG, "bad blocks are "
                                  "present (feature 0x8) but there is no "
                                  "log (offset %" PRId32 ", %" PRIu16
                                  " sectors)", sb->bblog_offset,
                                  sb->bblog_size);
  if (sb->bblog_size > MD_BB_LOG_SECTORS)
    return le_bad (why, wl, -EBADMSG, "bad-block log of %" PRIu16 " sectors"
                   ": md reads at most %u", sb->bblog_size,
                   MD_BB_LOG_SECTORS);
  if (sb->bblog_shift > MD_BB_MAX_SHIFT)
    return le_bad (why, wl, -EBADMSG, "bad-block log shift %" PRIu8 " is "
                   "larger than %u", sb->bblog_shift, MD_BB_MAX_SHIFT);
  return check_place (sb, member_sectors, why, wl);
}

/* Word k of a log: one entry into t, or why not. */
static int
load_word (struct md_bb_table *t, uint64_t w, unsigned k,
           uint64_t member_sectors, char *why, size_t wl)
{
  uint64_t start = to_sectors (w >> WORD_LEN_BITS, t->shift);
  uint64_t len = to_sectors (w & WORD_LEN_MASK, t->shift);

  if (len == 0)
    return le_bad (why, wl, -EBADMSG, "bad-block log entry %u (%#" PRIx64
                   ") has length 0", k, w);
  if (start > member_sectors || len > member_sectors - start)
    return le_bad (why, wl, -EBADMSG, "bad-block log entry %u (sector %"
                   PRIu64 ", %" PRIu64 " sectors) lies past the end of the "
                   "member (%" PRIu64 " sectors)", k, start, len,
                   member_sectors);
  if (md_bb_add (t, start, len) < 0)
    return le_bad (why, wl, -ENOSPC, "bad-block log entry %u: more bad "
                   "ranges than md's table holds (%u)", k, MD_BB_MAX);
  return 0;
}

int
md_bblog_decode (const struct md_sb *sb, const void *area,
                 uint64_t member_sectors, struct md_bb_table *t, char *why,
                 size_t wl)
{
  int r;

  md_bb_init (t, sb->bblog_shift <= MD_BB_MAX_SHIFT ? sb->bblog_shift : 0);
  if ((r = md_bblog_check (sb, member_sectors, why, wl)) < 0)
    return r;
  if (!(sb->feature_map & MD_FEATURE_BAD_BLOCKS))
    return 0;
  if (area == NULL)
    return le_bad (why, wl, -EINVAL, "bad-block log not read");
  for (unsigned k = 0; k < sb->bblog_size * 512u / 8; k++) {
    uint64_t w = le_get ((const uint8_t *) area + 8 * k, 8);

    if (w == MD_BB_UNUSED)
      break;
    if (w != 0 && (r = load_word (t, w, k, member_sectors, why, wl)) < 0)
      return r;
  }
  return 0;
}

unsigned
md_bblog_list (const void *area, size_t bytes, unsigned shift,
               struct md_bb_entry *out, unsigned max)
{
  unsigned n = 0;

  for (size_t k = 0; k + 8 <= bytes; k += 8, n++) {
    uint64_t w = le_get ((const uint8_t *) area + k, 8);

    if (w == MD_BB_UNUSED)
      break;
    if (out != NULL && n < max)
      out[n] = (struct md_bb_entry) {
        to_sectors (w >> WORD_LEN_BITS, shift),
        to_sectors (w & WORD_LEN_MASK, shift) };
  }
  return n;
}

int
md_bblog_encode (const struct md_sb *sb, const struct md_bb_table *t,
                 void *area)
{
  uint8_t *b = area;

  if (!md_bblog_area (sb, NULL, NULL) || t->shift != sb->bblog_shift)
    return -EINVAL;
  if (t->count > sb->bblog_size * 512u / 8)
    return -ENOSPC;
  for (unsigned i = 0; i < t->count; i++)
    if (t->r[i].start >> (64 - WORD_LEN_BITS) != 0)
      return -EINVAL;
  memset (b, 0xff, sb->bblog_size * 512u);
  for (unsigned i = 0; i < t->count; i++)
    le_put (b + 8 * i, 8, t->r[i].start << WORD_LEN_BITS | t->r[i].len);
  return 0;
}

int
md_bblog_feature (const struct md_sb *sb, const struct md_bb_table *t,
                  uint32_t *feature_map)
{
  *feature_map &= ~MD_FEATURE_BAD_BLOCKS;
  if (t->count == 0)
    return 0;
  *feature_map |= MD_FEATURE_BAD_BLOCKS;
  if (!md_bblog_area (sb, NULL, NULL) ||
      t->count > sb->bblog_size * 512u / 8)
    return -ENOSPC;
  return 0;
}

void
md_bblog_place (struct md_sb *sb, int64_t room_offset, uint64_t room_sectors)
{
  int64_t so = (int64_t) sb->super_offset, doff = (int64_t) sb->data_offset;

  sb->bblog_shift = 0;
  sb->bblog_size = MD_BB_LOG_SECTORS;
  if (doff >= so + room_offset + (int64_t) room_sectors + MD_BB_LOG_SECTORS)
    sb->bblog_offset = (int32_t) (room_offset + (int64_t) room_sectors);
  else if (doff >= so + 16)
    sb->bblog_offset = (int32_t) (doff - MD_BB_LOG_SECTORS - so);
  else
    sb->bblog_offset = 0, sb->bblog_size = 0;
}

bool
md_bblog_update (struct md_sb *sb, int64_t room_offset, uint64_t room_sectors)
{
  int64_t so = (int64_t) sb->super_offset, doff = (int64_t) sb->data_offset;
  int64_t at = so + 8;

  if (md_bblog_area (sb, NULL, NULL) || so >= doff)
    return false;
  if (room_sectors && room_offset > 0)
    at = room_offset + (int64_t) room_sectors;
  /* mdadm: "too close to bitmap, and room to grow" */
  while (at < so + 8 + 32 * 2 && at + 8 + 8 <= doff)
    at += 8;
  /* mdadm's own test is at + 8 <= doff; this one, stricter: the log
   * ends before the data.
   */
  if (so + at + MD_BB_LOG_SECTORS > doff)
    return false;
  sb->bblog_offset = (int32_t) at;
  sb->bblog_size = MD_BB_LOG_SECTORS;
  sb->bblog_shift = 0;
  return true;
}
