/* tests/unit/test-geom.c -- r5_geom_init() and r5_geom_explain().
 *
 * Expected values are worked out by hand from md's rules (reference
 * section 1.4): the space after data_offset is rounded down to whole
 * chunks, capacity = stripes * chunk * (N - 1).
 */
#include <config.h>

#undef NDEBUG
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <criterion/criterion.h>

#include "raid/geom.h"

#define KiB 1024ull
#define MiB (1024ull * 1024)

/* r5_geom_init() on a poisoned struct; on failure the struct must be
 * untouched.
 */
static int
init (struct r5_geom *g, unsigned members, uint64_t chunk,
      enum r5_layout layout, uint64_t data_offset, uint64_t member_bytes)
{
  struct r5_geom before;
  int r;

  memset (g, 0xa5, sizeof *g);
  memcpy (&before, g, sizeof before);
  r = r5_geom_init (g, &(struct r5_geom_params) {
      .members = members, .chunk = chunk, .layout = layout,
      .data_offset = data_offset, .member_bytes = member_bytes });
  if (r != 0)
    cr_assert_arr_eq (g, &before, sizeof before,
                      "r5_geom_init failed (%d) but changed *g", r);
  return r;
}

/* The reference's example: 64 MiB members, 64 KiB chunk, data_offset 2048
 * sectors: 1008 stripes, array of 258048 sectors.
 */
Test (geom, md_example)
{
  struct r5_geom g;

  cr_assert_eq (init (&g, 3, 64 * KiB, R5_LEFT_SYMMETRIC, 1 * MiB, 64 * MiB),
                0);
  cr_assert_eq (g.members, 3);
  cr_assert_eq (g.data_members, 2);
  cr_assert_eq (g.layout, R5_LEFT_SYMMETRIC);
  cr_assert_eq (g.chunk, 65536);
  cr_assert_eq (g.data_offset, 1048576);
  cr_assert_eq (g.stripes, 1008);
  cr_assert_eq (g.member_data, 66060288);
  cr_assert_eq (g.stripe_data, 131072);
  cr_assert_eq (g.capacity, 258048ull * 512);
}

Test (geom, five_members_no_offset)
{
  struct r5_geom g;

  cr_assert_eq (init (&g, 5, 4 * KiB, R5_RIGHT_ASYMMETRIC, 0, 40 * KiB), 0);
  cr_assert_eq (g.members, 5);
  cr_assert_eq (g.data_members, 4);
  cr_assert_eq (g.layout, R5_RIGHT_ASYMMETRIC);
  cr_assert_eq (g.data_offset, 0);
  cr_assert_eq (g.stripes, 10);
  cr_assert_eq (g.member_data, 40960);
  cr_assert_eq (g.stripe_data, 16384);
  cr_assert_eq (g.capacity, 163840);
}

/* Like md: whatever does not fill a whole chunk is left unused. */
Test (geom, rounds_down_to_whole_chunks)
{
  struct r5_geom g;

  cr_assert_eq (init (&g, 4, 16 * KiB, R5_LEFT_ASYMMETRIC, 4096,
                      4096 + 5 * 16 * KiB + 16 * KiB - 1), 0);
  cr_assert_eq (g.stripes, 5);
  cr_assert_eq (g.member_data, 5 * 16 * KiB);
  cr_assert_eq (g.capacity, 5 * 3 * 16 * KiB);

  /* member sizes need not be sector multiples */
  cr_assert_eq (init (&g, 3, 4 * KiB, R5_RIGHT_SYMMETRIC, 512, 512 + 8191), 0);
  cr_assert_eq (g.stripes, 1);
  cr_assert_eq (g.capacity, 8192);
}

Test (geom, smallest_member_holds_one_chunk)
{
  struct r5_geom g;

  cr_assert_eq (init (&g, 3, 64 * KiB, R5_LEFT_SYMMETRIC, 1 * MiB,
                      1 * MiB + 64 * KiB), 0);
  cr_assert_eq (g.stripes, 1);
  cr_assert_eq (g.capacity, 128 * KiB);
}

Test (geom, limits_accepted)
{
  struct r5_geom g;

  cr_assert_eq (init (&g, R5_MIN_MEMBERS, R5_MIN_CHUNK, R5_LEFT_SYMMETRIC,
                      0, R5_MIN_CHUNK), 0);
  cr_assert_eq (init (&g, R5_MAX_MEMBERS, R5_MAX_CHUNK, R5_LEFT_SYMMETRIC,
                      0, R5_MAX_CHUNK), 0);
  cr_assert_eq (g.data_members, R5_MAX_MEMBERS - 1);
  cr_assert_eq (g.capacity, (uint64_t) R5_MAX_CHUNK * (R5_MAX_MEMBERS - 1));
  cr_assert_eq (init (&g, 3, 4096, R5_LEFT_SYMMETRIC, 512, 512 + 4096), 0);
}

Test (geom, every_layout_accepted)
{
  static const enum r5_layout layouts[] = {
    R5_LEFT_ASYMMETRIC, R5_RIGHT_ASYMMETRIC,
    R5_LEFT_SYMMETRIC, R5_RIGHT_SYMMETRIC,
    R5_PARITY_FIRST, R5_PARITY_LAST,
  };
  struct r5_geom g;

  for (unsigned i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
    cr_assert_eq (init (&g, 3, 4096, layouts[i], 0, 1 * MiB), 0);
    cr_assert_eq (g.layout, layouts[i]);
  }
}

Test (geom, members_out_of_range)
{
  struct r5_geom g;
  static const unsigned bad[] = { 0, 1, 2, R5_MAX_MEMBERS + 1, 1000 };

  for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++)
    cr_assert_eq (init (&g, bad[i], 64 * KiB, R5_LEFT_SYMMETRIC, 0,
                        64 * MiB), -EINVAL, "members %u", bad[i]);
}

Test (geom, chunk_not_power_of_two)
{
  struct r5_geom g;
  static const uint64_t bad[] = {
    0, 3000, 4097, 6144, 12288, 65535, 65537, 3 * 64 * KiB,
  };

  for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++)
    cr_assert_eq (init (&g, 3, bad[i], R5_LEFT_SYMMETRIC, 0, 64 * MiB),
                  -EINVAL, "chunk %llu", (unsigned long long) bad[i]);
}

Test (geom, chunk_too_small_or_large)
{
  struct r5_geom g;
  static const uint64_t bad[] = {
    1, 512, 1024, 2048, (uint64_t) R5_MAX_CHUNK * 2, 1ull << 40,
  };

  for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++)
    cr_assert_eq (init (&g, 3, bad[i], R5_LEFT_SYMMETRIC, 0, 1ull << 50),
                  -EINVAL, "chunk %llu", (unsigned long long) bad[i]);
}

Test (geom, layout_out_of_range)
{
  struct r5_geom g;

  /* md's RAID-5 layouts are 0..5 (algorithm_valid_raid5); 16..20 are
   * RAID-6's, not RAID-5's.
   */
  cr_assert_eq (init (&g, 3, 4096, (enum r5_layout) 6, 0, 1 * MiB), -EINVAL);
  cr_assert_eq (init (&g, 3, 4096, (enum r5_layout) 16, 0, 1 * MiB), -EINVAL);
  cr_assert_eq (init (&g, 3, 4096, (enum r5_layout) 99, 0, 1 * MiB), -EINVAL);
}

Test (geom, data_offset_not_sector_multiple)
{
  struct r5_geom g;
  static const uint64_t bad[] = { 1, 100, 511, 513, 4095, 1 * MiB + 8 };

  for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++)
    cr_assert_eq (init (&g, 3, 4096, R5_LEFT_SYMMETRIC, bad[i], 64 * MiB),
                  -EINVAL, "data_offset %llu", (unsigned long long) bad[i]);
}

Test (geom, member_too_small)
{
  struct r5_geom g;

  /* one byte short of data_offset + one chunk */
  cr_assert_eq (init (&g, 3, 64 * KiB, R5_LEFT_SYMMETRIC, 1 * MiB,
                      1 * MiB + 64 * KiB - 1), -ENOSPC);
  /* smaller than data_offset itself (no wrap-around) */
  cr_assert_eq (init (&g, 3, 4096, R5_LEFT_SYMMETRIC, 1 * MiB, 4096),
                -ENOSPC);
  cr_assert_eq (init (&g, 3, 4096, R5_LEFT_SYMMETRIC, 0, 0), -ENOSPC);
  cr_assert_eq (init (&g, 3, 4096, R5_LEFT_SYMMETRIC, 0, 4095), -ENOSPC);
  /* data_offset + chunk overflows 64 bits: still too small, not accepted */
  cr_assert_eq (init (&g, 3, 4096, R5_LEFT_SYMMETRIC, UINT64_MAX - 511,
                      UINT64_MAX), -ENOSPC);
}

/* Accepted geometries must be consistent: capacity is exactly
 * stripes * stripe_data, with no 64-bit wrap-around, even for members as
 * large as a file can be (off_t).
 */
Test (geom, huge_members_stay_consistent)
{
  static const unsigned members[] = { 3, 5, R5_MAX_MEMBERS };
  struct r5_geom g;

  for (unsigned i = 0; i < 3; i++) {
    if (init (&g, members[i], 4096, R5_LEFT_SYMMETRIC, 0, INT64_MAX) != 0)
      continue;               /* refusing is fine; wrapping is not */
    cr_assert_eq (g.member_data, g.stripes * g.chunk);
    cr_assert_eq (g.capacity / g.stripe_data, g.stripes,
                  "N=%u: capacity %llu wrapped around (stripes %llu)",
                  members[i], (unsigned long long) g.capacity,
                  (unsigned long long) g.stripes);
  }
}

/* r5_geom_explain() names the problem. */
static void
expect_explains (const char *want1, const char *want2, unsigned members,
                 uint64_t chunk, enum r5_layout layout, uint64_t data_offset,
                 uint64_t member_bytes)
{
  char buf[256];
  const char *s;

  memset (buf, 'x', sizeof buf);
  s = r5_geom_explain (buf, sizeof buf, &(struct r5_geom_params) {
      .members = members, .chunk = chunk, .layout = layout,
      .data_offset = data_offset, .member_bytes = member_bytes });
  cr_assert_eq (s, buf);
  cr_assert (memchr (buf, '\0', sizeof buf) != NULL);
  cr_assert (strstr (buf, want1) != NULL, "\"%s\" lacks \"%s\"", buf, want1);
  if (want2)
    cr_assert (strstr (buf, want2) != NULL, "\"%s\" lacks \"%s\"", buf, want2);
}

Test (geom, explain_members)
{
  expect_explains ("2", "members", 2, 65536, R5_LEFT_SYMMETRIC, 0, 64 * MiB);
  expect_explains ("33", "members", 33, 65536, R5_LEFT_SYMMETRIC, 0, 64 * MiB);
}

Test (geom, explain_chunk)
{
  expect_explains ("3000", "power of two", 3, 3000, R5_LEFT_SYMMETRIC, 0,
                   64 * MiB);
  expect_explains ("2048", "chunk", 3, 2048, R5_LEFT_SYMMETRIC, 0, 64 * MiB);
  expect_explains ("134217728", "chunk", 3, 128 * MiB, R5_LEFT_SYMMETRIC, 0,
                   1ull << 40);
}

Test (geom, explain_layout)
{
  expect_explains ("layout", "6", 3, 4096, (enum r5_layout) 6, 0, 64 * MiB);
}

Test (geom, explain_data_offset)
{
  expect_explains ("offset", "100", 3, 4096, R5_LEFT_SYMMETRIC, 100,
                   64 * MiB);
}

Test (geom, explain_member_too_small)
{
  expect_explains ("69631", NULL, 3, 4096, R5_LEFT_SYMMETRIC, 65536, 69631);
}

Test (geom, explain_truncates)
{
  char buf[8];
  char one[1] = { 'x' };

  memset (buf, 'x', sizeof buf);
  r5_geom_explain (buf, sizeof buf, &(struct r5_geom_params) {
      .members = 2, .chunk = 4096, .layout = R5_LEFT_SYMMETRIC,
      .data_offset = 0, .member_bytes = 64 * MiB });
  cr_assert (memchr (buf, '\0', sizeof buf) != NULL);
  cr_assert_gt (strlen (buf), 0);

  r5_geom_explain (one, 1, &(struct r5_geom_params) {
      .members = 2, .chunk = 4096, .layout = R5_LEFT_SYMMETRIC,
      .data_offset = 0, .member_bytes = 64 * MiB });
  cr_assert_eq (one[0], '\0');
}

/* Every rejected geometry has an explanation that differs from the text
 * for an accepted geometry.
 */
Test (geom, explain_agrees_with_init)
{
  char ok[256], bad[256];
  struct r5_geom g;

  r5_geom_explain (ok, sizeof ok, &(struct r5_geom_params) {
      .members = 3, .chunk = 4096, .layout = R5_LEFT_SYMMETRIC,
      .data_offset = 0, .member_bytes = 64 * MiB });
  for (uint64_t chunk = 1024; chunk <= 16384; chunk += 1024) {
    if (init (&g, 3, chunk, R5_LEFT_SYMMETRIC, 0, 64 * MiB) == 0)
      continue;
    r5_geom_explain (bad, sizeof bad, &(struct r5_geom_params) {
        .members = 3, .chunk = chunk, .layout = R5_LEFT_SYMMETRIC,
        .data_offset = 0, .member_bytes = 64 * MiB });
    cr_assert_str_neq (bad, ok, "chunk %llu", (unsigned long long) chunk);
  }
}
