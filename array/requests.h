/* array/requests.h -- the request room's shared state: what a client
 * request needs besides its plan (exec.c runs it, runplan.h is the one
 * executor): the epochs that let a member be swapped under running
 * requests, and each request thread's reusable memory.
 *
 * Who calls what: exec.c (and keepalive.c's probe reads) enter and leave
 * epochs; rebuild.c and keepalive.c quiesce them; exec.c makes a thread's
 * worker, array.c frees it (the thread key's destructor).
 */
#ifndef ARRAY_REQUESTS_H
#define ARRAY_REQUESTS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "array/scratch_pool.h"
#include "io/batch.h"
#include "raid/plan.h"

struct array;
struct array_err;
struct r5_geom;

/* Scratch of all requests together (scratch_pool.h): this much, in
 * buffers of at least ARRAY_SCRATCH_MIN_BUF and at least one stripe's
 * worst case each, and never fewer than ARRAY_SCRATCH_MIN_BUFS buffers.
 */
#define ARRAY_SCRATCH_POOL (16u << 20)
#define ARRAY_SCRATCH_MIN_BUF (1u << 20)
#define ARRAY_SCRATCH_MIN_BUFS 4u
/* Small requests (a 4K write needs a few KiB) take a small buffer
 * instead, so that they are not held back by the few big ones: as many
 * as nbdkit has request threads for four connections.
 */
#define ARRAY_SCRATCH_SMALL_BUF (256u << 10)
#define ARRAY_SCRATCH_SMALL_BUFS 64u

/* Grace periods for swapping a member (rebuild.c): every request runs
 * inside an epoch; quiesce() starts a new one and waits until no request
 * of the old one is left, so nobody still holds a plan (or a file
 * descriptor) made before the swap.  Two counters suffice because
 * quiesce() calls are serialised (job.lock) and each waits its old epoch
 * out.
 */
struct epochs {
  _Atomic uint64_t epoch;
  _Atomic uint64_t active[2];
};

/* Enter and leave a request's epoch (exec.c). */
uint64_t epoch_enter (struct epochs *e) __attribute__((nonnull));
void epoch_exit (struct epochs *e, uint64_t epoch) __attribute__((nonnull));
void epoch_quiesce (struct epochs *e) __attribute__((nonnull));

/* Sync every member that takes writes (a member being rebuilt too: the
 * stripes it has passed are written to it); one that fails its sync is
 * failed.  What array_flush does for a client, for the array's own use
 * (it holds the shape lock already, or changes the shape).  0 or -errno.
 */
int array_sync (struct array *a, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Make the requests' pools fit g's stripes (a grow adds members); no
 * request may be running.  0 or -errno (err set; the old pools stay).
 */
int array_pools_fit (struct array *a, const struct r5_geom *g,
                     struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* A read error md corrects (raid5.c raid5_end_read_request, then
 * handle_stripe's R5_ReadError, R5_ReWrite, R5_ReRead): the member's
 * bytes are computed from the rest of their rows, written back and read
 * again; a member that reads them back stays in service, and its count
 * of corrected sectors (cnt_corrected_read) grows.  More than
 * ARRAY_READ_ERRORS_MAX read errors in a row (md's max_nr_stripes, 256
 * by default; any read that succeeds clears the count) fail it, as does
 * a rewrite or a read back that fails.
 */
#define ARRAY_READ_ERRORS_MAX 256u
/* Corrections of one batch (or job piece) before its member is taken
 * out: it reads back what it was given, then fails the batch again.
 */
#define CORRECT_TRIES 3u
struct read_error {
  unsigned member;
  uint64_t off, len;          /* member bytes */
  int result;                 /* the read's -errno */
  const struct r5_geom *geom; /* the shape the batch ran in (a grow's old
                                 one ahead of its line); NULL: a->geom */
};

/* re counted against its member: past ARRAY_READ_ERRORS_MAX in a row
 * (md's raid5_end_read_request: read_errors > max_nr_stripes) the member
 * is taken out of service (logged) and true, with *r array_io_failed's
 * result (0: the array goes on degraded; err set otherwise).
 */
bool array_read_errors_too_many (struct array *a, const struct read_error *re,
                                 struct array_err *err, int *r)
  __attribute__((nonnull, warn_unused_result));

/* If every failed op of ops[0..n) (io_run's results) is a read of the
 * data area, its error reported by a member in service, the first of
 * them; else NULL (also when none failed: the batch did not run).
 */
const struct io_op *array_failed_reads (const struct array *a,
                                        const struct io_op *ops, size_t n)
  __attribute__((nonnull (1)));

/* Is the failure of ops[0..n) (io_run's results), run in shape geom
 * (NULL: a->geom; during a grow, the old shape ahead of its line), read
 * errors to correct -- reads only, errors their members reported, every
 * member of that shape in service in the first one's row (a rebuilding
 * member is, below its mark)?  Then true and *re the first of them; the
 * caller corrects it (or reads it around) and runs ops again, meeting
 * the next.
 */
bool array_read_error (const struct array *a, const struct r5_geom *geom,
                       const struct io_op *ops, size_t n,
                       struct read_error *re)
  __attribute__((nonnull (1, 3, 5), warn_unused_result));

/* The member out of service in stripe (of shape g)'s row, or -1: a
 * rebuilding member is in service below its mark, and a slot a grow adds
 * is no member of the old shape (readerr.c).
 */
int array_row_missing (const struct array *a, const struct r5_geom *g,
                       uint64_t stripe)
  __attribute__((nonnull));

/* Does shape g still hold stripe (of g)?  The array's shape always does;
 * a grow's old shape while any of the stripe's bytes lies ahead of the
 * reshape line (heal.c).  Call with the stripe's lock held.
 */
bool array_shape_holds (const struct array *a, const struct r5_geom *g,
                        uint64_t stripe)
  __attribute__((nonnull));

/* The stripe of member offset off (in the data area) in shape g locked
 * exclusively into *held (unless the caller holds it: locked), if that
 * shape still holds it: true; else nothing held and false (a grow moved
 * its bytes meanwhile: what was read there is not theirs now).
 */
struct stripe_range;
bool array_lock_in_shape (struct array *a, const struct r5_geom *g,
                          uint64_t off, bool locked, struct stripe_range *held)
  __attribute__((nonnull, warn_unused_result));

/* The reads of ops[0..n) that succeeded clear their members' counts of
 * read errors (md's rule: only errors in a row count).
 */
void array_reads_succeeded (struct array *a, const struct io_op *ops,
                            size_t n)
  __attribute__((nonnull (1)));

/* Corrections of one place (a member op: member and offset), for
 * CORRECT_TRIES: a read error where the last one was counts once more,
 * one elsewhere begins a new count (a batch or piece may meet several
 * read errors, each corrected and the work redone).  Past
 * ARRAY_READ_ERRORS_MAX corrections of one batch in all, every try is
 * too many (places that fail again by turns must not loop for ever).
 */
struct correct_tries {
  unsigned member, n, total;
  uint64_t off;
};

static inline unsigned
array_correct_try (struct correct_tries *t, const struct read_error *re)
{
  if (++t->total > ARRAY_READ_ERRORS_MAX)
    return UINT_MAX;
  if (t->n == 0 || t->member != re->member || t->off != re->off) {
    t->member = re->member;
    t->off = re->off;
    t->n = 0;
  }
  return ++t->n;
}

/* Correct re, each stripe it touches locked exclusively meanwhile: by
 * the caller (locked: a job's step holds its stripes), else here (a
 * request, holding none).  0: corrected, or the member taken out of
 * service (the array goes on degraded): either way the work is redone.
 * -errno (err set): the array has failed, or no memory.
 */
int array_correct_read (struct array *a, const struct read_error *re,
                        bool locked, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Member m's listed 4 KiB page at member offset off (page-aligned within
 * its chunk) put right (bbpath.c): computed from the other members of
 * its row, written durably, read back, and cleared from m's bad-block
 * table, all with its stripe locked exclusively (here, or by the caller:
 * locked).  0; -ENODEV: a member is out of service, nothing was
 * done; -ENODATA: another member lists the row now, nothing was done;
 * -ENOSPC: rewritten, but m's table cannot clear it (logged); or -errno
 * with *failed the op that failed: m's write or read back (-EIO when it
 * read back different), another member's read of the row, m's own "read"
 * of -EILSEQ when the computed page fails m's checksum (nothing
 * written), or -ENOMEM.
 */
int array_rewrite_page (struct array *a, unsigned m, uint64_t off,
                        bool locked, struct io_op *failed)
  __attribute__((nonnull, warn_unused_result));

/* Per-thread reusable memory for executing requests. */
struct worker {
  struct r5_plan plan;
  void *scratch;              /* from a pool while a request runs */
  struct scratch_pool *scratch_from;  /* which */
  struct io_op *ops;
  size_t ops_cap;
};

/* Worker of the calling thread, created on first use; NULL if out of
 * memory.
 */
struct worker *array_worker (struct array *a);
void array_worker_free (void *w);

#endif /* ARRAY_REQUESTS_H */
