/* raid/ppl.c -- md's partial parity log format (see ppl.h). */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <isa-l/crc.h>

#include "raid/le.h"
#include "raid/ppl.h"

/* Header byte offsets (md_p.h struct ppl_header, packed). */
#define HDR_SIGNATURE   512u
#define HDR_GENERATION  520u
#define HDR_COUNT       528u
#define HDR_CHECKSUM    532u
#define HDR_ENTRIES     536u
#define ENTRY_SIZE      24u

uint32_t
ppl_crc_update (uint32_t crc, const void *buf, size_t len)
{
  const unsigned char *p = buf;

  /* ISA-L's crc32_iscsi is crc32c_le: the register in and out, no
   * inversion (its int length: fed in pieces well below 2 GiB).
   */
  while (len > 0) {
    size_t n = len < (1u << 30) ? len : (1u << 30);

    crc = crc32_iscsi ((unsigned char *) p, (int) n, crc);
    p += n;
    len -= n;
  }
  return crc;
}

uint32_t
ppl_checksum (const void *buf, size_t len)
{
  return ppl_crc_final (ppl_crc_update (PPL_CRC_SEED, buf, len));
}

uint32_t
ppl_signature (const uint8_t set_uuid[16])
{
  return ppl_checksum (set_uuid, 16);
}

static void
entry_encode (const struct ppl_entry *e, uint8_t *p)
{
  le_put (p, 8, e->data_sector);
  le_put (p + 8, 4, e->pp_size);
  le_put (p + 12, 4, e->data_size);
  le_put (p + 16, 4, e->parity_disk);
  le_put (p + 20, 4, e->checksum);
}

static void
entry_decode (const uint8_t *p, struct ppl_entry *e)
{
  e->data_sector = le_get (p, 8);
  e->pp_size = (uint32_t) le_get (p + 8, 4);
  e->data_size = (uint32_t) le_get (p + 12, 4);
  e->parity_disk = (uint32_t) le_get (p + 16, 4);
  e->checksum = (uint32_t) le_get (p + 20, 4);
}

void
ppl_header_encode (const struct ppl_header *hdr, void *block)
{
  uint8_t *b = block;
  unsigned n = hdr->entries_count < PPL_HDR_MAX_ENTRIES
    ? hdr->entries_count : PPL_HDR_MAX_ENTRIES;

  memset (b, 0, PPL_HEADER_SIZE);
  memset (b, 0xff, PPL_HDR_RESERVED);
  le_put (b + HDR_SIGNATURE, 4, hdr->signature);
  le_put (b + HDR_GENERATION, 8, hdr->generation);
  le_put (b + HDR_COUNT, 4, hdr->entries_count);
  for (unsigned i = 0; i < n; i++)
    entry_encode (&hdr->entries[i], b + HDR_ENTRIES + i * ENTRY_SIZE);
  le_put (b + HDR_CHECKSUM, 4, ppl_checksum (b, PPL_HEADER_SIZE));
}

int
ppl_header_decode (const void *block, uint32_t signature,
                   struct ppl_header *hdr, char *why, size_t why_len)
{
  const uint8_t *b = block;
  uint8_t copy[PPL_HEADER_SIZE];
  uint32_t stored, computed;
  unsigned n;

  memset (hdr, 0, sizeof *hdr);
  hdr->signature = (uint32_t) le_get (b + HDR_SIGNATURE, 4);
  hdr->generation = le_get (b + HDR_GENERATION, 8);
  hdr->entries_count = (uint32_t) le_get (b + HDR_COUNT, 4);
  n = hdr->entries_count < PPL_HDR_MAX_ENTRIES
    ? hdr->entries_count : PPL_HDR_MAX_ENTRIES;
  for (unsigned i = 0; i < n; i++)
    entry_decode (b + HDR_ENTRIES + i * ENTRY_SIZE, &hdr->entries[i]);

  /* md checks the checksum with the field zeroed, over all 4 KiB. */
  memcpy (copy, b, sizeof copy);
  stored = (uint32_t) le_get (copy + HDR_CHECKSUM, 4);
  le_put (copy + HDR_CHECKSUM, 4, 0);
  computed = ppl_checksum (copy, sizeof copy);
  if (stored != computed)
    return le_bad (why, why_len, -EBADMSG, "PPL header checksum %#" PRIx32
                   " is wrong (computed %#" PRIx32 ")", stored, computed);
  if (hdr->signature != signature)
    return le_bad (why, why_len, -EBADMSG, "PPL header signature %#" PRIx32
                   " is not this array's (%#" PRIx32 ")", hdr->signature,
                   signature);
  if (hdr->entries_count > PPL_HDR_MAX_ENTRIES)
    return le_bad (why, why_len, -EBADMSG, "PPL header counts %" PRIu32
                   " entries, at most %u fit", hdr->entries_count,
                   PPL_HDR_MAX_ENTRIES);
  return 0;
}

uint64_t
ppl_next_header (const struct ppl_header *hdr, uint64_t at)
{
  uint64_t pp = 0;
  unsigned n = hdr->entries_count < PPL_HDR_MAX_ENTRIES
    ? hdr->entries_count : PPL_HDR_MAX_ENTRIES;

  for (unsigned i = 0; i < n; i++)
    pp += hdr->entries[i].pp_size;
  return at + PPL_HEADER_SIZE / 512 + pp / 512;
}

int64_t
ppl_area_check (const struct ppl_area *area, char *why, size_t why_len)
{
  int32_t offset = area->offset;
  uint32_t size = area->size, sb_sectors = area->sb_sectors;
  uint64_t sb_sector = area->sb_sector, data_offset = area->data_offset;
  uint64_t data_size = area->data_size;
  int64_t start = (int64_t) sb_sector + offset;
  uint64_t usable = size < 8 ? 0 : 8 + ((size - 8) & ~7u);

  if (usable <= 8)
    return le_bad (why, why_len, -EINVAL, "PPL area of %" PRIu32 " sectors "
                   "holds no entry (more than 8 are needed)", size);
  if (start < 0)
    return le_bad (why, why_len, -EINVAL, "PPL area at %" PRId32 " sectors "
                   "from the superblock starts before the member", offset);
  if ((uint64_t) start < data_offset + data_size &&
      data_offset < (uint64_t) start + usable)
    return le_bad (why, why_len, -EINVAL, "PPL area [%" PRId64 ", +%" PRIu64
                   ") sectors overlaps the data [%" PRIu64 ", +%" PRIu64 ")",
                   start, usable, data_offset, data_size);
  /* md's rule for native metadata: after the superblock, or wholly
   * before it.
   */
  if (!((offset > 0 && (uint32_t) offset >= sb_sectors) ||
        (offset <= 0 && (int64_t) offset + (int64_t) usable <= 0)))
    return le_bad (why, why_len, -EINVAL, "PPL area at %" PRId32 " sectors "
                   "from the superblock overlaps the superblock's %" PRIu32,
                   offset, sb_sectors);
  return (int64_t) usable;
}

bool
ppl_area_multiple (uint64_t usable_sectors)
{
  return usable_sectors * 512 >= 2 * (PPL_ENTRY_SPACE + PPL_HEADER_SIZE);
}

int
ppl_entry_extent (const struct ppl_entry *e, unsigned raid_disks,
                  uint32_t chunk_sectors, struct ppl_extent *out,
                  char *why, size_t why_len)
{
  uint32_t pp = e->pp_size / 512, data = e->data_size / 512;

  if (raid_disks < 3 || chunk_sectors == 0)
    return le_bad (why, why_len, -EINVAL, "no RAID-5 geometry");
  if (e->pp_size % 512 || e->data_size % 512 || data == 0 ||
      e->parity_disk >= raid_disks)
    return le_bad (why, why_len, -EBADMSG, "PPL entry at sector %" PRIu64
                   ": pp_size %" PRIu32 ", data_size %" PRIu32 ", parity "
                   "disk %" PRIu32 " cannot be one md wrote", e->data_sector,
                   e->pp_size, e->data_size, e->parity_disk);
  out->first = e->data_sector;
  if (pp < chunk_sectors) {
    /* Within a chunk: data_disks strips of pp (or, full-stripe, of an
     * equal share of the data), one chunk apart.
     */
    out->data_disks = pp ? data / pp : raid_disks - 1;
    out->strip = pp ? pp : data / out->data_disks;
    out->last = out->first + (uint64_t) (out->data_disks - 1) * chunk_sectors
      + out->strip;
    if (out->data_disks == 0 || out->data_disks > raid_disks - 1 ||
        out->strip == 0 || (uint64_t) out->data_disks * out->strip != data)
      return le_bad (why, why_len, -EBADMSG, "PPL entry at sector %" PRIu64
                     ": %" PRIu32 " data bytes are not whole strips of %"
                     PRIu32 " PP bytes over at most %u chunks",
                     e->data_sector, e->data_size, e->pp_size,
                     raid_disks - 1);
    return 0;
  }
  if (pp > chunk_sectors)
    return le_bad (why, why_len, -EBADMSG, "PPL entry at sector %" PRIu64
                   ": %" PRIu32 " PP bytes exceed a chunk", e->data_sector,
                   e->pp_size);
  out->data_disks = raid_disks - 1;
  out->strip = chunk_sectors;
  out->last = out->first + data;
  return 0;
}
