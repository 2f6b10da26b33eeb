/* tools/signature.h -- the signatures io/signature.h finds on a disk, in
 * raid5ctl's words: raid5ctl create and rebuild --new refuse a disk
 * holding one unless --force, and with it zero them (as wipefs -a does)
 * before writing the array.
 */
#ifndef TOOLS_SIGNATURE_H
#define TOOLS_SIGNATURE_H

#include <stdbool.h>
#include <stddef.h>

#include "io/signature.h"

/* Is s an md superblock (libblkid's linux_raid_member, any version)? */
bool sig_is_md (const struct io_sig *s) __attribute__((nonnull));

/* s's UUID in mdadm's words ("2c9e9e73:0e851ebc:b31ec10a:4ef50c43")
 * rather than libblkid's (dashes); "" if s has none.
 */
void sig_md_uuid (const struct io_sig *s, char out[36])
  __attribute__((nonnull));

/* s in words for "DISK holds ...": "an ext4 file system (label 'data',
 * UUID 7c1e..., at byte 1080)", "a gpt partition table (UUID ..., at
 * byte 512)".  Writes into buf and returns it (truncated to len).
 */
const char *sig_describe (const struct io_sig *s, char *buf, size_t len)
  __attribute__((nonnull));

/* The one error line for disk holding the signatures l (n > 0): the first
 * that libblkid found -- an md superblock says which array it is -- and
 * how many more; "(--force overwrites it)".  Returns TOOL_FAIL.
 */
int sig_refuse (const char *disk, const struct io_sig_list *l)
  __attribute__((nonnull));

#endif /* TOOLS_SIGNATURE_H */
