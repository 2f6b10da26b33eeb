/* io/sigbus.h -- code that touches a member's mapped pages, run with a
 * SIGBUS there turned into an error.
 *
 * A page of a mapping past its file's end (a member truncated under the
 * server) or a hole another process punched while the tmpfs is full
 * raises SIGBUS at the load or store that touches it, which would end
 * the server and every client's array with it.  Code run here is left
 * where the fault was instead, and the caller told which bytes faulted.
 *
 * The handler jumps back only to a run of its own thread whose ranges
 * the fault is in; any other SIGBUS gets the action there was before (a
 * fault again once the handler returns; one sent, raised again).
 *
 * Threads: any, each its own runs; a run inside another's fn is not
 * allowed.  Errors: -EFAULT only.
 */
#ifndef IO_SIGBUS_H
#define IO_SIGBUS_H

#include <stddef.h>

/* Mapped bytes [lo, hi). */
struct io_sigbus_range {
  const char *lo, *hi;
};

/* Call fn(arg) and return 0; or, if it faults (SIGBUS) on a byte of
 * ranges[0..n), return -EFAULT with fn left midway, *which the range
 * and *at the byte (either may be NULL: not wanted).  fn must take no
 * lock, allocate nothing and change nothing a jump out of it would leave
 * half done (copies, XOR, checksums into the caller's memory).
 */
int io_sigbus_run (const struct io_sigbus_range *ranges, unsigned n,
                   void (*fn) (void *), void *arg, unsigned *which,
                   const char **at)
  __attribute__((nonnull (1, 3), warn_unused_result));

#endif /* IO_SIGBUS_H */
