/* io/engine.h -- internal to io/: the per-thread ring that runs batches of
 * already-aligned operations, and helpers every batch runner shares.  See
 * batch.h for the public contract.
 */
#ifndef IO_ENGINE_H
#define IO_ENGINE_H

#include <stddef.h>

#include "io/member.h"
#include "io/batch.h"

/* Run ops on this thread's ring exactly as io_run() describes, except
 * that buffers, offsets and lengths are passed to the kernel as they are
 * (O_DIRECT alignment is the caller's business).  Same return values.
 */
int io_engine_run (const struct io_member *members, struct io_op *ops,
                   size_t n, unsigned flags)
  __attribute__((nonnull (1), warn_unused_result));

/* Used by io_run: 0 if no op needs a bounce buffer, else the O_DIRECT
 * path in direct.c runs the batch.
 */
int io_direct_run (const struct io_member *members, struct io_op *ops,
                   size_t n, unsigned flags)
  __attribute__((nonnull (1), warn_unused_result));
int io_direct_needed (const struct io_member *members,
                      const struct io_op *ops, size_t n)
  __attribute__((nonnull (1)));

/* Every op's result set to err (a batch that could not run). */
void io_ops_fail_all (struct io_op *ops, size_t n, int err)
  __attribute__((nonnull));

/* The first op's error in batch order, or 0. */
int io_ops_first_error (const struct io_op *ops, size_t n)
  __attribute__((nonnull));

#endif /* IO_ENGINE_H */
