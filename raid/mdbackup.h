/* raid/mdbackup.h -- mdadm's reshape backup file (--backup-file): where
 * a grow that keeps its data offset keeps the array bytes of its
 * critical section (raid/reshape.h, r5_reshape_critical) while it moves
 * them, so that a crash there loses nothing.  The format is mdadm's
 * (Grow.c: struct mdp_backup_super, grow_backup, Grow_restart), so that
 * mdadm --assemble --backup-file restores what this project backed up
 * and the other way round.
 *
 * The file: a 512-byte header at byte 0, the backed-up array bytes at
 * byte 4096 (devstart: 8 sectors), in array order.  Header (little-
 * endian): "md_backup_data-1" (16 bytes), the array's uuid (16), mtime
 * (8, seconds), devstart, arraystart, length (8 each, sectors), sb_csum
 * (4) -- mdadm's checksum of the 64 bytes before it, which by a slip in
 * mdadm's bsb_csum adds the first byte 64 times: kept, as mdadm checks
 * it -- then pad1 (4), devstart2, arraystart2, length2 (8 each), sb_csum2
 * (4) of a second section ("md_backup_data-2"; not written here, read as
 * mdadm reads it).  A length of 0 is mdadm's "forgotten" backup.
 *
 * Pure: no I/O.  Units: sectors, as mdadm's.
 */
#ifndef RAID_MDBACKUP_H
#define RAID_MDBACKUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MD_BACKUP_HEADER 512u
#define MD_BACKUP_DATA_OFFSET 4096u   /* bytes: devstart 8 sectors */

struct md_backup {
  uint8_t set_uuid[16];
  uint64_t mtime;
  uint64_t devstart, arraystart, length;      /* sectors */
  uint64_t devstart2, arraystart2, length2;   /* the second section */
  bool two;                   /* "md_backup_data-2" */
};

/* The header of b (one section, "-1") into block (512 bytes). */
void md_backup_encode (const struct md_backup *b, void *block)
  __attribute__((nonnull));

/* Decode block; 0, or -EINVAL with why (len bytes): not a backup, a
 * checksum that fails, another array's (set_uuid).
 */
int md_backup_decode (const void *block, const uint8_t set_uuid[16],
                      struct md_backup *b, char *why, size_t len)
  __attribute__((nonnull (1, 2, 3), warn_unused_result));

/* A section of the file: array sectors [arraystart, +length) at byte
 * file_off of the file.
 */
struct md_backup_section {
  uint64_t file_off;          /* bytes */
  uint64_t arraystart, length;  /* sectors */
};

/* What a grow at progress (array sectors) must restore from b, as
 * mdadm's Grow_restart does: nothing if every non-empty section ends
 * before progress; else each non-empty section (into s), and *after the
 * progress once they are written in the new shape (the end of the last,
 * or progress as it was when it lies outside them).  Returns how many.
 */
unsigned md_backup_restore_plan (const struct md_backup *b, uint64_t progress,
                                 struct md_backup_section s[2],
                                 uint64_t *after)
  __attribute__((nonnull));

/* mdadm's time rule: the array's utime within 2 hours after and 10
 * minutes before the backup's mtime (else "too-old timestamp").
 */
bool md_backup_fresh (const struct md_backup *b, uint64_t utime)
  __attribute__((nonnull));

#endif /* RAID_MDBACKUP_H */
