/* array/guard.h -- nothing that holds data is overwritten without
 * --force: the one check every way onto a disk runs before anything is
 * written to it -- raid5ctl create, the hot spare (spare=, at start and
 * again just before a rebuild takes it), rebuild onto a new disk (offline
 * and through the control socket), re-add with a path -- so that they
 * refuse the same disks with the same line.
 *
 * A disk may carry this array's own v1.2 superblock (an old member of
 * it: the array's UUID) and nothing else libblkid knows: another array's
 * md superblock of any version, a file system, a partition table, swap,
 * an LVM physical volume, LUKS ... (io/signature.h lists them as wipefs
 * does).  mdadm's own rule is the same: --add and --create warn of a
 * device that "appears to contain" a file system or another array and
 * stop unless told to go on (mdadm Create.c, check_ext2/check_raid in
 * util.c).
 *
 * The probe only reads.  Errors are -errno with the one line in *err;
 * nothing is printed.  No locks: callers own the member they probe.
 */
#ifndef ARRAY_GUARD_H
#define ARRAY_GUARD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "array/array.h"
#include "io/signature.h"

/* How a guarded disk is being taken, for its refusal's last words:
 * "(--force overwrites it)", "(spare-force=true overwrites it)".
 */
struct array_guard {
  const char *own_uuid;       /* the array's UUID as mdadm prints it, or
                               * NULL/"" (a new or raw array: nothing on the
                               * disk is its own) */
  const char *override;       /* what overwrites anyway: "--force" */
  bool force;                 /* the user said it: signatures are listed
                               * in *found, not refused */
  const struct io_tls *tls;   /* how an NBD disk is reached over TLS
                               * (io/tls.h), or NULL */
};

/* Probe the open member m (named name in messages) for what it holds
 * beyond g->own_uuid's superblock.  Returns 0 when it may be written
 * (found->n is then the foreign signatures to wipe: > 0 only with
 * g->force), -EEXIST when it holds something and g->force is not set (the
 * refusal in *err, e.g. "/dev/sdb already holds an md superblock (v1.2,
 * at byte 4096): it belongs to array UUID ..., name 'home' (--force
 * overwrites it)"), -E2BIG (more than IO_SIG_MAX signatures) or -errno
 * when it cannot be probed.
 */
int array_guard_probe (const struct io_member *m, const char *name,
                       const struct array_guard *g, struct io_sig_list *found,
                       struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* The same for the disk at path, opened read-only and through the page
 * cache for the probe (libblkid's reads are not aligned for O_DIRECT):
 * what a member opened with O_DIRECT is probed by.
 */
int array_guard_path (const char *path, const char *name,
                      const struct array_guard *g,
                      struct io_sig_list *found, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* --force: zero the magic of each of found's signatures on m (as wipefs
 * -a does) except those inside [keep_from, keep_to), the bytes the caller
 * has just written itself (a new superblock and bitmap).  Returns 0 or
 * -errno with *err naming the member and offset.
 */
int array_guard_wipe (const struct io_member *m, const struct io_sig_list *found,
                      uint64_t keep_from, uint64_t keep_to,
                      struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Is s an md superblock (libblkid's linux_raid_member, any version)? */
bool array_sig_is_md (const struct io_sig *s) __attribute__((nonnull));

/* s's UUID in mdadm's words ("2c9e9e73:0e851ebc:b31ec10a:4ef50c43")
 * rather than libblkid's (dashes); "" if s has none.
 */
void array_sig_md_uuid (const struct io_sig *s, char out[36])
  __attribute__((nonnull));

/* s in words for "DISK holds ...": "an ext4 file system (label 'data',
 * UUID 7c1e..., at byte 1080)".  Writes into buf and returns it.
 */
const char *array_sig_describe (const struct io_sig *s, char *buf, size_t len)
  __attribute__((nonnull));

#endif /* ARRAY_GUARD_H */
