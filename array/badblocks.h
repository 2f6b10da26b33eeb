/* array/badblocks.h -- each member's md bad-block table in the live array
 * (raid/badblocks.h keeps md's rules), internal to array/.
 *
 * Assembly (assemble.c) reads the log of every member given that has
 * one; each slot put in service gets its member's table, tagged with the
 * slot's member generation (health_gen).  The tables are read-only from
 * then on, so array_member_bad (array.h) answers the read path without a
 * lock.  A member that takes the slot later (a rebuild, a re-add) is
 * another generation and has no table here: md starts a new device with
 * an empty one, and md_readd_check refuses to re-add a device whose log
 * lists bad blocks.  Recording and clearing bad blocks while serving
 * (with the lock md's seqlock stands for) is a later step.
 */
#ifndef ARRAY_BADBLOCKS_H
#define ARRAY_BADBLOCKS_H

#include <stdint.h>

#include "array/array.h"
#include "io/member.h"
#include "raid/badblocks.h"
#include "raid/mdsb.h"

struct array_bb {
  struct md_bb_table *table[R5_MAX_MEMBERS];  /* owned; NULL: none */
  uint32_t gen[R5_MAX_MEMBERS];               /* health_gen it is for */
};

struct array;

/* Member m's table from its log (sb: m's decoded superblock): *out NULL
 * when sb reserves no log, else an allocated table (empty unless feature
 * 0x8 is set; only then is the log read).  what names the member in err
 * ("member 1").  Returns 0 or -errno with err set: the log cannot be
 * read, or is corrupt (raid/badblocks.h md_bblog_decode says why).
 */
int array_bb_read (const struct io_member *m, const struct md_sb *sb,
                   const char *what, struct md_bb_table **out,
                   struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Slot's member now in service owns t (may be NULL). */
void array_bb_attach (struct array *a, unsigned slot, struct md_bb_table *t)
  __attribute__((nonnull (1)));

/* Free every table (array_close). */
void array_bb_free (struct array *a) __attribute__((nonnull));

#endif /* ARRAY_BADBLOCKS_H */
