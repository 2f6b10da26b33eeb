/* io/member.h -- one member of the array, whatever it is made of: its
 * name, size and alignment, and the backend (backend.h) that reaches it.
 *
 * Errors are returned as -errno and never printed here; the caller says
 * which member and path they belong to.  A struct io_member is written
 * only while the array is being set up (single-threaded) and read-only
 * afterwards, so it needs no lock -- but for its _Atomic fields (stats,
 * fault injection, punches, how its file takes non-blocking I/O), which
 * any thread may change.
 */
#ifndef IO_MEMBER_H
#define IO_MEMBER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "io/memmap.h"

struct io_backend;
struct io_tls;

enum io_open_mode {
  IO_OPEN_RW,                 /* a member in service */
  IO_OPEN_RW_DIRECT,          /* the same, bypassing the page cache */
  IO_OPEN_RO,                 /* looked at (superblock, signatures), not taken */
  IO_OPEN_READS,              /* in service for reading only (a check, a
                               * read-only array) */
  IO_OPEN_READS_DIRECT,       /* the same, bypassing the page cache */
};

/* What the file backend (io/file.c and the engine under it) keeps of an
 * open file or block device.  Nothing outside io/'s file code reads it.
 */
struct io_file {
  int fd;                     /* -1 when not open; O_CLOEXEC */
  dev_t dev;                  /* identity: st_rdev of a block device, */
  ino_t ino;                  /* else st_dev + st_ino */
  struct io_memmap mem;       /* a file in memory opened read-write:
                                 mapped whole for requests (memmap.h) */
};

/* What the member's batches cost, counted by io_run (batch.h) once per
 * batch that reaches the member.  Relaxed atomics: figures for status.
 */
struct io_stats {
  _Atomic uint64_t batches;
  _Atomic uint64_t busy_ns;   /* the wall time of those batches, summed */
  _Atomic uint64_t errors;    /* ops that failed with the member's error */
};

/* A member's figures for status (io_member_get_stats). */
struct io_member_figures {
  const char *transport;      /* the backend's name: "file", "nbd" */
  uint64_t batches, errors, reconnects;
  uint64_t latency_us;        /* mean wall time of a batch */
};

struct io_member {
  const struct io_backend *backend;   /* NULL when not open */
  char *path;                 /* owned copy: the member's name in messages */
  bool direct;                /* opened with O_DIRECT */
  bool reads_only;            /* opened for reading (IO_OPEN_READS*): its
                                 writes fail -EROFS, never reaching it */
  bool blockdev;
  bool in_memory;             /* on tmpfs/ramfs: no non-blocking I/O, so
                                 io_uring would hand every op to a kernel
                                 worker thread; see engine.c */
  unsigned dio_align;         /* O_DIRECT alignment of offsets, lengths and
                                 buffers in bytes (power of two); 1 if buffered */
  unsigned timeout_ms;        /* silence that fails its ops (io_open_opts);
                                 0: it has none (a file) */
  uint64_t size;              /* bytes */
  struct io_file file;        /* the file backend's own */
  void *state;                /* another backend's own (owned by it) */
  /* Test-only fault injection: when >= 0, the number of ops this member
   * still completes before every later op fails with EIO (see
   * io_member_inject_failure).  -1: off.
   */
  _Atomic int64_t fail_after;
  /* Punches (and zero ranges) run on the member in memory so far: they
   * may make holes, which views (view.h) must not read through.
   */
  _Atomic uint64_t punches;
  /* The file refused a buffered write without blocking (RWF_NOWAIT:
   * -EOPNOTSUPP, as ext4 does): its writes are plain calls; refused a
   * read so: its reads go to the ring untried (engine.c).
   */
  _Atomic bool writes_block, reads_ring;
  struct io_stats stats;
};

/* Set every field to "not open".  Always safe to io_member_close() after. */
void io_member_init (struct io_member *m) __attribute__((nonnull));

/* Open path read-write (O_DIRECT if direct) through the backend that
 * takes it (backend.h), find its size and alignment.  Returns 0, or
 * -errno: for NBD URIs libnbd's (-ENOENT, -ECONNREFUSED, -ETIMEDOUT...),
 * -EROFS for a read-only export opened read-write, and over TLS
 * (io/tls.h) -EACCES for a server not authenticated (its certificate, the
 * PSK), -EPROTONOSUPPORT where the URI and the server disagree on TLS or
 * TLS is required of a plain-text URI, -ENOKEY for a TLS URI without a
 * CA or PSK to authenticate it with (io_strerror says which and why);
 * for files open(2)'s
 * errors, -EOPNOTSUPP if direct and the file system refuses
 * O_DIRECT, -EISDIR for a directory, -ENODEV for anything that is
 * neither a regular file nor a block device.  On error
 * m is left "not open" and owns nothing (no fd, no path): nothing to close.
 */
int io_member_open (struct io_member *m, const char *path, bool direct)
  __attribute__((nonnull, warn_unused_result));

/* How to open a member: with O_DIRECT (a file or device), how long it
 * may be silent (ms) with ops in flight before they fail (a member over
 * the network; 0: the backend's default, io/nbd.h), how an NBD export is
 * reached over TLS (io/tls.h; NULL: no TLS settings, so a TLS URI is
 * refused), and whether it is only looked at: read-only, without
 * O_DIRECT (as io_member_open_ro; direct is then ignored), or in service
 * for reads only (reads_only: read-only, O_DIRECT as direct says, so that
 * a user who may only read it can check it; its writes fail -EROFS).
 */
struct io_open_opts {
  bool direct;
  unsigned timeout_ms;
  const struct io_tls *tls;
  bool read_only;
  bool reads_only;
};

/* io_member_open with opts. */
int io_member_open_opts (struct io_member *m, const char *path,
                         const struct io_open_opts *opts)
  __attribute__((nonnull, warn_unused_result));

/* r, the -errno of the last io_member_open* (or io_tls_check) that
 * failed on this thread, in words: what the backend found out beyond the
 * number where it said more (an NBD member's TLS handshake: "TLS: the
 * server's certificate is not trusted ..."; libnbd's reason a URI is
 * refused), else strerror (-r).  The string is valid until the next open
 * on this thread.
 */
const char *io_strerror (int r);

/* What a member can do, as its backend says (io_member_caps); the array
 * asks these, never the member's fields or its backend.
 */
enum {
  IO_CAP_MAP = 1u << 0,       /* its bytes can be mapped and used in place
                               * (io/view.h): a file in memory */
  IO_CAP_MEMORY = 1u << 1,    /* it lives in memory: a read is a copy at
                               * memory speed, and nothing a flush or FUA
                               * does makes it more durable */
  IO_CAP_FLUSH = 1u << 2,     /* a flush makes earlier writes durable */
  IO_CAP_FUA = 1u << 3,       /* a write is made durable by itself (IO_FUA
                               * natively; without it, a flush after) */
};
unsigned io_member_caps (const struct io_member *m) __attribute__((nonnull));

/* Read the open member's size again into m->size: a file or block
 * device may have grown since it was opened (an NBD export keeps the
 * size it had); a file in memory is mapped again at that size (memmap.h).
 * Only while no op runs on m (it is read without a lock).
 * 0 or -errno (m->size as it was).
 */
int io_member_size_now (struct io_member *m) __attribute__((nonnull));

/* Is m a regular file now shorter than need bytes -- truncated under the
 * server (need: the end of the bytes its user needs, or of a write it is
 * about to make)?  One fstat; false for block devices and members over
 * NBD.  A write past its end would extend it again, the bytes cut off
 * then holes that read as zeroes: a job's writes ask (IO_FIXED_SIZE,
 * batch.h), the background thread now and then.  *size (if not NULL):
 * its bytes now, when true.  Any thread.
 */
bool io_member_shrunk (const struct io_member *m, uint64_t need,
                       uint64_t *size)
  __attribute__((nonnull (1)));

/* The request sizes a member serves best and at most, as its backend
 * says for it as opened (bytes, multiples of 512):
 * - preferred: work cut into pieces of about this size keeps the member
 *   at its best (a file in memory: what one piece of each member copies
 *   stays in the processor's cache for the XOR that reads it next); 0:
 *   any size, the longer the better (disks, NBD: deep batches stream).
 * - maximum: the longest request the member takes in one command (an NBD
 *   server's advertised maximum block size, at most 32 MiB); 0: no limit.
 *   The backend cuts longer ops itself; callers need not.
 * Zeros if m is not open.
 */
struct io_request_size {
  uint64_t preferred;
  uint64_t maximum;
};
struct io_request_size io_member_request_size (const struct io_member *m)
  __attribute__((nonnull));

/* The same, read-only and without O_DIRECT: for looking at a disk (its
 * superblock, its signatures) without taking it.
 */
int io_member_open_ro (struct io_member *m, const char *path)
  __attribute__((nonnull, warn_unused_result));

/* fdatasync the member: what was written before is durable.  0 or -errno. */
int io_member_sync (const struct io_member *m)
  __attribute__((nonnull, warn_unused_result));

/* Take an exclusive advisory lock (flock) so two servers cannot run one
 * array.  Returns 0, or -EBUSY if another open file holds it.
 */
int io_member_lock (struct io_member *m)
  __attribute__((nonnull, warn_unused_result));

/* -EBUSY if something outside this process holds the member for its own
 * (a block device mounted, or part of an md or device-mapper device),
 * else 0 (-EBADF if not open).
 */
int io_member_held (const struct io_member *m)
  __attribute__((nonnull, warn_unused_result));

/* Read len bytes at off synchronously (setup-time checks only).
 * Returns 0, -EIO on a short read, or -errno.
 */
int io_member_probe_read (struct io_member *m, uint64_t off, uint32_t len)
  __attribute__((nonnull, warn_unused_result));

/* Synchronous whole reads and writes for setup and tools (not the data
 * path: that is io_run, batch.h).  With O_DIRECT, buf, len and off must
 * be dio_align multiples.
 * Returns 0, -EIO on end of file, or -errno (a write to a member opened
 * for reading only: -EROFS, nothing sent).
 */
int io_member_pread (const struct io_member *m, void *buf, size_t len,
                     uint64_t off)
  __attribute__((nonnull, warn_unused_result));
int io_member_pwrite (const struct io_member *m, const void *buf, size_t len,
                      uint64_t off)
  __attribute__((nonnull, warn_unused_result));

/* Is m open (a member in the array), or "not open" (missing)? */
static inline bool
io_member_is_open (const struct io_member *m)
{
  return m->backend != NULL;
}

/* True if both are open and one object: the same file, device or export. */
bool io_member_same (const struct io_member *a, const struct io_member *b)
  __attribute__((nonnull));

/* Does path name m, which is open (the same file or device, by another
 * name perhaps)?  Without opening path.
 */
bool io_member_named (const struct io_member *m, const char *path)
  __attribute__((nonnull));

/* Make every op on m from the (after+1)-th on fail with EIO, without
 * reaching the file: a member that dies while in service.  Batch ops
 * count; io_member_pwrite fails too once they ran out.
 */
void io_member_inject_failure (struct io_member *m, int64_t after)
  __attribute__((nonnull));

/* m, which failed, is about to rejoin its slot (a rebuild or re-add in
 * place): it starts afresh, as far as its backend can (an NBD member
 * connects again; a file stays as it is).  Not while requests use m.
 */
void io_member_refresh (struct io_member *m) __attribute__((nonnull));

/* m was taken out of service (for an error, by hand, or its link
 * lost): let go of what the other side may wait on (an NBD member's
 * connections; made again when m is used later: a re-add, or the probe
 * of one that may come back by itself, refreshes it first).  Safe while
 * requests still use m.
 */
void io_member_let_go (struct io_member *m) __attribute__((nonnull));

/* Is name a URI that a backend takes (nbd://, nbds://, nbd+unix://,
 * nbds+unix://: backend.h) rather than a path in the local file system?
 */
bool io_member_is_uri (const char *name) __attribute__((nonnull));

/* name as another process must be given it (the server's working
 * directory is not the caller's): a URI as it is, a path made absolute
 * against the current directory (not resolved: symbolic links stay).
 * Returns a malloc'd string, or NULL with errno set (ENOMEM; getcwd's
 * error).
 */
char *io_member_locate (const char *name) __attribute__((nonnull));

/* Can m, which failed, come back by itself (its backend's may_return:
 * an NBD member whose host or link was lost)?  False if m is not open.
 */
bool io_member_can_return (const struct io_member *m)
  __attribute__((nonnull));

/* How long m may sit idle, in ms, before it should be read to find out
 * whether it is still there (an NBD member: half its timeout, so that a
 * lost server or link is noticed within the timeout even with nothing
 * asked of it; the read fails with link_lost, batch.h).  0: never (a
 * file, or m not open).
 */
unsigned io_member_idle_probe_ms (const struct io_member *m)
  __attribute__((nonnull));

/* m's figures so far (zeros, transport NULL, if it is not open). */
void io_member_get_stats (const struct io_member *m,
                          struct io_member_figures *out)
  __attribute__((nonnull));

/* Close and free; the struct is left as after io_member_init(). */
void io_member_close (struct io_member *m) __attribute__((nonnull));

#endif /* IO_MEMBER_H */
