/* tools/disk.h -- opening members and reading their md metadata, for the
 * subcommands of raid5ctl.  Plain synchronous I/O: tools read a few KiB
 * of metadata here; array data goes through array/.
 *
 * Errors are returned as -errno and never printed; the caller names the
 * disk in its one error line.
 */
#ifndef TOOLS_DISK_H
#define TOOLS_DISK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct disk {
  const char *path;           /* borrowed from the caller */
  int fd;                     /* -1 when not open; O_CLOEXEC */
  uint64_t size;              /* bytes */
  bool blockdev;
};

/* Open path read-only and find its size.  Returns 0, or -errno: open(2)'s
 * errors, -EISDIR for a directory, -ENODEV for anything that is neither a
 * regular file nor a block device.  On error d->fd is -1.
 */
int disk_open_ro (struct disk *d, const char *path)
  __attribute__((nonnull, warn_unused_result));

/* Close (if open); d->fd becomes -1. */
void disk_close (struct disk *d) __attribute__((nonnull));

/* Read len bytes at byte off.  Returns 0, -EIO at end of file, or -errno. */
int disk_pread (int fd, void *buf, size_t len, uint64_t off)
  __attribute__((nonnull, warn_unused_result));

/* Read the MD_SB_BLOCK bytes at MD_SB_OFFSET of a disk of size bytes into
 * block.  Returns 1 if they start with md's superblock magic, 0 if not
 * (or the disk is too small to hold a superblock; block is then zeroed),
 * or -errno.
 */
int disk_read_sb (int fd, uint64_t size, void *block)
  __attribute__((nonnull, warn_unused_result));

/* An md superblock of another version than 1.2, found by
 * disk_find_other_md().
 */
struct disk_md {
  const char *version;        /* "1.1", "1.0" or "0.90" */
  uint64_t offset;            /* bytes from the start of the disk */
};

/* Look where md keeps its other superblock versions: 1.1 at byte 0, 1.0
 * 8 to 12 KiB from the end, 0.90 64 to 128 KiB from the end (each checked
 * by magic, version and, for 1.x, its own super_offset).  Returns how
 * many were found (0..3, filling found[] and, for the first, block with
 * its 4096 bytes) or -errno.
 */
int disk_find_other_md (int fd, uint64_t size, struct disk_md found[3],
                        void *block)
  __attribute__((nonnull, warn_unused_result));

/* The array a raw superblock block names, without any check (for "this
 * disk belongs to ..." messages): set_uuid as md prints it, set_name.
 */
void disk_sb_identity (const void *block, char uuid[36], char name[33])
  __attribute__((nonnull));

/* The little-endian 32-bit integer at p (md's metadata is little-endian). */
uint32_t disk_le32 (const void *p) __attribute__((nonnull));

/* An error number in words, for messages about a disk: strerror, except
 * "is a directory" (-EISDIR) and "is not a regular file or block device"
 * (-ENODEV, as io_member_open and disk_open_ro say it).
 */
const char *disk_strerror (int neg_errno);

#endif /* TOOLS_DISK_H */
