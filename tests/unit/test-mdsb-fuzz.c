/* tests/unit/test-mdsb-fuzz.c -- md_sb_decode and md_bitmap_decode fed
 * hundreds of thousands of mutated blocks, starting from the superblocks
 * and bitmaps real mdadm wrote (tests/unit/fixtures).
 *
 * Mutations: bit flips, fields set to random or boundary values, random
 * max_dev and roles, the tail of the block zeroed or filled (a short read),
 * random runs of bytes, pieces of another fixture, another member size;
 * most blocks are then re-checksummed, so the checks after the checksum
 * are reached too.  Every block lives in a heap buffer of exactly
 * MD_SB_BLOCK (MD_BITMAP_HEADER) bytes, so the sanitizer build catches any
 * read past it.
 *
 * For each block: decode fails with -EINVAL, -EBADMSG or -ENOTSUP and a
 * terminated explanation, or it returns a superblock that keeps every
 * bound the decoder promises, and encoding that superblock gives bytes
 * that decode to the same struct.
 *
 * Runs: a fixed seed, then $R5_FUZZ_SEED (or a random seed, printed).
 * (fuzz-md.c is the same for libFuzzer, run by hand.)
 * Each run stops after ITERATIONS blocks or $R5_FUZZ_SECONDS (default 4)
 * seconds (bitmaps: half), whichever comes first.  A failure names the
 * seed and the block number: R5_FUZZ_SEED=S reproduces it.
 */
#include <config.h>

#undef NDEBUG
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include <criterion/criterion.h>

#include "raid/geom.h"
#include "raid/mdbitmap.h"
#include "raid/mdsb.h"
#include "tests/unit/mdfx.h"

#define FIXED_SEED 0x5eedf00dcafe1234ull
#define SB_ITERATIONS 1000000
#define BM_ITERATIONS 500000

/* ---- random numbers (splitmix64) ---- */

static uint64_t rng;

static uint64_t
rnd (void)
{
  uint64_t z = (rng += 0x9e3779b97f4a7c15ull);

  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static uint64_t
below (uint64_t n)
{
  return rnd () % n;
}

static const uint64_t boundary[] = {
  0, 1, 2, 3, 4, 7, 8, 9, 10, 16, 24, 31, 32, 33, 127, 128, 129, 255, 256,
  511, 512, 1023, 1024, 1919, 1920, 1921, 2047, 2048, 4095, 4096, 65535,
  65536, 0xfeff, 0xff00, 0xfffd, 0xfffe, 0xffff, 131072, 0x7fffffff,
  0x80000000, 0xfffffffe, 0xffffffff, 1ull << 32, INT64_MAX,
  UINT64_MAX - 1, UINT64_MAX,
};
#define NBOUNDARY (sizeof boundary / sizeof boundary[0])

/* A value for a field now holding cur: boundary, near cur, or random. */
static uint64_t
value (uint64_t cur)
{
  switch (below (4)) {
  case 0: return boundary[below (NBOUNDARY)];
  case 1: return cur + below (5) - 2;
  case 2: return cur ^ (1ull << below (64));
  default: return rnd ();
  }
}

static uint64_t
get (const uint8_t *b, unsigned size)
{
  uint64_t v = 0;

  for (unsigned i = size; i-- > 0;)
    v = v << 8 | b[i];
  return v;
}

static void
put (uint8_t *b, unsigned size, uint64_t v)
{
  for (unsigned i = 0; i < size; i++, v >>= 8)
    b[i] = (uint8_t) v;
}

/* ---- seeds: every fixture member ---- */

struct seed {
  uint8_t sb[MDFX_BLOCK], bm[MDFX_BLOCK];
  uint64_t member;
  int has_bm;
};

static struct seed seeds[64];
static size_t nseeds;

static void
load_seeds (void)
{
  nseeds = 0;
  for (size_t f = 0; f < mdfx_count; f++)
    for (unsigned i = 0; i < mdfx_all[f].members; i++) {
      struct seed *s = &seeds[nseeds++];

      cr_assert_leq (nseeds, sizeof seeds / sizeof seeds[0]);
      mdfx_block (&mdfx_all[f], i, "sb", s->sb);
      s->member = mdfx_sectors (&mdfx_all[f]);
      s->has_bm = mdfx_all[f].bitmap;
      if (s->has_bm)
        mdfx_block (&mdfx_all[f], i, "bm", s->bm);
    }
}

/* Fields of the superblock that mutations aim at: offset, size. */
static const uint8_t sb_fields[][2] = {
  { 0, 4 }, { 4, 4 }, { 8, 4 }, { 12, 4 }, { 64, 8 }, { 72, 4 }, { 76, 4 },
  { 80, 8 }, { 88, 4 }, { 92, 4 }, { 96, 4 }, { 100, 4 }, { 104, 8 },
  { 112, 4 }, { 116, 4 }, { 120, 4 }, { 124, 4 }, { 128, 8 }, { 136, 8 },
  { 144, 8 }, { 152, 8 }, { 160, 4 }, { 164, 4 }, { 184, 1 }, { 185, 1 },
  { 186, 2 }, { 188, 4 }, { 192, 8 }, { 200, 8 }, { 208, 8 }, { 220, 4 },
  { 224, 8 }, { 248, 8 },
};
#define NSB_FIELDS (sizeof sb_fields / sizeof sb_fields[0])

static const uint8_t bm_fields[][2] = {
  { 0, 4 }, { 4, 4 }, { 8, 8 }, { 16, 8 }, { 24, 8 }, { 32, 8 }, { 40, 8 },
  { 48, 4 }, { 52, 4 }, { 56, 4 }, { 60, 4 }, { 64, 4 }, { 68, 4 },
  { 72, 8 }, { 248, 8 },
};
#define NBM_FIELDS (sizeof bm_fields / sizeof bm_fields[0])

/* ---- mutations of a block of len bytes ---- */

static void
flip_bits (uint8_t *b, size_t len)
{
  size_t span = below (4) ? (len < 512 ? len : 512) : len;

  for (uint64_t n = 1 + below (8); n > 0; n--) {
    size_t i = below (span);

    b[i] ^= (uint8_t) (1u << below (8));
  }
}

static void
set_field (uint8_t *b, const uint8_t (*fields)[2], size_t nfields)
{
  const uint8_t *f = fields[below (nfields)];

  put (b + f[0], f[1], value (get (b + f[0], f[1])));
}

/* max_dev anywhere near or past the limits, the roles made up. */
static void
max_dev_and_roles (uint8_t *b)
{
  uint32_t max_dev = below (2) ? (uint32_t) boundary[below (NBOUNDARY)]
                               : (uint32_t) below (2000);
  size_t roles = max_dev < MD_SB_MAX_DEV ? max_dev : MD_SB_MAX_DEV;

  put (b + 220, 4, max_dev);
  for (size_t i = 0; i < roles; i += 1 + below (8))
    put (b + 256 + 2 * i, 2, below (2) ? below (40) : value (0xffff));
}

/* What a short read leaves: the tail zero, 0xff or stale. */
static void
truncate_tail (uint8_t *b, size_t len)
{
  size_t from = below (4) ? below (len < 600 ? len : 600) : below (len);

  switch (below (3)) {
  case 0: memset (b + from, 0, len - from); break;
  case 1: memset (b + from, 0xff, len - from); break;
  default:
    for (size_t i = from; i < len; i++)
      b[i] = (uint8_t) rnd ();
  }
}

static void
random_run (uint8_t *b, size_t len)
{
  size_t at = below (len), n = 1 + below (64);

  for (size_t i = at; i < len && i < at + n; i++)
    b[i] = (uint8_t) rnd ();
}

static void
splice (uint8_t *b, size_t len, int bitmap)
{
  const struct seed *s = &seeds[below (nseeds)];
  const uint8_t *from = bitmap ? (s->has_bm ? s->bm : s->sb) : s->sb;
  size_t at = below (len), n = 1 + below (len - at);

  memcpy (b + at, from + at, n);
}

/* Feature bits, mostly known ones; with a rebuild, its offset near the
 * end; with a bitmap, its offset anywhere.
 */
static void
features (uint8_t *b)
{
  uint32_t f = (uint32_t) (below (4) ? below (MD_FEATURE_ALL + 1)
                          : below (2) | 2 * below (2) | 128 * below (2));

  put (b + 8, 4, below (8) ? f : (uint32_t) rnd ());
  if (f & MD_FEATURE_RECOVERY_OFFSET)
    put (b + 152, 8, get (b + 80, 8) + below (3) - 1);
  if (f & MD_FEATURE_BITMAP_OFFSET)
    put (b + 96, 4, value (get (b + 96, 4)));
}

static void
mutate_sb (uint8_t *b)
{
  for (uint64_t n = 1 + below (3); n > 0; n--)
    switch (below (10)) {
    case 0: case 1: flip_bits (b, MD_SB_BLOCK); break;
    case 2: case 3: case 4: set_field (b, sb_fields, NSB_FIELDS); break;
    case 5: max_dev_and_roles (b); break;
    case 6: truncate_tail (b, MD_SB_BLOCK); break;
    case 7: random_run (b, MD_SB_BLOCK); break;
    case 8: splice (b, MD_SB_BLOCK, 0); break;
    default: features (b); break;
    }
  if (below (4))
    put (b + 216, 4, md_sb_csum (b));
}

static uint64_t
member_size (const struct seed *s, const uint8_t *b)
{
  switch (below (8)) {
  case 0: return boundary[below (NBOUNDARY)];
  case 1: return get (b + 128, 8) + get (b + 136, 8) - below (2);
  case 2: return rnd ();
  default: return s->member;
  }
}

/* ---- what an accepted superblock must keep ---- */

static unsigned long nblock;
static uint64_t run_seed;

/* Per-block checks: Criterion counts every assertion that passes, which
 * costs more than decoding the block, so only a failure reaches it.
 */
static void fail_at (const char *cond, const char *fmt, ...)
  __attribute__((format (printf, 2, 3)));

static void
fail_at (const char *cond, const char *fmt, ...)
{
  char msg[512];
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  cr_assert_fail ("seed %#" PRIx64 " block %lu: %s (%s); R5_FUZZ_SEED=%#"
                  PRIx64 " repeats it", run_seed, nblock, msg, cond, run_seed);
}

#define CHECK(cond, ...) \
  do { if (!(cond)) fail_at (#cond, __VA_ARGS__); } while (0)

static void
check_sb_bounds (const struct md_sb *sb, const uint8_t *b, uint64_t member)
{
  uint64_t c = sb->chunksize, sb_sectors = (256 + 2 * (uint64_t) sb->max_dev
                                            + 511) / 512;
  uint32_t ppl = MD_FEATURE_PPL | MD_FEATURE_MULTIPLE_PPLS;
  uint32_t allowed = MD_FEATURE_BITMAP_OFFSET | MD_FEATURE_RECOVERY_OFFSET
    | MD_FEATURE_RECOVERY_BITMAP | MD_FEATURE_RAID0_LAYOUT | ppl
    | MD_FEATURE_RESHAPE_ACTIVE | MD_FEATURE_NEW_OFFSET
    | MD_FEATURE_RESHAPE_BACKWARDS | MD_FEATURE_REPLACEMENT
    | MD_FEATURE_BAD_BLOCKS;

  CHECK (get (b, 4) == MD_SB_MAGIC && get (b + 4, 4) == 1, "magic, version");
  CHECK (get (b + 216, 4) == md_sb_csum (b), "checksum");
  CHECK (sb->max_dev <= MD_SB_MAX_DEV, "max_dev %u", sb->max_dev);
  CHECK (sb->dev_number < sb->max_dev, "dev_number %u", sb->dev_number);
  CHECK (sb->super_offset == MD_SB_SECTOR, "super_offset");
  CHECK (sb->data_offset >= MD_SB_SECTOR + sb_sectors &&
         sb->data_offset <= member && sb->data_size >= 10 &&
         sb->data_size <= member - sb->data_offset,
         "data area [%" PRIu64 ", +%" PRIu64 ") on %" PRIu64 " sectors",
         sb->data_offset, sb->data_size, member);
  CHECK ((sb->feature_map & ~allowed) == 0, "features %#x", sb->feature_map);
  /* A reshape: only growing forward with the data offset moved down,
   * to a new stripe boundary within the new size.
   */
  if (sb->feature_map & MD_FEATURE_RESHAPE_ACTIVE) {
    uint64_t stripe = c * (sb->raid_disks - 1);

    CHECK ((sb->feature_map & MD_FEATURE_NEW_OFFSET) &&
           !(sb->feature_map & MD_FEATURE_RESHAPE_BACKWARDS) &&
           sb->new_offset < 0 && sb->delta_disks > 0 &&
           sb->raid_disks >= (uint32_t) sb->delta_disks + 3 &&
           (int64_t) sb->data_offset + sb->new_offset >= 16 &&
           sb->new_level == 5 && sb->new_layout == sb->layout &&
           sb->new_chunk == sb->chunksize &&
           sb->reshape_position % stripe == 0 &&
           sb->reshape_position <= sb->size / c * stripe,
           "reshape %#x delta %d new_offset %d at %" PRIu64, sb->feature_map,
           sb->delta_disks, sb->new_offset, sb->reshape_position);
  }
  /* A bad-block log: there with the bit, at most a page, on the member
   * outside the superblock and the data (raid/badblocks.h) -- after the
   * superblock, where mdadm puts it, or before it (bblog_offset is
   * signed; md's super_1_load reads it wherever it points).
   */
  if (sb->bblog_offset != 0 && sb->bblog_size != 0) {
    int64_t start = (int64_t) MD_SB_SECTOR + sb->bblog_offset;

    CHECK (start >= 0 &&
           (start >= MD_SB_SECTOR + (int64_t) sb_sectors ||
            start + sb->bblog_size <= MD_SB_SECTOR) &&
           (uint64_t) start + sb->bblog_size <= member &&
           sb->bblog_size <= 8 && sb->bblog_shift <= 16 &&
           ((uint64_t) start + sb->bblog_size <= sb->data_offset ||
            (uint64_t) start >= sb->data_offset + sb->data_size),
           "bad-block log [%" PRId64 ", +%u) shift %u with data [%" PRIu64
           ", +%" PRIu64 ") on %" PRIu64 " sectors", start, sb->bblog_size,
           sb->bblog_shift, sb->data_offset, sb->data_size, member);
  }
  else
    CHECK (!(sb->feature_map & MD_FEATURE_BAD_BLOCKS), "bad blocks, no log");
  /* A partial parity log: one flavour, no bitmap, its area on the member
   * outside the superblock and the data (md's ppl_validate_rdev).
   */
  if (sb->feature_map & ppl) {
    int64_t start = (int64_t) MD_SB_SECTOR + sb->ppl_offset;

    CHECK ((sb->feature_map & ppl) != ppl &&
           !(sb->feature_map & MD_FEATURE_BITMAP_OFFSET),
           "features %#x", sb->feature_map);
    CHECK (start >= 0 && (uint64_t) start + sb->ppl_size <= member &&
           ((uint64_t) start + sb->ppl_size <= sb->data_offset ||
            (uint64_t) start >= sb->data_offset + sb->data_size),
           "log [%" PRId64 ", +%u) with data [%" PRIu64 ", +%" PRIu64
           ") on %" PRIu64 " sectors", start, sb->ppl_size, sb->data_offset,
           sb->data_size, member);
  }
  if (sb->feature_map & MD_FEATURE_BITMAP_OFFSET)
    CHECK (sb->bitmap_offset > 0 &&
           MD_SB_SECTOR + (uint64_t) sb->bitmap_offset < sb->data_offset,
           "bitmap at %d", sb->bitmap_offset);
  CHECK (sb->level == 5 && sb->layout <= 5, "level %d layout %u", sb->level,
         sb->layout);
  CHECK (c != 0 && (c & (c - 1)) == 0 && c * 512 >= R5_MIN_CHUNK &&
         c * 512 <= R5_MAX_CHUNK, "chunk %" PRIu64, c);
  CHECK (sb->raid_disks >= R5_MIN_MEMBERS && sb->raid_disks <= R5_MAX_MEMBERS,
         "raid disks %u", sb->raid_disks);
  CHECK (sb->size >= c && sb->size <= sb->data_size, "size %" PRIu64, sb->size);
  if (sb->feature_map & MD_FEATURE_RECOVERY_OFFSET)
    CHECK (sb->recovery_offset <= sb->size, "recovery offset");
  CHECK (sb->set_name[32] == '\0', "name");
  CHECK (md_sb_role (sb) == sb->dev_roles[sb->dev_number], "role");
}

static void
check_sb_round_trip (const struct md_sb *sb, const uint8_t *b, uint64_t member)
{
  static const uint8_t zero[MD_SB_BLOCK];
  uint8_t *again = malloc (MD_SB_BLOCK), *third = malloc (MD_SB_BLOCK);
  struct md_sb two;
  size_t used = 256 + 2 * (size_t) sb->max_dev;
  char why[128] = "";
  int r;

  CHECK (again != NULL && third != NULL, "malloc");
  md_sb_encode (sb, again);
  r = md_sb_decode (again, member, &two, why, sizeof why);
  CHECK (r == 0, "re-encoded: %d (%s)", r, why);
  /* decode (encode (sb)) == sb, compared through the encoder (field by
   * field, blind to padding), which the bytes below check against b.
   */
  md_sb_encode (&two, third);
  CHECK (memcmp (again, third, MD_SB_BLOCK) == 0, "decode (encode (sb)) != sb");
  CHECK (memcmp (two.dev_roles, sb->dev_roles, sizeof two.dev_roles) == 0,
         "roles");
  /* Byte for byte, but for the name after its NUL (md_sb_encode writes the
   * name only: test-mdsb.c, name_tail_round_trip) and so the checksum.
   */
  CHECK (memcmp (again, b, 32) == 0, "bytes 0-31");
  CHECK (strncmp ((char *) again + 32, (char *) b + 32, 32) == 0, "name");
  CHECK (memcmp (again + 64, b + 64, 216 - 64) == 0, "bytes 64-215");
  CHECK (memcmp (again + 220, b + 220, used - 220) == 0, "bytes 220-%zu", used);
  if (memcmp (again + 32, b + 32, 32) == 0)
    CHECK (memcmp (again + 216, b + 216, 4) == 0, "checksum bytes");
  CHECK (memcmp (again + used, zero, MD_SB_BLOCK - used) == 0, "tail");
  free (again);
  free (third);
}

/* ---- the runs ---- */

/* Which check refused a block, by its explanation (the first of these it
 * contains): each must be reached by the fixed-seed run, or the fuzzing
 * proves little.
 */
static const char *const sb_checks[] = {
  "no md superblock", "major version", "dev_number", "max_dev", "checksum",
  "pad0", "pad3", "superblock says", "overlaps", "does not fit",
  "bitmap offset", "unknown feature", "not supported", "RAID level",
  "layout", "chunk of", "raid disks", "recovery offset", "component size",
  NULL,
};
static const char *const bm_checks[] = {
  "no bitmap", "version", "bitmap chunk", "daemon sleep", "write-behind",
  "another array", NULL,
};
#define MAX_CHECKS 24

struct tally {
  unsigned long blocks, ok, einval, ebadmsg, enotsup;
  const char *const *checks;
  unsigned long reached[MAX_CHECKS];
};

static void
check_error (int r, const char *why, size_t wl, struct tally *t)
{
  CHECK (r == -EINVAL || r == -EBADMSG || r == -ENOTSUP, "error %d", r);
  t->einval += r == -EINVAL;
  t->ebadmsg += r == -EBADMSG;
  t->enotsup += r == -ENOTSUP;
  if (wl > 0) {
    CHECK (strnlen (why, wl) < wl, "why not terminated");
    CHECK (wl == 1 || why[0] != '\0', "no why");
    for (size_t i = 0; wl > 64 && t->checks[i]; i++)
      if (strstr (why, t->checks[i])) {
        t->reached[i]++;
        break;
      }
  }
}

static double
now (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double
budget (void)
{
  const char *s = getenv ("R5_FUZZ_SECONDS");

  return s ? strtod (s, NULL) : 4.0;
}

static void
fuzz_sb (uint64_t seed, struct tally *t)
{
  uint8_t *b = malloc (MD_SB_BLOCK);
  char *why = malloc (256);
  static const size_t lens[] = { 0, 1, 8, 256 };
  double end = now () + budget ();
  struct md_sb sb;

  cr_assert (b && why);
  rng = seed, run_seed = seed;
  memset (t, 0, sizeof *t);
  t->checks = sb_checks;
  for (nblock = 0; nblock < SB_ITERATIONS; nblock++) {
    const struct seed *s = &seeds[below (nseeds)];
    size_t wl = lens[below (4)];
    uint64_t member;
    int r;

    if ((nblock & 1023) == 0 && now () > end)
      break;
    memcpy (b, s->sb, MD_SB_BLOCK);
    mutate_sb (b);
    member = member_size (s, b);
    r = md_sb_decode (b, member, &sb, wl ? why : NULL, wl);
    if (r != 0) {
      check_error (r, why, wl, t);
      continue;
    }
    t->ok++;
    check_sb_bounds (&sb, b, member);
    check_sb_round_trip (&sb, b, member);
  }
  t->blocks = nblock;
  free (b);
  free (why);
}

/* Field by field: the struct has padding. */
static int
bm_same (const struct md_bitmap_sb *a, const struct md_bitmap_sb *b)
{
  return a->version == b->version && !memcmp (a->uuid, b->uuid, 16) &&
    a->events == b->events && a->events_cleared == b->events_cleared &&
    a->sync_size == b->sync_size && a->state == b->state &&
    a->chunksize == b->chunksize && a->daemon_sleep == b->daemon_sleep &&
    a->write_behind == b->write_behind &&
    a->sectors_reserved == b->sectors_reserved && a->nodes == b->nodes;
}

static void
check_bm (const struct md_bitmap_sb *bm, const uint8_t *h, const uint8_t *uuid)
{
  uint8_t *again = malloc (MD_BITMAP_HEADER);
  struct md_bitmap_sb two;
  uint64_t per = bm->chunksize / 512;

  CHECK (again != NULL, "malloc");
  CHECK (bm->version == MD_BITMAP_VERSION && bm->chunksize >= 512 &&
         (bm->chunksize & (bm->chunksize - 1)) == 0 &&
         bm->daemon_sleep >= 1 && bm->daemon_sleep <= 900 &&
         bm->write_behind <= 16383 && bm->nodes <= 1 &&
         memcmp (bm->uuid, uuid, 16) == 0, "bitmap bounds");
  /* md_bitmap_bits wraps for sync_size within one chunk of 2^64 (see
   * test-mdbitmap.c, bits_do_not_wrap): checked below that only.
   */
  if (bm->sync_size <= UINT64_MAX - per)
    CHECK (md_bitmap_bits (bm) == bm->sync_size / per
           + (bm->sync_size % per != 0), "bits");
  md_bitmap_encode (bm, again);
  CHECK (memcmp (again, h, 72) == 0, "bitmap bytes");
  CHECK (md_bitmap_decode (again, uuid, &two, NULL, 0) == 0, "re-encoded");
  CHECK (bm_same (&two, bm), "decode (encode (bm)) != bm");
  free (again);
}

static void
mutate_bm (uint8_t *h)
{
  for (uint64_t n = 1 + below (3); n > 0; n--)
    switch (below (6)) {
    case 0: flip_bits (h, MD_BITMAP_HEADER); break;
    case 1: case 2: set_field (h, bm_fields, NBM_FIELDS); break;
    case 3: truncate_tail (h, MD_BITMAP_HEADER); break;
    case 4: random_run (h, MD_BITMAP_HEADER); break;
    default: splice (h, MD_BITMAP_HEADER, 1); break;
    }
}

static void
fuzz_bm (uint64_t seed, struct tally *t)
{
  uint8_t *h = malloc (MD_BITMAP_HEADER), uuid[16];
  char why[128];
  double end = now () + budget () / 2;
  struct md_bitmap_sb bm;

  cr_assert_not_null (h);
  rng = seed ^ 0xb17b17, run_seed = seed;
  memset (t, 0, sizeof *t);
  t->checks = bm_checks;
  for (nblock = 0; nblock < BM_ITERATIONS; nblock++) {
    const struct seed *s;
    size_t wl;
    int r;

    if ((nblock & 1023) == 0 && now () > end)
      break;
    do
      s = &seeds[below (nseeds)];
    while (!s->has_bm);
    memcpy (h, s->bm, MD_BITMAP_HEADER);
    memcpy (uuid, s->sb + 16, 16);
    if (below (16) == 0)
      uuid[below (16)] ^= 1;
    mutate_bm (h);
    wl = below (2) ? sizeof why : 0;
    r = md_bitmap_decode (h, uuid, &bm, why, wl);
    if (r != 0) {
      check_error (r, why, wl, t);
      continue;
    }
    t->ok++;
    check_bm (&bm, h, uuid);
  }
  t->blocks = nblock;
  free (h);
}

/* The second seed: $R5_FUZZ_SEED, or a new one each run. */
static uint64_t
env_seed (void)
{
  const char *s = getenv ("R5_FUZZ_SEED");
  uint64_t v;

  if (s && *s)
    return strtoull (s, NULL, 0);
  if (getrandom (&v, sizeof v, 0) != sizeof v)
    v = (uint64_t) time (NULL) * 0x9e3779b97f4a7c15ull;
  return v;
}

static void
report (const char *what, uint64_t seed, const struct tally *t, double secs)
{
  fprintf (stderr, "fuzz %s seed %#" PRIx64 ": %lu blocks in %.1f s: %lu "
           "accepted, %lu -EINVAL, %lu -EBADMSG, %lu -ENOTSUP (R5_FUZZ_SEED=%#"
           PRIx64 " repeats it)\n", what, seed, t->blocks, secs, t->ok,
           t->einval, t->ebadmsg, t->enotsup, seed);
}

static void
expect_reached (const struct tally *t)
{
  for (size_t i = 0; t->checks[i]; i++)
    cr_expect_gt (t->reached[i], 0, "no block reached the \"%s\" check",
                  t->checks[i]);
}

static void
run_sb (uint64_t seed, int fixed)
{
  struct tally t;
  double start = now ();

  load_seeds ();
  fuzz_sb (seed, &t);
  report ("md_sb_decode", seed, &t, now () - start);
  /* Not vacuous: every check, past the checksum too, refused blocks. */
  cr_expect_gt (t.blocks, 20000, "too few blocks in the time allowed");
  if (fixed) {
    cr_expect_gt (t.ok, t.blocks / 50, "too few blocks accepted");
    cr_expect_gt (t.enotsup, t.blocks / 100, "too few -ENOTSUP");
    cr_expect_gt (t.einval, 0);
    expect_reached (&t);
  }
}

static void
run_bm (uint64_t seed, int fixed)
{
  struct tally t;
  double start = now ();

  load_seeds ();
  fuzz_bm (seed, &t);
  report ("md_bitmap_decode", seed, &t, now () - start);
  cr_expect_gt (t.blocks, 10000, "too few blocks in the time allowed");
  if (fixed) {
    cr_expect (t.ok > t.blocks / 50 && t.enotsup > 0 && t.einval > 0 &&
               t.ebadmsg > 0, "an outcome was never reached");
    expect_reached (&t);
  }
}

Test (mdsb_fuzz, superblocks_fixed_seed) { run_sb (FIXED_SEED, 1); }
Test (mdsb_fuzz, superblocks_env_seed) { run_sb (env_seed (), 0); }
Test (mdsb_fuzz, bitmaps_fixed_seed) { run_bm (FIXED_SEED, 1); }
Test (mdsb_fuzz, bitmaps_env_seed) { run_bm (env_seed (), 0); }
