/* array/replace-int.h -- what the replace files (replace.c,
 * replace-end.c, replace-mirror.c) share, and nobody else calls.
 */
#ifndef ARRAY_REPLACE_INT_H
#define ARRAY_REPLACE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "array/replace.h"

struct array;
struct io_op;

/* The replacement: a->members[ARRAY_REPLACEMENT]. */
struct io_member *replace_replacement (struct array *a)
  __attribute__((nonnull, returns_nonnull));

/* The replacement failed w (a write of it; w->result its -errno): the
 * replace stops (replace.failed), said once in the log with member,
 * offset and why -- a stop for -ECANCELED names no cause of its own --
 * and in err when err.  Returns -ECANCELED.
 */
int replace_write_failed (struct array *a, const struct io_op *w,
                          struct array_err *err)
  __attribute__((nonnull (1, 2)));

/* The copy's buffer (rp->buf) at least len bytes.  0, or -ENOMEM with err
 * set.
 */
int replace_make_room (struct replace *rp, size_t len, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Slot's chunk of stripe s computed from the rest of the row into dst;
 * the pages other members list bad are noted as lost.  0, or -errno
 * with err set.
 */
int replace_compute_chunk (struct array *a, unsigned slot, uint64_t s,
                           char *dst, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

#endif /* ARRAY_REPLACE_INT_H */
