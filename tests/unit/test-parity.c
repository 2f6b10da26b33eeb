/* tests/unit/test-parity.c -- r5_xor_gen() and r5_xor_check() (both of
 * its ways: ISA-L's xor_check and xor_gen into a slice plus a compare).
 *
 * In ISA-L's xor_gen_test style: random buffers from a fixed seed, a sweep
 * over the number of vectors, every length up to a little over 1 KiB plus a
 * few large ones, pointers at offsets 0..33 from a 64-byte aligned base
 * (only 0 and 32 let ISA-L run).  The oracle is the byte loop below, and
 * the library's own reference must agree with it too.
 */
#include <config.h>

#undef NDEBUG
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "raid/parity.h"

#define MAX_OFFSET 33
#define GUARD 64
#define CANARY 0xc5

/* A small, fixed-seed generator (xorshift64*), so failures repeat. */
static uint64_t rng_state;

static uint64_t
rng (void)
{
  rng_state ^= rng_state >> 12;
  rng_state ^= rng_state << 25;
  rng_state ^= rng_state >> 27;
  return rng_state * 0x2545f4914f6cdd1dull;
}

static void
fill_random (unsigned char *p, size_t len)
{
  uint64_t r = 0;

  for (size_t i = 0; i < len; i++) {
    if (i % 8 == 0)
      r = rng ();
    p[i] = (unsigned char) r;
    r >>= 8;
  }
}

/* vects buffers, each with room for len bytes at offset off[v] from a
 * 64-byte aligned base, plus a guard area after it.
 */
struct bufs {
  unsigned vects;
  size_t len;
  unsigned char *base[R5_XOR_VECTS_MAX];
  void *ptr[R5_XOR_VECTS_MAX];
};

static void
bufs_alloc (struct bufs *b, unsigned vects, size_t len, const unsigned *off)
{
  b->vects = vects;
  b->len = len;
  for (unsigned v = 0; v < vects; v++) {
    size_t size = (MAX_OFFSET + len + GUARD + 63) / 64 * 64;

    b->base[v] = aligned_alloc (64, size);
    cr_assert_not_null (b->base[v]);
    memset (b->base[v], CANARY, size);
    b->ptr[v] = b->base[v] + off[v];
    fill_random (b->ptr[v], len);
  }
}

static void
bufs_free (struct bufs *b)
{
  for (unsigned v = 0; v < b->vects; v++)
    free (b->base[v]);
}

/* The oracle: dst[i] = XOR over the sources of byte i. */
static void
oracle_gen (unsigned vects, size_t len, void **array, unsigned char *out)
{
  for (size_t i = 0; i < len; i++) {
    unsigned char x = 0;

    for (unsigned v = 0; v + 1 < vects; v++)
      x ^= ((unsigned char *) array[v])[i];
    out[i] = x;
  }
}

/* Bytes before and after the destination's len bytes are untouched. */
static void
check_guards (const struct bufs *b, unsigned v)
{
  const unsigned char *p = b->ptr[v];
  size_t lead = p - b->base[v];

  size_t i, j;

  for (i = 0; i < lead && b->base[v][i] == CANARY; i++)
    ;
  cr_assert_eq (i, lead, "vects %u len %zu: wrote %zu bytes before",
                b->vects, b->len, lead - i);
  for (j = 0; j < GUARD && p[b->len + j] == CANARY; j++)
    ;
  cr_assert_eq (j, GUARD, "vects %u len %zu: wrote byte %zu after",
                b->vects, b->len, j);
}

typedef void xor_gen_fn (unsigned, size_t, void **);
typedef size_t xor_check_fn (unsigned, size_t, void **);

/* Run gen on fresh random buffers and compare with the oracle; sources must
 * be left alone.
 */
static void
check_gen (xor_gen_fn *gen, unsigned vects, size_t len, const unsigned *off)
{
  struct bufs b;
  unsigned char *want = malloc (len + 1);
  unsigned char *src_copy = malloc (len + 1);

  cr_assert_not_null (want);
  cr_assert_not_null (src_copy);
  bufs_alloc (&b, vects, len, off);
  oracle_gen (vects, len, b.ptr, want);
  memcpy (src_copy, b.ptr[vects - 2], len);

  gen (vects, len, b.ptr);

  cr_assert_arr_eq (b.ptr[vects - 1], want, len, "vects %u len %zu offs %u/%u",
                    vects, len, off[0], off[vects - 1]);
  cr_assert_arr_eq (b.ptr[vects - 2], src_copy, len, "source changed");
  check_guards (&b, vects - 1);
  bufs_free (&b);
  free (want);
  free (src_copy);
}

static void
same_offsets (unsigned *off, unsigned vects, unsigned o)
{
  for (unsigned v = 0; v < vects; v++)
    off[v] = o;
}

/* Every vector at a different offset (some 32-aligned, most not). */
static void
mixed_offsets (unsigned *off, unsigned vects, unsigned seed)
{
  for (unsigned v = 0; v < vects; v++)
    off[v] = (seed + 7 * v) % (MAX_OFFSET + 1);
}

static const unsigned some_vects[] = { 2, 3, 4, 5, 9, 17, 33, 65 };
#define N_SOME_VECTS (sizeof some_vects / sizeof some_vects[0])

Test (parity, vects_max_fits_a_wide_rmw)
{
  /* old data + new data for every data chunk, old parity, destination */
  cr_assert_geq (R5_XOR_VECTS_MAX, 2 * (R5_MAX_MEMBERS - 1) + 2);
}

Test (parity, gen_every_length_aligned)
{
  unsigned off[R5_XOR_VECTS_MAX];

  rng_state = 1;
  for (unsigned i = 0; i < N_SOME_VECTS; i++)
    for (size_t len = 0; len <= 1100; len++) {
      same_offsets (off, some_vects[i], 0);
      check_gen (r5_xor_gen, some_vects[i], len, off);
    }
}

Test (parity, gen_every_length_misaligned)
{
  unsigned off[R5_XOR_VECTS_MAX];

  rng_state = 2;
  for (unsigned i = 0; i < N_SOME_VECTS; i++)
    for (size_t len = 0; len <= 1100; len++) {
      same_offsets (off, some_vects[i], len % (MAX_OFFSET + 1));
      check_gen (r5_xor_gen, some_vects[i], len, off);
      mixed_offsets (off, some_vects[i], (unsigned) len);
      check_gen (r5_xor_gen, some_vects[i], len, off);
    }
}

Test (parity, gen_every_vects)
{
  static const size_t lens[] = { 0, 1, 31, 63, 64, 65, 4096, 4096 + 64 + 5 };
  unsigned off[R5_XOR_VECTS_MAX];

  rng_state = 3;
  for (unsigned vects = 2; vects <= R5_XOR_VECTS_MAX; vects++)
    for (unsigned i = 0; i < sizeof lens / sizeof lens[0]; i++)
      for (unsigned o = 0; o <= MAX_OFFSET; o += 8) {
        same_offsets (off, vects, o);
        check_gen (r5_xor_gen, vects, lens[i], off);
      }
}

Test (parity, gen_large)
{
  static const unsigned vects[] = { 2, 3, 5, 17 };
  static const size_t lens[] = { (1 << 20) + 13, (2 << 20) + 64 };
  unsigned off[R5_XOR_VECTS_MAX];

  rng_state = 4;
  for (unsigned i = 0; i < sizeof vects / sizeof vects[0]; i++)
    for (unsigned j = 0; j < 2; j++) {
      same_offsets (off, vects[i], 0);
      check_gen (r5_xor_gen, vects[i], lens[j], off);
      same_offsets (off, vects[i], 32);
      check_gen (r5_xor_gen, vects[i], lens[j], off);
      mixed_offsets (off, vects[i], j);
      check_gen (r5_xor_gen, vects[i], lens[j], off);
    }
}

/* The reference must match the oracle too: it is what the other tests of
 * the project trust.
 */
Test (parity, gen_ref_against_oracle)
{
  unsigned off[R5_XOR_VECTS_MAX];

  rng_state = 5;
  for (unsigned i = 0; i < N_SOME_VECTS; i++)
    for (size_t len = 0; len <= 300; len++) {
      mixed_offsets (off, some_vects[i], (unsigned) len);
      check_gen (r5_xor_gen_ref, some_vects[i], len, off);
    }
  same_offsets (off, 9, 3);
  check_gen (r5_xor_gen_ref, 9, (1 << 20) + 7, off);
}

/* r5_xor_gen and r5_xor_gen_ref give the same bytes. */
Test (parity, gen_matches_ref)
{
  static const unsigned vects[] = { 3, 4, 8, 33, 65 };
  unsigned off[R5_XOR_VECTS_MAX];

  rng_state = 6;
  for (unsigned i = 0; i < sizeof vects / sizeof vects[0]; i++)
    for (size_t len = 0; len <= 1100; len += 13) {
      struct bufs b;
      unsigned char *want = malloc (len + 1);
      void *ref[R5_XOR_VECTS_MAX];

      cr_assert_not_null (want);
      same_offsets (off, vects[i], (len & 1) ? 0 : 32);
      bufs_alloc (&b, vects[i], len, off);
      memcpy (ref, b.ptr, sizeof ref);
      ref[vects[i] - 1] = want;
      r5_xor_gen_ref (vects[i], len, ref);
      r5_xor_gen (vects[i], len, b.ptr);
      cr_assert_arr_eq (b.ptr[vects[i] - 1], want, len);
      bufs_free (&b);
      free (want);
    }
}

/* Only the reference allows the destination to be a source. */
Test (parity, gen_ref_in_place)
{
  unsigned off[R5_XOR_VECTS_MAX];

  rng_state = 7;
  for (size_t len = 0; len <= 200; len++) {
    struct bufs b;
    unsigned char *want = malloc (len + 1);

    cr_assert_not_null (want);
    mixed_offsets (off, 5, (unsigned) len);
    bufs_alloc (&b, 5, len, off);
    oracle_gen (5, len, b.ptr, want);
    b.ptr[4] = b.ptr[0];        /* dst aliases src[0] */
    r5_xor_gen_ref (5, len, b.ptr);
    cr_assert_arr_eq (b.ptr[0], want, len, "len %zu", len);
    b.ptr[4] = b.base[4] + off[4];
    bufs_free (&b);
    free (want);
  }
}

/* Buffers whose XOR is zero: the last one is the parity of the others. */
static void
make_consistent (struct bufs *b, unsigned vects, size_t len, unsigned o,
                 bool mixed)
{
  unsigned off[R5_XOR_VECTS_MAX];

  if (mixed)
    mixed_offsets (off, vects, o);
  else
    same_offsets (off, vects, o);
  bufs_alloc (b, vects, len, off);
  oracle_gen (vects, len, b->ptr, b->ptr[vects - 1]);
}

/* Every way of checking finds want (the first wrong byte, or len). */
static void
expect_check (const struct bufs *b, size_t want, const char *what)
{
  static const struct { const char *name; xor_check_fn *fn; } ways[] = {
    { "chosen", r5_xor_check }, { "isal", r5_xor_check_isal },
    { "gen", r5_xor_check_gen }, { "ref", r5_xor_check_ref },
  };

  for (unsigned i = 0; i < sizeof ways / sizeof ways[0]; i++) {
    size_t got = ways[i].fn (b->vects, b->len, (void **) b->ptr);

    cr_assert_eq (got, want, "%s (%s): vects %u len %zu: got %zu want %zu",
                  what, ways[i].name, b->vects, b->len, got, want);
  }
}

static void
flip (struct bufs *b, unsigned v, size_t i, unsigned char mask)
{
  ((unsigned char *) b->ptr[v])[i] ^= mask;
}

Test (parity, check_consistent_every_length)
{
  rng_state = 8;
  for (unsigned i = 0; i < N_SOME_VECTS; i++)
    for (size_t len = 0; len <= 1100; len++) {
      struct bufs b;

      make_consistent (&b, some_vects[i], len, (unsigned) len % 2 * 32,
                       len % 3 == 0);
      expect_check (&b, len, "consistent");
      bufs_free (&b);
    }
}

/* Flip one byte at every position of short buffers. */
Test (parity, check_finds_every_position)
{
  rng_state = 9;
  for (size_t len = 1; len <= 200; len += 7)
    for (size_t i = 0; i < len; i++) {
      struct bufs b;

      make_consistent (&b, 4, len, (unsigned) (len + i) % 2 * 32, false);
      flip (&b, (unsigned) (i % 4), i, 0x10);
      expect_check (&b, i, "one flip");
      bufs_free (&b);
    }
}

/* Aligned buffers of whole 64-byte blocks plus a tail: a flip in the part
 * ISA-L checks and in the tail, at start, middle and end, in a source and
 * in the parity.
 */
Test (parity, check_finds_flip_isal_and_tail)
{
  static const unsigned vects[] = { 2, 3, 5, 17, 65 };
  const size_t len = 3 * 4096 + 512 + 37;
  const size_t at[] = {
    0, 1, 63, 64, 100, 4095, 4096, 5000, 8191, 3 * 4096 + 511,
    3 * 4096 + 512, 3 * 4096 + 520, len - 1,
  };

  rng_state = 10;
  for (unsigned i = 0; i < sizeof vects / sizeof vects[0]; i++)
    for (unsigned j = 0; j < sizeof at / sizeof at[0]; j++)
      for (unsigned which = 0; which < 2; which++) {
        struct bufs b;
        unsigned v = which ? vects[i] - 1 : j % (vects[i] - 1);

        make_consistent (&b, vects[i], len, 0, false);
        expect_check (&b, len, "before flip");
        flip (&b, v, at[j], 0x80);
        expect_check (&b, at[j], "flip");
        bufs_free (&b);
      }
}

/* Two flips: the first one is reported; flips that cancel are not seen. */
Test (parity, check_reports_first_flip)
{
  const size_t len = (1 << 20) + 3;
  struct bufs b;

  rng_state = 11;
  make_consistent (&b, 6, len, 32, false);
  flip (&b, 2, 900000, 1);
  flip (&b, 4, 700001, 2);
  expect_check (&b, 700001, "two flips");
  flip (&b, 1, 700001, 2);      /* cancels the second flip */
  expect_check (&b, 900000, "cancelled");
  flip (&b, 5, 900000, 1);
  expect_check (&b, len, "both cancelled");
  flip (&b, 0, len - 1, 0xff);
  expect_check (&b, len - 1, "last byte");
  bufs_free (&b);
}

Test (parity, check_misaligned)
{
  rng_state = 12;
  for (unsigned o = 0; o <= MAX_OFFSET; o++) {
    struct bufs b;
    size_t len = 4096 + 64 * o + o;

    make_consistent (&b, 5, len, o, o % 2);
    expect_check (&b, len, "consistent");
    flip (&b, o % 5, len - 1 - 3 * o, 4);
    expect_check (&b, len - 1 - 3 * o, "flip");
    bufs_free (&b);
  }
}

Test (parity, check_zero_length)
{
  struct bufs b;
  unsigned off[3] = { 0, 1, 2 };

  bufs_alloc (&b, 3, 0, off);
  expect_check (&b, 0, "empty");
  bufs_free (&b);
}

/* Lengths around the check's slices: every one from a slice less 70 to
 * one more 70, for one to three slices, aligned and not.
 */
Test (parity, check_every_length_at_slice_edges)
{
  static const unsigned vects[] = { 2, 3, 4, 9 };

  rng_state = 13;
  for (unsigned i = 0; i < sizeof vects / sizeof vects[0]; i++)
    for (size_t k = 1; k <= 3; k++)
      for (size_t len = k * R5_XOR_CHECK_SLICE - 70;
           len <= k * R5_XOR_CHECK_SLICE + 70; len++) {
        struct bufs b;

        make_consistent (&b, vects[i], len, (unsigned) len % 34, len % 2);
        expect_check (&b, len, "consistent");
        flip (&b, (unsigned) len % vects[i], len - 1, 0x01);
        expect_check (&b, len - 1, "last byte");
        flip (&b, 0, len / 2, 0x40);
        expect_check (&b, len / 2, "middle byte");
        bufs_free (&b);
      }
}

/* A wrong byte at the first and at the last byte of each slice (and of
 * the tail), in each buffer in turn, sources and parity, aligned and at
 * every offset; a second wrong byte further on is not the one reported.
 */
Test (parity, check_finds_slice_first_and_last_bytes)
{
  static const unsigned vects[] = { 2, 3, 5, 17 };
  const size_t len = 3 * R5_XOR_CHECK_SLICE + 100;

  rng_state = 14;
  for (unsigned i = 0; i < sizeof vects / sizeof vects[0]; i++)
    for (size_t at = 0; at < len; at += R5_XOR_CHECK_SLICE)
      for (unsigned edge = 0; edge < 2; edge++)
        for (unsigned v = 0; v < vects[i]; v++) {
          size_t end = at + R5_XOR_CHECK_SLICE < len
            ? at + R5_XOR_CHECK_SLICE : len;
          size_t pos = edge ? end - 1 : at;
          struct bufs b;

          make_consistent (&b, vects[i], len, (v + pos) % 34, v % 2);
          flip (&b, v, pos, 0x80);
          if (pos + 1 < len)
            flip (&b, (v + 1) % vects[i], len - 1, 0x02);
          expect_check (&b, pos, "slice edge");
          bufs_free (&b);
        }
}

/* What r5_xor_check uses is one of the two ways, and stays the same. */
Test (parity, check_way_is_named)
{
  const char *w = r5_xor_check_way ();

  cr_assert (strcmp (w, "xor_gen+compare") == 0 ||
             strcmp (w, "xor_check") == 0, "way %s", w);
  cr_assert_str_eq (r5_xor_check_way (), w);
}
