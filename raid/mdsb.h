/* raid/mdsb.h -- Linux md's v1.2 superblock: decode, check, encode.
 *
 * The superblock sits at byte 4096 of every member (sector 8, version
 * 1.2).  Fields are little-endian on disk; struct md_sb holds them in host
 * order, in md's own units (SECTORS of 512 bytes) so that values read
 * and written match what mdadm --examine shows.  The byte layout is
 * encoded field by field, never memcpy'd from a struct.
 *
 * md_sb_decode() never trusts the disk: every field is bounds-checked,
 * the checksum is verified, and anything this project cannot serve (other
 * levels, journal, clustering, reshapes but growing by members with the
 * data offset moved down) is refused with a reason.  A
 * partial parity log (PPL) is decoded and its area checked as md checks
 * it (raid/ppl.h); whether it can be served is for array/ to say.
 *
 * Pure: no I/O, no allocation.  Errors: -EINVAL (not an md superblock:
 * wrong magic), -EBADMSG (an md superblock that is corrupt or
 * inconsistent), -ENOTSUP (valid, but uses something not supported);
 * why (if not NULL) gets one line of explanation.  The bad-block log's
 * place is checked here (md_bblog_check); its entries are not read.
 */
#ifndef RAID_MDSB_H
#define RAID_MDSB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MD_SB_MAGIC          0xa92b4efcu
#define MD_SB_SECTOR         8u           /* v1.2: 4 KiB from the start */
#define MD_SB_OFFSET         4096u        /* bytes */
#define MD_SB_BLOCK          4096u        /* bytes read and written */
#define MD_SB_MAX_DEV        1920u        /* (4096 - 256) / 2 */
#define MD_SB_DEFAULT_MAX_DEV 128u        /* mdadm: a 512-byte superblock */
#define MD_MAX_SECTOR        UINT64_MAX   /* resync_offset when clean */

/* dev_roles[] values; 0..MD_ROLE_MAX-1 is an active slot */
#define MD_ROLE_SPARE        0xffffu
#define MD_ROLE_FAULTY       0xfffeu
#define MD_ROLE_JOURNAL      0xfffdu
#define MD_ROLE_MAX          0xff00u

/* feature_map bits */
#define MD_FEATURE_BITMAP_OFFSET   1u
#define MD_FEATURE_RECOVERY_OFFSET 2u
#define MD_FEATURE_RESHAPE_ACTIVE  4u
#define MD_FEATURE_BAD_BLOCKS      8u
#define MD_FEATURE_REPLACEMENT     16u
#define MD_FEATURE_RESHAPE_BACKWARDS 32u
#define MD_FEATURE_NEW_OFFSET      64u
#define MD_FEATURE_RECOVERY_BITMAP 128u
#define MD_FEATURE_CLUSTERED       256u
#define MD_FEATURE_JOURNAL         512u
#define MD_FEATURE_PPL             1024u
#define MD_FEATURE_MULTIPLE_PPLS   2048u
/* Either flavour of the partial parity log. */
#define MD_FEATURE_ANY_PPL (MD_FEATURE_PPL | MD_FEATURE_MULTIPLE_PPLS)
#define MD_FEATURE_RAID0_LAYOUT    4096u
#define MD_FEATURE_ALL             8191u

struct md_sb {
  uint32_t feature_map;
  uint8_t set_uuid[16];
  char set_name[33];          /* NUL-terminated copy of the 32 bytes */
  uint64_t ctime;             /* low 40 bits seconds, high 24 microseconds */
  int32_t level;
  uint32_t layout;
  uint64_t size;              /* sectors used per member; mdadm makes it a
                                 chunk multiple, md (and r5_geom) round it
                                 down to one */
  uint32_t chunksize;         /* sectors */
  uint32_t raid_disks;
  int32_t bitmap_offset;      /* sectors from the superblock, if feature 1 */
  /* The PPL area (raid/ppl.h), if feature PPL or MULTIPLE_PPLS: sectors
   * from the superblock, and its size.  md keeps these in the same four
   * bytes as bitmap_offset (a union): encode writes them there when a
   * PPL feature is set, bitmap_offset otherwise.
   */
  int16_t ppl_offset;
  uint16_t ppl_size;
  /* A reshape, if feature RESHAPE_ACTIVE (raid/reshape.h): raid_disks is
   * the new count, reshape_position the array sectors already in the new
   * shape, data_offset + new_offset (feature NEW_OFFSET) the new data
   * offset.
   */
  uint32_t new_level;
  uint64_t reshape_position;
  int32_t delta_disks;
  uint32_t new_layout, new_chunk;
  int32_t new_offset;
  uint64_t data_offset;       /* sectors from the member start */
  uint64_t data_size;         /* sectors usable after data_offset */
  uint64_t super_offset;      /* sector of this superblock (8) */
  uint64_t recovery_offset;   /* sectors rebuilt, if feature 2 */
  uint32_t dev_number;        /* index into dev_roles of this member */
  uint32_t cnt_corrected_read;
  uint8_t device_uuid[16];
  uint8_t devflags;
  uint8_t bblog_shift;
  uint16_t bblog_size;
  int32_t bblog_offset;
  uint64_t utime;
  uint64_t events;
  uint64_t resync_offset;     /* MD_MAX_SECTOR when clean */
  uint32_t max_dev;
  uint16_t dev_roles[MD_SB_MAX_DEV];
};

/* The checksum md and mdadm compute over block (at least 256 + 2*max_dev
 * bytes, max_dev taken from the block itself, at most MD_SB_MAX_DEV).
 */
uint32_t md_sb_csum (const void *block) __attribute__((nonnull));

/* The array's sectors in the shape a reshape goes to (raid_disks data
 * disks but one, sb->size of each in whole chunks): where its
 * reshape_position ends.
 */
static inline uint64_t
md_sb_reshape_end (const struct md_sb *sb)
{
  return sb->size / sb->chunksize * sb->chunksize * (sb->raid_disks - 1);
}

/* Decode and check the MD_SB_BLOCK bytes found at sector MD_SB_SECTOR of a
 * member of member_sectors sectors.  Returns 0, or -EINVAL / -EBADMSG /
 * -ENOTSUP as described above.  Whatever the result, *sb holds every
 * field as found in the block (dev_roles up to max_dev, at most
 * MD_SB_MAX_DEV), so tools can show what could not be used.
 */
int md_sb_decode (const void *block, uint64_t member_sectors,
                  struct md_sb *sb, char *why, size_t why_len)
  __attribute__((nonnull (1, 3), warn_unused_result));

/* Does block start with md's superblock magic? */
bool md_sb_has_magic (const void *block) __attribute__((nonnull));

/* What frames a superblock: its magic, major version and checksum (as
 * stored, and as computed over the block).
 */
struct md_sb_frame {
  uint32_t magic;
  uint32_t major_version;
  uint32_t csum_stored, csum_computed;
};

/* Every field of the MD_SB_BLOCK bytes at block, with no check at all
 * (for showing what a disk holds, corrupt or not), and if frame is not
 * NULL its frame.  md_sb_decode() is the one to trust.
 */
void md_sb_peek (const void *block, struct md_sb *sb,
                 struct md_sb_frame *frame)
  __attribute__((nonnull (1, 2)));

/* Encode into MD_SB_BLOCK bytes (the rest zeroed), checksum included.
 * Only the first max_dev roles are written.
 */
void md_sb_encode (const struct md_sb *sb, void *block)
  __attribute__((nonnull));

/* Role of this member (dev_roles[dev_number]).  A role at or beyond
 * raid_disks (but below MD_ROLE_MAX) is not a data slot; md ignores such
 * a member and so does array/ (it is left out, like a spare).
 */
unsigned md_sb_role (const struct md_sb *sb) __attribute__((nonnull));

/* The data offset's move a reshape records, sectors: new_offset with
 * feature NEW_OFFSET, else 0 (md ignores new_offset then: super_1_load;
 * a grow that keeps its data offset, with mdadm's backup file).
 */
static inline int32_t
md_sb_new_offset (const struct md_sb *sb)
{
  return sb->feature_map & MD_FEATURE_NEW_OFFSET ? sb->new_offset : 0;
}

/* The lowest data offset, in bytes, a reshape may move a v1.2 member's
 * data down to (md.c super_1_allow_new_offset, which refuses a new
 * offset below it): 36 KiB past the superblock's start, past the end of
 * its bad-block log, and past the end of its internal bitmap, whose area
 * is bitmap_bytes (whole pages; 0: none).  A partial parity log's area
 * is not counted: arrays with one do not grow (md's check_reshape).
 */
uint64_t md_sb_new_offset_floor (const struct md_sb *sb, uint64_t bitmap_bytes)
  __attribute__((nonnull));

/* UUID as md prints it ("a1b2c3d4:...", 35 characters plus NUL). */
void md_uuid_format (const uint8_t uuid[16], char out[36])
  __attribute__((nonnull));

/* mdadm's default data offset for a v1.2 member of member_sectors
 * sectors and this chunk (sectors), in sectors (validate_geometry1),
 * with room for a bitmap or, ppl, for a partial parity log.
 */
uint64_t md_default_data_offset (uint64_t member_sectors, uint32_t chunk,
                                 bool ppl)
  __attribute__((const));

#endif /* RAID_MDSB_H */
