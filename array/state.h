/* array/state.h -- the state room: who is in service and why not.
 * Member health itself has one owner (health.h); around it:
 *
 *   assemble.c  which members make the array at start, and which are left out
 *   fail.c      a member taken out of service, and why (struct fault)
 *   comeback.c  a member lost with its link, tried again by itself
 *   keepalive.c idle members read now and then, so a lost one is found
 *   guard.c     what a disk holds before the array takes it (guard.h)
 *   meta.c      the superblocks and the bitmap that say all this on disk
 *               (with meta-bitmap.c, meta-bblog.c, meta-load.c)
 *
 * Who calls what: exec.c, scrub.c and keepalive.c report failed I/O
 * (array_io_failed, array_mark_failed); meta.c takes a member out
 * (array_take_out); the job thread ticks comeback and keepalive; status*.c
 * reads a->comeback (under job.lock), comeback_applies and fault_of; fail.c holds a member
 * failed by hand (comeback_hold); rebuild.c probes the spare
 * (spare_guard).  Locks: job.lock before fault_lock, never after.
 */
#ifndef ARRAY_STATE_H
#define ARRAY_STATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "array/array.h"
#include "io/batch.h"

struct array;

/* A faulty member that may come back by itself (comeback.c): what its
 * last try found.  Under job.lock.
 */
enum comeback_state {
  COMEBACK_NONE,              /* nothing to bring back */
  COMEBACK_WAITING,           /* it does not answer yet: tried again */
  COMEBACK_REFUSED,           /* it answers, its re-add was refused */
  COMEBACK_HELD,              /* failed by hand: left out until told */
  COMEBACK_READDED,           /* re-added by a try, resyncing */
};
struct comeback {
  enum comeback_state state;
  int slot;
  uint32_t gen;               /* health_gen of the member that failed */
  unsigned tries;
  uint64_t delay_ns, next_ns; /* the backoff, and when the next try is */
  char why[ARRAY_ERR_LEN];    /* the last try's error, or the refusal */
};

/* Why the out slot's member was taken out (fail.c), which decides
 * whether it may come back by itself (comeback.c): only one whose host or
 * link was lost.  An I/O error the member reported says something about
 * its storage: it stays out until a person acts (re-add or rebuild).
 */
enum fault_kind {
  FAULT_NONE,                 /* no record for the slot's member */
  FAULT_IO_ERROR,             /* it answered with an error */
  FAULT_LINK_LOST,            /* it could not be reached (io_op link_lost) */
  FAULT_BY_HAND,              /* failed by hand (raid5ctl fail) */
};
/* The last member taken out, under fault_lock. */
struct fault {
  enum fault_kind kind;
  int slot;
  uint32_t gen;               /* health_gen of the member that failed */
  char why[ARRAY_ERR_LEN];    /* "read at 4096: Input/output error" */
};

/* What keepalive.c knows of each member: the batches it had seen, and
 * since when it has seen no new one.  The job's thread only.
 */
struct keepalive {
  uint64_t batches[R5_MAX_MEMBERS];
  uint64_t quiet_ns[R5_MAX_MEMBERS];
  uint64_t sized_ns;          /* when the members' sizes were last asked */
};

/* From the background thread, now and then: watch the faulty member if
 * it may come back by itself, and when its next try is due, try to
 * re-add it (comeback.c).  Takes job.lock; a try waits up to the member
 * timeout, without it.
 */
void comeback_tick (struct array *a) __attribute__((nonnull));

/* Probe the hot spare for what it holds besides this array's own
 * superblock (array/guard.h), at start and again just before a rebuild
 * takes it: what it holds then is in spare_sigs, to be wiped, with
 * spare_force; without, -EEXIST and err says what.  At setup or with
 * job.lock held.
 */
int spare_guard (struct array *a, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Would slot's member, taken out for a lost link, be tried again by
 * itself: re-add=auto, superblocks to decide by, a member of a kind that
 * can come back (io_member_can_return), and not one that a rebuild onto
 * another member left out?
 */
bool comeback_applies (const struct array *a, unsigned slot)
  __attribute__((nonnull));

/* The member of slot (the gen-th, health_gen) was failed by hand (md's
 * --fail): it is not tried again by itself.
 */
void comeback_hold (struct array *a, unsigned slot, uint32_t gen)
  __attribute__((nonnull));

/* Why slot's member is out of service: the kind of the last failure
 * recorded for the member now in the slot (FAULT_NONE if none is, or the
 * slot is not faulty), its description in why (ARRAY_ERR_LEN bytes, or
 * NULL).  Takes fault_lock.
 */
enum fault_kind fault_of (struct array *a, unsigned slot, char *why)
  __attribute__((nonnull (1)));

/* From the background thread, now and then: read each member in service
 * that has been idle for its probe interval (io_member_idle_probe_ms),
 * and fail it as any I/O error would if it does not answer; fail a file
 * that has become shorter than it was opened (keepalive.c).  A read
 * waits up to the member timeout.
 */
void keepalive_tick (struct array *a) __attribute__((nonnull));

/* After io_run() failed with r on ops: take the member it blames out of
 * service (fail.c); *gen (if not NULL) says which member of its slot it
 * was (health_gen).  Returns 1 if this call took it out, 0 if it already
 * was, or -errno with err set: nothing to blame (the batch could not
 * run), or the array has failed.  The superblocks are not touched.
 */
int array_take_out (struct array *a, const struct io_op *ops, size_t n,
                    int r, uint32_t *gen, struct array_err *err)
  __attribute__((nonnull (1, 2, 6), warn_unused_result));

/* array_take_out(), then record the failure in the superblocks.  Returns
 * 0 if the array goes on degraded and the work may be redone, else -errno.
 */
int array_io_failed (struct array *a, const struct io_op *ops, size_t n,
                     int r, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Fail the whole array; returns -EIO with err = "array has failed: WHY WHAT". */
int array_mark_failed (struct array *a, struct array_err *err,
                       const char *why, const char *what)
  __attribute__((nonnull));

#endif /* ARRAY_STATE_H */
