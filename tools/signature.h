/* tools/signature.h -- what a disk holds already, as libblkid sees it:
 * file systems, partition tables, swap, LVM physical volumes, LUKS, md
 * superblocks of every version, and every other signature libblkid
 * knows.  raid5ctl create refuses a disk holding one unless --force, and
 * with it zeroes them (as wipefs -a does) before writing the array.
 *
 * Signatures are listed as wipefs(8) lists them: libblkid's low-level
 * probing of superblocks and partition tables (a GPT also without its
 * protective MBR), each hit hidden in libblkid's buffer once found so
 * that the same prober runs again and finds the next one (md's other
 * superblock versions, a GPT's backup header, LUKS2's second header).
 * Every hit is kept: several file systems on one disk (libblkid's
 * "ambivalent" result) are all listed, not an error.
 *
 * Probing only reads.  Errors are returned as -errno, never printed.
 */
#ifndef TOOLS_SIGNATURE_H
#define TOOLS_SIGNATURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SIG_MAX 8               /* signatures kept for one disk */
#define SIG_MAGIC_MAX 4096      /* longest magic kept (libblkid's are short) */

enum sig_kind {
  SIG_FILESYSTEM,               /* libblkid's USAGE "filesystem" */
  SIG_RAID,                     /* "raid": md, LVM PV, firmware RAID */
  SIG_CRYPTO,                   /* "crypto": LUKS, BitLocker */
  SIG_PARTITION_TABLE,          /* a PTTYPE: gpt, dos, PMBR */
  SIG_OTHER,                    /* "other": swap, and the rest */
};

struct sig {
  enum sig_kind kind;
  char type[32];                /* TYPE or PTTYPE: "ext4", "gpt" */
  char label[64];               /* LABEL ("" if none; md: the array name) */
  char uuid[40];                /* UUID or PTUUID as libblkid prints it */
  char version[16];             /* VERSION ("" if none; md: "1.2") */
  uint64_t offset;              /* bytes from the start to the magic */
  uint32_t len;                 /* bytes of magic (0: libblkid gave none),
                                   <= SIG_MAGIC_MAX: zeroing them hides
                                   the signature from libblkid */
};

struct sig_list {
  unsigned n;
  struct sig sig[SIG_MAX];
};

/* Every signature on the open disk fd, in libblkid's order: RAID and
 * volume superblocks first, then file systems and the rest, then
 * partition tables.  fd's file offset may move.  Returns 0 (list->n may
 * be 0), -E2BIG if the disk holds more than SIG_MAX, -ENOMEM, or -errno
 * (-EIO if libblkid says no more) when the disk cannot be probed.
 */
int sig_find (int fd, struct sig_list *list)
  __attribute__((nonnull, warn_unused_result));

/* Is s an md superblock (libblkid's linux_raid_member, any version)? */
bool sig_is_md (const struct sig *s) __attribute__((nonnull));

/* s's UUID in mdadm's words ("2c9e9e73:0e851ebc:b31ec10a:4ef50c43")
 * rather than libblkid's (dashes); "" if s has none.
 */
void sig_md_uuid (const struct sig *s, char out[36])
  __attribute__((nonnull));

/* s in words for "DISK holds ...": "an ext4 file system (label 'data',
 * UUID 7c1e..., at byte 1080)", "a gpt partition table (UUID ..., at
 * byte 512)".  Writes into buf and returns it (truncated to len).
 */
const char *sig_describe (const struct sig *s, char *buf, size_t len)
  __attribute__((nonnull));

/* The one error line for disk holding the signatures l (n > 0): the first
 * that libblkid found -- an md superblock says which array it is -- and
 * how many more; "(--force overwrites it)".  Returns TOOL_FAIL.
 */
int sig_refuse (const char *disk, const struct sig_list *l)
  __attribute__((nonnull));

#endif /* TOOLS_SIGNATURE_H */
