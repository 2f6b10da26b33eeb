/* io/engine.c -- one io_uring per thread, and the loop that drives a batch
 * of member operations on it to completion.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <liburing.h>

#include "io/engine.h"

#define RING_ENTRIES 64u
#define MAX_IN_FLIGHT RING_ENTRIES
#define MAX_SQE_LEN (1u << 30)
#define ZERO_BUF_LEN (1u << 20)

/* What an op is doing right now; zeroing steps down this list when a
 * member does not support the faster method.
 */
enum stage {
  STAGE_TRANSFER,             /* read, write or fsync */
  STAGE_PUNCH,                /* fallocate PUNCH_HOLE */
  STAGE_ZERO_RANGE,           /* fallocate ZERO_RANGE */
  STAGE_WRITE_ZEROES,         /* plain writes from the zero buffer */
  STAGE_DONE,
};

struct progress {
  enum stage stage;
  uint64_t done;              /* bytes completed in the current stage */
};

/* Per-thread state; owned by that thread only.  The ring is set up on the
 * first batch that needs it: a thread that only ever reaches members in
 * memory (run inline) never pays for one.
 */
struct engine {
  struct io_uring ring;
  bool ring_ready;
  struct progress *prog;
  size_t *queue;              /* FIFO of op indices waiting for an SQE */
  size_t cap;
};

static pthread_key_t engine_key;
static pthread_once_t engine_once = PTHREAD_ONCE_INIT;
static void *zero_buf;        /* ZERO_BUF_LEN zero bytes, read-only */

static void
engine_destroy (void *p)
{
  struct engine *e = p;

  if (e->ring_ready)
    io_uring_queue_exit (&e->ring);
  free (e->prog);
  free (e->queue);
  free (e);
}

static void
engine_key_init (void)
{
  if (pthread_key_create (&engine_key, engine_destroy) != 0)
    abort ();
  if (posix_memalign (&zero_buf, 4096, ZERO_BUF_LEN) != 0)
    abort ();
  memset (zero_buf, 0, ZERO_BUF_LEN);
}

/* Try the cheapest setup first, then fall back for older kernels (as fio
 * does): single issuer + deferred task running suit a thread that submits
 * and then waits itself.
 */
static int
ring_init (struct io_uring *ring)
{
  static const unsigned flag_sets[] = {
    IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN
      | IORING_SETUP_COOP_TASKRUN,
    IORING_SETUP_COOP_TASKRUN,
    0,
  };
  int r = -EINVAL;

  for (size_t i = 0; i < sizeof flag_sets / sizeof flag_sets[0]; i++) {
    r = io_uring_queue_init (RING_ENTRIES, ring, flag_sets[i]);
    if (r != -EINVAL)
      break;
  }
  return r;
}

static int
engine_get (struct engine **out)
{
  struct engine *e;
  int r;

  pthread_once (&engine_once, engine_key_init);
  e = pthread_getspecific (engine_key);
  if (e == NULL) {
    e = calloc (1, sizeof *e);
    if (e == NULL)
      return -ENOMEM;
    if ((r = pthread_setspecific (engine_key, e)) != 0) {
      free (e);
      return -r;
    }
  }
  *out = e;
  return 0;
}

void
io_thread_release (void)
{
  struct engine *e;

  pthread_once (&engine_once, engine_key_init);
  if ((e = pthread_getspecific (engine_key)) == NULL)
    return;
  pthread_setspecific (engine_key, NULL);
  engine_destroy (e);
}

static int
engine_ring (struct engine *e)
{
  int r;

  if (e->ring_ready)
    return 0;
  if ((r = ring_init (&e->ring)) < 0)
    return r;
  e->ring_ready = true;
  return 0;
}

static int
engine_reserve (struct engine *e, size_t n)
{
  struct progress *p;
  size_t *q;

  if (n <= e->cap)
    return 0;
  p = realloc (e->prog, n * sizeof *p);
  if (p == NULL)
    return -ENOMEM;
  e->prog = p;
  q = realloc (e->queue, n * sizeof *q);
  if (q == NULL)
    return -ENOMEM;
  e->queue = q;
  e->cap = n;
  return 0;
}

static enum stage
first_stage (enum io_kind kind)
{
  switch (kind) {
  case IO_PUNCH: return STAGE_PUNCH;
  case IO_ZERO: return STAGE_ZERO_RANGE;
  default: return STAGE_TRANSFER;
  }
}

static unsigned
sqe_len (const struct io_op *op, const struct progress *p, uint64_t cap)
{
  uint64_t left = op->len - p->done;

  return (unsigned) (left < cap ? left : cap);
}

static void
prep (struct io_uring_sqe *sqe, const struct io_member *members,
      const struct io_op *op, const struct progress *p, unsigned flags)
{
  int fd = members[op->member].file.fd;
  uint64_t off = op->off + p->done;
  char *buf = (char *) op->buf + p->done;

  switch (p->stage) {
  case STAGE_TRANSFER:
    if (op->kind == IO_FSYNC)
      io_uring_prep_fsync (sqe, fd, IORING_FSYNC_DATASYNC);
    else if (op->kind == IO_READ)
      io_uring_prep_read (sqe, fd, buf, sqe_len (op, p, MAX_SQE_LEN), off);
    else {
      io_uring_prep_write (sqe, fd, buf, sqe_len (op, p, MAX_SQE_LEN), off);
      if (flags & IO_FUA)
        sqe->rw_flags = RWF_DSYNC;
    }
    break;
  case STAGE_PUNCH:
    io_uring_prep_fallocate (sqe, fd,
                             FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                             (off_t) op->off, (off_t) op->len);
    break;
  case STAGE_ZERO_RANGE:
    io_uring_prep_fallocate (sqe, fd,
                             FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE,
                             (off_t) op->off, (off_t) op->len);
    break;
  case STAGE_WRITE_ZEROES:
    io_uring_prep_write (sqe, fd, zero_buf, sqe_len (op, p, ZERO_BUF_LEN),
                         off);
    break;
  case STAGE_DONE:
    abort ();
  }
}

static bool
unsupported (int res)
{
  return res == -EOPNOTSUPP || res == -EINVAL || res == -ENODEV ||
    res == -ENOTTY;
}

/* Account one completion.  Returns true if the op must be queued again. */
static bool
complete (struct io_op *op, struct progress *p, int res)
{
  if (res == -EAGAIN || res == -EINTR)
    return true;
  if (p->stage == STAGE_PUNCH || p->stage == STAGE_ZERO_RANGE) {
    if (res == 0)
      p->stage = STAGE_DONE;
    else if (unsupported (res))
      p->stage++;             /* punch -> zero range -> write zeroes */
    else
      op->result = res;
    return res != 0 && unsupported (res);
  }
  if (res < 0) {
    op->result = res;
    return false;
  }
  if (op->kind == IO_FSYNC) {
    p->stage = STAGE_DONE;
    return false;
  }
  if (res == 0) {             /* end of file, or a device that stopped */
    op->result = -ENXIO;      /* the member is shorter than it was */
    return false;
  }
  p->done += (uint64_t) res;
  if (p->done < op->len)
    return true;
  p->stage = STAGE_DONE;
  return false;
}

/* The next piece of read or write op (from p->done) as one plain call
 * on this thread, with preadv2/pwritev2's flags rwf.  Bytes moved, or -1
 * and errno.
 */
static ssize_t
transfer (const struct io_member *m, const struct io_op *op,
          const struct progress *p, int rwf)
{
  struct iovec iov = { (char *) op->buf + p->done,
                       sqe_len (op, p, MAX_SQE_LEN) };
  off_t off = (off_t) (op->off + p->done);

  return op->kind == IO_READ ? preadv2 (m->file.fd, &iov, 1, off, rwf)
                             : pwritev2 (m->file.fd, &iov, 1, off, rwf);
}

/* Ops on members in memory (tmpfs) run right here: such files cannot do
 * non-blocking I/O, so io_uring would pass each op to a kernel worker
 * thread and add two context switches to what is only a memory copy.
 * Reads and writes of ranges without holes are copies through the
 * member's mapping (memmap.h), the rest plain system calls.  Same stages
 * and accounting as the ring.
 */
static ssize_t
copy_mapped (const struct io_member *m, const struct io_op *op,
             const struct progress *p)
{
  uint64_t len = sqe_len (op, p, MAX_SQE_LEN);
  char *at = m->file.mem.map + op->off + p->done;
  int e = op->kind == IO_READ
    ? io_memmap_copy (&m->file.mem, m->file.fd, (char *) op->buf + p->done,
                      at, len, false)
    : io_memmap_copy (&m->file.mem, m->file.fd, at,
                      (const char *) op->buf + p->done, len, true);

  if (e < 0) {
    errno = -e;               /* as a system call says it (inline_call) */
    return -1;
  }
  return (ssize_t) len;
}

/* A copy through the mapping faulted (SIGBUS): a member shorter than
 * it was mapped (the copy looked) fails the op (-ENXIO); else (a hole
 * another process punched, in a full tmpfs) the op is redone with a
 * system call, which says what is wrong -- a write's ENOSPC -- or does it.
 */
static ssize_t
after_fault (const struct io_member *m, const struct io_op *op,
             const struct progress *p)
{
  if (!io_memmap_shrunk (&m->file.mem))
    return transfer (m, op, p, 0);
  errno = ENXIO;
  return -1;
}

static int
inline_call (const struct io_member *m, const struct io_op *op,
             const struct progress *p, unsigned flags)
{
  const int keep = FALLOC_FL_KEEP_SIZE;
  off_t off = (off_t) (op->off + p->done);
  bool fua_write = op->kind == IO_WRITE && (flags & IO_FUA);
  ssize_t n = -1;

  /* Truncated under the server (found by a copy's fault): no op may
   * reach it, above all no write, which would extend it again.
   */
  if (io_memmap_shrunk (&m->file.mem))
    return -ENXIO;
  switch (p->stage) {
  case STAGE_TRANSFER:
    if (op->kind == IO_FSYNC)
      n = fdatasync (m->file.fd);
    else if (!fua_write && !(flags & IO_CALLS) &&
             io_memmap_copy_begin (&m->file.mem, (uint64_t) off,
                                   sqe_len (op, p, MAX_SQE_LEN))) {
      n = copy_mapped (m, op, p);
      io_memmap_copied (&m->file.mem);
      if (n < 0 && errno == ENXIO)
        n = after_fault (m, op, p);
    }
    else if (io_memmap_shrunk (&m->file.mem))
      return -ENXIO;          /* found by a copy that faulted meanwhile */
    else {
      n = transfer (m, op, p, fua_write ? RWF_DSYNC : 0);
      if (n > 0 && op->kind == IO_WRITE)
        io_memmap_wrote (&m->file.mem, m->file.fd, (uint64_t) off,
                         (uint64_t) n);
    }
    break;
  case STAGE_PUNCH:
    n = fallocate (m->file.fd, FALLOC_FL_PUNCH_HOLE | keep, (off_t) op->off,
                   (off_t) op->len);
    break;
  case STAGE_ZERO_RANGE:
    n = fallocate (m->file.fd, FALLOC_FL_ZERO_RANGE | keep, (off_t) op->off,
                   (off_t) op->len);
    break;
  case STAGE_WRITE_ZEROES:
    n = pwrite (m->file.fd, zero_buf, sqe_len (op, p, ZERO_BUF_LEN), off);
    break;
  case STAGE_DONE:
    abort ();
  }
  return n < 0 ? -errno : (int) n;
}

static void
run_inline (const struct io_member *m, struct io_op *op, struct progress *p,
            unsigned flags)
{
  while (complete (op, p, inline_call (m, op, p, flags)))
    ;
}

/* Reads and writes of members through the page cache (files and disks
 * opened without O_DIRECT) run here first, on this thread: what the
 * page cache holds is a memory copy, which a plain system call makes for
 * less than a trip through the ring.  Reads and, where the file takes
 * them, writes are tried without blocking (RWF_NOWAIT); what would
 * block (-EAGAIN: a read that misses the cache) goes to the ring from
 * where it stands, so misses still run at once, in parallel.  A file
 * that cannot write without blocking (-EOPNOTSUPP: ext4's buffered
 * writes) would have the ring hand every write to a kernel worker
 * thread, which blocks just the same: its writes are plain calls here.
 * On the AMD EPYC VM (ext4, members cached; three rounds against the
 * ring) 1M reads at QD32 ran 0-19% faster, 1M writes 12-19%, 4K random
 * writes 20-27%.  FUA writes and syncs wait for the disk: the ring.
 * Once an op of a batch has missed, the rest go to the ring untried: the
 * batch's data is likely not in the cache either (a job reading cold
 * members), and copying what is cached first would hold back the ring's
 * reads of the rest (a check of uncached members ran at 0.6 of the
 * ring's speed in half the rounds).
 */
enum cached { CACHED_DONE, CACHED_NOT_TRIED, CACHED_MISSED };

static enum cached
try_cached (const struct io_member *m, struct io_op *op, struct progress *p,
            unsigned flags)
{
  _Atomic bool *writes_block = (_Atomic bool *) &m->writes_block;
  _Atomic bool *reads_ring = (_Atomic bool *) &m->reads_ring;

  if (m->direct || (op->kind != IO_READ && op->kind != IO_WRITE) ||
      (flags & IO_FUA) || (op->kind == IO_READ && atomic_load (reads_ring)))
    return CACHED_NOT_TRIED;
  for (;;) {
    bool blocking = op->kind == IO_WRITE && atomic_load (writes_block);
    ssize_t n = transfer (m, op, p, blocking ? 0 : RWF_NOWAIT);

    /* A try that did not go through (EAGAIN, or refused: EOPNOTSUPP, and
     * EINVAL from older kernels) is the ring's to make, blocking, not a
     * member error; a refused write is made blocking here from now on.
     */
    if (n < 0 && !blocking && errno != EINTR) {
      if (errno == EOPNOTSUPP && op->kind == IO_WRITE) {
        atomic_store (writes_block, true);
        continue;
      }
      if (errno == EOPNOTSUPP)
        atomic_store (reads_ring, true);
      return CACHED_MISSED;
    }
    if (!complete (op, p, n < 0 ? -errno : (int) n))
      return CACHED_DONE;
  }
}

/* A punch (or a zero range) may have left holes: views of the member
 * (view.h) must look again.  Counted after the op, so a view that saw the
 * old count looks again before it can read the range.
 */
static void
note_punched (const struct io_member *m)
{
  atomic_fetch_add ((_Atomic uint64_t *) &m->punches, 1);
}

/* An op on a member in memory, right here (inline_call).  A punch makes
 * holes the member's mapping must not be used for (memmap.h), nor its
 * views.  A zero is written as zeros from the start: tmpfs has no
 * ZERO_RANGE (shmem_fallocate: EOPNOTSUPP), and written zeros leave no
 * hole, so the mapping stays in use over them.
 */
static void
run_in_memory (const struct io_member *m, struct io_op *op,
               struct progress *p, unsigned flags)
{
  bool holes = op->kind == IO_PUNCH;

  if (op->kind == IO_ZERO)
    p->stage = STAGE_WRITE_ZEROES;
  if (holes)
    io_memmap_punch_begin (&m->file.mem, op->off, op->len);
  run_inline (m, op, p, flags);
  if (holes) {
    note_punched (m);
    io_memmap_punch_end (&m->file.mem);
  }
}

struct batch {
  struct engine *e;
  const struct io_member *members;
  struct io_op *ops;
  unsigned flags;
  size_t head, queued, in_flight;
};

static void
enqueue (struct batch *b, size_t i)
{
  b->e->queue[(b->head + b->queued++) % b->e->cap] = i;
}

static void
fill_ring (struct batch *b)
{
  while (b->queued > 0 && b->in_flight < MAX_IN_FLIGHT) {
    struct io_uring_sqe *sqe = io_uring_get_sqe (&b->e->ring);
    size_t i;

    if (sqe == NULL)
      break;
    i = b->e->queue[b->head];
    b->head = (b->head + 1) % b->e->cap;
    b->queued--;
    prep (sqe, b->members, &b->ops[i], &b->e->prog[i], b->flags);
    io_uring_sqe_set_data64 (sqe, i);
    b->in_flight++;
  }
}

static void
reap (struct batch *b)
{
  struct io_uring_cqe *cqe;
  unsigned head, seen = 0;

  io_uring_for_each_cqe (&b->e->ring, head, cqe) {
    size_t i = (size_t) io_uring_cqe_get_data64 (cqe);

    seen++;
    b->in_flight--;
    if (complete (&b->ops[i], &b->e->prog[i], cqe->res))
      enqueue (b, i);
  }
  io_uring_cq_advance (&b->e->ring, seen);
}

static int
drive (struct batch *b)
{
  while (b->queued > 0 || b->in_flight > 0) {
    int r;

    fill_ring (b);
    r = io_uring_submit_and_wait (&b->e->ring, 1);
    if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY)
      return r;               /* the ring itself failed: see io_engine_run */
    reap (b);
  }
  return 0;
}


/* Does any op go through the ring (a member not in memory)? */
static bool
needs_ring (const struct io_member *members, const struct io_op *ops,
            size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (!members[ops[i].member].in_memory)
      return true;
  return false;
}

int
io_engine_run (const struct io_member *members, struct io_op *ops, size_t n,
               unsigned flags)
{
  struct batch b = { .members = members, .ops = ops, .flags = flags };
  bool missed = false;        /* an op missed the page cache */
  int r;

  if (n == 0)
    return 0;
  if ((r = engine_get (&b.e)) < 0 || (r = engine_reserve (b.e, n)) < 0 ||
      (needs_ring (members, ops, n) && (r = engine_ring (b.e)) < 0)) {
    io_ops_fail_all (ops, n, -ECANCELED);
    return r;
  }
  for (size_t i = 0; i < n; i++) {
    const struct io_member *m = &members[ops[i].member];

    ops[i].result = 0;
    b.e->prog[i] = (struct progress) { first_stage (ops[i].kind), 0 };
    if (m->in_memory)
      run_in_memory (m, &ops[i], &b.e->prog[i], flags);
    else if (missed)
      enqueue (&b, i);
    else {
      enum cached c = try_cached (m, &ops[i], &b.e->prog[i], flags);

      missed = c == CACHED_MISSED;
      if (c != CACHED_DONE)
        enqueue (&b, i);
    }
  }
  r = drive (&b);
  if (r < 0) {
    /* io_uring_enter failing outright (EFAULT, EBADF...) is a bug, not a
     * member error, and leaves requests in an unknown state: retire the
     * ring so that no stale completion can reach a later batch.
     */
    pthread_setspecific (engine_key, NULL);
    engine_destroy (b.e);
    io_ops_fail_all (ops, n, -ECANCELED);
    return r;
  }
  return io_ops_first_error (ops, n);
}
