/* raid/badblocks.h -- md's bad-block log: the log area of a v1.x member
 * (decode, encode, where mdadm puts it) and the table md keeps in memory
 * (add, clear, look up), with md's rules.
 *
 * Where: the superblock's bblog_offset (SIGNED sectors from the
 * superblock), bblog_size (sectors) and bblog_shift (an entry counts
 * blocks of 2^shift sectors).  md reads the log only while feature_map
 * bit MD_FEATURE_BAD_BLOCKS is set (md.c super_1_load), and
 * super_1_sync sets that bit exactly when the member's table is not
 * empty -- it is per member.
 *
 * Entries (md.c super_1_load and super_1_sync; mdadm super1.c
 * examine_badblocks_super1): little-endian 64-bit words
 *     (start << 10) | length
 * start in the high 54 bits, length in the low 10, both in blocks.  The
 * length is stored as is, 1..512 as md writes it (BB_MAX_LEN) -- NOT
 * length - 1: that is only block/badblocks.c's in-memory form (BB_MAKE
 * keeps len - 1 in 9 bits; super_1_sync stores BB_LEN(), which adds the 1
 * back).  super_1_sync fills the rest of the log with all-ones words and
 * super_1_load stops at the first one; recent kernels also skip all-zero
 * words (an empty entry some mdadm versions left).
 *
 * Sectors here are MEMBER sectors from the start of the member device,
 * not from data_offset: md's table holds device sectors.  super_1_load
 * passes the stored start to badblocks_set as is and super_1_sync stores
 * it as is; md.h is_badblock and md.c rdev_set_badblocks add
 * rdev->data_offset to the data-area sector a personality asks about;
 * sysfs md/dev-NAME/bad_blocks shows and takes the table's device sectors.
 * (tests/vm/test-md-badblocks.sh checks this against kernel md.)
 *
 * Pure: no I/O, no allocation.  Errors: -EBADMSG (a corrupt log), -ENOSPC
 * (the table or the log is full), -EINVAL (a bad argument); why (if not
 * NULL) gets one line.
 */
#ifndef RAID_BADBLOCKS_H
#define RAID_BADBLOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "raid/mdsb.h"

#define MD_BB_MAX          512u  /* entries md's table holds: MAX_BADBLOCKS
                                    (PAGE_SIZE / 8) */
#define MD_BB_MAX_LEN      512u  /* blocks one entry covers: BB_MAX_LEN */
#define MD_BB_LOG_SECTORS  8u    /* mdadm's bblog_size, 512 entries; also
                                    the most super_1_load reads (one page) */
#define MD_BB_MAX_SHIFT    16u   /* larger shifts are taken as corrupt (md
                                    and mdadm only ever write 0) */
#define MD_BB_UNUSED       UINT64_MAX  /* a log word holding no entry */

/* One range of bad blocks; start and len in blocks of 2^shift sectors. */
struct md_bb_range {
  uint64_t start;
  uint32_t len;               /* 1 .. MD_BB_MAX_LEN */
};

/* A member's table, as md keeps it (struct badblocks): sorted by start,
 * disjoint, every entry at most MD_BB_MAX_LEN blocks.  Owned by the
 * caller; about 8 KiB.  Not locked: who shares one must.
 */
struct md_bb_table {
  unsigned shift;             /* <= MD_BB_MAX_SHIFT */
  unsigned count;
  struct md_bb_range r[MD_BB_MAX];
};

/* An empty table counting blocks of 2^shift sectors. */
void md_bb_init (struct md_bb_table *t, unsigned shift)
  __attribute__((nonnull));

/* Mark sectors [sector, sector + sectors) bad, as badblocks_set does:
 * the start rounded down and the end up to whole blocks; the range merged
 * with every entry it overlaps or touches (and those with every entry
 * touching them: the whole run of bad blocks), the run cut into entries
 * of MD_BB_MAX_LEN blocks from its start: the fewest entries that cover
 * it.  md keeps the same sectors; its entry boundaries may
 * differ where it merged less (badblocks_set merges a range with its
 * neighbours while the result fits one entry).
 * Returns 0; -EINVAL for sectors 0 or a range past 2^64; -ENOSPC when
 * the table cannot take it (more than MD_BB_MAX entries): the table is
 * then unchanged (md may keep part of the range; its callers fail the
 * member either way).
 */
int md_bb_add (struct md_bb_table *t, uint64_t sector, uint64_t sectors)
  __attribute__((nonnull, warn_unused_result));

/* Sectors [sector, sector + sectors) are good again (a write to them
 * worked), as badblocks_clear does: the start rounded UP and the end
 * down to whole blocks, so a partly cleared block stays bad.  Returns 0
 * (sectors 0: nothing), -EINVAL for a range past 2^64, or -ENOSPC when an
 * entry would have to be split in a full table (md drops the clear then;
 * so does this: the table is unchanged).
 */
int md_bb_clear (struct md_bb_table *t, uint64_t sector, uint64_t sectors)
  __attribute__((nonnull, warn_unused_result));

enum md_bb_hit {
  MD_BB_NONE,                 /* no sector of the range is bad */
  MD_BB_SOME,                 /* some are */
  MD_BB_ALL,                  /* every one is */
};

/* Which sectors of [sector, sector + sectors) are bad (badblocks_check,
 * which answers "some" and the first bad entry): with SOME or ALL,
 * *first_bad (if not NULL) is the first bad sector of the range and
 * *bad_run (if not NULL) how many bad sectors follow it without a gap,
 * within the range.  A sector is bad when its block is.
 */
enum md_bb_hit md_bb_check (const struct md_bb_table *t, uint64_t sector,
                            uint64_t sectors, uint64_t *first_bad,
                            uint64_t *bad_run)
  __attribute__((nonnull (1)));

/* Bad sectors in the table (blocks times 2^shift). */
uint64_t md_bb_sectors (const struct md_bb_table *t) __attribute__((nonnull));

/* ---- The log area of a v1.x member ---- */

/* Does sb reserve a log (bblog_offset and bblog_size both non-zero, as
 * mdadm and super_1_sync ask)?  If so, and sector/sectors are not NULL,
 * where: the member sector it starts at (super_offset + bblog_offset) and
 * its size.  A log that would start before the member reads as none.
 */
bool md_bblog_area (const struct md_sb *sb, uint64_t *sector,
                    uint32_t *sectors)
  __attribute__((nonnull (1)));

/* Is the log of sb, on a member of member_sectors, where md can use it:
 * 1..MD_BB_LOG_SECTORS sectors (super_1_load refuses a longer one), a
 * shift of at most MD_BB_MAX_SHIFT, inside the member, clear of the
 * superblock and of the data area?  0 if so or if sb reserves none;
 * -EBADMSG with why otherwise.  With MD_FEATURE_BAD_BLOCKS set a log
 * must exist (super_1_load refuses offset 0; a size of 0 is taken as
 * corrupt here, where md would read an empty list).
 */
int md_bblog_check (const struct md_sb *sb, uint64_t member_sectors,
                    char *why, size_t why_len)
  __attribute__((nonnull (1), warn_unused_result));

/* Load the log into t (made empty, with sb's shift), as super_1_load
 * does: without MD_FEATURE_BAD_BLOCKS the table stays empty and area is
 * not read (it may be NULL); with it, area holds the bblog_size * 512
 * bytes read at md_bblog_area().  Words are read up to the first all-ones
 * one; all-zero words are skipped.  Returns 0, or -EBADMSG with why when
 * md_bblog_check fails or an entry is corrupt: length 0, or past the end
 * of the member (member_sectors); -ENOSPC when the entries need more than
 * MD_BB_MAX entries of the table.
 */
int md_bblog_decode (const struct md_sb *sb, const void *area,
                     uint64_t member_sectors, struct md_bb_table *t,
                     char *why, size_t why_len)
  __attribute__((nonnull (1, 4), warn_unused_result));

/* One word of a log as mdadm --examine-badblocks lists it: sector and
 * length shifted to sectors, whatever they hold (zeros included).
 */
struct md_bb_entry {
  uint64_t sector;
  uint64_t sectors;
};

/* The words of a log of bytes bytes (a multiple of 8) in the order
 * stored, up to the first all-ones one, shifted by shift, into out (at
 * most max).  Returns how many words there are before the first
 * all-ones one, which may exceed max.
 */
unsigned md_bblog_list (const void *area, size_t bytes, unsigned shift,
                        struct md_bb_entry *out, unsigned max)
  __attribute__((nonnull (1)));

/* Encode t into the log area of sb (bblog_size * 512 bytes), as
 * super_1_sync does: the entries in order, then all-ones words.  Returns
 * 0; -EINVAL if t's shift is not sb's, sb reserves no log or an entry
 * starts past the 54 bits a word holds; -ENOSPC if the entries do not fit
 * the log (md would drop the ones past it).
 */
int md_bblog_encode (const struct md_sb *sb, const struct md_bb_table *t,
                     void *area)
  __attribute__((nonnull, warn_unused_result));

/* super_1_sync's rule for the member's MD_FEATURE_BAD_BLOCKS bit in
 * *feature_map: set exactly when t is not empty.  Returns 0, or -ENOSPC
 * when t is not empty but sb has no log to record it in, or one too
 * small (md fails the member then: md_error; the bit is set anyway).
 */
int md_bblog_feature (const struct md_sb *sb, const struct md_bb_table *t,
                      uint32_t *feature_map)
  __attribute__((nonnull, warn_unused_result));

/* Where mdadm's write_init_super1 puts the log of a new 1.1/1.2 member:
 * room_offset and room_sectors are the bitmap's (or PPL's, or the room
 * reserved for a bitmap) offset from the superblock and size.  The log
 * takes MD_BB_LOG_SECTORS after that room if they fit before
 * sb->data_offset, else the MD_BB_LOG_SECTORS just before the data if
 * those start 8 sectors or more past the superblock, else there is none.
 * Sets sb's bblog_offset, bblog_size and bblog_shift (0); reads
 * super_offset and data_offset.
 */
void md_bblog_place (struct md_sb *sb, int64_t room_offset,
                     uint64_t room_sectors)
  __attribute__((nonnull));

/* Where mdadm --update=bbl puts a log on a 1.1/1.2 member that has none
 * (super1.c, UOPT_BBL): after the bitmap's area or the PPL's (room_offset
 * and room_sectors from the superblock, room_sectors 0 for neither), and
 * at least 8 + 64 sectors past the superblock's sector when the data
 * leaves room; mdadm's arithmetic, which measures that offset against
 * the data offset as if both counted from the disk's start.  Here the log
 * must also end before the data (mdadm's test is 8 sectors laxer on 1.2).
 * Returns true and sets bblog_offset, bblog_size (MD_BB_LOG_SECTORS) and
 * bblog_shift (0) if it fits; false, sb unchanged, if not or if sb
 * already has a log or its superblock follows the data (1.0).
 */
bool md_bblog_update (struct md_sb *sb, int64_t room_offset,
                      uint64_t room_sectors)
  __attribute__((nonnull));

#endif /* RAID_BADBLOCKS_H */
