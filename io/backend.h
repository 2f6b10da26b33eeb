/* io/backend.h -- a member backend: one kind of member behind the same
 * few operations, so that the array, its jobs and the tools never ask
 * what a member is made of.  The first backend is local files and block
 * devices (io/file.c: io_uring, O_DIRECT bounce buffers, fallocate); a
 * backend for NBD exports (libnbd) is the next.
 *
 * Who calls what: io/member.c picks a member's backend from its path at
 * open (the first in its table that claims the path) and dispatches the
 * synchronous calls; io/batch.c
 * cuts a batch into one sub-batch per backend and hands each to its run.
 * Nothing outside io/ calls a backend directly.
 *
 * Contracts every backend keeps:
 * - open fills in m's generic fields (size, dio_align, direct, blockdev,
 *   in_memory, timeout_ms: 0 there asks for the backend's default) and
 *   its own; m->path and m->timeout_ms are set before it is called and
 *   m->backend after it succeeded.  On error it leaves nothing open.
 * - run does what io_run (batch.h) promises for ops that are all on its
 *   own members (members is the whole array, indexed by op->member):
 *   every op finished, short transfers and -EAGAIN retried, a read past
 *   the end -EIO, zeroes read back as zeroes, IO_FUA honoured, each op's
 *   outcome in its result, the first error returned.  Injected failures
 *   are struck by the dispatcher before run sees the batch.
 * - same says whether two open members of this backend are one object
 *   (the same file, device or export), for refusing duplicates.
 * - Errors are -errno; nothing is printed (the caller names the member).
 *   Where the number says too little (why a TLS handshake failed), open
 *   says more with io_set_why, which io_strerror (member.h) hands on.
 * Backends are stateless tables; their per-member state lives in the
 * struct io_member, their per-thread state (rings, connections' queues)
 * is theirs.
 */
#ifndef IO_BACKEND_H
#define IO_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/batch.h"
#include "io/member.h"

struct io_backend {
  const char *name;           /* "file": for status and messages */
  /* Does path name a member of this kind?  The backends are asked in
   * the order of io/member.c's table; the file backend, last, takes any
   * path.  uri: its paths are URIs, taken as they are (not made absolute
   * against the working directory).
   */
  bool (*claims) (const char *path);
  bool uri;
  /* What the open member can do (member.h's IO_CAP_* bits). */
  unsigned (*caps) (const struct io_member *m);
  /* io_member_size_now: read the open member's size again into m->size
   * (a file or device grown since open).  NULL: the size is fixed.
   */
  int (*size_now) (struct io_member *m);
  /* io_member_request_size's answer for the open member.  NULL: zeros. */
  struct io_request_size (*request_size) (const struct io_member *m);
  /* tls: how a URI of this kind is reached over TLS (io/tls.h); NULL:
   * no TLS settings.  A backend without TLS ignores it.
   */
  int (*open) (struct io_member *m, const char *path,
               enum io_open_mode mode, const struct io_tls *tls);
  void (*close) (struct io_member *m);
  int (*run) (const struct io_member *members, struct io_op *ops, size_t n,
              unsigned flags);
  /* Synchronous whole transfers for setup and tools, not the data path:
   * 0, -EIO at the end of the member, or -errno.
   */
  int (*pread) (const struct io_member *m, void *buf, size_t len,
                uint64_t off);
  int (*pwrite) (const struct io_member *m, const void *buf, size_t len,
                 uint64_t off);
  int (*sync) (const struct io_member *m);       /* all writes durable */
  /* Exclusive; -EBUSY if held.  NULL: the kind has no locks (NBD). */
  int (*lock) (struct io_member *m);
  /* -EBUSY if something outside this process holds the member for its
   * own (a mounted or assembled block device), else 0.  NULL: never.
   */
  int (*held) (const struct io_member *m);
  bool (*same) (const struct io_member *a, const struct io_member *b);
  /* Does path (one this backend takes) name open member m? */
  bool (*named) (const struct io_member *m, const char *path);
  /* Connections made again so far (NULL: the backend never reconnects). */
  uint64_t (*reconnects) (const struct io_member *m);
  /* A failed member rejoins: start afresh (new connections).  NULL:
   * nothing to do (a file is the same file).
   */
  void (*refresh) (struct io_member *m);
  /* m is out of service (failed for an error, by hand, or its link
   * lost): hold nothing the other side waits for -- an NBD member's
   * connections are closed, made again at its next use (after a
   * refresh).  NULL: nothing held (a file).
   */
  void (*let_go) (struct io_member *m);
  /* How often an idle member should be read to find out that it went
   * away (its host or link), in ms.  NULL: never (a file does not).
   */
  unsigned (*idle_probe_ms) (const struct io_member *m);
  /* Losing a member of this kind may be the transport's doing (a host or
   * a link gone), not its storage's: the array tries to reach a failed
   * one again by itself (array/comeback.c).  False for files: their
   * errors are the disk's.
   */
  bool may_return;
};

/* The reason the open (or io_tls_check) failing with r on this thread
 * failed, in words for io_strerror: printf-style, one line, no member
 * name (the caller names it).  Kept until the next open on the thread.
 */
void io_set_why (int r, const char *fmt, ...)
  __attribute__((format (printf, 2, 3)));

extern const struct io_backend io_file_backend;
extern const struct io_backend io_nbd_backend;

/* The backend that takes path: the first of io/member.c's table that
 * claims it -- io_nbd_backend for an NBD URI (nbd://, nbds://,
 * nbd+unix://, nbds+unix://), else io_file_backend (a path in the local
 * file system).  Never NULL.
 */
const struct io_backend *io_backend_for (const char *path)
  __attribute__((nonnull));

#endif /* IO_BACKEND_H */
