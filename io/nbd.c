/* io/nbd.c -- the NBD backend (backend.h): a member that is an export
 * of an NBD server, reached with libnbd's asynchronous API.
 *
 * Connections: one, or NBD_CONNS if the server offers multi-conn (then a
 * flush on any connection covers writes made on all of them, which is
 * what lets several be used at all).  Each has its own mutex; a thread
 * running a batch holds one connection of each member it touches, taken
 * in member order (so two batches cannot wait on each other), issues the
 * member's ops on it as asynchronous commands, then drives it with
 * nbd_poll until every one has completed.  libnbd starts no threads.
 *
 * Fail fast: a connection that fails, or on which nothing completes for
 * the timeout (io/nbd.h) while commands are in flight, is closed; its
 * commands fail (-EIO, -ETIMEDOUT), so the array takes the member out of
 * service at once and sends it nothing more.  The next op that does come
 * (the array's tries to reach it again, array/comeback.c, or a rebuild or
 * re-add by hand) connects again first, and fails with the connection's
 * error (-ECONNREFUSED, -ENOENT...) if the server is still not there.
 * Ops that fail so are marked link_lost (batch.h); an error the server
 * itself replies with over a live connection (EIO, ENOSPC...) is not.
 * An idle member is read now and then (io_member_idle_probe_ms), so that
 * a server gone while nothing was asked of it is found out all the same.
 *
 * TLS (nbds://, nbds+unix://; io/tls.h, nbd-tls.c): every connection
 * of a member is made with the settings it was opened with, the server
 * verified each time.
 *
 * Requests are cut at the server's maximum block size where it gives one,
 * else at NBD_MAX_REQUEST (libnbd refuses more than 64 MiB).
 * Strict alignment is off: the array's member ops are sector-aligned,
 * and a server that wants more does its own read-modify-write.
 */
#include <config.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <libnbd.h>

#include "io/backend.h"
#include "io/engine.h"
#include "io/nbd.h"
#include "io/nbd-tls.h"

/* A batch holds one connection of each member it touches while its
 * commands are in flight, so the connections bound how many batches a
 * member serves at once: with far members (milliseconds a command) that
 * is what throughput is made of.  8 let nbdkit's 16 request threads keep
 * about 14 commands in flight on 3 members with 10 ms of delay (4 kept
 * 10: 4K random reads at 3.8 against 5.6 MiB/s); more bought nothing
 * there and costs the member servers threads.
 */
#define NBD_CONNS 8
#define NBD_MAX_REQUEST (32u << 20)

struct nbd_conn {
  pthread_mutex_t lock;
  struct nbd_handle *h;       /* NULL: closed; the next use reconnects */
  unsigned gen;               /* the member's gen when it was made */
};

struct nbd_member {
  const char *uri;            /* the member's path (owned by io_member) */
  unsigned nconns;
  struct nbd_conn conn[NBD_CONNS];
  _Atomic unsigned next;      /* the connection to try first */
  /* Bumped whenever one of its connections fails: the member went away,
   * so every connection made before is suspect and is made again at its
   * next use, not found dead by a request of its own.
   */
  _Atomic unsigned gen;
  _Atomic uint64_t reconnects;  /* connections made again */
  bool can_flush, can_fua, can_zero;
  unsigned timeout_ms;        /* the member's own (io_open_opts) */
  struct nbd_tls tls;         /* the member's own (io_open_opts) */
  uint32_t max_request;       /* bytes: the server's maximum, at most
                               * NBD_MAX_REQUEST (a multiple of 512) */
};

static struct nbd_member *
nm_of (const struct io_member *m)
{
  return m->state;
}

/* -errno for libnbd's last error on this thread (EIO if it gave none). */
static int
nbd_err (void)
{
  int e = nbd_get_errno ();

  return e > 0 ? -e : -EIO;
}

static uint64_t
now_ms (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

/* libnbd's last error on this thread into msg (len bytes; NULL: not
 * wanted), and as -errno (nbd_err).
 */
static int
nbd_err_msg (char *msg, size_t len)
{
  const char *e = nbd_get_error ();

  if (msg)
    snprintf (msg, len, "%s", e ? e : "");
  return nbd_err ();
}

/* Connect to nm's URI and negotiate (TLS as nm says) within its timeout:
 * a host that does not answer (a dropped link: no reset, only silence)
 * or a server that accepts and never negotiates must not hold up whoever
 * opens the member.  On failure libnbd's message goes to msg (if given).
 */
static int
connect_one (struct nbd_handle **out, const struct nbd_member *nm,
             char *msg, size_t len)
{
  struct nbd_handle *h = nbd_create ();
  uint64_t start = now_ms ();
  unsigned timeout_ms = nm->timeout_ms;
  int r = 0;

  if (h == NULL)
    return nbd_err_msg (msg, len);
  if (nbd_set_strict_mode (h, nbd_get_strict_mode (h) &
                              ~LIBNBD_STRICT_ALIGN) == -1 ||
      (r = nbd_tls_setup (h, &nm->tls)) < 0 ||
      nbd_aio_connect_uri (h, nm->uri) == -1)
    r = r < 0 ? r : nbd_err_msg (msg, len);
  while (r == 0 && nbd_aio_is_ready (h) != 1) {
    uint64_t waited = now_ms () - start;

    if (waited >= timeout_ms)
      r = -ETIMEDOUT;
    else if (nbd_aio_is_dead (h) == 1 || nbd_aio_is_closed (h) == 1 ||
             nbd_poll (h, (int) (timeout_ms - waited)) == -1)
      r = nbd_err_msg (msg, len);
  }
  if (r < 0) {
    nbd_close (h);
    return r;
  }
  *out = h;
  return 0;
}

/* The first connection of an open: where TLS is what failed, why in
 * words (io_set_why).
 */
static int
connect_first (struct nbd_handle **out, const struct nbd_member *nm)
{
  char msg[256] = "";
  int r = connect_one (out, nm, msg, sizeof msg);

  return r < 0 ? nbd_tls_explain (&nm->tls, r, msg) : r;
}

static void
close_conns (struct nbd_member *nm)
{
  for (unsigned i = 0; i < nm->nconns; i++) {
    if (nm->conn[i].h)
      nbd_close (nm->conn[i].h);
    pthread_mutex_destroy (&nm->conn[i].lock);
  }
  nm->nconns = 0;
}

static void
free_member (struct nbd_member *nm)
{
  nbd_tls_free (&nm->tls);
  free (nm);
}

/* The longest command h's server takes: the maximum block size it
 * advertised (NBD_INFO_BLOCK_SIZE; 0 if it gave none), rounded down to
 * whole sectors, at most NBD_MAX_REQUEST.  A server may fail a longer
 * command with EINVAL, which would fail a healthy member.
 */
static uint32_t
max_request (struct nbd_handle *h)
{
  int64_t most = nbd_get_block_size (h, LIBNBD_SIZE_MAXIMUM);

  if (most <= 0 || most >= NBD_MAX_REQUEST)
    return NBD_MAX_REQUEST;
  if (most < 512)
    return 512;
  return (uint32_t) most & ~511u;
}

/* The first connection tells what the export is and whether more may be
 * opened.
 */
static int
describe (struct io_member *m, struct nbd_member *nm, struct nbd_handle *h,
          enum io_open_mode mode)
{
  int64_t size = nbd_get_size (h);

  if (size < 0)
    return nbd_err ();
  if (mode != IO_OPEN_RO && nbd_is_read_only (h) == 1)
    return -EROFS;
  m->size = (uint64_t) size;
  nm->can_flush = nbd_can_flush (h) == 1;
  nm->can_fua = nbd_can_fua (h) == 1;
  nm->can_zero = nbd_can_zero (h) == 1;
  nm->max_request = max_request (h);
  return nbd_can_multi_conn (h) == 1 && mode != IO_OPEN_RO ? NBD_CONNS : 1;
}

static int
nbd_open (struct io_member *m, const char *path, enum io_open_mode mode,
          const struct io_tls *tls)
{
  struct nbd_member *nm = calloc (1, sizeof *nm);
  struct nbd_handle *h;
  int want, r;

  if (nm == NULL)
    return -ENOMEM;
  nm->uri = m->path;
  nm->timeout_ms = m->timeout_ms ? m->timeout_ms
                                  : IO_NBD_TIMEOUT_MS_DEFAULT;
  m->timeout_ms = nm->timeout_ms;
  if ((r = nbd_tls_prepare (&nm->tls, path, tls)) < 0) {
    free (nm);
    return r;
  }
  if ((r = connect_first (&h, nm)) < 0) {
    free_member (nm);
    return r;
  }
  if ((want = describe (m, nm, h, mode)) < 0) {
    nbd_close (h);
    free_member (nm);
    return want;
  }
  do {                        /* fewer than wanted is not an error */
    nm->conn[nm->nconns].h = h;
    pthread_mutex_init (&nm->conn[nm->nconns].lock, NULL);
    nm->nconns++;
  } while (nm->nconns < (unsigned) want &&
           connect_one (&h, nm, NULL, 0) == 0);
  m->state = nm;
  m->direct = false;
  m->blockdev = false;
  m->in_memory = false;
  return 0;
}

static void
nbd_member_close (struct io_member *m)
{
  struct nbd_member *nm = nm_of (m);

  if (nm == NULL)
    return;
  for (unsigned i = 0; i < nm->nconns; i++)
    if (nm->conn[i].h)
      nbd_shutdown (nm->conn[i].h, 0);      /* in-flight commands first */
  close_conns (nm);
  free_member (nm);
  m->state = NULL;
}

/* Take one of nm's connections: a free one if there is, else wait. */
static struct nbd_conn *
take_conn (struct nbd_member *nm)
{
  unsigned first = atomic_fetch_add (&nm->next, 1) % nm->nconns;

  for (unsigned k = 0; k < nm->nconns; k++) {
    struct nbd_conn *c = &nm->conn[(first + k) % nm->nconns];

    if (pthread_mutex_trylock (&c->lock) == 0)
      return c;
  }
  pthread_mutex_lock (&nm->conn[first].lock);
  return &nm->conn[first];
}

/* Close h with a reset, not gently: a closed socket still sends what it
 * holds once the link is back, and writes given up on (and redone
 * degraded) would then land on the member long after -- over what a
 * re-add has resynced since.  SO_LINGER 0 drops them and sends RST.
 * (In-flight commands' callbacks run, with an error, as libnbd closes.)
 */
static void
reset_close (struct nbd_handle *h)
{
  int fd = nbd_aio_get_fd (h);

  if (fd >= 0)
    (void) setsockopt (fd, SOL_SOCKET, SO_LINGER,
                       &(struct linger) { .l_onoff = 1, .l_linger = 0 },
                       sizeof (struct linger));
  nbd_close (h);
}

/* Close c, whose lock is held; the next op reconnects.  failed: it
 * failed, so the member is gone: its other connections are suspect (the
 * generation), and the idle ones are closed now, which also lets a
 * restarted server bind its port again at once (the old server's side of
 * a connection we keep open holds it).
 */
static void
close_conn (struct nbd_member *nm, struct nbd_conn *c, bool failed)
{
  reset_close (c->h);
  c->h = NULL;
  if (!failed)
    return;
  atomic_fetch_add (&nm->gen, 1);
  for (unsigned i = 0; i < nm->nconns; i++) {
    struct nbd_conn *o = &nm->conn[i];

    if (o == c || pthread_mutex_trylock (&o->lock) != 0)
      continue;               /* busy: it finds out itself */
    if (o->h)
      reset_close (o->h);
    o->h = NULL;
    pthread_mutex_unlock (&o->lock);
  }
}

/* Give c back; made before the member last failed, it is closed first
 * (it was busy when the others were).
 */
static void
give_conn (struct nbd_member *nm, struct nbd_conn *c)
{
  if (c->h && c->gen != atomic_load (&nm->gen))
    close_conn (nm, c, false);
  pthread_mutex_unlock (&c->lock);
}

/* One op's commands: how many are in flight, and its first error. */
struct op_track {
  struct io_op *op;
  unsigned pending;
  int err;
  unsigned *in_flight;        /* the connection's count, across ops */
};

static int
on_done (void *user_data, int *error)
{
  struct op_track *t = user_data;

  if (*error != 0 && t->err == 0)
    t->err = -*error;
  t->pending--;
  (*t->in_flight)--;
  return 1;                   /* retire the command */
}

static const char zeroes[1u << 20];

/* Issue one command of op t (bytes [done, done+len) of it) on h. */
static int
issue (struct nbd_handle *h, const struct nbd_member *nm, struct op_track *t,
       uint64_t done, uint64_t len, unsigned flags)
{
  const struct io_op *op = t->op;
  nbd_completion_callback cb = { .callback = on_done, .user_data = t };
  uint32_t fua = (flags & IO_FUA) && nm->can_fua ? LIBNBD_CMD_FLAG_FUA : 0;
  char *buf = (char *) op->buf + done;
  uint64_t off = op->off + done;
  int64_t cookie = 0;

  if (op->kind == IO_FSYNC && !nm->can_flush)
    return 0;                 /* nothing to make durable: done */
  /* Counted first: libnbd may run the callback before it returns. */
  t->pending++;
  (*t->in_flight)++;
  switch (op->kind) {
  case IO_READ:
    cookie = nbd_aio_pread (h, buf, len, off, cb, 0);
    break;
  case IO_WRITE:
    cookie = nbd_aio_pwrite (h, buf, len, off, cb, fua);
    break;
  case IO_ZERO:
  case IO_PUNCH:
    if (nm->can_zero)
      cookie = nbd_aio_zero (h, len, off, cb, fua |
                             (op->kind == IO_ZERO ? LIBNBD_CMD_FLAG_NO_HOLE
                                                  : 0));
    else                      /* len <= sizeof zeroes, see issue_op */
      cookie = nbd_aio_pwrite (h, zeroes, len, off, cb, fua);
    break;
  case IO_FSYNC:
    cookie = nbd_aio_flush (h, cb, 0);
    break;
  }
  if (cookie == -1) {         /* refused: never in flight */
    t->pending--;
    (*t->in_flight)--;
    return nbd_err ();
  }
  return 0;
}

/* Drive h until nothing is in flight.  Returns 0, -ETIMEDOUT if nothing
 * completed for timeout_ms, or the connection's error.
 */
static int
drive (struct nbd_handle *h, const unsigned *in_flight, unsigned timeout_ms)
{
  uint64_t last = now_ms ();
  unsigned before = *in_flight;

  while (*in_flight > 0) {
    uint64_t waited = now_ms () - last;
    int r;

    if (waited >= timeout_ms)
      return -ETIMEDOUT;
    r = nbd_poll (h, (int) (timeout_ms - waited));
    if (r == -1)
      return nbd_err ();
    if (*in_flight < before) {
      before = *in_flight;
      last = now_ms ();
    }
  }
  return 0;
}

/* Issue all of op t's commands (cut at the server's maximum, and at the
 * zero buffer when zeroes are written).  Returns 0 or the first refusal.
 */
static int
issue_op (struct nbd_handle *h, const struct nbd_member *nm,
          struct op_track *t, unsigned flags)
{
  const struct io_op *op = t->op;
  bool zeroing = (op->kind == IO_ZERO || op->kind == IO_PUNCH) &&
    !nm->can_zero;
  uint64_t step = zeroing && sizeof zeroes < nm->max_request ?
    sizeof zeroes : nm->max_request;
  int r = 0;

  if (op->kind == IO_FSYNC)
    return issue (h, nm, t, 0, 0, flags);
  for (uint64_t done = 0; done < op->len && r == 0; done += step)
    r = issue (h, nm, t, done, op->len - done < step ? op->len - done : step,
               flags);
  return r;
}

/* Writes asked durable on a server without FUA: one flush after them,
 * its failure charged to every write.
 */
static int
flush_for_fua (struct nbd_handle *h, const struct nbd_member *nm,
               struct op_track *t, const size_t *idx, size_t k,
               unsigned *in_flight)
{
  struct io_op fl = { .kind = IO_FSYNC };
  struct op_track ft = { .op = &fl, .in_flight = in_flight };
  bool wrote = false;
  int r;

  for (size_t j = 0; j < k; j++)
    wrote |= t[idx[j]].op->kind != IO_READ && t[idx[j]].op->kind != IO_FSYNC;
  if (!wrote || nm->can_fua || !nm->can_flush)
    return 0;
  if ((r = issue (h, nm, &ft, 0, 0, 0)) < 0 ||
      (r = drive (h, in_flight, nm->timeout_ms)) < 0)
    return r;
  for (size_t j = 0; j < k && ft.err < 0; j++) {
    struct op_track *tj = &t[idx[j]];

    if (tj->op->kind != IO_READ && tj->op->kind != IO_FSYNC && tj->err == 0)
      tj->err = ft.err;
  }
  return 0;
}

/* Is h's connection over (dead: it failed; closed: shut)? */
static bool
conn_dead (struct nbd_handle *h)
{
  return nbd_aio_is_dead (h) == 1 || nbd_aio_is_closed (h) == 1;
}

/* Has the server hung up on the idle connection h?  Nothing is in flight
 * between batches, so an NBD server has nothing to send: a readable
 * socket means end of file or an error (a dead server sent FIN or RST).
 */
static bool
hung_up (struct nbd_handle *h)
{
  struct pollfd pfd = { .fd = nbd_aio_get_fd (h),
                        .events = POLLIN | POLLRDHUP };

  if (conn_dead (h))
    return true;
  return pfd.fd >= 0 && poll (&pfd, 1, 0) == 1 && pfd.revents != 0;
}

/* One member's part of a batch: its connection, its ops (indices into
 * the batch), the commands in flight on the connection, and whether the
 * connection failed or could not be made (then what failed is the link's
 * doing: io_op's link_lost).
 */
struct member_part {
  struct nbd_conn *c;
  struct nbd_member *nm;
  size_t *idx, k;
  unsigned in_flight;
  bool lost;
};

/* Issue every op of part p (t is indexed like the batch). */
static void
start_part (struct member_part *p, struct io_op *ops, struct op_track *t,
            unsigned flags)
{
  struct nbd_conn *c = p->c;
  unsigned gen = atomic_load (&p->nm->gen);
  int gone = 0;

  /* Hung up since (its server went away): the member failed, and this
   * part's ops fail with it; not reconnected behind the array's back (a
   * rejoining member is refreshed first, io_member_refresh).  Made
   * before another of the member's connections failed: made again.
   */
  if (c->h && hung_up (c->h)) {
    close_conn (p->nm, c, true);
    gone = -ECONNRESET;
  }
  else if (c->h && c->gen != gen)
    close_conn (p->nm, c, false);
  if (c->h == NULL && gone == 0) {
    c->gen = atomic_load (&p->nm->gen);
    if ((gone = connect_one (&c->h, p->nm, NULL, 0)) == 0)
      atomic_fetch_add (&p->nm->reconnects, 1);
  }
  p->lost = gone < 0;

  for (size_t j = 0; j < p->k; j++) {
    struct op_track *tj = &t[p->idx[j]];
    int r;

    *tj = (struct op_track) { .op = &ops[p->idx[j]],
                              .in_flight = &p->in_flight };
    if (gone < 0)
      tj->err = gone;         /* still not there */
    else if ((r = issue_op (p->c->h, p->nm, tj, flags)) < 0) {
      tj->err = tj->err == 0 ? r : tj->err;
      /* libnbd refused to queue it: never the server's reply (those
       * come through the completion), so the connection's state.
       */
      p->lost |= r == -ENOTCONN || r == -EPIPE || r == -ECONNRESET ||
        conn_dead (p->c->h);
    }
  }
}

/* Drive part p's connection until its ops are done; on a failure or a
 * timeout the connection is closed and what was in flight on it fails.
 * Then each op's result.
 */
static void
finish_part (struct member_part *p, struct io_op *ops, struct op_track *t,
             unsigned flags)
{
  int r;

  if (p->c->h && ((r = drive (p->c->h, &p->in_flight,
                              p->nm->timeout_ms)) < 0 ||
                  ((flags & IO_FUA) &&
                   (r = flush_for_fua (p->c->h, p->nm, t, p->idx, p->k,
                                       &p->in_flight)) < 0))) {
    close_conn (p->nm, p->c, true);
    p->lost = true;
    for (size_t j = 0; j < p->k; j++)
      if (t[p->idx[j]].pending > 0)
        t[p->idx[j]].err = r;
  }
  else if (p->c->h && conn_dead (p->c->h)) {
    close_conn (p->nm, p->c, true);     /* its commands failed with it */
    p->lost = true;
  }
  /* Errors on a connection that stayed up are the server's own replies
   * (EIO, ENOSPC...): the member answered, its link is fine.
   */
  for (size_t j = 0; j < p->k; j++) {
    const struct op_track *tj = &t[p->idx[j]];
    struct io_op *op = &ops[p->idx[j]];

    op->result = tj->pending > 0 && tj->err == 0 ? -EIO : tj->err;
    op->link_lost = p->lost && op->result < 0;
  }
}

/* Cut the batch into one part per member, in member order. */
static size_t
cut_parts (const struct io_member *members, struct io_op *ops, size_t n,
           size_t *idx, struct member_part *parts)
{
  unsigned lo = UINT32_MAX, hi = 0;
  size_t np = 0, at = 0;

  for (size_t i = 0; i < n; i++) {
    lo = ops[i].member < lo ? ops[i].member : lo;
    hi = ops[i].member > hi ? ops[i].member : hi;
  }
  for (unsigned m = lo; n && m <= hi; m++) {
    struct member_part *p = &parts[np];

    *p = (struct member_part) { .nm = nm_of (&members[m]), .idx = idx + at };
    for (size_t i = 0; i < n; i++)
      if (ops[i].member == m)
        p->idx[p->k++] = i;
    at += p->k;
    np += p->k > 0;
  }
  return np;
}

static int
nbd_run (const struct io_member *members, struct io_op *ops, size_t n,
         unsigned flags)
{
  size_t *idx = malloc (n * sizeof *idx), np;
  struct op_track *t = malloc (n * sizeof *t);
  struct member_part *parts = malloc (n * sizeof *parts);

  if (idx == NULL || t == NULL || parts == NULL) {
    free (idx);
    free (t);
    free (parts);
    io_ops_fail_all (ops, n, -ECANCELED);
    return -ENOMEM;
  }
  np = cut_parts (members, ops, n, idx, parts);
  /* Each member's connection is taken while the earlier members' are
   * held, in member order in every thread: no two batches wait on each
   * other.  All members' commands go out before any is waited for.
   */
  for (size_t p = 0; p < np; p++) {
    parts[p].c = take_conn (parts[p].nm);
    start_part (&parts[p], ops, t, flags);
  }
  for (size_t p = 0; p < np; p++)
    finish_part (&parts[p], ops, t, flags);
  for (size_t p = 0; p < np; p++)
    give_conn (parts[p].nm, parts[p].c);
  free (idx);
  free (t);
  free (parts);
  return io_ops_first_error (ops, n);
}

/* One op run alone on one connection (setup and tools). */
static int
run_one (const struct io_member *m, struct io_op *op)
{
  size_t idx = 0;
  struct op_track t;
  struct member_part p = { .nm = nm_of (m), .idx = &idx, .k = 1 };

  p.c = take_conn (p.nm);
  start_part (&p, op, &t, 0);
  finish_part (&p, op, &t, 0);
  give_conn (p.nm, p.c);
  return op->result;
}

static int
nbd_member_pread (const struct io_member *m, void *buf, size_t len,
                  uint64_t off)
{
  struct io_op op = { .kind = IO_READ, .buf = buf, .off = off, .len = len };

  return run_one (m, &op);
}

static int
nbd_member_pwrite (const struct io_member *m, const void *buf, size_t len,
                   uint64_t off)
{
  struct io_op op = { .kind = IO_WRITE, .buf = (void *) buf, .off = off,
                      .len = len };

  return run_one (m, &op);
}

static int
nbd_member_sync (const struct io_member *m)
{
  struct io_op op = { .kind = IO_FSYNC };

  return run_one (m, &op);
}

/* One export is one URI here (another spelling of the same export is not
 * recognised).
 */
static bool
nbd_member_named (const struct io_member *m, const char *path)
{
  return strcmp (m->path, path) == 0;
}

static bool
nbd_member_same (const struct io_member *a, const struct io_member *b)
{
  return nbd_member_named (a, b->path);
}

/* A member rejoining (a rebuild or re-add in its slot): every
 * connection is made again at its next use.
 */
static void
nbd_member_refresh (struct io_member *m)
{
  struct nbd_member *nm = nm_of (m);

  for (unsigned i = 0; i < nm->nconns; i++) {
    struct nbd_conn *c = &nm->conn[i];

    pthread_mutex_lock (&c->lock);
    if (c->h)
      close_conn (nm, c, false);
    pthread_mutex_unlock (&c->lock);
  }
}

static uint64_t
nbd_member_reconnects (const struct io_member *m)
{
  return atomic_load (&nm_of (m)->reconnects);
}

/* Half the timeout: a server gone while the member is idle is found out
 * within the timeout, as it would be with requests in flight.
 */
static unsigned
nbd_member_idle_probe_ms (const struct io_member *m)
{
  unsigned t = nm_of (m)->timeout_ms;

  return t / 2 ? t / 2 : 1;
}

/* What the export said it can do at open: flush and FUA as the server
 * offers them (FUA it lacks is a flush after the writes, nbd_run).
 */
static unsigned
nbd_member_caps (const struct io_member *m)
{
  const struct nbd_member *nm = nm_of (m);

  return (nm->can_flush ? IO_CAP_FLUSH : 0) | (nm->can_fua ? IO_CAP_FUA : 0);
}

/* NBD's preferred block size is a floor (shorter commands cost the
 * server a read-modify-write), not a size to cut work into: batches to
 * a remote member go as long as they come, up to the server's maximum.
 */
static struct io_request_size
nbd_member_request_size (const struct io_member *m)
{
  struct io_request_size rs = { .maximum = nm_of (m)->max_request };

  return rs;
}

static bool
nbd_claims (const char *path)
{
  static const char *const schemes[] = {
    "nbd://", "nbds://", "nbd+unix://", "nbds+unix://",
  };

  for (size_t i = 0; i < sizeof schemes / sizeof schemes[0]; i++)
    if (strncmp (path, schemes[i], strlen (schemes[i])) == 0)
      return true;
  return false;
}

/* No .lock, .held: NBD has no locks, and nothing stops two arrays from
 * using one export.
 */
const struct io_backend io_nbd_backend = {
  .name = "nbd",
  .claims = nbd_claims,
  .uri = true,
  .caps = nbd_member_caps,
  .request_size = nbd_member_request_size,
  .open = nbd_open,
  .close = nbd_member_close,
  .run = nbd_run,
  .pread = nbd_member_pread,
  .pwrite = nbd_member_pwrite,
  .sync = nbd_member_sync,
  .same = nbd_member_same,
  .named = nbd_member_named,
  .reconnects = nbd_member_reconnects,
  .refresh = nbd_member_refresh,
  .idle_probe_ms = nbd_member_idle_probe_ms,
  .may_return = true,
};
