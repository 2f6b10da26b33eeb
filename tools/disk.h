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

/* An error number in words, for messages about a disk: strerror, except
 * "is a directory" (-EISDIR) and "is not a regular file or block device"
 * (-ENODEV, as io_member_open and disk_open_ro say it).
 */
const char *disk_strerror (int neg_errno);

#endif /* TOOLS_DISK_H */
