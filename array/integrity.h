/* array/integrity.h -- the live integrity record (raid/integrity.h): a
 * crc32c of every 4 KiB unit of every member, in a sidecar file mapped
 * shared, so that a wrong unit names its member.  Internal to array/.
 *
 * Ordering, as md orders its bitmap: a region's dirty bit is set and
 * durable (msync) before any of its checksums changes; the bits are
 * cleared only when the array is marked clean (meta_mark_clean: no write
 * in flight, members synced), after the table is synced.  After a crash
 * the checksums of the regions still marked are computed again from the
 * members at open.  A region whose member is not in service then stays
 * marked and unknown: its units are not verified until that member is
 * rebuilt.
 *
 * Units: every request and job touches whole units (exec.c pads requests
 * to 4 KiB with a record; the data offset is a multiple of 4 KiB).
 *
 * Locking: gate is held shared by every batch of writes from before its
 * checksums change until the writes return, and exclusively by
 * integrity_settle; lock serialises setting bits.  Checksums of a unit
 * change only under its stripe's exclusive lock; readers without a lock
 * may see a new checksum with old bytes, so a failure is confirmed under
 * the lock (integrity_heal) before anything is done about it.
 */
#ifndef ARRAY_INTEGRITY_H
#define ARRAY_INTEGRITY_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "io/batch.h"
#include "io/mapfile.h"
#include "raid/integrity.h"

struct array;
struct r5_geom;
struct array_err;

struct integrity {
  bool on;
  struct io_mapfile file;     /* the record's file (io/mapfile.h) */
  char *path;
  struct r5i_header h;
  struct r5i_layout l;
  uint8_t *map;               /* the whole file: file.map */
  uint32_t zero_crc;          /* of a unit of zeroes (zero and punch) */
  uint8_t *unknown;           /* regions whose checksums are not known */
  uint8_t *durable;           /* marks known to be on disk (the writers'
                               * fast path; a mark in the map may still
                               * be on its way) */
  pthread_mutex_t lock;
  pthread_rwlock_t gate;
  bool locks_made;
  _Atomic uint64_t verified;  /* units read and verified */
  _Atomic uint64_t failures;  /* units that failed, confirmed */
  _Atomic uint64_t healed;    /* ... rewritten from the other members */
  _Atomic uint64_t unhealable;
  _Atomic uint64_t recomputed;    /* regions computed again at open */
  uint64_t stale_units;       /* of members taken one event behind, found
                               * stale at open (integrity-behind.c) */
  uint64_t unread_regions;    /* marked at open and not computed: a
                               * medium error (left unknown) */
  uint64_t unread_units;      /* of members taken one event behind, not
                               * checked at open: a medium error */
  bool quiet_heal;            /* heal without a line a unit: the caller
                               * sums up (set at open only) */
};

/* A unit that failed its checksum. */
struct integrity_bad {
  unsigned member;
  uint64_t off;               /* member bytes */
};

/* Open (or make: every region marked, so every checksum is computed
 * from the members) the record at path for a, which has md superblocks
 * and its health; compute the marked regions again -- every region if
 * the members' md events (as assembled: events, dirty) say they were
 * written without the record.  Returns 0 or -errno
 * with err naming the file and what is wrong with it.
 */
int integrity_open (struct array *a, const char *path, uint64_t events,
                    bool dirty, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* The members' md events into the header (after the array went clean):
 * a record whose count differs at the next open is stale.
 */
void integrity_record_events (struct array *a) __attribute__((nonnull));
/* Settle (if it is open) and unmap. */
void integrity_close (struct array *a) __attribute__((nonnull));

/* Before ops[0..n) (a batch's writes, zeroes, punches) run: mark their
 * regions, then their units' new checksums.  The caller holds gate
 * shared (integrity_writes_begin/end) until the batch has run.
 * Returns 0 or -errno (the file could not be synced).
 */
void integrity_writes_begin (struct array *a) __attribute__((nonnull));
void integrity_writes_end (struct array *a) __attribute__((nonnull));
int integrity_note_writes (struct array *a, const struct io_op *ops,
                           size_t n) __attribute__((nonnull (1)));

/* Verify len bytes at buf, read from member at member offset off (whole
 * units are verified, the rest skipped).  true if they are right (or
 * not known), else false with *bad.
 */
bool integrity_verify (struct array *a, unsigned member, uint64_t off,
                       const void *buf, uint64_t len,
                       struct integrity_bad *bad)
  __attribute__((nonnull (1, 4)));

/* The unit of bad, its stripe's lock held exclusively by the caller
 * (locked) or taken here: read every member's unit of the row; if just
 * one fails its checksum and the others rebuild it to its checksum,
 * write it back (healed).  Returns 0 (healed, or nothing wrong any
 * more), or -EIO with err naming the member, path and offset.
 */
int integrity_heal (struct array *a, const struct integrity_bad *bad,
                    bool locked, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Does the row vouch for what it computes for member m's unit at off,
 * m listing it bad?  The units of every other member, read into
 * scratch's columns as a job plans them (r5_job_column (g, 0, k, len)),
 * pass their checksums -- known ones (no region left unknown), in a row
 * no resync still has to visit (a crash may have torn it).  A write that
 * met m's listed page went around it (bbpath.c: m missing there),
 * changing the row but neither m's unit nor its checksum, which is then
 * from before the write: the row, not m's checksum, says what the unit
 * holds.  (An unlisted unit's checksum is never so: a computed unit that
 * fails it means the row is wrong.)
 */
bool integrity_row_vouches (struct array *a, const struct r5_geom *g,
                            unsigned m, uint64_t off, uint64_t len,
                            const char *scratch)
  __attribute__((nonnull));

/* With no write in flight and the members synced: sync the table, then
 * clear the marks of every known region.  0 or -errno.
 */
int integrity_settle (struct array *a) __attribute__((nonnull));

/* At open (integrity-file.c): every marked region of a member in
 * service computed again from its bytes, the others -- and one a medium
 * error keeps from being read (counted: unread_regions) -- made unknown.
 * How many were computed, or -errno with err set.
 */
int64_t integrity_recompute_marked (struct array *a, struct array_err *err)
  __attribute__((nonnull));
/* msync the record's pages holding [off, off+len): 0 or -errno. */
int sync_range_of (const struct integrity *t, uint64_t off, uint64_t len)
  __attribute__((nonnull));

/* A rebuild wrote member's unit at off from a row whose other unit
 * failed its checksum: the unit is wrong too, and its checksum is made
 * not to match, so that it is never returned as right.
 */
void integrity_poison (struct array *a, unsigned member, uint64_t off)
  __attribute__((nonnull));

/* At open, before the marked regions are computed again: the units of
 * each member taken one event behind (a->one_behind) that the bitmap
 * says may have been written, checked against the record; those that
 * fail are stale, rebuilt from the other members where that matches
 * their checksum, and counted (integrity-behind.c).  0 or -errno (a
 * member could not be read) with err set.
 */
int integrity_verify_behind (struct array *a, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* A member was rebuilt whole: its regions are known again.  (Not after
 * a bitmap re-add, which rewrote only what the bitmap marks: its unknown
 * regions stay unknown and marked until a start computes them.)
 */
void integrity_member_rebuilt (struct array *a, unsigned member)
  __attribute__((nonnull));

#endif /* ARRAY_INTEGRITY_H */
