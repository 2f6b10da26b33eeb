/* array/keepalive.c -- finding out that an idle member went away.
 *
 * A member is failed when an I/O to it fails; with no I/O, an NBD member
 * whose server died or whose link was cut would show as active until the
 * next request, and the array would learn of it only when it needs the
 * member most.  So the background thread reads a little (the sector at
 * offset 0: a read, whatever is there) of each member in service
 * that has had no batch for its backend's probe interval
 * (io_member_idle_probe_ms: half the member timeout for NBD, never for
 * files).  A read that fails fails the member exactly as a request's
 * would (array_io_failed: recorded in the superblocks, and as its backend
 * says, link lost or I/O error); a lost one then comes back by itself
 * (comeback.c).  A busy member needs no probe: its own I/O finds out.
 *
 * A member file truncated under the server (members are locked against
 * a second server, not against truncate) is found by a read past its
 * new end, or by a copy through its mapping -- but a write past the end
 * on a disk file system extends it again, and the bytes cut off become
 * holes that read as zeroes.  Asking each write would cost a system call
 * a request; so the sizes of the members in service are asked here, once
 * a second (one fstat each), and one shorter than the array needs
 * (array_member_need: a tail past its data may go) is failed as a read
 * past its end would fail it.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>

#include "array/object.h"
#include "array/state.h"
#include "array/requests.h"

#define PROBE_BYTES 512u
#define SIZE_CHECK_NS 1000000000ull

/* Read slot's first sector; on failure, fail the member. */
static void
probe (struct array *a, unsigned slot)
{
  struct io_op op = { .kind = IO_READ, .member = slot, .off = 0,
                      .len = PROBE_BYTES };
  struct array_err err;
  int r;

  if (posix_memalign (&op.buf, 4096, PROBE_BYTES) != 0)
    return;                   /* no memory: try at the next tick */
  r = io_run (a->members, &op, 1, 0);
  if (r < 0 && array_io_failed (a, &op, 1, r, &err) < 0)
    array_log (a, ARRAY_LOG_ERROR, "reading an idle member: %s", err.msg);
  free (op.buf);
}

/* Is slot's member due a probe: in service, probed by its backend, and
 * without a batch for the interval?  Notes when it last had one.
 */
static bool
due (struct array *a, unsigned slot, uint64_t now)
{
  struct keepalive *k = &a->keepalive;
  const struct io_member *m = &a->members[slot];
  uint64_t every_ns = io_member_idle_probe_ms (m) * 1000000ULL;
  struct io_member_figures f;

  if (every_ns == 0 || health_state (&a->health, slot) != MEMBER_ACTIVE)
    return false;
  io_member_get_stats (m, &f);
  if (f.batches != k->batches[slot] || k->quiet_ns[slot] == 0) {
    k->batches[slot] = f.batches;
    k->quiet_ns[slot] = now;
    return false;
  }
  return now - k->quiet_ns[slot] >= every_ns;
}

/* Fail slot's member if its file is shorter than it was opened. */
static void
check_size (struct array *a, unsigned slot)
{
  struct io_op op = { .kind = IO_READ, .member = slot, .len = 4096,
                      .result = -ENXIO };
  struct array_err err;
  uint64_t size;

  if (health_state (&a->health, slot) == MEMBER_FAULTY ||
      !io_member_shrunk (&a->members[slot], array_member_need (a),
                         &size))
    return;
  op.off = size / op.len * op.len;
  if (array_io_failed (a, &op, 1, op.result, &err) < 0)
    array_log (a, ARRAY_LOG_ERROR, "a member cut short: %s", err.msg);
}

void
keepalive_tick (struct array *a)
{
  uint64_t now = array_now_ns ();
  bool sizes = now - a->keepalive.sized_ns >= SIZE_CHECK_NS;

  if (sizes)
    a->keepalive.sized_ns = now;
  for (unsigned s = 0; s < a->geom.members && !health_failed (&a->health);
       s++) {
    /* In an epoch, as requests are: a rebuild does not swap the member
     * under the read (it waits for the epoch, epoch_quiesce).
     */
    uint64_t epoch = epoch_enter (&a->epochs);

    if (sizes)
      check_size (a, s);
    if (due (a, s, array_now_ns ())) {
      probe (a, s);
      a->keepalive.quiet_ns[s] = array_now_ns ();
    }
    epoch_exit (&a->epochs, epoch);
  }
}
