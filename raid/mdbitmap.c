/* raid/mdbitmap.c -- md write-intent bitmap header and bits. */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "raid/le.h"
#include "raid/mdbitmap.h"

void
md_bitmap_encode (const struct md_bitmap_sb *bm, void *header)
{
  uint8_t *h = header;

  memset (h, 0, MD_BITMAP_HEADER);
  le_put (h + 0, 4, MD_BITMAP_MAGIC);
  le_put (h + 4, 4, bm->version);
  memcpy (h + 8, bm->uuid, 16);
  le_put (h + 24, 8, bm->events);
  le_put (h + 32, 8, bm->events_cleared);
  le_put (h + 40, 8, bm->sync_size);
  le_put (h + 48, 4, bm->state);
  le_put (h + 52, 4, bm->chunksize);
  le_put (h + 56, 4, bm->daemon_sleep);
  le_put (h + 60, 4, bm->write_behind);
  le_put (h + 64, 4, bm->sectors_reserved);
  le_put (h + 68, 4, bm->nodes);
}

int
md_bitmap_decode (const void *header, const uint8_t uuid[16],
                  struct md_bitmap_sb *bm, char *why, size_t wl)
{
  const uint8_t *h = header;
  uint32_t c;

  if (le_get (h, 4) != MD_BITMAP_MAGIC)
    return le_bad (why, wl, -EINVAL, "no bitmap (magic %08" PRIx64 ")",
                le_get (h, 4));
  *bm = (struct md_bitmap_sb) {
    .version = (uint32_t) le_get (h + 4, 4),
    .events = le_get (h + 24, 8), .events_cleared = le_get (h + 32, 8),
    .sync_size = le_get (h + 40, 8), .state = (uint32_t) le_get (h + 48, 4),
    .chunksize = (uint32_t) le_get (h + 52, 4),
    .daemon_sleep = (uint32_t) le_get (h + 56, 4),
    .write_behind = (uint32_t) le_get (h + 60, 4),
    .sectors_reserved = (uint32_t) le_get (h + 64, 4),
    .nodes = (uint32_t) le_get (h + 68, 4),
  };
  memcpy (bm->uuid, h + 8, 16);
  c = bm->chunksize;
  if (bm->version != MD_BITMAP_VERSION)
    return le_bad (why, wl, -ENOTSUP, "bitmap version %" PRIu32 ": only "
                "version 4 is supported", bm->version);
  if (c < 512 || (c & (c - 1)) != 0)
    return le_bad (why, wl, -EBADMSG, "bitmap chunk %" PRIu32 " is not a "
                "power of two >= 512", c);
  if (bm->daemon_sleep == 0 || bm->daemon_sleep > 15 * 60)
    return le_bad (why, wl, -EBADMSG, "bitmap daemon sleep %" PRIu32 " s is "
                "out of range", bm->daemon_sleep);
  if (bm->sync_size > MD_BITMAP_MAX_SYNC)
    return le_bad (why, wl, -EBADMSG, "bitmap covers %" PRIu64 " sectors, more "
                "than any array", bm->sync_size);
  if (bm->write_behind > 16383 || bm->nodes > 1)
    return le_bad (why, wl, -ENOTSUP, "bitmap uses write-behind or clustering");
  if (memcmp (bm->uuid, uuid, 16) != 0)
    return le_bad (why, wl, -EBADMSG, "bitmap belongs to another array");
  return 0;
}

uint64_t
md_bitmap_bits (const struct md_bitmap_sb *bm)
{
  uint64_t per_bit = bm->chunksize / 512;

  return bm->sync_size / per_bit + (bm->sync_size % per_bit != 0);
}

uint64_t
md_bitmap_area_bytes (const struct md_bitmap_sb *bm)
{
  uint64_t bytes = MD_BITMAP_HEADER + (md_bitmap_bits (bm) + 7) / 8;

  return (bytes + 4095) / 4096 * 4096;
}

uint64_t
md_bitmap_room (uint64_t member_sectors)
{
  if (member_sectors < 128)
    return 0;
  if (member_sectors - 128 >= 419430400)
    return 256;
  if (member_sectors - 8 > 16777216)
    return 128;
  return 8;
}

uint32_t
md_bitmap_default_chunk (uint64_t sync_size, uint64_t room_sectors)
{
  uint64_t bits = room_sectors * 512 > MD_BITMAP_HEADER
    ? (room_sectors * 512 - MD_BITMAP_HEADER) * 8 : 1;
  uint64_t chunk = MD_BITMAP_MIN_CHUNK;

  /* mdadm counts one bit more than a whole number of chunks needs. */
  while (sync_size * 512 / chunk + 1 > bits && chunk < (1u << 31))
    chunk *= 2;
  return (uint32_t) chunk;
}

uint32_t
md_bitmap_space (const struct md_bitmap_sb *bm)
{
  if (bm->sectors_reserved)
    return bm->sectors_reserved;
  return (uint32_t) ((MD_BITMAP_HEADER + (md_bitmap_bits (bm) + 7) / 8 + 511)
                     / 512);
}

uint32_t
md_bitmap_resize_chunk (const struct md_bitmap_sb *bm, uint64_t sync_size)
{
  uint64_t space = (uint64_t) md_bitmap_space (bm) * 512;
  struct md_bitmap_sb next = *bm;

  next.sync_size = sync_size;
  while (MD_BITMAP_HEADER + (md_bitmap_bits (&next) + 7) / 8 > space &&
         next.chunksize < (1u << 31))
    next.chunksize *= 2;
  return next.chunksize;
}

int
md_bitmap_test (const uint8_t *bits, uint64_t k)
{
  return (bits[k >> 3] >> (k & 7)) & 1;
}

void
md_bitmap_set (uint8_t *bits, uint64_t k)
{
  bits[k >> 3] |= (uint8_t) (1u << (k & 7));
}

void
md_bitmap_clear (uint8_t *bits, uint64_t k)
{
  bits[k >> 3] &= (uint8_t) ~(1u << (k & 7));
}
