/* io/batch.h -- batched member I/O through io_uring.
 *
 * io_run() takes a batch of independent member operations, submits them
 * together on the calling thread's own ring, and returns when every one
 * has finished -- successfully or not -- so the caller's buffers are free
 * again.  Rings are per thread, created on first use (never before nbdkit
 * forks) and destroyed when the thread exits; no locks are taken.
 *
 * Each op is completed in full: short transfers and -EAGAIN are
 * resubmitted; a read hitting end of file is -EIO.  Zeroing falls back
 * from fallocate(2) to writing zeroes where a member cannot punch or zero
 * a range, so afterwards the range always reads as zeroes.  Members opened
 * with O_DIRECT get bounce buffers (and read-modify-write of partial
 * blocks) wherever an op is not aligned to the member's dio_align.
 * Ops in one batch must not overlap each other on a member.
 */
#ifndef IO_BATCH_H
#define IO_BATCH_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/member.h"

enum io_kind {
  IO_READ,                    /* member -> buf */
  IO_WRITE,                   /* buf -> member */
  IO_ZERO,                    /* range reads as zeroes, stays allocated */
  IO_PUNCH,                   /* range reads as zeroes, holes allowed */
  IO_FSYNC,                   /* fdatasync the member; off, len unused */
};

struct io_op {
  enum io_kind kind;
  unsigned member;            /* index into the members array */
  void *buf;                  /* READ/WRITE; caller-owned */
  uint64_t off;               /* bytes from the start of the member */
  uint64_t len;               /* bytes, <= 1 GiB */
  int result;                 /* out: 0 or -errno */
  /* out: the op failed because the member could not be reached (its
   * connection reset, refused, timed out or hung up: its host or link
   * was lost), not with an error the member itself reported.  Only a
   * backend that reaches its members over a link sets it (NBD).
   */
  bool link_lost;
};

/* Does op change the member (a write, zero or punch; a flush does not)? */
static inline bool
io_op_writes (const struct io_op *op)
{
  return op->kind == IO_WRITE || op->kind == IO_ZERO || op->kind == IO_PUNCH;
}

/* Did op (run) fail with a medium error -- what a disk answers for a
 * sector it cannot read (EIO; ENODATA from a SCSI or NVMe medium error),
 * the member itself reporting it -- rather than its link or the member
 * gone?  md corrects such an error from the other members when a request
 * meets it; setup-time reads note it and go on.
 */
static inline bool
io_op_medium_error (const struct io_op *op)
{
  return (op->result == -EIO || op->result == -ENODATA) && !op->link_lost;
}

/* Did op fail because its member is no longer what it was opened as (a
 * file truncated under the server: a read meets its end, a copy through
 * its mapping meets SIGBUS)?  Then nothing of it is corrected or
 * recorded as a bad block: the member is taken out.
 */
static inline bool
io_op_member_shrank (const struct io_op *op)
{
  return op->result == -ENXIO;
}

/* Did op fail with an error about its range alone -- what md's rules
 * correct from the other members or record in the member's bad-block
 * log -- rather than one about the member as a whole?  Not: not run
 * (-ECANCELED), a sync (no range), its link lost, memory short here
 * (-ENOMEM), the member shrunk (io_op_member_shrank).  The one question
 * every path that corrects, records or counts failures asks.
 */
static inline bool
io_op_range_error (const struct io_op *op)
{
  return op->result < 0 && op->result != -ECANCELED &&
    op->kind != IO_FSYNC && !op->link_lost && op->result != -ENOMEM &&
    !io_op_member_shrank (op);
}

/* Flags for io_run(). */
#define IO_FUA 1u             /* writes and zeroes are durable on return */
/* Members in memory copied with system calls, not through their mapping
 * (io/memmap.h): for jobs, which stream each page once.  A page's first
 * touch through a mapping traps (on the AMD EPYC VM 10 us a page after
 * MADV_POPULATE_WRITE, 15-19 without), where the kernel's copy does not:
 * an offline check read that way ran at 0.08 of its speed with preadv.
 */
#define IO_CALLS 2u
/* Writes never make a regular file longer: one (a write, zero or punch:
 * punches fall back to writing zeroes) that would end past its file's
 * end fails -ENXIO (io_op_member_shrank: the file was cut short under
 * the server, and a write would extend it again with the bytes cut off
 * as holes reading as zeroes), the other ops of the batch's file members
 * -ECANCELED, none of them run (members of another backend in a mixed
 * batch run theirs).  One fstat per member written a batch (1.3 us on
 * the AMD EPYC VM, as much as a 4 KiB write): for jobs' pieces and
 * corrections, not requests.
 */
#define IO_FIXED_SIZE 4u
/* A job's I/O: both of the above. */
#define IO_JOB (IO_CALLS | IO_FIXED_SIZE)

/* Run a batch.  Returns 0 if every op succeeded, else an -errno.  Each
 * op's own outcome is in its result field: 0, its member's -errno, or
 * -ECANCELED if it was not run -- because an earlier step of the batch
 * failed, or because the batch could not run at all (no memory, no ring:
 * then every result is -ECANCELED and the return value says why).  So a
 * result other than 0 and -ECANCELED always blames that op's member;
 * link_lost says whether it was the member's link.  A write, zero or
 * punch of a member opened for reading only (io_open_opts.reads_only)
 * fails -EROFS without reaching it: the caller's mistake, not the
 * member's (a read-only array asks for none).
 */
int io_run (const struct io_member *members, struct io_op *ops, size_t n,
            unsigned flags)
  __attribute__((nonnull (1), warn_unused_result));

/* Let go of the calling thread's ring (made again at its next io_run).
 * For a thread that did I/O before its process forks: a ring belongs to
 * the task that made it (IORING_SETUP_SINGLE_ISSUER), and the forked
 * process's use of it would fail with EEXIST.
 */
void io_thread_release (void);

/* Check that this process can use io_uring.  Returns 0 or -errno. */
int io_probe (void) __attribute__((warn_unused_result));

#endif /* IO_BATCH_H */
