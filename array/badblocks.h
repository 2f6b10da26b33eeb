/* array/badblocks.h -- each member's md bad-block table in the live array
 * (raid/badblocks.h keeps md's rules), internal to array/.
 *
 * Assembly (assemble.c) reads the log of every member given that has
 * one; each slot put in service gets its member's table, tagged with the
 * slot's member generation (health_gen).  A member that takes the slot
 * later (a rebuild, a replace) starts with an empty table when its
 * superblock reserves a log (md starts a new device with an empty one;
 * md_readd_check refuses to re-add a device whose log lists bad blocks).
 *
 * While serving (bbpath.c, the write path's "bad-block log" row): bytes
 * a member's table lists are not read from it -- its rows are served as
 * if the member were missing there -- and a write or rewrite that fails
 * on part of a member is recorded in its table and log rather than
 * failing the member (md's rdev_set_badblocks); a member whose table
 * cannot take an entry (no log, or full) fails as before.  A member that
 * never failed a write since the start has its listed rows rewritten from
 * the others when a request or a scrub meets them, and an entry that then
 * reads back is cleared (md's R5_ReadError correction of a bad block, a
 * sync's write of its one failed block, and rdev_clear_badblocks after a
 * good write).
 *
 * Locking: lock (md's seqlock) -- readers look tables up, writers change
 * them; version counts the changes, so a batch planned around the tables
 * can tell that they changed before it ran.  A table's log is written
 * under meta.lock (meta_bb_write), its superblocks with it.
 */
#ifndef ARRAY_BADBLOCKS_H
#define ARRAY_BADBLOCKS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "array/array.h"
#include "io/batch.h"
#include "io/member.h"
#include "raid/badblocks.h"
#include "raid/mdsb.h"

struct array_bb {
  struct md_bb_table *table[R5_MAX_MEMBERS];  /* owned; NULL: none */
  uint32_t gen[R5_MAX_MEMBERS];               /* health_gen it is for */
  pthread_rwlock_t lock;
  bool lock_made;
  _Atomic uint64_t version;   /* bumped at every change of a table */
  _Atomic unsigned listed;    /* tables that list something: 0 skips it all */
  _Atomic bool write_error[R5_MAX_MEMBERS];   /* md's WriteErrorSeen */
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

/* The lock (array_open).  0 or -errno. */
int array_bb_init (struct array *a) __attribute__((nonnull));

/* Slot's member now in service is new (a rebuild, a replace): an empty
 * table if its superblock reserves a log, else none.
 */
void array_bb_new_member (struct array *a, unsigned slot)
  __attribute__((nonnull));

/* Member bytes [off, off + len) of slot recorded bad (md's
 * rdev_set_badblocks): its table, then its log and superblocks.  0, or
 * -ENOSPC when the table cannot take it (no log, or full: the caller
 * fails the member, as md_error), or -errno from the write (err).
 */
int array_bb_record (struct array *a, unsigned slot, uint64_t off,
                     uint64_t len, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* The same bytes good again (rdev_clear_badblocks after a good write);
 * 0 or -errno.
 */
int array_bb_clear (struct array *a, unsigned slot, uint64_t off,
                    uint64_t len, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Slot's table encoded into its log area (bytes, allocated: *area, its
 * size *len, its member offset *at), under the lock; 0, -ENOENT with no
 * table, -errno.
 */
int array_bb_encode (struct array *a, unsigned slot, const struct md_sb *sb,
                     void **area, size_t *len, uint64_t *at)
  __attribute__((nonnull, warn_unused_result));

/* How many ranges and sectors slot's table lists (0 0: none). */
void array_bb_count (struct array *a, unsigned slot, unsigned *ranges,
                     uint64_t *sectors) __attribute__((nonnull));

/* Can slot's member in service record bad blocks (its table exists)? */
bool array_bb_has_log (const struct array *a, unsigned slot)
  __attribute__((nonnull));

/* --- bbpath.c ------------------------------------------------------ */

struct wp_batch;
struct r5_plan;

/* The write path's row (writepath.h): shape cuts the batch where the
 * tables change and says which member is missing for it (b->bb_member
 * when a table made it so); -EIO with err naming the array bytes when a
 * row is bad on two members (or one and the member out of service) and
 * the request needs it.  holds: the tables did not change since.
 */
int bb_shape (struct array *a, struct wp_batch *b, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));
bool bb_holds (const struct array *a, const struct wp_batch *b)
  __attribute__((nonnull));

/* A reshape's window (grow-move.c): r5_plan_reshape's around lookup
 * (raid/reshape.h) in the tables, in the old shape: the one member that
 * lists bytes of the row, -1, or R5_AROUND_TWO when another lists bytes
 * there too or out is out of service (then the row, as stripe and chunk
 * offset, and its members are noted for bb_window_lost).  named: the
 * members it named.
 */
struct bb_around {
  struct array *a;
  int out;                    /* an old member out of service, or -1 */
  uint64_t named;             /* members named (a mask) */
  uint64_t stripe, off, two;  /* a row two members are out of: where, whose */
  bool critical;              /* the window is (its lost pages stop it) */
  bool degraded;              /* a slot, old or new, is out of service */
  bool no_memory;             /* grow_lost_note could not note a row */
};
int bb_reshape_around (void *ctx, uint64_t stripe, uint64_t off,
                       uint64_t len)
  __attribute__((nonnull));

/* The window at line cannot be moved (r5_plan_reshape -ENODATA): a row of
 * it is listed on two members, or on one with c->out out of service, and
 * the window is critical (or no memory).  -EIO, err naming the window,
 * the row, the members and the array bytes lost (logged).
 */
int bb_window_lost (struct array *a, uint64_t line, const struct bb_around *c,
                    struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* The window's writes ops[0..n) that failed were recorded: a page of
 * them whose row (the new shape) another member lists too, or whose
 * other member is out of service, cannot be computed -- logged, naming
 * the array bytes lost (as a rebuild names them, bb_rebuild_lost).
 */
void bb_written_lost (struct array *a, const struct io_op *ops, size_t n)
  __attribute__((nonnull));

/* The window's writes (p) done: listed bytes they wrote are cleared
 * (md's R5_MadeGood), but on a member that failed a write (md skips
 * writes to its listed blocks).
 */
void bb_window_written (struct array *a, const struct r5_plan *p)
  __attribute__((nonnull));

/* A batch's ops[0..n) failed, its stripes still locked: if every failure
 * is a write a member reported and whose member can record bad blocks,
 * each failed page is written again and recorded if it fails again, the
 * member marked as having failed a write; true, and the batch is planned
 * again.  False (err may say why) if the failure is the ordinary kind.
 */
bool array_bb_write_failed (struct array *a, const struct io_op *ops,
                            size_t n, struct array_err *err)
  __attribute__((nonnull));

/* Reads that cannot be corrected because slot is out of service (a
 * rebuild's piece of it, a degraded request) failed in ops[0..n): if
 * every failure is a read of another member that can record bad blocks,
 * each failed page is read again and recorded if it fails again (md: a
 * read error it cannot correct sets a bad block); true, and the work is
 * run again around them.
 */
bool bb_reads_failed (struct array *a, const struct io_op *ops, size_t n,
                      unsigned slot, struct array_err *err)
  __attribute__((nonnull));

/* The array bytes of member m's page at chunk offset co of stripe (shape
 * g) into *at; false: m holds the stripe's parity.
 */
bool bb_array_bytes (const struct r5_geom *g, uint64_t stripe, unsigned m,
                     uint64_t co, uint64_t *at)
  __attribute__((nonnull, warn_unused_result));

/* The members of mask named for a log line, into buf (n bytes, cut if
 * short): "member 1", "members 1 and 2", "members 0, 1 and 3".  buf.
 */
const char *bb_members_named (uint64_t mask, char *buf, size_t n)
  __attribute__((nonnull));

/* The members of shape g (the array's, or a grow's old one) but skip
 * (-1: none) whose tables list part of member bytes [chunk_off, chunk_off
 * + len) of stripe's row in g, as a mask.
 */
uint64_t bb_row_listed (const struct array *a, const struct r5_geom *g,
                        uint64_t stripe, uint64_t chunk_off, uint64_t len,
                        int skip)
  __attribute__((nonnull));

/* A rebuild of slot ran over [chunk_off, chunk_off + len) of stripe's row
 * where other members list bad blocks: the pages it could not compute
 * are recorded bad on slot (md's handle_failed_sync), and the array
 * bytes lost logged.  0, or -errno (err): slot cannot record them.
 */
int bb_rebuild_lost (struct array *a, unsigned slot, uint64_t stripe,
                     uint64_t chunk_off, uint64_t len, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* A scrub's (check, repair, resync: job names it in the log) rows
 * [chunk_off, chunk_off + len) of stripe, its lock held, on a writable
 * array in full service: each 4 KiB row one member lists is rewritten on
 * it from the others, read back and cleared, as md does (analyse_stripe
 * counts the device failed in that stripe_head, handle_parity_checks5
 * writes its block computed from the rest, R5_MadeGood clears the entry
 * -- in a check too), but on a member that failed a write (WriteErrorSeen:
 * md skips the write) and where a second member lists the row
 * (handle_failed_sync: left alone).  Returns the sectors rewritten; a
 * failure is logged, and the row stays listed.
 */
uint64_t bb_scrub_rewrite (struct array *a, const char *job, uint64_t stripe,
                           uint64_t chunk_off, uint64_t len)
  __attribute__((nonnull));

/* Why bb_scrub_rewrite left rows that the members in bad (a mask) list, as
 * the tail of a log line: "s; a row two members list cannot be
 * computed" (two list it: the line's "list" made plural), else
 * "; not rewritten: ..." -- read-only, a member out of service, the
 * member failed a write, or a failure the log said already.
 */
const char *bb_scrub_unrewritten (const struct array *a, uint64_t bad)
  __attribute__((nonnull, returns_nonnull));

/* A batch that ran with b->bb_member missing for its listed bytes, no
 * stripe lock held: those bytes of its row rewritten from the others and
 * cleared where they read back, if the member never failed a write (and
 * a replacement of it given them whatever the member does).  Failures
 * are logged; the request is not failed.
 */
void bb_rewrite_met (struct array *a, const struct wp_batch *b)
  __attribute__((nonnull));

#endif /* ARRAY_BADBLOCKS_H */
