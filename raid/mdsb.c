/* raid/mdsb.c -- md v1.2 superblock encode/decode (see mdsb.h). */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "raid/badblocks.h"
#include "raid/geom.h"
#include "raid/le.h"
#include "raid/ppl.h"
#include "raid/mdsb.h"

#define ROLES_OFFSET 256u
#define CSUM_OFFSET 216u
#define SB_PPL_OFFSET 96u        /* md's union with bitmap_offset */

/* Scalar fields: byte offset on disk, size, offset in struct md_sb. */
static const struct field {
  uint16_t disk, size;
  size_t host;
} fields[] = {
  { 8, 4, offsetof (struct md_sb, feature_map) },
  { 64, 8, offsetof (struct md_sb, ctime) },
  { 72, 4, offsetof (struct md_sb, level) },
  { 76, 4, offsetof (struct md_sb, layout) },
  { 80, 8, offsetof (struct md_sb, size) },
  { 88, 4, offsetof (struct md_sb, chunksize) },
  { 92, 4, offsetof (struct md_sb, raid_disks) },
  { 96, 4, offsetof (struct md_sb, bitmap_offset) },
  { 100, 4, offsetof (struct md_sb, new_level) },
  { 104, 8, offsetof (struct md_sb, reshape_position) },
  { 112, 4, offsetof (struct md_sb, delta_disks) },
  { 116, 4, offsetof (struct md_sb, new_layout) },
  { 120, 4, offsetof (struct md_sb, new_chunk) },
  { 124, 4, offsetof (struct md_sb, new_offset) },
  { 128, 8, offsetof (struct md_sb, data_offset) },
  { 136, 8, offsetof (struct md_sb, data_size) },
  { 144, 8, offsetof (struct md_sb, super_offset) },
  { 152, 8, offsetof (struct md_sb, recovery_offset) },
  { 160, 4, offsetof (struct md_sb, dev_number) },
  { 164, 4, offsetof (struct md_sb, cnt_corrected_read) },
  { 184, 1, offsetof (struct md_sb, devflags) },
  { 185, 1, offsetof (struct md_sb, bblog_shift) },
  { 186, 2, offsetof (struct md_sb, bblog_size) },
  { 188, 4, offsetof (struct md_sb, bblog_offset) },
  { 192, 8, offsetof (struct md_sb, utime) },
  { 200, 8, offsetof (struct md_sb, events) },
  { 208, 8, offsetof (struct md_sb, resync_offset) },
  { 220, 4, offsetof (struct md_sb, max_dev) },
};
#define NFIELDS (sizeof fields / sizeof fields[0])

/* Each host field has its disk field's size (signed or not: the bits are
 * the same), so values move through an integer of exactly that size.
 */
static void
host_store (struct md_sb *sb, const struct field *f, uint64_t v)
{
  unsigned char *dst = (unsigned char *) sb + f->host;

  switch (f->size) {
  case 1: *dst = (uint8_t) v; break;
  case 2: { uint16_t x = (uint16_t) v; memcpy (dst, &x, 2); break; }
  case 4: { uint32_t x = (uint32_t) v; memcpy (dst, &x, 4); break; }
  default: memcpy (dst, &v, 8); break;
  }
}

static uint64_t
host_load (const struct md_sb *sb, const struct field *f)
{
  const unsigned char *src = (const unsigned char *) sb + f->host;
  uint16_t x2;
  uint32_t x4;
  uint64_t x8;

  switch (f->size) {
  case 1: return *src;
  case 2: memcpy (&x2, src, 2); return x2;
  case 4: memcpy (&x4, src, 4); return x4;
  default: memcpy (&x8, src, 8); return x8;
  }
}

uint32_t
md_sb_csum (const void *block)
{
  const uint8_t *b = block;
  uint32_t max_dev = (uint32_t) le_get (b + 220, 4);
  size_t len, i;
  uint64_t acc = 0;

  if (max_dev > MD_SB_MAX_DEV)
    max_dev = MD_SB_MAX_DEV;
  len = ROLES_OFFSET + 2 * (size_t) max_dev;
  for (i = 0; i + 4 <= len; i += 4)
    if (i != CSUM_OFFSET)
      acc += le_get (b + i, 4);
  if (i + 2 <= len)
    acc += le_get (b + i, 2);
  return (uint32_t) ((acc & 0xffffffff) + (acc >> 32));
}

void
md_sb_encode (const struct md_sb *sb, void *block)
{
  uint8_t *b = block;
  unsigned max_dev = sb->max_dev <= MD_SB_MAX_DEV ? sb->max_dev
                                                   : MD_SB_MAX_DEV;

  memset (b, 0, MD_SB_BLOCK);
  le_put (b + 0, 4, MD_SB_MAGIC);
  le_put (b + 4, 4, 1);
  memcpy (b + 16, sb->set_uuid, 16);
  memcpy (b + 32, sb->set_name, 32);     /* all 32 bytes, as decoded */
  memcpy (b + 168, sb->device_uuid, 16);
  for (size_t i = 0; i < NFIELDS; i++)
    le_put (b + fields[i].disk, fields[i].size, host_load (sb, &fields[i]));
  if (sb->feature_map & MD_FEATURE_ANY_PPL) {
    le_put (b + SB_PPL_OFFSET, 2, (uint16_t) sb->ppl_offset);
    le_put (b + SB_PPL_OFFSET + 2, 2, sb->ppl_size);
  }
  for (unsigned i = 0; i < max_dev; i++)
    le_put (b + ROLES_OFFSET + 2 * i, 2, sb->dev_roles[i]);
  le_put (b + CSUM_OFFSET, 4, md_sb_csum (b));
}

unsigned
md_sb_role (const struct md_sb *sb)
{
  return sb->dev_number < sb->max_dev ? sb->dev_roles[sb->dev_number]
                                      : MD_ROLE_SPARE;
}

void
md_uuid_format (const uint8_t uuid[16], char out[36])
{
  char *p = out;

  for (unsigned i = 0; i < 16; i++) {
    p += sprintf (p, "%02x", uuid[i]);
    if (i % 4 == 3 && i != 15)
      *p++ = ':';
  }
  *p = '\0';
}

uint64_t
md_default_data_offset (uint64_t member_sectors, uint32_t chunk, bool ppl)
{
  uint64_t bmspace, headroom = 262144;

  if (ppl)
    bmspace = PPL_AREA_SECTORS;
  else if (member_sectors < 128)
    bmspace = 0;
  else if (member_sectors - 128 >= 419430400)
    bmspace = 256;
  else if (member_sectors - 8 > 16777216)
    bmspace = 128;
  else
    bmspace = 8;
  while (headroom * 1024 > member_sectors && headroom / 2 >= 2 * (uint64_t) chunk)
    headroom /= 2;
  return (24 + bmspace + headroom + 2047) / 2048 * 2048;
}

/* One flavour of partial parity log and no bitmap: a log whose area can
 * be checked (other mixes are check_features' to refuse).
 */
static bool
has_one_ppl (uint32_t feature_map)
{
  uint32_t ppl = feature_map & MD_FEATURE_ANY_PPL;

  return (ppl == MD_FEATURE_PPL || ppl == MD_FEATURE_MULTIPLE_PPLS) &&
    !(feature_map & MD_FEATURE_BITMAP_OFFSET);
}

static int
check_frame (const uint8_t *b, const struct md_sb *sb, char *why, size_t wl)
{
  uint32_t stored = (uint32_t) le_get (b + CSUM_OFFSET, 4), csum;

  if (le_get (b, 4) != MD_SB_MAGIC)
    return le_bad (why, wl, -EINVAL, "no md superblock at byte %u (magic "
                "%08" PRIx64 ")", MD_SB_OFFSET, le_get (b, 4));
  if (le_get (b + 4, 4) != 1)
    return le_bad (why, wl, -EBADMSG, "superblock major version %" PRIu64
                ", expected 1", le_get (b + 4, 4));
  if (sb->max_dev > MD_SB_MAX_DEV)
    return le_bad (why, wl, -EBADMSG, "max_dev %" PRIu32 " exceeds %u",
                sb->max_dev, MD_SB_MAX_DEV);
  if ((csum = md_sb_csum (b)) != stored)
    return le_bad (why, wl, -EBADMSG, "superblock checksum %08" PRIx32
                " does not match its contents (%08" PRIx32 ")", stored, csum);
  if (le_get (b + 12, 4) != 0)
    return le_bad (why, wl, -EBADMSG, "pad0 is not zero");
  for (unsigned i = 224; i < 256; i++)
    if (b[i] != 0)
      return le_bad (why, wl, -EBADMSG, "pad3 is not zero");
  return 0;
}

static int
check_placement (const struct md_sb *sb, uint64_t member_sectors,
                 char *why, size_t wl)
{
  uint64_t sb_sectors = (ROLES_OFFSET + 2 * (uint64_t) sb->max_dev + 511) / 512;

  if (sb->super_offset != MD_SB_SECTOR)
    return le_bad (why, wl, -EBADMSG, "superblock says it is at sector %"
                PRIu64 ", found at sector %u (not version 1.2?)",
                sb->super_offset, MD_SB_SECTOR);
  if (sb->data_offset < MD_SB_SECTOR + sb_sectors)
    return le_bad (why, wl, -EBADMSG, "data offset %" PRIu64 " overlaps the "
                "superblock", sb->data_offset);
  if (sb->data_size < 10 || sb->data_offset > member_sectors ||
      sb->data_size > member_sectors - sb->data_offset)
    return le_bad (why, wl, -EBADMSG, "data area [%" PRIu64 ", +%" PRIu64
                ") sectors does not fit the member (%" PRIu64 " sectors)",
                sb->data_offset, sb->data_size, member_sectors);
  if ((sb->feature_map & MD_FEATURE_BITMAP_OFFSET) &&
      (sb->bitmap_offset <= 0 ||
       MD_SB_SECTOR + (uint64_t) sb->bitmap_offset >= sb->data_offset))
    return le_bad (why, wl, -EBADMSG, "bitmap offset %" PRId32 " is not "
                "between the superblock and the data", sb->bitmap_offset);
  if (has_one_ppl (sb->feature_map)) {
    int64_t usable = ppl_area_check (&(struct ppl_area) {
        sb->ppl_offset, sb->ppl_size, MD_SB_SECTOR, sb_sectors,
        sb->data_offset, sb->data_size }, why, wl);

    if (usable < 0)
      return -EBADMSG;        /* ppl_area_check said why */
    if (MD_SB_SECTOR + sb->ppl_offset + (uint64_t) usable > member_sectors)
      return le_bad (why, wl, -EBADMSG, "PPL area [%" PRId64 ", +%" PRId64
                     ") sectors does not fit the member (%" PRIu64
                     " sectors)", (int64_t) MD_SB_SECTOR + sb->ppl_offset,
                     usable, member_sectors);
  }
  if (sb->dev_number >= sb->max_dev)
    return le_bad (why, wl, -EBADMSG, "dev_number %" PRIu32 " is not below "
                "max_dev %" PRIu32, sb->dev_number, sb->max_dev);
  /* The bad-block log's place; its entries are read by whoever has the
   * member (raid/badblocks.h).
   */
  return md_bblog_check (sb, member_sectors, why, wl);
}

static int
check_features (const struct md_sb *sb, char *why, size_t wl)
{
  const uint32_t refused = MD_FEATURE_CLUSTERED | MD_FEATURE_JOURNAL;
  const uint32_t ppl = MD_FEATURE_ANY_PPL;

  if (sb->feature_map & ~MD_FEATURE_ALL)
    return le_bad (why, wl, -EBADMSG, "unknown feature bits %#" PRIx32,
                sb->feature_map & ~MD_FEATURE_ALL);
  if (sb->feature_map & refused)
    return le_bad (why, wl, -ENOTSUP, "uses md features not supported here "
                "(feature_map %#" PRIx32 ": journal or clustering)",
                sb->feature_map & refused);
  /* md_p.h: PPL and MULTIPLE_PPLS are never both set; md.c's
   * super_1_validate refuses a bitmap with either.
   */
  if ((sb->feature_map & ppl) == ppl ||
      ((sb->feature_map & ppl) && (sb->feature_map & MD_FEATURE_BITMAP_OFFSET)))
    return le_bad (why, wl, -EBADMSG, "feature_map %#" PRIx32 " sets a "
                "partial parity log together with %s", sb->feature_map,
                (sb->feature_map & ppl) == ppl ? "its other flavour"
                                               : "a bitmap");
  return 0;
}

static int
check_geometry (const struct md_sb *sb, char *why, size_t wl)
{
  uint32_t c = sb->chunksize;

  if (sb->level != 5)
    return le_bad (why, wl, -ENOTSUP, "RAID level %" PRId32 ": only RAID-5 "
                "is supported", sb->level);
  if (sb->layout >= R5_LAYOUTS)
    return le_bad (why, wl, -ENOTSUP, "RAID-5 layout %" PRIu32 " is not one "
                "of md's layouts 0-%u", sb->layout, R5_LAYOUTS - 1);
  if (c == 0 || (c & (c - 1)) != 0 || (uint64_t) c * 512 < R5_MIN_CHUNK ||
      (uint64_t) c * 512 > R5_MAX_CHUNK)
    return le_bad (why, wl, -EBADMSG, "chunk of %" PRIu32 " sectors is not a "
                "power of two between %u and %u bytes", c, R5_MIN_CHUNK,
                R5_MAX_CHUNK);
  if (sb->raid_disks < R5_MIN_MEMBERS || sb->raid_disks > R5_MAX_MEMBERS)
    return le_bad (why, wl, -ENOTSUP, "%" PRIu32 " raid disks: supported are "
                "%u to %u", sb->raid_disks, R5_MIN_MEMBERS, R5_MAX_MEMBERS);
  if (sb->size < c || sb->size > sb->data_size)
    return le_bad (why, wl, -EBADMSG, "component size %" PRIu64 " sectors is "
                "not between one chunk and the data size (%" PRIu64 ")",
                sb->size, sb->data_size);
  if ((sb->feature_map & MD_FEATURE_RECOVERY_OFFSET) &&
      sb->recovery_offset > sb->size)
    return le_bad (why, wl, -EBADMSG, "recovery offset %" PRIu64 " is beyond "
                "the component size", sb->recovery_offset);
  return 0;
}

bool
md_sb_has_magic (const void *block)
{
  return le_get (block, 4) == MD_SB_MAGIC;
}

void
md_sb_peek (const void *block, struct md_sb *sb, struct md_sb_frame *frame)
{
  const uint8_t *b = block;

  memset (sb, 0, sizeof *sb);
  for (size_t i = 0; i < NFIELDS; i++)
    host_store (sb, &fields[i], le_get (b + fields[i].disk, fields[i].size));
  if (sb->feature_map & MD_FEATURE_ANY_PPL) {
    sb->ppl_offset = (int16_t) le_get (b + SB_PPL_OFFSET, 2);
    sb->ppl_size = (uint16_t) le_get (b + SB_PPL_OFFSET + 2, 2);
  }
  memcpy (sb->set_uuid, b + 16, 16);
  memcpy (sb->set_name, b + 32, 32);
  memcpy (sb->device_uuid, b + 168, 16);
  for (unsigned i = 0; i < sb->max_dev && i < MD_SB_MAX_DEV; i++)
    sb->dev_roles[i] = (uint16_t) le_get (b + ROLES_OFFSET + 2 * i, 2);
  if (frame == NULL)
    return;
  frame->magic = (uint32_t) le_get (b, 4);
  frame->major_version = (uint32_t) le_get (b + 4, 4);
  frame->csum_stored = (uint32_t) le_get (b + CSUM_OFFSET, 4);
  frame->csum_computed = md_sb_csum (b);
}

/* A reshape under way: only what this project can carry on, RAID-5
 * growing by members forward with the data offset moved down (mdadm's
 * "reshape without backup"); the position on a new stripe boundary and
 * not past the new end (raid5.c raid5_run's checks).
 */
static int
check_reshape (const struct md_sb *sb, char *why, size_t wl)
{
  uint64_t new_stripe, end;
  int64_t new_start;

  if (!(sb->feature_map & MD_FEATURE_RESHAPE_ACTIVE))
    return 0;
  if ((sb->feature_map & MD_FEATURE_RESHAPE_BACKWARDS) ||
      sb->new_level != (uint32_t) sb->level || sb->new_layout != sb->layout ||
      sb->new_chunk != sb->chunksize || sb->delta_disks <= 0)
    return le_bad (why, wl, -ENOTSUP, "a reshape other than growing by "
                   "members (new level %" PRIu32 ", layout %" PRIu32 ", chunk "
                   "%" PRIu32 ", delta_disks %" PRId32 "%s) is not supported "
                   "here", sb->new_level, sb->new_layout, sb->new_chunk,
                   sb->delta_disks, sb->feature_map &
                   MD_FEATURE_RESHAPE_BACKWARDS ? ", backwards" : "");
  /* Without NEW_OFFSET md ignores new_offset (super_1_load): the data
   * offset is kept, and mdadm's backup file carries the critical section.
   */
  if ((sb->feature_map & MD_FEATURE_NEW_OFFSET) && sb->new_offset >= 0)
    return le_bad (why, wl, -ENOTSUP, "a reshape that moves the data offset "
                   "up (new_offset %" PRId32 ") is not supported here",
                   sb->new_offset);
  if ((uint64_t) sb->delta_disks + R5_MIN_MEMBERS > sb->raid_disks)
    return le_bad (why, wl, -EBADMSG, "delta_disks %" PRId32 " leaves fewer "
                   "than %u of %" PRIu32 " raid disks", sb->delta_disks,
                   R5_MIN_MEMBERS, sb->raid_disks);
  new_start = (int64_t) sb->data_offset + md_sb_new_offset (sb);
  new_stripe = (uint64_t) sb->chunksize * (sb->raid_disks - 1);
  end = md_sb_reshape_end (sb);
  if (new_start < (int64_t) (MD_SB_SECTOR + MD_SB_BLOCK / 512))
    return le_bad (why, wl, -EBADMSG, "new_offset %" PRId32 " puts the data "
                   "over the superblock", sb->new_offset);
  if (sb->reshape_position % new_stripe || sb->reshape_position > end)
    return le_bad (why, wl, -EBADMSG, "reshape position %" PRIu64 " is not "
                   "a stripe boundary of the new shape within its %" PRIu64
                   " sectors", sb->reshape_position, end);
  return 0;
}

int
md_sb_decode (const void *block, uint64_t member_sectors, struct md_sb *sb,
              char *why, size_t why_len)
{
  const uint8_t *b = block;
  int r;

  md_sb_peek (block, sb, NULL);
  if ((r = check_frame (b, sb, why, why_len)) < 0 ||
      (r = check_placement (sb, member_sectors, why, why_len)) < 0 ||
      (r = check_features (sb, why, why_len)) < 0 ||
      (r = check_geometry (sb, why, why_len)) < 0)
    return r;
  return check_reshape (sb, why, why_len);
}

uint64_t
md_sb_new_offset_floor (const struct md_sb *sb, uint64_t bitmap_bytes)
{
  uint64_t floor = (sb->super_offset + (32 + 4) * 2) * 512, at;
  uint32_t sectors;

  if (md_bblog_area (sb, &at, &sectors) && (at + sectors) * 512 > floor)
    floor = (at + sectors) * 512;
  at = (uint64_t) ((int64_t) sb->super_offset + sb->bitmap_offset) * 512;
  if (bitmap_bytes > 0 && (sb->feature_map & MD_FEATURE_BITMAP_OFFSET) &&
      sb->bitmap_offset > 0 && at + bitmap_bytes > floor)
    floor = at + bitmap_bytes;
  return floor;
}
