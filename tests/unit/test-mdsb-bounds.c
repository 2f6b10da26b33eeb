/* tests/unit/test-mdsb-bounds.c -- every check of md_sb_decode, one at a
 * time: a real superblock (mdadm's, tests/unit/fixtures) with one field
 * changed and the checksum made right again must get exactly that check's
 * error (-EINVAL not md, -EBADMSG corrupt, -ENOTSUP unsupported) and an
 * explanation that names the problem; the values just inside each bound
 * must decode.  Read raid/mdsb.c beside it: one case (or more) per check.
 */
#include <config.h>

#undef NDEBUG
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "raid/mdsb.h"
#include "tests/unit/mdfx.h"

/* The base: ls3-64-bitmap member 0.  Its values, which the cases below
 * are written around, are asserted first.
 */
#define BASE "ls3-64-bitmap"
#define BASE_MEMBER 131072u         /* sectors */

struct set { uint16_t off, size; uint64_t val; };

struct bound {
  const char *what;
  struct set sets[9];
  int err;                          /* 0: must decode */
  const char *why;                  /* in the explanation */
};

static void
put (uint8_t *b, unsigned off, unsigned size, uint64_t v)
{
  for (unsigned i = 0; i < size; i++, v >>= 8)
    b[off + i] = (uint8_t) v;
}

static void
base_block (uint8_t block[MDFX_BLOCK])
{
  struct md_sb sb;

  mdfx_block (mdfx_get (BASE), 0, "sb", block);
  cr_assert_eq (md_sb_decode (block, BASE_MEMBER, &sb, NULL, 0), 0);
  cr_assert (sb.max_dev == 128 && sb.dev_number == 0 && sb.chunksize == 128
             && sb.data_offset == 2048 && sb.data_size == 129024
             && sb.size == 129024 && sb.feature_map == 1
             && sb.bitmap_offset == 8 && sb.raid_disks == 3
             && mdfx_sectors (mdfx_get (BASE)) == BASE_MEMBER,
             BASE " is not the superblock the bound tests were written for");
}

/* Applies the case, re-checksums, decodes; checks the error and why. */
static void
run_bound (const struct bound *c, uint64_t member, int recsum)
{
  uint8_t block[MDFX_BLOCK];
  struct md_sb sb;
  char why[256] = "";
  int r;

  base_block (block);
  for (unsigned i = 0; i < 9 && c->sets[i].size; i++)
    put (block, c->sets[i].off, c->sets[i].size, c->sets[i].val);
  if (recsum)
    put (block, 216, 4, md_sb_csum (block));
  r = md_sb_decode (block, member, &sb, why, sizeof why);
  cr_expect_eq (r, c->err, "%s: %d (%s), want %d", c->what, r, why, c->err);
  if (c->err != 0) {
    cr_expect (why[0] != '\0', "%s: no explanation", c->what);
    cr_expect (strstr (why, c->why) != NULL, "%s: \"%s\" does not say \"%s\"",
               c->what, why, c->why);
  }
}

#define F(off, size, val) { off, size, (uint64_t) (val) }
#define ONE(what, off, size, val, err, why) \
  { what, { F (off, size, val) }, err, why }

static const struct bound frame[] = {
  ONE ("magic 0", 0, 4, 0, -EINVAL, "no md superblock"),
  ONE ("magic + 1", 0, 4, 0xa92b4efd, -EINVAL, "a92b4efd"),
  ONE ("major version 0", 4, 4, 0, -EBADMSG, "major version 0"),
  ONE ("major version 2", 4, 4, 2, -EBADMSG, "major version 2"),
  ONE ("max_dev 1921", 220, 4, 1921, -EBADMSG, "max_dev 1921"),
  ONE ("max_dev 2^32-1", 220, 4, UINT32_MAX, -EBADMSG, "max_dev 4294967295"),
  ONE ("max_dev 1920", 220, 4, 1920, 0, ""),
  ONE ("max_dev 1", 220, 4, 1, 0, ""),
  ONE ("pad0", 12, 4, 1, -EBADMSG, "pad0"),
  ONE ("pad0 high byte", 15, 1, 0x80, -EBADMSG, "pad0"),
  ONE ("pad3 first byte", 224, 1, 1, -EBADMSG, "pad3"),
  ONE ("pad3 last byte", 255, 1, 0x80, -EBADMSG, "pad3"),
};

static const struct bound placement[] = {
  ONE ("super_offset 0", 144, 8, 0, -EBADMSG, "at sector 0"),
  ONE ("super_offset 16", 144, 8, 16, -EBADMSG, "at sector 16"),
  /* (bitmap and bad-block log off: they would lie in the data) */
  { "data_offset 9 (bitmap off)", { F (128, 8, 9), F (8, 4, 0),
    F (188, 4, 0) }, 0, "" },
  { "data_offset 9, the log in the data", { F (128, 8, 9), F (8, 4, 0) },
    -EBADMSG, "bad-block log at sector 24 overlaps the data" },
  { "data_offset 8", { F (128, 8, 8), F (8, 4, 0), F (188, 4, 0) },
    -EBADMSG, "data offset 8 overlaps" },
  { "data_offset 9 with max_dev 129", { F (128, 8, 9), F (8, 4, 0),
    F (220, 4, 129), F (188, 4, 0) }, -EBADMSG, "data offset 9 overlaps" },
  { "data_offset 10 with max_dev 129", { F (128, 8, 10), F (8, 4, 0),
    F (220, 4, 129), F (188, 4, 0) }, 0, "" },
  ONE ("data_size 9", 136, 8, 9, -EBADMSG, "does not fit the member"),
  ONE ("data_size 10", 136, 8, 10, -EBADMSG, "component size"),
  ONE ("data_size one past the member", 136, 8, 129025, -EBADMSG,
       "does not fit the member"),
  ONE ("data_size 2^64-1", 136, 8, UINT64_MAX, -EBADMSG, "does not fit"),
  ONE ("data_offset one past the fit", 128, 8, 2049, -EBADMSG,
       "does not fit the member"),
  ONE ("data_offset past the member", 128, 8, BASE_MEMBER + 1, -EBADMSG,
       "does not fit the member"),
  ONE ("data_offset 2^64-1", 128, 8, UINT64_MAX, -EBADMSG, "does not fit"),
  ONE ("bitmap_offset 0", 96, 4, 0, -EBADMSG, "bitmap offset 0"),
  ONE ("bitmap_offset -8", 96, 4, (uint32_t) -8, -EBADMSG, "bitmap offset -8"),
  ONE ("bitmap at the data", 96, 4, 2040, -EBADMSG, "bitmap offset 2040"),
  ONE ("bitmap just before the data", 96, 4, 2039, 0, ""),
  ONE ("bitmap_offset 0, no bitmap", 8, 4, 0, 0, ""),
  ONE ("dev_number = max_dev", 160, 4, 128, -EBADMSG, "dev_number 128"),
  ONE ("dev_number 2^32-1", 160, 4, UINT32_MAX, -EBADMSG, "dev_number"),
  ONE ("dev_number max_dev - 1", 160, 4, 127, 0, ""),
};

static const struct bound features[] = {
  ONE ("feature 0x2000", 8, 4, 0x2001, -EBADMSG, "unknown feature bits 0x2000"),
  ONE ("feature 0x80000000", 8, 4, 0x80000001, -EBADMSG, "0x80000000"),
  ONE ("reshape active, level 0", 8, 4, 1 | 4, -ENOTSUP, "other than growing"),
  /* The bad-block log: its place is checked here, its entries by
   * raid/badblocks.c (test-badblocks-log).
   */
  ONE ("bad blocks", 8, 4, 1 | 8, 0, ""),
  { "bad blocks, no log", { F (8, 4, 1 | 8), F (188, 4, 0) }, -EBADMSG,
    "no log" },
  ONE ("log of 9 sectors", 186, 2, 9, -EBADMSG, "at most 8"),
  ONE ("log before the member", 188, 4, (uint32_t) -9, -EBADMSG,
       "outside the member"),
  ONE ("log on the superblock", 188, 4, (uint32_t) -1, -EBADMSG,
       "overlaps the superblock"),
  ONE ("log into the data", 188, 4, 2036, -EBADMSG, "overlaps the data"),
  ONE ("log just before the data", 188, 4, 2032, 0, ""),
  ONE ("log shift 17", 185, 1, 17, -EBADMSG, "shift 17"),
  ONE ("log of 0 sectors: none", 186, 2, 0, 0, ""),
  ONE ("replacement", 8, 4, 1 | 16, 0, ""),   /* md's hot replace */
  /* Without RESHAPE_ACTIVE md ignores both (super_1_load). */
  ONE ("reshape backwards, no reshape", 8, 4, 1 | 32, 0, ""),
  ONE ("new offset, no reshape", 8, 4, 1 | 64, 0, ""),
  ONE ("clustered", 8, 4, 1 | 256, -ENOTSUP, "not supported"),
  ONE ("journal", 8, 4, 1 | 512, -ENOTSUP, "not supported"),
  /* The partial parity log (md_p.h, ppl_validate_rdev), on a base
   * whose data starts at sector 2048.
   */
  ONE ("PPL with a bitmap", 8, 4, 1 | 1024, -EBADMSG,
       "together with a bitmap"),
  ONE ("multiple PPLs with a bitmap", 8, 4, 1 | 2048, -EBADMSG,
       "together with a bitmap"),
  ONE ("both PPL flavours", 8, 4, 1024 | 2048, -EBADMSG, "other flavour"),
  { "PPL before the data", { F (8, 4, 1024), F (96, 2, 8), F (98, 2, 2024) },
    0, "" },
  { "multiple PPLs before the data", { F (8, 4, 2048), F (96, 2, 8),
    F (98, 2, 2024) }, 0, "" },
  { "PPL into the data", { F (8, 4, 1024), F (96, 2, 8), F (98, 2, 2048) },
    -EBADMSG, "overlaps the data" },
  { "PPL on the superblock", { F (8, 4, 1024), F (96, 2, 0),
    F (98, 2, 1024) }, -EBADMSG, "overlaps the superblock" },
  { "PPL of one header", { F (8, 4, 1024), F (96, 2, 8), F (98, 2, 15) },
    -EBADMSG, "holds no entry" },
  { "PPL before the member", { F (8, 4, 1024), F (96, 2, (uint16_t) -16),
    F (98, 2, 8 + 8) }, -EBADMSG, "before the member" },
  ONE ("recovery bitmap", 8, 4, 1 | 128, 0, ""),
  ONE ("raid0 layout", 8, 4, 1 | 4096, 0, ""),
  { "recovery offset = size", { F (8, 4, 3), F (152, 8, 129024) }, 0, "" },
  { "recovery offset past size", { F (8, 4, 3), F (152, 8, 129025) },
    -EBADMSG, "recovery offset 129025" },
  ONE ("recovery offset past size, no feature", 152, 8, 129025, 0, ""),
};

/* A grow from 3 to 4 members (raid/reshape.h) and what breaks it: the
 * base made 4 raid disks, reshape active, the data offset moved down by
 * 384 sectors (mdadm's least for a 64K chunk), level, layout and chunk
 * kept.
 */
#define GROW(feat, delta, newoff, pos) \
  F (8, 4, feat), F (92, 4, 4), F (100, 4, 5), F (104, 8, pos), \
  F (112, 4, delta), F (116, 4, 2), F (120, 4, 128), \
  F (124, 4, (uint32_t) (newoff))
static const struct bound reshape[] = {
  { "grow at 0", { GROW (1 | 4 | 64, 1, -384, 0) }, 0, "" },
  { "grow at one new stripe", { GROW (1 | 4 | 64, 1, -384, 384) }, 0, "" },
  { "grow at the end", { GROW (1 | 4 | 64, 1, -384, 129024 * 3) }, 0, "" },
  { "grow past the end", { GROW (1 | 4 | 64, 1, -384, 129024 * 3 + 384) },
    -EBADMSG, "reshape position" },
  { "grow off a stripe", { GROW (1 | 4 | 64, 1, -384, 256) }, -EBADMSG,
    "reshape position 256" },
  { "grow with a backup file", { GROW (1 | 4, 1, 0, 0) }, 0, "" },
  { "grow with a backup file, new_offset ignored", { GROW (1 | 4, 1, 384, 0) },
    0, "" },
  { "grow moving the data up", { GROW (1 | 4 | 64, 1, 384, 0) }, -ENOTSUP,
    "moves the data offset up" },
  { "grow backwards", { GROW (1 | 4 | 32 | 64, 1, -384, 0) }, -ENOTSUP,
    "backwards" },
  { "reshape keeping the count", { GROW (1 | 4 | 64, 0, -384, 0) },
    -ENOTSUP, "delta_disks 0" },
  { "grow from 2", { GROW (1 | 4 | 64, 2, -384, 0) }, -EBADMSG,
    "delta_disks 2 leaves" },
  { "grow over the superblock", { GROW (1 | 4 | 64, 1, -2040, 0) },
    -EBADMSG, "over the superblock" },
  { "grow changing the chunk", { GROW (1 | 4 | 64, 1, -384, 0),
    F (120, 4, 256) }, -ENOTSUP, "chunk 256" },
};

static const struct bound geometry[] = {
  ONE ("level 0", 72, 4, 0, -ENOTSUP, "RAID level 0"),
  ONE ("level 1", 72, 4, 1, -ENOTSUP, "RAID level 1"),
  ONE ("level 4", 72, 4, 4, -ENOTSUP, "RAID level 4"),
  ONE ("level 6", 72, 4, 6, -ENOTSUP, "RAID level 6"),
  ONE ("level 10", 72, 4, 10, -ENOTSUP, "RAID level 10"),
  ONE ("level -1 (linear)", 72, 4, (uint32_t) -1, -ENOTSUP, "RAID level -1"),
  ONE ("layout 4 (parity-first)", 76, 4, 4, 0, ""),
  ONE ("layout 5 (parity-last)", 76, 4, 5, 0, ""),
  ONE ("layout 6", 76, 4, 6, -ENOTSUP, "layout 6"),
  ONE ("layout 16 (RAID-6's)", 76, 4, 16, -ENOTSUP, "layout 16"),
  ONE ("layout 2^32-1", 76, 4, UINT32_MAX, -ENOTSUP, "layout 4294967295"),
  ONE ("layout 0", 76, 4, 0, 0, ""),
  ONE ("layout 3", 76, 4, 3, 0, ""),
  ONE ("chunk 0", 88, 4, 0, -EBADMSG, "chunk of 0 sectors"),
  ONE ("chunk 96 sectors", 88, 4, 96, -EBADMSG, "chunk of 96 sectors"),
  ONE ("chunk 2 KiB", 88, 4, 4, -EBADMSG, "chunk of 4 sectors"),
  ONE ("chunk 128 MiB", 88, 4, 262144, -EBADMSG, "chunk of 262144 sectors"),
  ONE ("chunk 2^31 sectors", 88, 4, 1u << 31, -EBADMSG, "chunk of"),
  ONE ("chunk 4 KiB", 88, 4, 8, 0, ""),
  ONE ("raid disks 2", 92, 4, 2, -ENOTSUP, "2 raid disks"),
  ONE ("raid disks 0", 92, 4, 0, -ENOTSUP, "0 raid disks"),
  ONE ("raid disks 33", 92, 4, 33, -ENOTSUP, "33 raid disks"),
  ONE ("raid disks 2^32-1", 92, 4, UINT32_MAX, -ENOTSUP, "raid disks"),
  ONE ("raid disks 32", 92, 4, 32, 0, ""),
  ONE ("size 0", 80, 8, 0, -EBADMSG, "component size 0"),
  ONE ("size below a chunk", 80, 8, 127, -EBADMSG, "component size 127"),
  ONE ("size one chunk", 80, 8, 128, 0, ""),
  ONE ("size past data_size", 80, 8, 129025, -EBADMSG, "component size 129025"),
  ONE ("size 2^64-1", 80, 8, UINT64_MAX, -EBADMSG, "component size"),
};

static void
run_table (const struct bound *t, size_t n)
{
  for (size_t i = 0; i < n; i++)
    run_bound (&t[i], BASE_MEMBER, 1);
}

#define RUN(t) run_table (t, sizeof t / sizeof t[0])

Test (mdsb_bounds, frame) { RUN (frame); }
Test (mdsb_bounds, placement) { RUN (placement); }
Test (mdsb_bounds, features) { RUN (features); }
Test (mdsb_bounds, reshape) { RUN (reshape); }
Test (mdsb_bounds, geometry) { RUN (geometry); }

/* The member the superblock was found on must hold its data area. */
Test (mdsb_bounds, member_size)
{
  static const struct bound same = { "unchanged", { { 0 } }, 0, "" };
  static const struct bound small = { "member too small", { { 0 } },
                                      -EBADMSG, "(131071 sectors)" };
  static const struct bound tiny = { "member of 0 sectors", { { 0 } },
                                     -EBADMSG, "(0 sectors)" };

  run_bound (&same, BASE_MEMBER, 0);
  run_bound (&same, UINT64_MAX, 0);
  run_bound (&small, BASE_MEMBER - 1, 0);
  run_bound (&tiny, 0, 0);
}

/* One flipped bit anywhere in the checksummed bytes, checksum left as it
 * was: never accepted.  The magic is checked first (-EINVAL), then the
 * version and max_dev, then the checksum (-EBADMSG).  Bytes after the
 * roles are not md's: a change there is no error.
 */
Test (mdsb_bounds, flipped_bit_with_old_checksum)
{
  uint8_t block[MDFX_BLOCK];
  struct md_sb sb;
  char why[256];

  for (unsigned off = 0; off < 512 + 64; off++)
    for (unsigned bit = 0; bit < 8; bit += 3) {
      int r;

      base_block (block);
      block[off] ^= (uint8_t) (1u << bit);
      why[0] = '\0';
      r = md_sb_decode (block, BASE_MEMBER, &sb, why, sizeof why);
      if (off < 4)
        cr_expect_eq (r, -EINVAL, "byte %u bit %u: %d", off, bit, r);
      else if (off < 512)
        cr_expect_eq (r, -EBADMSG, "byte %u bit %u: %d (%s)", off, bit, r, why);
      else
        cr_expect_eq (r, 0, "byte %u bit %u: %d (%s)", off, bit, r, why);
      if (off >= 8 && off < 512 && (off < 220 || off >= 224))
        cr_expect (strstr (why, "checksum") != NULL, "byte %u bit %u: %s",
                   off, bit, why);
    }
}

/* why may be NULL, or too short: cut, always terminated. */
Test (mdsb_bounds, why_buffer)
{
  uint8_t block[MDFX_BLOCK];
  struct md_sb sb;
  char why[8];

  base_block (block);
  put (block, 72, 4, 6);
  put (block, 216, 4, md_sb_csum (block));
  cr_expect_eq (md_sb_decode (block, BASE_MEMBER, &sb, NULL, 0), -ENOTSUP);
  memset (why, 'x', sizeof why);
  cr_expect_eq (md_sb_decode (block, BASE_MEMBER, &sb, why, 5), -ENOTSUP);
  cr_expect_eq (why[4], '\0');
  cr_expect_eq (why[5], 'x', "wrote past why_len");
}
