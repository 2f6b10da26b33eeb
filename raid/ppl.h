/* raid/ppl.h -- md's partial parity log (PPL) for RAID-5: the on-disk
 * header and entries, their checksums, and where an entry's stripes are.
 *
 * The format is the kernel's (include/uapi/linux/raid/md_p.h, struct
 * ppl_header and struct ppl_header_entry; drivers/md/raid5-ppl.c) and
 * mdadm's (super1.c write_init_ppl1); see also
 * Documentation/driver-api/md/raid5-ppl.rst.  Each member holds a log
 * area (md_sb ppl_offset/ppl_size, sectors from the superblock).  Before
 * data of a stripe is written, the XOR of the stripe's chunks that the
 * write leaves alone -- the partial parity, PP -- goes to the log of the
 * stripe's parity member: one 4 KiB header describing up to
 * PPL_HDR_MAX_ENTRIES entries, then each entry's PP bytes in entry order.
 * After a crash, an entry's parity is made again as PP XOR the data now
 * on the modified chunks, so chunks nobody wrote cannot come back wrong
 * from a parity torn between old and new.
 *
 * Units, as md keeps them: data_sector is an array sector (512 bytes),
 * pp_size and data_size are bytes, offsets in the area are sectors.
 * Multi-byte fields are little-endian; encoding is field by field.
 *
 * Pure: no I/O, no allocation.  Errors: -EBADMSG (not a valid header:
 * checksum, signature or counts wrong), -EINVAL (parameters), with one
 * line in why (if not NULL).
 */
#ifndef RAID_PPL_H
#define RAID_PPL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PPL_HEADER_SIZE      4096u      /* bytes; also the PP block size */
#define PPL_HDR_RESERVED     512u       /* leading bytes, all 0xff */
#define PPL_HDR_MAX_ENTRIES  148u       /* (4096 - 512 - 16 - 8) / 24 */
#define PPL_ENTRY_SPACE      (128u << 10)  /* PP bytes per header with
                                         * several logs in the area */
#define PPL_AREA_SECTORS     2048u      /* what mdadm gives a v1.2 member */
#define PPL_OFFSET_V12       8          /* mdadm's: sectors after the sb */

struct ppl_entry {
  uint64_t data_sector;       /* first array sector written */
  uint32_t pp_size;           /* bytes of PP (0: a full-stripe write) */
  uint32_t data_size;         /* bytes of data written */
  uint32_t parity_disk;       /* slot holding the stripe's parity */
  uint32_t checksum;          /* ppl_checksum of the PP bytes (0 if none) */
};

struct ppl_header {
  uint32_t signature;         /* ppl_signature (set_uuid) */
  uint64_t generation;
  uint32_t entries_count;     /* <= PPL_HDR_MAX_ENTRIES */
  struct ppl_entry entries[PPL_HDR_MAX_ENTRIES];
};

/* md's ~crc32c_le(~0, buf): standard CRC-32C (iSCSI, Castagnoli).
 * Accumulated over pieces: start with crc = PPL_CRC_SEED, feed each piece
 * with ppl_crc_update, finish with ppl_crc_final; ppl_checksum is the
 * three in one.
 */
#define PPL_CRC_SEED 0xffffffffu
uint32_t ppl_crc_update (uint32_t crc, const void *buf, size_t len)
  __attribute__((nonnull));
static inline uint32_t
ppl_crc_final (uint32_t crc)
{
  return ~crc;
}
uint32_t ppl_checksum (const void *buf, size_t len) __attribute__((nonnull));

/* The header signature of an array with native (md v1.x) metadata:
 * ~crc32c_le(~0, set_uuid, 16).
 */
uint32_t ppl_signature (const uint8_t set_uuid[16]) __attribute__((nonnull));

/* Encode into PPL_HEADER_SIZE bytes at block: the reserved bytes 0xff,
 * entries past entries_count zero, the header checksum computed (over
 * all 4096 bytes with its own field zero).
 */
void ppl_header_encode (const struct ppl_header *hdr, void *block)
  __attribute__((nonnull));

/* Decode the PPL_HEADER_SIZE bytes at block and check them as md does
 * (ppl_load_distributed): checksum, then signature, then the entry
 * count.  Returns 0, or -EBADMSG with why.  *hdr holds what was found
 * either way (entries up to the count, at most the maximum).
 */
int ppl_header_decode (const void *block, uint32_t signature,
                       struct ppl_header *hdr, char *why, size_t why_len)
  __attribute__((nonnull (1, 3), warn_unused_result));

/* Where the next header of a log with several headers is, after the one
 * at sector at of the area (md's ppl_load_distributed: past the header's
 * 8 sectors and its entries' PP).
 */
uint64_t ppl_next_header (const struct ppl_header *hdr, uint64_t at)
  __attribute__((nonnull));

/* A member's log area and what it must not overlap, in sectors: offset
 * and size from the superblock at sb_sector (sb_sectors long), the data
 * area at [data_offset, data_offset + data_size).
 */
struct ppl_area {
  int32_t offset;
  uint32_t size;
  uint64_t sb_sector;
  uint32_t sb_sectors;
  uint64_t data_offset, data_size;
};

/* The log area, as md accepts it (ppl_validate_rdev).  The usable size
 * is 8 + rounddown(size - 8, 8) and must exceed 8 (one header); the area
 * may overlap neither the data nor the superblock.  Returns the usable
 * size, or -EINVAL with why.
 */
int64_t ppl_area_check (const struct ppl_area *area, char *why,
                        size_t why_len)
  __attribute__((nonnull (1), warn_unused_result));

/* Does the area hold several headers one after the other (md's
 * MULTIPLE_PPLS: room for two of 4 KiB + PPL_ENTRY_SPACE), or one?
 */
bool ppl_area_multiple (uint64_t usable_sectors);

/* The stripes an entry covers, as md's ppl_recover_entry reads it back,
 * in an array of raid_disks members with chunk_sectors chunks:
 * [first, last) array sectors; data_disks chunks of strip sectors each,
 * one chunk_sectors apart, block i of the parity being the XOR of block
 * i of each (sectors below last only) and of the PP.  Returns 0, or
 * -EBADMSG when the entry cannot be one md wrote (sizes not whole
 * sectors, more data disks than the array has, a strip longer than a
 * chunk, a parity disk out of range).
 */
struct ppl_extent {
  uint64_t first, last;       /* array sectors */
  unsigned data_disks;
  uint32_t strip;             /* sectors per chunk covered */
};
int ppl_entry_extent (const struct ppl_entry *e, unsigned raid_disks,
                      uint32_t chunk_sectors, struct ppl_extent *out,
                      char *why, size_t why_len)
  __attribute__((nonnull (1, 4), warn_unused_result));

#endif /* RAID_PPL_H */
