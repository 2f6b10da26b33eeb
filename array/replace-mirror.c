/* array/replace-mirror.c -- a hot replace in the write path (replace.h):
 * writes of the slot's member mirrored to the replacement, or noted as
 * missed while that member is out of service; the replacement's sync,
 * and its failures.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>

#include "array/object.h"
#include "array/replace-int.h"
#include "array/replace.h"

/* --- the write path -------------------------------------------------- */

/* Stripes [first, last] missed by the replacement, merged into the last
 * span if they touch it or there is no room for another.
 */
static void
note_missed (struct replace *rp, uint64_t first, uint64_t last)
{
  struct replace_span *sp;

  pthread_mutex_lock (&rp->missed_lock);
  sp = rp->nmissed > 0 ? &rp->missed[rp->nmissed - 1] : NULL;
  if (sp == NULL ||
      ((first > sp->last + 1 || last + 1 < sp->first) &&
       rp->nmissed < REPLACE_MISSED_SPANS))
    rp->missed[rp->nmissed++] = (struct replace_span) { first, last };
  else {
    if (first < sp->first)
      sp->first = first;
    if (last > sp->last)
      sp->last = last;
  }
  pthread_mutex_unlock (&rp->missed_lock);
}

/* The stripes ops[0..n) write in the data area below end (bytes). */
static void
note_writes_missed (struct array *a, const struct io_op *ops, size_t n,
                    uint64_t end)
{
  const struct r5_geom *g = &a->geom;

  for (size_t i = 0; i < n; i++) {
    const struct io_op *op = &ops[i];
    uint64_t stop;

    if (op->kind == IO_READ || op->kind == IO_FSYNC || op->len == 0 ||
        op->off < g->data_offset || op->off >= end)
      continue;
    stop = op->off + op->len < end ? op->off + op->len : end;
    note_missed (&a->replace, (op->off - g->data_offset) / g->chunk,
                 (stop - 1 - g->data_offset) / g->chunk);
  }
}

size_t
replace_mirror (struct array *a, const struct io_op *ops, size_t n,
                struct io_op *extra)
{
  const struct r5_geom *g = &a->geom;
  int slot = a->replace.slot;
  uint64_t end = g->data_offset + a->replace.copied * g->chunk;
  size_t k = 0;

  if (slot < 0)
    return 0;
  /* Out of service (it never comes back while being replaced): the
   * batch was planned around it, or its write there failed.  Noted even
   * if the replacement failed meanwhile (promote then gives up on it).
   */
  if (health_out (&a->health) == slot) {
    note_writes_missed (a, ops, n, end);
    return 0;
  }
  if (a->replace.failed)
    return 0;
  for (size_t i = 0; i < n; i++) {
    const struct io_op *op = &ops[i];

    if ((int) op->member != slot || op->kind == IO_READ ||
        op->kind == IO_FSYNC || op->off >= end)
      continue;
    extra[k] = *op;
    extra[k].member = ARRAY_REPLACEMENT;
    extra[k].result = 0;
    if (op->off + op->len > end)
      extra[k].len = end - op->off;
    k++;
  }
  return k;
}

void
replace_mirrored (struct array *a, const struct io_op *extra, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (extra[i].result < 0)
      (void) replace_write_failed (a, &extra[i], NULL);
}

int
replace_write_failed (struct array *a, const struct io_op *w,
                      struct array_err *err)
{
  const char *why = io_op_member_shrank (w)
    ? "it ends before that (truncated under the server?)"
    : io_strerror (w->result);
  char what[48] = "fdatasync";

  if (w->kind != IO_FSYNC)
    snprintf (what, sizeof what, "write at %" PRIu64, w->off);
  if (err)
    array_set_err (err, "the replacement (%s): %s: %s",
                   replace_replacement (a)->path, what, why);
  if (!atomic_exchange (&a->replace.failed, true))
    array_log (a, ARRAY_LOG_ERROR, "the replacement (%s): %s: %s: the "
               "replace stops", replace_replacement (a)->path, what, why);
  return -ECANCELED;
}

void
replace_sync (struct array *a)
{
  struct io_op op = { .kind = IO_FSYNC, .member = ARRAY_REPLACEMENT };

  if (a->replace.slot < 0 || a->replace.failed)
    return;
  if (io_run (a->members, &op, 1, 0) < 0)
    replace_mirrored (a, &op, 1);
}

bool
replace_took (struct array *a, const struct io_op *ops, size_t n)
{
  bool others = false;

  for (size_t i = 0; i < n; i++) {
    if (ops[i].result == 0 || ops[i].result == -ECANCELED)
      continue;
    if (ops[i].member == ARRAY_REPLACEMENT)
      replace_mirrored (a, &ops[i], 1);
    else
      others = true;
  }
  return !others;
}
