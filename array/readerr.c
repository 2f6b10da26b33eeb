/* array/readerr.c -- read errors as md counts and judges them
 * (raid5_end_read_request, analyse_stripe): which failures of a batch
 * can be corrected, the member out of a row, the run of errors that
 * takes a member out (requests.h).  The correction itself is heal.c's.
 */
#include <config.h>

#include <errno.h>
#include <stdatomic.h>

#include "array/object.h"
#include "array/requests.h"
#include "array/state.h"

/* grow-line.c ahead: a slot a grow adds is no member of the old shape. */
int
array_row_missing (const struct array *a, const struct r5_geom *g,
                   uint64_t stripe)
{
  uint64_t limit;
  int out = health_missing_for (&a->health, stripe, &limit);

  return out >= (int) g->members ? -1 : out;
}

/* Can the failure of the batch ops[0..n) be corrected as md does?  Only
 * read errors, each reported by its member (not its link lost) on a
 * member in service, with every member in service in the first one's
 * row ("read error not correctable" otherwise; below a rebuild's mark
 * the member rebuilt is in service, as md counts a recovering device
 * R5_Insync for a stripe below its recovery_offset: analyse_stripe),
 * and (during a grow) corrected in the shape the batch ran in
 * (read_error.geom; md handles a stripe_head in its own shape).  A
 * batch covers many stripes and may meet
 * several: md handles each stripe's failed devices on their own
 * (analyse_stripe), so the first is corrected and the batch redone,
 * which meets the next.
 */
const struct io_op *
array_failed_reads (const struct array *a, const struct io_op *ops, size_t n)
{
  const struct io_op *first = NULL;

  for (size_t i = 0; i < n; i++) {
    const struct io_op *op = &ops[i];

    if (op->result == 0 || op->result == -ECANCELED)
      continue;
    if (op->kind != IO_READ || !io_op_range_error (op) ||
        health_state (&a->health, op->member) != MEMBER_ACTIVE ||
        op->off < a->geom.data_offset)
      return NULL;
    if (first == NULL)
      first = op;
  }
  return first;
}

bool
array_read_error (const struct array *a, const struct r5_geom *geom,
                  const struct io_op *ops, size_t n, struct read_error *re)
{
  const struct r5_geom *g = geom ? geom : &a->geom;
  const struct io_op *first;

  if ((first = array_failed_reads (a, ops, n)) == NULL ||
      array_row_missing (a, g,
                         (first->off - g->data_offset) / g->chunk) >= 0)
    return false;
  *re = (struct read_error) { .member = first->member, .off = first->off,
                              .len = first->len, .result = first->result,
                              .geom = geom };
  return true;
}

/* md fails a member whose read errors pile up faster than they are
 * corrected or read around, the count cleared by any read that succeeds
 * (array_reads_succeeded).
 */
bool
array_read_errors_too_many (struct array *a, const struct read_error *re,
                            struct array_err *err, int *r)
{
  unsigned m = re->member, n = ++a->read_errors[m];
  struct io_op op = { .kind = IO_READ, .member = m, .off = re->off,
                      .len = re->len, .result = re->result };

  if (n <= ARRAY_READ_ERRORS_MAX)
    return false;
  array_log (a, ARRAY_LOG_ERROR, "member %u (%s): %u read errors in a row, "
             "more than md's %u: taken out of service", m,
             array_member_path (a, m), n, ARRAY_READ_ERRORS_MAX);
  *r = array_io_failed (a, &op, 1, re->result, err);
  return true;
}

/* md clears a member's count of read errors whenever a read of it
 * succeeds (raid5_end_read_request: atomic_set (&rdev->read_errors, 0)),
 * so that only errors with no good read between them take it out.
 */
void
array_reads_succeeded (struct array *a, const struct io_op *ops, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (ops[i].kind == IO_READ && ops[i].result == 0 &&
        atomic_load_explicit (&a->read_errors[ops[i].member],
                              memory_order_relaxed) != 0)
      atomic_store_explicit (&a->read_errors[ops[i].member], 0,
                             memory_order_relaxed);
}
