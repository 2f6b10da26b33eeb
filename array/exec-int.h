/* array/exec-int.h -- internal to array/exec*.c: a client's request
 * being carried out (exec.c), and what a failed batch of it asks for
 * before it is redone (exec-fix.c).  A request and its worker belong to
 * the thread that serves it.
 */
#ifndef ARRAY_EXEC_INT_H
#define ARRAY_EXEC_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "array/integrity.h"
#include "array/requests.h"
#include "raid/plan.h"

struct array;
struct array_err;
struct worker;

/* md works a row of 4 KiB of each member at a time (a stripe_head:
 * STRIPE_SIZE, one page), and counts its failed devices row by row.
 */
#define ROW_BYTES 4096u

struct request {
  struct array *a;
  struct worker *w;
  enum r5_op op;
  unsigned flags;
  char *buf;                  /* client buffer; NULL for zero and trim */
  uint64_t off, len;
  /* Read-only, read errors on two members in one batch: the batches
   * before pieces_end are of one 4 KiB row each, so that each is read
   * around its own failed member, as md treats each row on its own.
   */
  uint64_t pieces_end;
  struct array_err *err;
};

/* A read of the request failed its checksum (nothing was written): the
 * unit put right, with no stripe lock of ours held; -EIO after HEAL_TRIES
 * heals of one batch.
 */
int exec_heal (struct request *rq, const struct integrity_bad *bad,
               unsigned *tries) __attribute__((nonnull));

/* Read-only, a read error: the batch (ending at array byte batch_end)
 * to be redone with re's member read around (*around), or a row at a time
 * when a second member fails.  0, or -errno (rq->err set): -EIO, or the
 * member taken out past md's count of read errors failed the array.
 */
int exec_read_around (struct request *rq, const struct read_error *re,
                      int *around, uint64_t batch_end)
  __attribute__((nonnull));

/* A read error corrected (heal.c), or its member taken out after
 * CORRECT_TRIES corrections of one place.  0, or -errno (rq->err set).
 */
int exec_correct (struct request *rq, const struct read_error *re,
                  struct correct_tries *tries) __attribute__((nonnull));

/* A degraded array's read failing on a member in service (reads only,
 * errors their members reported): true, with *r 0 when its pages are to
 * be recorded (exec_record_unreadable, then the batch redone) or, read-
 * only, the request's error; false if it is not such a failure.  Called
 * under the batch's stripe locks.
 */
bool exec_unreadable_degraded (struct request *rq, size_t nops, int *r)
  __attribute__((nonnull));

/* The failed reads of the request's ops[0..nops), run in shape g (a
 * grow's old one ahead of its line, or the array's), re-read a page at a
 * time and the pages that fail again recorded in their members' bad-block
 * logs, each op's stripe (of g) locked exclusively meanwhile (no lock of
 * the batch held) and recorded only while g still holds it; a member
 * that cannot record them is taken out, as md fails it.  0 (the batch to
 * be redone), or -errno (rq->err set).
 */
int exec_record_unreadable (struct request *rq, size_t nops,
                            const struct r5_geom *g)
  __attribute__((nonnull));

#endif /* ARRAY_EXEC_INT_H */
