/* tests/unit/test-badblocks.c -- raid/badblocks.c: md's bad-block table
 * (add with merge, clear, look up) against hand-made cases, md's own
 * results and a model; the log against bytes made by hand and by kernel
 * md (tests/unit/fixtures/md/bb-ls3-64, make-bb-fixtures.sh: bad blocks
 * added through sysfs, the log md wrote, what mdadm --examine-badblocks
 * said); the log's checks; mdadm's placement against every mdadm-made
 * superblock of the fixtures.
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

#define BB_FX "bb-ls3-64"
#define BB_FX_SECTORS 131072u

static struct md_bb_table t;   /* 8 KiB: not on Criterion's stack */

struct rng { uint64_t lo, len; };

/* The table holds exactly these entries (sectors), in order. */
static void
expect_table (const struct md_bb_table *tb, const struct rng *want,
              unsigned n, const char *what)
{
  cr_expect_eq (tb->count, n, "%s: %u entries, want %u", what, tb->count, n);
  for (unsigned i = 0; i < n && i < tb->count; i++)
    cr_expect (tb->r[i].start << tb->shift == want[i].lo &&
               (uint64_t) tb->r[i].len << tb->shift == want[i].len,
               "%s: entry %u is (%" PRIu64 ", %" PRIu32 "), want (%" PRIu64
               ", %" PRIu64 ")", what, i, tb->r[i].start, tb->r[i].len,
               want[i].lo, want[i].len);
}

static void
add_all (struct md_bb_table *tb, const struct rng *r, unsigned n)
{
  for (unsigned i = 0; i < n; i++)
    cr_assert_eq (md_bb_add (tb, r[i].lo, r[i].len), 0, "add %u", i);
}

/* ---- The word: (start << 10) | length, not length - 1 ---- */

/* A superblock with a log of `sectors` at +16, data at 2048. */
static struct md_sb
sb_with_log (uint16_t sectors, uint32_t features)
{
  return (struct md_sb) {
    .feature_map = features, .super_offset = 8, .max_dev = 128,
    .data_offset = 2048, .data_size = BB_FX_SECTORS - 2048,
    .bblog_offset = 16, .bblog_size = sectors };
}

Test (badblocks, word_format_by_hand)
{
  static const uint8_t want[16] = {
    0x08, 0xd0, 0x20, 0, 0, 0, 0, 0,        /* 2100 << 10 | 8 */
    0x00, 0x02, 0x40, 0, 0, 0, 0, 0 };      /* 4096 << 10 | 512 */
  struct md_sb sb = sb_with_log (8, MD_FEATURE_BAD_BLOCKS);
  uint8_t area[4096];
  struct md_bb_entry e[4];
  char why[200] = "";

  md_bb_init (&t, 0);
  add_all (&t, (struct rng[]) { { 2100, 8 }, { 4096, 512 } }, 2);
  cr_assert_eq (md_bblog_encode (&sb, &t, area), 0);
  cr_expect_arr_eq (area, want, sizeof want);
  for (unsigned i = 16; i < sizeof area; i++)
    cr_assert_eq (area[i], 0xff, "byte %u after the entries", i);
  cr_assert_eq (md_bblog_list (area, sizeof area, 0, e, 4), 2);
  cr_expect (e[0].sector == 2100 && e[0].sectors == 8);
  cr_expect (e[1].sector == 4096 && e[1].sectors == 512);
  md_bb_init (&t, 3);
  cr_assert_eq (md_bblog_decode (&sb, area, BB_FX_SECTORS, &t, why,
                                 sizeof why), 0, "%s", why);
  expect_table (&t, (struct rng[]) { { 2100, 8 }, { 4096, 512 } }, 2,
                "decoded");
  cr_expect_eq (t.shift, 0, "the shift is the superblock's");
}

/* ---- What kernel md wrote ---- */

static void
load_fixture (unsigned i, struct md_sb *sb, uint8_t area[4096])
{
  uint8_t block[MDFX_BLOCK];
  char file[16], why[200] = "";

  snprintf (file, sizeof file, "m%u.sb", i);
  mdfx_read (BB_FX, file, block, sizeof block);
  cr_assert_eq (md_sb_decode (block, BB_FX_SECTORS, sb, why, sizeof why), 0,
                "m%u: %s", i, why);
  snprintf (file, sizeof file, "m%u.bblog", i);
  mdfx_read (BB_FX, file, area, 4096);
}

/* "SECTOR LENGTH" lines (sysfs) or mdadm's "%20llu for %d sectors". */
static unsigned
parse_list (const char *text, struct rng *out, unsigned max)
{
  unsigned n = 0;
  uint64_t a, b;

  for (const char *p = text; *p && n < max; p = strchrnul (p, '\n'),
       p += *p != '\0')
    if (sscanf (p, "%" SCNu64 " for %" SCNu64 " sectors", &a, &b) == 2 ||
        sscanf (p, "%" SCNu64 " %" SCNu64, &a, &b) == 2)
      out[n++] = (struct rng) { a, b };
  return n;
}

static unsigned
fixture_list (const char *file, struct rng *out, unsigned max)
{
  char *text = mdfx_text (BB_FX, file);
  unsigned n = parse_list (text, out, max);

  free (text);
  return n;
}

/* mdadm --examine-badblocks lists the words in the order md stored them
 * (md 6.1 stored the two pieces of an add longer than 512 sectors last
 * first); md_bblog_list gives the same.
 */
Test (badblocks, md_log_listed_as_mdadm_lists_it)
{
  struct rng want[32];
  struct md_bb_entry e[32];
  uint8_t area[4096];
  struct md_sb sb;
  unsigned n, got;

  load_fixture (1, &sb, area);
  cr_assert (sb.feature_map & MD_FEATURE_BAD_BLOCKS);
  n = fixture_list ("m1.examine-badblocks", want, 32);
  cr_assert_eq (n, 7, "mdadm listed %u", n);
  got = md_bblog_list (area, sb.bblog_size * 512u, sb.bblog_shift, e, 32);
  cr_assert_eq (got, n);
  for (unsigned i = 0; i < n; i++)
    cr_expect (e[i].sector == want[i].lo && e[i].sectors == want[i].len,
               "word %u: %" PRIu64 " for %" PRIu64 ", mdadm: %" PRIu64
               " for %" PRIu64, i, e[i].sector, e[i].sectors, want[i].lo,
               want[i].len);
}

/* The table md's log decodes to is md's (sysfs), sorted; its sectors are
 * the device sectors written to sysfs, NOT data_offset + them.
 */
Test (badblocks, md_log_decodes_to_md_table_in_device_sectors)
{
  struct rng sysfs[32];
  uint8_t area[4096];
  struct md_sb sb;
  char why[200] = "";
  unsigned n;

  load_fixture (1, &sb, area);
  cr_assert_eq (md_bblog_decode (&sb, area, BB_FX_SECTORS, &t, why,
                                 sizeof why), 0, "%s", why);
  n = fixture_list ("m1.sysfs", sysfs, 32);
  cr_assert_eq (n, 7);
  /* md 6.1 kept 8512+88 before 8000+512 (its insert of a long range). */
  cr_assert (sysfs[5].lo == 8512 && sysfs[6].lo == 8000);
  sysfs[5] = (struct rng) { 8000, 512 }, sysfs[6] = (struct rng) { 8512, 88 };
  expect_table (&t, sysfs, n, "md's log");
  cr_expect_eq (md_bb_check (&t, 2100, 8, NULL, NULL), MD_BB_ALL);
  cr_expect_eq (md_bb_check (&t, 2100 + sb.data_offset, 8, NULL, NULL),
                MD_BB_NONE);
  cr_expect_eq (md_bb_check (&t, 2100 - sb.data_offset, 8, NULL, NULL),
                MD_BB_NONE);
}

/* Members whose bit is clear: the log (zeros, as mdadm leaves it) is not
 * read, the table is empty.
 */
Test (badblocks, md_log_without_the_bit_is_empty)
{
  uint8_t area[4096];
  struct md_sb sb;

  load_fixture (0, &sb, area);
  cr_assert_eq (sb.feature_map & MD_FEATURE_BAD_BLOCKS, 0);
  cr_assert_eq (md_bblog_decode (&sb, area, BB_FX_SECTORS, &t, NULL, 0), 0);
  cr_expect_eq (t.count, 0);
  cr_assert_eq (md_bblog_decode (&sb, NULL, BB_FX_SECTORS, &t, NULL, 0), 0);
}

/* The sysfs writes replayed through md_bb_add give md's table, and what
 * md_bblog_encode writes for it decodes back to it.
 */
Test (badblocks, md_adds_replayed)
{
  struct md_sb sb = sb_with_log (8, MD_FEATURE_BAD_BLOCKS);
  struct rng added[32], md[32];
  uint8_t area[4096];
  unsigned n = fixture_list ("m1.sysfs-added", added, 32);
  unsigned m = fixture_list ("m1.sysfs", md, 32);

  cr_assert_eq (n, 11);
  md_bb_init (&t, 0);
  add_all (&t, added, n);
  md[5] = (struct rng) { 8000, 512 }, md[6] = (struct rng) { 8512, 88 };
  expect_table (&t, md, m, "replayed");
  cr_assert_eq (md_bblog_encode (&sb, &t, area), 0);
  md_bb_init (&t, 0);
  cr_assert_eq (md_bblog_decode (&sb, area, BB_FX_SECTORS, &t, NULL, 0), 0);
  expect_table (&t, md, m, "encoded and decoded");
}

/* ---- Adding: badblocks_set's merges ---- */

Test (badblocks, add_merges)
{
  /* Li Nan's report against md 6.1 (lore 20230504124828.679770-5): a
   * range covering several entries swallows them all.
   */
  md_bb_init (&t, 0);
  add_all (&t, (struct rng[]) { { 0, 1 }, { 3, 1 }, { 5, 1 }, { 0, 512 } }, 4);
  expect_table (&t, (struct rng[]) { { 0, 512 } }, 1, "covering");
  /* Longer than an entry: cut into 512s from its start. */
  md_bb_init (&t, 0);
  add_all (&t, (struct rng[]) { { 100, 1100 } }, 1);
  expect_table (&t, (struct rng[]) { { 100, 512 }, { 612, 512 },
                                     { 1124, 76 } }, 3, "long");
  /* Touching and overlapping neighbours join while the result fits. */
  md_bb_init (&t, 0);
  add_all (&t, (struct rng[]) { { 10, 10 }, { 30, 10 }, { 20, 10 } }, 3);
  expect_table (&t, (struct rng[]) { { 10, 30 } }, 1, "bridge");
  md_bb_init (&t, 0);
  add_all (&t, (struct rng[]) { { 0, 300 }, { 300, 300 } }, 2);
  expect_table (&t, (struct rng[]) { { 0, 512 }, { 512, 88 } }, 2,
                "joined past 512");
  /* A gap of one sector is not touching. */
  md_bb_init (&t, 0);
  add_all (&t, (struct rng[]) { { 10, 10 }, { 21, 10 } }, 2);
  expect_table (&t, (struct rng[]) { { 10, 10 }, { 21, 10 } }, 2, "gap");
  cr_expect_eq (md_bb_add (&t, 5, 0), -EINVAL);
  cr_expect_eq (md_bb_add (&t, UINT64_MAX, 2), -EINVAL);
  cr_expect_eq (md_bb_add (&t, UINT64_MAX - 1, 1), 0);
}

/* Blocks of 2^shift sectors: add and check round out, clear rounds in. */
Test (badblocks, shift_rounds_like_md)
{
  uint64_t first, run;

  md_bb_init (&t, 3);
  cr_assert_eq (md_bb_add (&t, 5, 5), 0);           /* sectors 5..9 */
  expect_table (&t, (struct rng[]) { { 0, 16 } }, 1, "blocks 0 and 1");
  cr_expect_eq (md_bb_check (&t, 15, 2, &first, &run), MD_BB_SOME);
  cr_expect (first == 15 && run == 1);
  cr_expect_eq (md_bb_check (&t, 0, 16, NULL, NULL), MD_BB_ALL);
  cr_expect_eq (md_bb_sectors (&t), 16);
  cr_assert_eq (md_bb_clear (&t, 1, 14), 0);        /* no whole block */
  cr_expect_eq (md_bb_sectors (&t), 16);
  cr_assert_eq (md_bb_clear (&t, 1, 15), 0);        /* block 1 */
  expect_table (&t, (struct rng[]) { { 0, 8 } }, 1, "block 0 left");
}

/* ---- Clearing ---- */

Test (badblocks, clear_trims_and_splits)
{
  md_bb_init (&t, 0);
  add_all (&t, (struct rng[]) { { 100, 100 }, { 300, 100 }, { 500, 10 } }, 3);
  cr_assert_eq (md_bb_clear (&t, 150, 10), 0);
  cr_assert_eq (md_bb_clear (&t, 190, 120), 0);     /* across two */
  cr_assert_eq (md_bb_clear (&t, 500, 10), 0);      /* a whole one */
  cr_assert_eq (md_bb_clear (&t, 600, 10), 0);      /* none */
  expect_table (&t, (struct rng[]) { { 100, 50 }, { 160, 30 }, { 310, 90 } },
                3, "cleared");
}

/* A full table takes no split (md drops the clear) but takes a clear
 * that removes or trims; an isolated add fails and changes nothing; an
 * add joining two entries works.
 */
Test (badblocks, full_table)
{
  md_bb_init (&t, 0);
  for (unsigned i = 0; i < MD_BB_MAX; i++)
    cr_assert_eq (md_bb_add (&t, 10 * (uint64_t) i, 4), 0);
  cr_assert_eq (t.count, MD_BB_MAX);
  cr_expect_eq (md_bb_add (&t, 10 * MD_BB_MAX, 1), -ENOSPC);
  cr_expect_eq (t.count, MD_BB_MAX);
  cr_expect_eq (md_bb_check (&t, 10 * MD_BB_MAX, 1, NULL, NULL), MD_BB_NONE);
  cr_expect_eq (md_bb_clear (&t, 21, 2), -ENOSPC);
  cr_expect_eq (md_bb_check (&t, 21, 2, NULL, NULL), MD_BB_ALL);
  cr_expect_eq (md_bb_clear (&t, 20, 2), 0);
  cr_expect_eq (md_bb_add (&t, 4, 6), 0);           /* 0..13 one entry */
  cr_expect_eq (t.count, MD_BB_MAX - 1);
  cr_expect_eq (t.r[0].len, 14);
}

/* ---- Looking up ---- */

Test (badblocks, check_answers)
{
  uint64_t first = 0, run = 0;

  md_bb_init (&t, 0);
  add_all (&t, (struct rng[]) { { 0, 512 }, { 512, 100 }, { 700, 10 } }, 3);
  cr_expect_eq (md_bb_check (&t, 500, 50, &first, &run), MD_BB_ALL);
  cr_expect (first == 500 && run == 50, "%" PRIu64 " %" PRIu64, first, run);
  cr_expect_eq (md_bb_check (&t, 400, 400, &first, &run), MD_BB_SOME);
  cr_expect (first == 400 && run == 212, "%" PRIu64 " %" PRIu64, first, run);
  cr_expect_eq (md_bb_check (&t, 650, 100, &first, &run), MD_BB_SOME);
  cr_expect (first == 700 && run == 10, "%" PRIu64 " %" PRIu64, first, run);
  cr_expect_eq (md_bb_check (&t, 612, 88, NULL, NULL), MD_BB_NONE);
  cr_expect_eq (md_bb_check (&t, 710, 1000, NULL, NULL), MD_BB_NONE);
  cr_expect_eq (md_bb_check (&t, 0, 0, NULL, NULL), MD_BB_NONE);
}

/* ---- Against a model: every sector of a small member ---- */

#define UNIVERSE 6000u
static uint8_t model[UNIVERSE];

static uint64_t
rnd (uint64_t *s)
{
  *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
  return *s;
}

/* Sorted, disjoint, 1..512 blocks each, exactly the model's bad sectors,
 * and (minimal: after adds only) the fewest entries possible.  Clears
 * trim entries in place, as md's do, so a run may then hold more.
 */
static void
check_against_model (const char *where, bool minimal)
{
  unsigned need = 0, unit = 1u << t.shift;
  uint64_t prev_end = 0;

  for (unsigned i = 0; i < t.count; i++) {
    cr_assert (t.r[i].len >= 1 && t.r[i].len <= MD_BB_MAX_LEN, "%s", where);
    cr_assert (i == 0 || t.r[i].start >= prev_end, "%s: entry %u", where, i);
    prev_end = t.r[i].start + t.r[i].len;
  }
  for (unsigned s = 0; s < UNIVERSE; s += unit) {
    unsigned len = 0;

    cr_assert_eq (md_bb_check (&t, s, 1, NULL, NULL) != MD_BB_NONE,
                  model[s], "%s: sector %u", where, s);
    while (s + len < UNIVERSE && model[s + len])
      len += unit;
    need += (len / unit + MD_BB_MAX_LEN - 1) / MD_BB_MAX_LEN;
    s += len;
  }
  cr_assert (minimal ? t.count == need : t.count >= need,
             "%s: %u entries, %u needed", where, t.count, need);
}

static void
check_random_ranges (uint64_t *seed, const char *where)
{
  for (unsigned k = 0; k < 200; k++) {
    uint64_t a = rnd (seed) % UNIVERSE, n = 1 + rnd (seed) % 700, f, r;
    uint64_t bad = 0, want_first = 0, want_run = 0;
    enum md_bb_hit h;

    if (a + n > UNIVERSE)
      n = UNIVERSE - a;
    for (uint64_t s = a; s < a + n; s++)
      if (model[s] && bad++ == 0)
        want_first = s;
    while (bad && want_first + want_run < a + n && model[want_first + want_run])
      want_run++;
    h = md_bb_check (&t, a, n, &f, &r);
    cr_assert_eq (h, bad == 0 ? MD_BB_NONE : bad == n ? MD_BB_ALL : MD_BB_SOME,
                  "%s: [%" PRIu64 ", +%" PRIu64 ")", where, a, n);
    cr_assert (bad == 0 || (f == want_first && r == want_run),
               "%s: [%" PRIu64 ", +%" PRIu64 "): first %" PRIu64 " run %"
               PRIu64 ", want %" PRIu64 " %" PRIu64, where, a, n, f, r,
               want_first, want_run);
  }
}

/* One random add or (if clears) clear, on the table and the model. */
static void
random_op (uint64_t *seed, unsigned shift, bool clears)
{
  uint64_t unit = UINT64_C (1) << shift, a = rnd (seed) % UNIVERSE;
  uint64_t n = 1 + rnd (seed) % (rnd (seed) % 4 ? 40 : 1200), lo, hi;
  bool add = !clears || rnd (seed) % 3 != 0;

  if (a + n > UNIVERSE)
    n = UNIVERSE - a;
  if (add) {
    cr_assert_eq (md_bb_add (&t, a, n), 0);
    lo = a / unit * unit, hi = (a + n + unit - 1) / unit * unit;
  }
  else {
    cr_assert_eq (md_bb_clear (&t, a, n), 0);
    lo = (a + unit - 1) / unit * unit, hi = (a + n) / unit * unit;
  }
  for (uint64_t s = lo; s < hi && s < UNIVERSE; s++)
    model[s] = add;
}

Test (badblocks, random_against_model)
{
  static const unsigned shifts[] = { 0, 2 };
  char where[64];

  for (unsigned seed0 = 1; seed0 <= 8; seed0++) {
    uint64_t seed = 0x9e3779b97f4a7c15ULL * seed0;
    unsigned shift = shifts[seed0 % 2];
    bool clears = seed0 > 4;

    md_bb_init (&t, shift);
    memset (model, 0, sizeof model);
    for (unsigned op = 0; op < (clears ? 400u : 60u); op++) {
      random_op (&seed, shift, clears);
      snprintf (where, sizeof where, "seed %u op %u", seed0, op);
      if (op % 10 == 0) {
        check_against_model (where, !clears);
        check_random_ranges (&seed, where);
      }
    }
  }
}

/* mdadm --update=bbl (super1.c UOPT_BBL) on a 1.2 member: after the
 * bitmap or PPL, at least 80 sectors from the superblock, and (here) never
 * over the data.
 */
Test (badblocks, update_bbl_where_mdadm_puts_it)
{
  static const struct {
    uint64_t data_offset;
    int64_t room_offset;
    uint64_t room;
    int32_t want;               /* 0: no log */
  } cases[] = {
    { 2048, 0, 0, 80 },         /* no bitmap: pushed to 8 + 64 past sb+8 */
    { 2048, 8, 8, 80 },         /* a 4 KiB bitmap: the same */
    { 2048, 8, 40, 80 },
    { 2048, 8, 200, 208 },      /* after a large bitmap */
    { 2048, 8, 248, 256 },      /* after a PPL of 248 sectors */
    { 96, 0, 0, 80 },           /* just room: ends at the data */
    { 95, 0, 0, 0 },            /* mdadm: 80, a sector over the data */
    { 87, 0, 0, 0 },            /* mdadm's loop stops at 72: over the data */
    { 24, 0, 0, 0 },            /* mdadm would put it over the data */
    { 8, 0, 0, 0 },             /* data at the superblock: none */
    { 264, 8, 248, 0 },         /* after the PPL no room */
  };

  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct md_sb sb = { .super_offset = 8,
                        .data_offset = cases[i].data_offset };
    bool ok = md_bblog_update (&sb, cases[i].room_offset, cases[i].room);

    cr_assert_eq (ok, cases[i].want != 0, "case %zu: %d", i, ok);
    cr_assert_eq (sb.bblog_offset, cases[i].want, "case %zu: offset %d", i,
                  sb.bblog_offset);
    cr_assert_eq (sb.bblog_size, ok ? MD_BB_LOG_SECTORS : 0, "case %zu", i);
    if (ok)
      cr_assert_leq (8 + sb.bblog_offset + sb.bblog_size, cases[i].data_offset,
                     "case %zu: over the data", i);
  }
  {
    struct md_sb sb = { .super_offset = 8, .data_offset = 2048,
                        .bblog_offset = 16, .bblog_size = 8 };

    cr_assert (!md_bblog_update (&sb, 0, 0), "a log is there already");
    cr_assert_eq (sb.bblog_offset, 16);
  }
}
