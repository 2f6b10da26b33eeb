/* tests/unit/test-badblocks-log.c -- raid/badblocks.c's log, one rule at a
 * time: every check of a corrupt log (md_bblog_check, md_bblog_decode)
 * with the reason it must give, the feature bit's rule, the encoder's
 * refusals, and mdadm's placement of a new log against every superblock
 * mdadm made in tests/unit/fixtures.  Read raid/badblocks.c beside it.
 */
#include <config.h>

#undef NDEBUG
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "raid/badblocks.h"
#include "raid/mdbitmap.h"
#include "raid/mdsb.h"
#include "tests/unit/mdfx.h"

#define MEMBER 131072u                 /* sectors */

static struct md_bb_table t;           /* 8 KiB: not on Criterion's stack */

/* mdadm's superblock of a 64 MiB member: log at +16 (sectors 24..31),
 * data at 2048 to the end.
 */
static struct md_sb
base (uint32_t features)
{
  return (struct md_sb) {
    .feature_map = features, .super_offset = 8, .max_dev = 128,
    .data_offset = 2048, .data_size = MEMBER - 2048,
    .bblog_offset = 16, .bblog_size = 8 };
}

/* An area of all-ones with these words first. */
static void
area_of (uint8_t area[4096], const uint64_t *w, unsigned n)
{
  memset (area, 0xff, 4096);
  for (unsigned i = 0; i < n; i++)
    for (unsigned b = 0; b < 8; b++)
      area[8 * i + b] = (uint8_t) (w[i] >> (8 * b));
}

struct bad_log {
  const char *what;
  int32_t offset;
  uint16_t size;
  uint8_t shift;
  uint32_t features;
  uint64_t word;                      /* the first word of the area */
  int err;
  const char *why;
};

#define W(start, len) ((uint64_t) (start) << 10 | (len))
static const struct bad_log cases[] = {
  { "mdadm's log", 16, 8, 0, 8, W (2100, 8), 0, "" },
  { "no bit, no log", 0, 0, 0, 0, 0, 0, "" },
  { "bit, offset 0", 0, 8, 0, 8, W (2100, 8), -EBADMSG, "no log" },
  { "bit, size 0", 16, 0, 0, 8, W (2100, 8), -EBADMSG, "no log" },
  { "size 9", 16, 9, 0, 8, W (2100, 8), -EBADMSG, "at most 8" },
  { "size 9, no bit", 16, 9, 0, 0, 0, -EBADMSG, "at most 8" },
  { "shift 17", 16, 8, 17, 8, W (2100, 8), -EBADMSG, "shift 17" },
  { "shift 16", 16, 8, 16, 8, W (1, 1), 0, "" },
  { "before the member", -9, 8, 0, 8, W (2100, 8), -EBADMSG,
    "outside the member" },
  { "past the member", MEMBER - 8 - 7, 8, 0, 0, 0, -EBADMSG,
    "outside the member" },
  { "on the superblock", -1, 8, 0, 8, W (2100, 8), -EBADMSG,
    "overlaps the superblock" },
  { "just after the superblock", 1, 8, 0, 8, W (2100, 8), 0, "" },
  { "into the data", 2036, 8, 0, 0, 0, -EBADMSG, "overlaps the data" },
  { "just before the data", 2032, 8, 0, 8, W (2100, 8), 0, "" },
  { "entry of length 0", 16, 8, 0, 8, W (2100, 0), -EBADMSG,
    "entry 0 (0x20d000) has length 0" },
  { "entry past the member", 16, 8, 0, 8, W (MEMBER - 4, 8), -EBADMSG,
    "past the end of the member" },
  { "entry to the member's end", 16, 8, 0, 8, W (MEMBER - 8, 8), 0, "" },
  { "shifted entry past the member", 16, 8, 4, 8, W (MEMBER / 16, 1),
    -EBADMSG, "past the end" },
  { "entry of 1023 sectors", 16, 8, 0, 8, W (4096, 1023), 0, "" },
  { "all-ones first: empty", 16, 8, 0, 8, MD_BB_UNUSED, 0, "" },
  { "a corrupt entry without the bit", 16, 8, 0, 0, W (1, 0), 0, "" },
};

Test (badblocks_log, checks)
{
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    const struct bad_log *c = &cases[i];
    struct md_sb sb = base (c->features);
    uint8_t area[4096];
    char why[256] = "";
    int r;

    sb.bblog_offset = c->offset, sb.bblog_size = c->size;
    sb.bblog_shift = c->shift;
    area_of (area, &c->word, 1);
    r = md_bblog_decode (&sb, area, MEMBER, &t, why, sizeof why);
    cr_expect_eq (r, c->err, "%s: %d (%s), want %d", c->what, r, why,
                  c->err);
    cr_expect (c->err == 0 || strstr (why, c->why) != NULL,
               "%s: \"%s\" does not say \"%s\"", c->what, why, c->why);
  }
}

/* Zero words are skipped (recent md), words after the first all-ones
 * one are not read, an entry of 1023 sectors is two in the table.
 */
Test (badblocks_log, words)
{
  static const uint64_t w[] = {
    W (100, 8), 0, W (200, 1023), MD_BB_UNUSED, W (5000, 8) };
  struct md_sb sb = base (MD_FEATURE_BAD_BLOCKS);
  struct md_bb_entry e[8];
  uint8_t area[4096];

  area_of (area, w, 5);
  cr_assert_eq (md_bblog_decode (&sb, area, MEMBER, &t, NULL, 0), 0);
  cr_assert_eq (t.count, 3);
  cr_expect (t.r[0].start == 100 && t.r[0].len == 8);
  cr_expect (t.r[1].start == 200 && t.r[1].len == 512);
  cr_expect (t.r[2].start == 712 && t.r[2].len == 511);
  cr_expect_eq (md_bblog_list (area, 4096, 0, e, 8), 3);
  cr_expect (e[1].sector == 0 && e[1].sectors == 0, "mdadm lists zeros");
  cr_expect_eq (md_bblog_list (area, 4096, 2, e, 8), 3);
  cr_expect (e[2].sector == 800 && e[2].sectors == 4092, "shifted");
}

/* 512 words of 1023 sectors need 1024 entries: more than md's table. */
Test (badblocks_log, more_than_the_table)
{
  struct md_sb sb = base (MD_FEATURE_BAD_BLOCKS);
  uint64_t w[512];
  uint8_t area[4096];
  char why[256] = "";

  for (unsigned i = 0; i < 512; i++)
    w[i] = W (2048 + 2048 * (uint64_t) i, 1023);
  sb.data_size = 2048 * 513;
  area_of (area, w, 512);
  cr_expect_eq (md_bblog_decode (&sb, area, 2048 * 514, &t, why, sizeof why),
                -ENOSPC);
  cr_expect (strstr (why, "entry 256") != NULL, "%s", why);
}

/* super_1_sync: the bit is set exactly when the table is not empty, and
 * a table that no log can hold fails the member.
 */
Test (badblocks_log, feature_rule)
{
  struct md_sb sb = base (0);
  uint32_t fm = MD_FEATURE_BAD_BLOCKS | MD_FEATURE_BITMAP_OFFSET;

  md_bb_init (&t, 0);
  cr_expect_eq (md_bblog_feature (&sb, &t, &fm), 0);
  cr_expect_eq (fm, MD_FEATURE_BITMAP_OFFSET);
  cr_assert_eq (md_bb_add (&t, 2100, 8), 0);
  cr_expect_eq (md_bblog_feature (&sb, &t, &fm), 0);
  cr_expect_eq (fm, MD_FEATURE_BITMAP_OFFSET | MD_FEATURE_BAD_BLOCKS);
  sb.bblog_offset = 0;
  cr_expect_eq (md_bblog_feature (&sb, &t, &fm), -ENOSPC);
  sb = base (0);
  sb.bblog_size = 1;                  /* 64 entries */
  for (unsigned i = 1; i < 65; i++)
    cr_assert_eq (md_bb_add (&t, 4096 + 2 * (uint64_t) i, 1), 0);
  cr_expect_eq (md_bblog_feature (&sb, &t, &fm), -ENOSPC);
}

Test (badblocks_log, encode_refuses)
{
  struct md_sb sb = base (0);
  uint8_t area[4096];

  md_bb_init (&t, 1);
  cr_expect_eq (md_bblog_encode (&sb, &t, area), -EINVAL, "shift");
  md_bb_init (&t, 0);
  sb.bblog_offset = 0;
  cr_expect_eq (md_bblog_encode (&sb, &t, area), -EINVAL, "no log");
  sb = base (0);
  cr_assert_eq (md_bb_add (&t, UINT64_C (1) << 54, 1), 0);
  cr_expect_eq (md_bblog_encode (&sb, &t, area), -EINVAL, "54 bits");
  md_bb_init (&t, 0);
  sb.bblog_size = 1;
  for (unsigned i = 0; i < 65; i++)
    cr_assert_eq (md_bb_add (&t, 2 * (uint64_t) i, 1), 0);
  cr_expect_eq (md_bblog_encode (&sb, &t, area), -ENOSPC);
}

/* ---- Where mdadm puts a new log (super1.c write_init_super1) ---- */

static void
place (uint64_t data_offset, int64_t room_offset, uint64_t room,
       int32_t want_offset, uint16_t want_size)
{
  struct md_sb sb = { .super_offset = 8, .data_offset = data_offset,
                      .bblog_shift = 3 };

  md_bblog_place (&sb, room_offset, room);
  cr_expect (sb.bblog_offset == want_offset && sb.bblog_size == want_size &&
             sb.bblog_shift == 0, "data at %" PRIu64 ", room %" PRIu64
             ": +%" PRId32 " %" PRIu16 ", want +%" PRId32 " %" PRIu16,
             data_offset, room, sb.bblog_offset, sb.bblog_size, want_offset,
             want_size);
}

Test (badblocks_log, place_rules)
{
  place (2048, 8, 8, 16, 8);
  place (32, 8, 8, 16, 8);            /* just fits after the room */
  place (31, 8, 8, 15, 8);            /* just before the data instead */
  place (24, 8, 8, 8, 8);
  place (23, 8, 8, 0, 0);             /* none */
  place (4096, 8, 2048, 2056, 8);     /* after a PPL area */
  place (2048, 8, 2048, 2032, 8);
}

/* The room mdadm gave a fixture's member: its bitmap's area, or what
 * choose_bm_space gives the component size.
 */
static uint64_t
room_of (const struct mdfx *fx, const struct md_sb *sb)
{
  struct md_bitmap_sb bm;
  uint8_t block[MDFX_BLOCK];

  if (!fx->bitmap)
    return md_bitmap_room (sb->size);
  mdfx_block (fx, 0, "bm", block);
  cr_assert_eq (md_bitmap_decode (block, sb->set_uuid, &bm, NULL, 0), 0);
  return md_bitmap_area_bytes (&bm) / 512;
}

Test (badblocks_log, place_as_mdadm_did)
{
  uint8_t block[MDFX_BLOCK];
  struct md_sb sb, ours;

  for (size_t f = 0; f < mdfx_count; f++) {
    const struct mdfx *fx = &mdfx_all[f];

    mdfx_block (fx, 0, "sb", block);
    cr_assert_eq (md_sb_decode (block, mdfx_sectors (fx), &sb, NULL, 0), 0);
    ours = sb;
    ours.bblog_offset = 0, ours.bblog_size = 0, ours.bblog_shift = 7;
    md_bblog_place (&ours, 8, room_of (fx, &sb));
    cr_expect (ours.bblog_offset == sb.bblog_offset &&
               ours.bblog_size == sb.bblog_size && ours.bblog_shift ==
               sb.bblog_shift, "%s: +%" PRId32 " %" PRIu16 ", mdadm +%"
               PRId32 " %" PRIu16, fx->name, ours.bblog_offset,
               ours.bblog_size, sb.bblog_offset, sb.bblog_size);
  }
}
