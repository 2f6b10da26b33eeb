/* tools/disk.h -- looking at disks (members, new disks) for the
 * subcommands of raid5ctl: opened read-only through io/'s member
 * interface, their md superblock read.  Tools read a few KiB of metadata
 * here; array data goes through array/.
 *
 * Errors are returned as -errno and never printed; the caller names the
 * disk in its one error line.
 */
#ifndef TOOLS_DISK_H
#define TOOLS_DISK_H

#include <stdbool.h>
#include <stdint.h>

#include "io/member.h"

/* Open path read-only (io_member_open_ro), an NBD URI with raid5ctl's
 * TLS options (tool_tls): 0, or -errno (-EISDIR for a directory, -ENODEV
 * for neither a regular file nor a block device).
 */
int disk_open_ro (struct io_member *d, const char *path)
  __attribute__((nonnull, warn_unused_result));

/* Read the MD_SB_BLOCK bytes at MD_SB_OFFSET of disk d into block.
 * Returns 1 if they start with md's superblock magic, 0 if not (or the
 * disk is too small to hold a superblock; block is then zeroed), or
 * -errno.
 */
int disk_read_sb (const struct io_member *d, void *block)
  __attribute__((nonnull, warn_unused_result));

/* How a job reads and writes members: O_DIRECT (--direct), through the
 * page cache (--buffered), or chosen by what they are (neither).
 */
enum disk_cache_mode {
  DISK_CACHE_AUTO,
  DISK_CACHE_DIRECT,
  DISK_CACHE_BUFFERED,
};

/* Take --direct (c 'd') or --buffered ('B') into *mode: TOOL_OK, or one
 * error line if the other was given already.
 */
int disk_cache_option (enum disk_cache_mode *mode, int c)
  __attribute__((nonnull, warn_unused_result));

/* Whether a job over paths[0..n) (NULL entries, missing members, skipped)
 * uses O_DIRECT.  Auto: when every member given is a block device, as
 * md's jobs never pass through the page cache: a whole-device pass
 * there evicts what the system was caching and copies every byte once
 * more (a check in a guest ran at 0.06 of its disks buffered, 0.15
 * direct).  Image files stay buffered (tmpfs has no O_DIRECT).  A path
 * that cannot be looked at counts as no block device (its open says
 * why).
 */
bool disk_use_direct (enum disk_cache_mode mode, const char *const *paths,
                      unsigned n)
  __attribute__((nonnull));

/* Say on stderr, once, that the job chose O_DIRECT by itself (the
 * members are block devices) and how to have the page cache instead.
 */
void disk_say_direct (void);

/* An error number in words, for messages about a disk: io_strerror
 * (strerror, or what the last failed open found out: an NBD member's TLS
 * handshake), except "is a directory" (-EISDIR) and "is not a regular
 * file or block device" (-ENODEV, as io_member_open says it).
 */
const char *disk_strerror (int neg_errno);

#endif /* TOOLS_DISK_H */
