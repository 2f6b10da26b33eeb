/* io/nbd-conn.c -- an NBD member's connections (nbd-int.h): made, chosen
 * for commands, failed, closed, made again; and the list of members,
 * whose loops stop before this process forks.
 *
 * A connection is made by the thread of a batch that needs it (at the
 * member's open, then again at the next use after it was closed), so
 * that a server that is not there fails the batch that asked, with the
 * connection's error.  It is closed only by the member's loop (or once
 * the loop is stopped), when no thread is inside a libnbd call on it.
 */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "io/nbd-int.h"

uint64_t
nbd_now_ms (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

int
nbd_err (void)
{
  int e = nbd_get_errno ();

  return e > 0 ? -e : -EIO;
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

/* A command's bytes go into the socket at once, whatever the server has
 * read yet, so that the thread that issues a long write need not wait to
 * send the rest, nor the loop be woken for each piece: the kernel sends
 * the queue as the server reads.  At most what the system allows
 * (net.core.wmem_max); never smaller than it is.
 */
static void
grow_sndbuf (struct nbd_handle *h)
{
  int fd = nbd_aio_get_fd (h), want = NBD_SNDBUF, have = 0;
  socklen_t len = sizeof have;

  if (fd >= 0 && getsockopt (fd, SOL_SOCKET, SO_SNDBUF, &have, &len) == 0 &&
      have < want)
    (void) setsockopt (fd, SOL_SOCKET, SO_SNDBUF, &want, sizeof want);
}

/* Within nm's timeout: a host that does not answer (a dropped link: no
 * reset, only silence) or a server that accepts and never negotiates
 * must not hold up whoever connects.  Strict alignment is off: the
 * array's member ops are sector-aligned, and a server that wants more
 * does its own read-modify-write.  Simple replies, not structured ones:
 * nothing here needs the latter, and a read's reply then takes libnbd
 * two reads of the socket, not four.
 */
int
nbd_connect (struct nbd_handle **out, const struct nbd_member *nm,
             char *msg, size_t len)
{
  struct nbd_handle *h = nbd_create ();
  uint64_t start = nbd_now_ms ();
  unsigned timeout_ms = nm->timeout_ms;
  int r = 0;

  if (h == NULL)
    return nbd_err_msg (msg, len);
  if (nbd_set_strict_mode (h, nbd_get_strict_mode (h) &
                              ~LIBNBD_STRICT_ALIGN) == -1 ||
      nbd_set_request_structured_replies (h, false) == -1 ||
      (r = nbd_tls_setup (h, &nm->tls)) < 0 ||
      nbd_aio_connect_uri (h, nm->uri) == -1)
    r = r < 0 ? r : nbd_err_msg (msg, len);
  while (r == 0 && nbd_aio_is_ready (h) != 1) {
    uint64_t waited = nbd_now_ms () - start;

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
  grow_sndbuf (h);
  *out = h;
  return 0;
}

/* The members with a loop that may run: stopped before a fork, since
 * the child must not find a thread of the parent's reading its sockets
 * (nor the parent the child's), and threads do not survive a fork.
 * Each starts again at its next use, in whichever process uses it.
 */
static pthread_mutex_t members_lock = PTHREAD_MUTEX_INITIALIZER;
static struct nbd_member *members;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void
before_fork (void)
{
  pthread_mutex_lock (&members_lock);
  for (struct nbd_member *nm = members; nm; nm = nm->next) {
    nbd_loop_stop (nm);
    pthread_mutex_lock (&nm->lock);
  }
}

static void
after_fork (void)
{
  for (struct nbd_member *nm = members; nm; nm = nm->next)
    pthread_mutex_unlock (&nm->lock);
  pthread_mutex_unlock (&members_lock);
}

static void
register_atfork (void)
{
  (void) pthread_atfork (before_fork, after_fork, after_fork);
}

int
nbd_member_start (struct nbd_member *nm)
{
  pthread_once (&atfork_once, register_atfork);
  nm->kick_fd = eventfd (0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (nm->kick_fd < 0)
    return -errno;
  pthread_mutex_init (&nm->lock, NULL);
  pthread_cond_init (&nm->cond, NULL);
  for (unsigned i = 0; i < nm->nconns; i++)
    nm->conn[i].state = CONN_LIVE;
  pthread_mutex_lock (&members_lock);
  nm->next = members;
  members = nm;
  pthread_mutex_unlock (&members_lock);
  return 0;
}

void
nbd_member_stop (struct nbd_member *nm)
{
  struct nbd_member **p;

  pthread_mutex_lock (&members_lock);
  for (p = &members; *p && *p != nm; p = &(*p)->next)
    ;
  if (*p)
    *p = nm->next;
  pthread_mutex_unlock (&members_lock);
  nbd_loop_stop (nm);
  for (unsigned i = 0; i < nm->nconns; i++)
    if (nm->conn[i].h) {
      nbd_shutdown (nm->conn[i].h, 0);  /* in-flight commands first */
      nbd_close (nm->conn[i].h);
      nm->conn[i].h = NULL;
    }
  close (nm->kick_fd);
  pthread_cond_destroy (&nm->cond);
  pthread_mutex_destroy (&nm->lock);
}

void
nbd_kick (struct nbd_member *nm)
{
  uint64_t one = 1;

  (void) !write (nm->kick_fd, &one, sizeof one);
}

/* Close h with a reset, not gently: a closed socket still sends what it
 * holds once the link is back, and writes given up on (and redone
 * degraded) would then land on the member long after -- over what a
 * re-add has resynced since.  SO_LINGER 0 drops them and sends RST.
 * Commands still in flight are let go (their free callbacks run).
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

void
nbd_conn_close (struct nbd_member *nm, struct nbd_conn *c)
{
  struct nbd_handle *h = c->h;

  while (c->users > 0)
    pthread_cond_wait (&nm->cond, &nm->lock);
  pthread_mutex_unlock (&nm->lock);
  reset_close (h);            /* its commands' callbacks take nm->lock */
  pthread_mutex_lock (&nm->lock);
  c->h = NULL;
  c->state = CONN_CLOSED;
  c->fail = 0;
  pthread_cond_broadcast (&nm->cond);
}

/* c is to be closed by the loop, its commands failing with err (0:
 * retired, nothing in flight).
 */
static void
conn_closing (struct nbd_member *nm, struct nbd_conn *c, int err)
{
  c->state = CONN_CLOSING;
  c->fail = err;
  nbd_kick (nm);
}

void
nbd_conn_fail (struct nbd_member *nm, struct nbd_conn *c, int err)
{
  if (c->state != CONN_LIVE && (c->state != CONN_CLOSING || c->fail))
    return;                   /* closed, or failing already */
  if (c->in_flight == 0 && nm->lost == 0)
    nm->lost = -ECONNRESET;   /* an idle one: its server hung up */
  conn_closing (nm, c, err);
  nm->gen++;
  /* The others are suspect: the idle ones closed now, which also lets a
   * restarted server bind its port again at once (the old server's side
   * of a connection we keep open holds it); the busy ones once their
   * commands are done (the loop retires a LIVE one of an old gen).
   */
  for (unsigned i = 0; i < nm->nconns; i++)
    if (nm->conn[i].state == CONN_LIVE && nm->conn[i].in_flight == 0)
      conn_closing (nm, &nm->conn[i], 0);
}

void
nbd_conn_done (struct nbd_member *nm, struct nbd_conn *c)
{
  c->in_flight--;
  c->progress_ms = nbd_now_ms ();
  if (c->in_flight == 0 && (c->state == CONN_CLOSING || c->gen != nm->gen) &&
      !pthread_equal (pthread_self (), nm->loop))
    nbd_kick (nm);            /* the loop closes it */
}

void
nbd_conn_leave (struct nbd_member *nm, struct nbd_conn *c, bool kick)
{
  if (--c->users == 0 && c->state == CONN_CLOSING)
    pthread_cond_broadcast (&nm->cond);
  if (kick)
    nbd_kick (nm);
}

/* Connect slot c (CLOSED), nm->lock held and released meanwhile.  0 or
 * -errno (c CLOSED again).
 */
static int
conn_make (struct nbd_member *nm, struct nbd_conn *c)
{
  struct nbd_handle *h = NULL;
  int r;

  c->state = CONN_CONNECTING;
  pthread_mutex_unlock (&nm->lock);
  r = nbd_connect (&h, nm, NULL, 0);
  pthread_mutex_lock (&nm->lock);
  nm->connects++;
  nm->connect_err = r;
  if (r == 0) {
    *c = (struct nbd_conn) { .state = CONN_LIVE, .h = h, .gen = nm->gen };
    atomic_fetch_add (&nm->reconnects, 1);
    nbd_kick (nm);            /* the loop polls it from now on */
  }
  else
    c->state = CONN_CLOSED;
  pthread_cond_broadcast (&nm->cond);
  return r;
}

/* The LIVE connection of the current gen with the fewest in flight, or
 * NULL; *closed: a CLOSED slot, or NULL.
 */
static struct nbd_conn *
conn_best (struct nbd_member *nm, struct nbd_conn **closed)
{
  struct nbd_conn *best = NULL;

  *closed = NULL;
  for (unsigned i = 0; i < nm->nconns; i++) {
    struct nbd_conn *c = &nm->conn[i];

    if (c->state == CONN_LIVE && c->gen == nm->gen &&
        (best == NULL || c->in_flight < best->in_flight))
      best = c;
    else if (c->state == CONN_CLOSED && *closed == NULL)
      *closed = c;
  }
  return best;
}

static struct nbd_conn *
conn_use (struct nbd_conn *c, unsigned n)
{
  if (c->in_flight == 0)
    c->progress_ms = nbd_now_ms ();
  c->in_flight += n;
  c->users++;
  return c;
}

struct nbd_conn *
nbd_conn_take (struct nbd_member *nm, unsigned n, int *err)
{
  for (;;) {
    struct nbd_conn *closed, *best = conn_best (nm, &closed);
    uint64_t seen = nm->connects;
    int r;

    /* A slot closed since (a failure, a refresh) is made again when the
     * others are busy: the member has all its connections back.
     */
    if (best && (best->in_flight == 0 || closed == NULL))
      return conn_use (best, n);
    if (closed) {
      if ((r = conn_make (nm, closed)) == 0)
        return conn_use (closed, n);
      if (best && best->state == CONN_LIVE && best->gen == nm->gen)
        return conn_use (best, n);
      *err = r;
      return NULL;
    }
    /* Every slot being made or closed: wait for one. */
    pthread_cond_wait (&nm->cond, &nm->lock);
    if (nm->connects != seen && nm->connect_err < 0 &&
        conn_best (nm, &closed) == NULL) {
      *err = nm->connect_err;
      return NULL;
    }
  }
}

void
nbd_conns_retire (struct nbd_member *nm)
{
  pthread_mutex_lock (&nm->lock);
  nm->retired = true;         /* the busy ones: the loop's tidy, once idle */
  for (unsigned i = 0; i < nm->nconns; i++) {
    struct nbd_conn *c = &nm->conn[i];

    if (c->state == CONN_LIVE && c->in_flight == 0)
      conn_closing (nm, c, 0);
    if (c->state == CONN_CLOSING && !nm->loop_on && c->in_flight == 0)
      nbd_conn_close (nm, c);
  }
  pthread_mutex_unlock (&nm->lock);
}

void
nbd_conns_refresh (struct nbd_member *nm)
{
  pthread_mutex_lock (&nm->lock);
  nm->lost = 0;
  nm->retired = false;
  nm->gen++;
  for (unsigned i = 0; i < nm->nconns; i++) {
    struct nbd_conn *c = &nm->conn[i];

    if (c->state == CONN_LIVE)
      conn_closing (nm, c, 0);
    if (c->state == CONN_CLOSING && !nm->loop_on)
      nbd_conn_close (nm, c);
    while (c->state == CONN_CLOSING)
      pthread_cond_wait (&nm->cond, &nm->lock);
  }
  pthread_mutex_unlock (&nm->lock);
}
