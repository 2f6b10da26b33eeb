/* raid/mdbitmap.h -- md's internal write-intent bitmap (version 4).
 *
 * On a v1.2 member it sits at super_offset + bitmap_offset sectors (mdadm:
 * +8, i.e. byte 8192): a 256-byte header, then one bit per bitmap chunk of
 * MEMBER space (relative to data_offset), least significant bit first,
 * the whole area rounded up to 4 KiB.  Every active member holds the same
 * copy.  A set bit means "writes may have been in flight here: parity
 * must be resynced after a crash".
 *
 * Units: chunksize in BYTES (as md stores it), sync_size in SECTORS.
 * Pure: no I/O, no allocation.  Errors as in mdsb.h: -EINVAL (no bitmap
 * magic), -EBADMSG (corrupt or inconsistent), -ENOTSUP (unsupported
 * version); why gets one line.
 */
#ifndef RAID_MDBITMAP_H
#define RAID_MDBITMAP_H

#include <stddef.h>
#include <stdint.h>

#define MD_BITMAP_MAGIC       0x6d746962u
#define MD_BITMAP_HEADER      256u
#define MD_BITMAP_VERSION     4u
#define MD_BITMAP_STALE       2u          /* state mask: forces full resync */
#define MD_BITMAP_MIN_CHUNK   (64u << 20) /* mdadm's default floor */
#define MD_BITMAP_DAEMON_SLEEP 5u         /* seconds, mdadm's default */
/* Where mdadm puts an internal bitmap: 8 sectors after a v1.2
 * superblock (its bitmap_offset), at create and when one is added.
 */
#define MD_BITMAP_SB_OFFSET   8u
#define MD_BITMAP_MAX_SYNC    (UINT64_C (1) << 54)  /* sectors: 8 EiB */

struct md_bitmap_sb {
  uint32_t version;
  uint8_t uuid[16];           /* the array's set_uuid */
  uint64_t events;
  uint64_t events_cleared;
  uint64_t sync_size;         /* sectors covered (the component size) */
  uint32_t state;
  uint32_t chunksize;         /* bytes of member space per bit */
  uint32_t daemon_sleep;      /* seconds */
  uint32_t write_behind;
  uint32_t sectors_reserved;
  uint32_t nodes;
};

/* Decode and check the 256-byte header; uuid must be the array's. */
int md_bitmap_decode (const void *header, const uint8_t uuid[16],
                      struct md_bitmap_sb *bm, char *why, size_t why_len)
  __attribute__((nonnull (1, 2, 3), warn_unused_result));

/* Encode into MD_BITMAP_HEADER bytes. */
void md_bitmap_encode (const struct md_bitmap_sb *bm, void *header)
  __attribute__((nonnull));

/* Number of bits: ceil(sync_size / (chunksize / 512)). */
uint64_t md_bitmap_bits (const struct md_bitmap_sb *bm)
  __attribute__((nonnull));

/* Bytes of the on-disk area (header + bits), rounded up to 4 KiB. */
uint64_t md_bitmap_area_bytes (const struct md_bitmap_sb *bm)
  __attribute__((nonnull));

/* mdadm's default bitmap chunk (bytes) for a component of sync_size
 * sectors (sb.size) with room_sectors reserved for the bitmap: the
 * smallest power of two >= MD_BITMAP_MIN_CHUNK whose bits fit the room
 * after the header, counting bits as mdadm does (size / chunk + 1).
 */
uint32_t md_bitmap_default_chunk (uint64_t sync_size, uint64_t room_sectors)
  __attribute__((const));

/* Sectors mdadm reserves for the bitmap (choose_bm_space: 8, 128 or
 * 256).  mdadm passes the member size when it computes the data offset
 * and the component size (sb.size) when it sizes the bitmap and places the
 * bad-block log; pass whichever of the two the question is about.
 */
uint64_t md_bitmap_room (uint64_t member_sectors) __attribute__((const));

/* The sectors md lets the bitmap of bm fill when its component grows
 * (md_bitmap_resize's bitmap_info.space): what the bitmap's header
 * records (sectors_reserved, which md writes back with the header from
 * the first resize on: md_bitmap_update_sb), or where it records none --
 * mdadm writes 0, and a v1.2 superblock has no such field -- the sectors
 * its bits fill now, header included.
 */
uint32_t md_bitmap_space (const struct md_bitmap_sb *bm)
  __attribute__((nonnull));

/* The chunk (bytes per bit) md gives the bitmap of bm when its component
 * grows to sync_size sectors (md_bitmap_resize, called by raid5_resize):
 * the chunk doubles until the new bits fit in md_bitmap_space (bm).
 */
uint32_t md_bitmap_resize_chunk (const struct md_bitmap_sb *bm,
                                 uint64_t sync_size)
  __attribute__((nonnull));

/* Bit access on the area after the header (LSB first). */
int md_bitmap_test (const uint8_t *bits, uint64_t k) __attribute__((nonnull));
void md_bitmap_set (uint8_t *bits, uint64_t k) __attribute__((nonnull));
void md_bitmap_clear (uint8_t *bits, uint64_t k) __attribute__((nonnull));

#endif /* RAID_MDBITMAP_H */
