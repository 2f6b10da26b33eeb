/* io/batch.c -- io_run(): a batch of member I/O, start to finish. */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include <liburing.h>

#include "io/engine.h"
#include "io/batch.h"

/* fallocate(2) is not covered by RWF_DSYNC, so zeroed members are synced
 * afterwards when the caller asked for FUA.
 */
static int
sync_zeroed (const struct io_member *members, struct io_op *ops, size_t n)
{
  struct io_op sync[64];
  size_t nsync = 0;

  for (size_t i = 0; i < n; i++) {
    bool seen = false;

    if (ops[i].kind != IO_ZERO && ops[i].kind != IO_PUNCH)
      continue;
    for (size_t j = 0; j < nsync; j++)
      seen |= sync[j].member == ops[i].member;
    if (!seen && nsync < sizeof sync / sizeof sync[0])
      sync[nsync++] = (struct io_op) { .kind = IO_FSYNC,
                                       .member = ops[i].member };
  }
  if (io_engine_run (members, sync, nsync, 0) == 0)
    return 0;
  /* Charge a failed sync to the ops it was for, so the caller knows
   * which member failed.
   */
  for (size_t j = 0; j < nsync; j++)
    for (size_t i = 0; i < n; i++)
      if (sync[j].result < 0 && ops[i].member == sync[j].member &&
          (ops[i].kind == IO_ZERO || ops[i].kind == IO_PUNCH))
        ops[i].result = sync[j].result;
  for (size_t i = 0; i < n; i++)
    if (ops[i].result < 0)
      return ops[i].result;
  return -EIO;
}

int
io_run (const struct io_member *members, struct io_op *ops, size_t n,
        unsigned flags)
{
  int r;

  if (io_direct_needed (members, ops, n))
    r = io_direct_run (members, ops, n, flags);
  else
    r = io_engine_run (members, ops, n, flags);
  if (r == 0 && (flags & IO_FUA))
    r = sync_zeroed (members, ops, n);
  return r;
}

int
io_probe (void)
{
  struct io_uring ring;
  int r = io_uring_queue_init (4, &ring, 0);

  if (r == 0)
    io_uring_queue_exit (&ring);
  return r;
}
