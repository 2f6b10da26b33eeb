/* io/signature.h -- what a member holds already, as libblkid sees it:
 * file systems, partition tables, swap, LVM physical volumes, LUKS, md
 * superblocks of every version, and every other signature libblkid
 * knows.  raid5ctl refuses a disk holding one unless --force.
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
#ifndef IO_SIGNATURE_H
#define IO_SIGNATURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/member.h"

#define IO_SIG_MAX 8               /* signatures kept for one disk */
#define IO_SIG_MAGIC_MAX 4096      /* longest magic kept (libblkid's are short) */

enum io_sig_kind {
  IO_SIG_FILESYSTEM,               /* libblkid's USAGE "filesystem" */
  IO_SIG_RAID,                     /* "raid": md, LVM PV, firmware RAID */
  IO_SIG_CRYPTO,                   /* "crypto": LUKS, BitLocker */
  IO_SIG_PARTITION_TABLE,          /* a PTTYPE: gpt, dos, PMBR */
  IO_SIG_OTHER,                    /* "other": swap, and the rest */
};

struct io_sig {
  enum io_sig_kind kind;
  char type[32];                /* TYPE or PTTYPE: "ext4", "gpt" */
  char label[64];               /* LABEL ("" if none; md: the array name) */
  char uuid[40];                /* UUID or PTUUID as libblkid prints it */
  char version[16];             /* VERSION ("" if none; md: "1.2") */
  uint64_t offset;              /* bytes from the start to the magic */
  uint32_t len;                 /* bytes of magic (0: libblkid gave none),
                                   <= IO_SIG_MAGIC_MAX: zeroing them hides
                                   the signature from libblkid */
};

struct io_sig_list {
  unsigned n;
  struct io_sig sig[IO_SIG_MAX];
};

/* A sparse copy in memory (a memfd of size bytes) of something libblkid
 * cannot probe itself -- an NBD export, an array's bytes -- holding its
 * first and last span bytes, where signatures and partition tables live;
 * read fills buf with [off, off+len) of it (0 or -errno).  name names
 * the memfd.  Returns the descriptor (the caller closes it) or -errno.
 */
int io_sig_ends_copy (int (*read) (void *opaque, void *buf, uint64_t len,
                                   uint64_t off),
                      void *opaque, uint64_t size, uint64_t span,
                      const char *name)
  __attribute__((nonnull (1, 5)));

/* Every signature on the open member m, in libblkid's order: RAID and
 * volume superblocks first, then file systems and the rest, then
 * partition tables.  Returns 0 (list->n may be 0), -E2BIG if the disk
 * holds more than IO_SIG_MAX, -ENOMEM, or -errno (-EIO if libblkid says
 * no more) when the disk cannot be probed.
 */
int io_member_signatures (const struct io_member *m, struct io_sig_list *list)
  __attribute__((nonnull, warn_unused_result));

#endif /* IO_SIGNATURE_H */
