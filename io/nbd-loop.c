/* io/nbd-loop.c -- an NBD member's event loop (nbd-int.h): one thread per
 * member, started at its first use in the process, polling the sockets of
 * its connections and an eventfd that wakes it (a connection made, a
 * command that could not be sent whole, a connection to close).
 *
 * Each turn it closes what is to be closed, fails a connection on which
 * nothing completed for the member's timeout while commands were in
 * flight (they fail with -ETIMEDOUT), polls, and tells libnbd what the
 * sockets are ready for: libnbd reads the replies and runs the commands'
 * callbacks here (nbd-run.c), which wake the batches' threads.  A
 * connection that fails (the server hung up, reset, sent garbage) is
 * failed with libnbd's error.  libnbd's own nbd_poll is not used: it
 * holds the handle's lock while it sleeps, which would keep batches from
 * issuing commands meanwhile.
 */
#include <config.h>

#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "io/nbd-int.h"

/* Wakes put off while the loop's thread is in libnbd (nbd_wake). */
static __thread struct {
  bool on;
  unsigned n;
  _Atomic uint32_t *word[64];
} deferred;

void
nbd_sleep (_Atomic uint32_t *word, uint32_t val)
{
  (void) syscall (SYS_futex, word, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

/* *word = NBD_WOKEN (-1 in FUTEX_OP's 12-bit argument) and wake one
 * sleeper on it, both under the kernel's futex lock: nothing of ours
 * touches the word after the store that lets its owner free it.  The
 * second wake (of sleepers on the same word) is off: its test, old value
 * != 0, fails, as the word was 0.
 */
static void
wake_now (_Atomic uint32_t *word)
{
  (void) syscall (SYS_futex, word, FUTEX_WAKE_OP_PRIVATE, 1, (void *) 0,
                  word, FUTEX_OP (FUTEX_OP_SET, -1, FUTEX_OP_CMP_NE, 0));
}

void
nbd_wake (_Atomic uint32_t *word)
{
  if (deferred.on && deferred.n < sizeof deferred.word / sizeof deferred.word[0])
    deferred.word[deferred.n++] = word;
  else
    wake_now (word);
}

static void
wake_deferred (void)
{
  for (unsigned i = 0; i < deferred.n; i++)
    wake_now (deferred.word[i]);
  deferred.n = 0;
}

/* What one turn polls: the connections with a handle, the eventfd last. */
struct turn {
  struct nbd_conn *c[NBD_CONNS_MAX];
  struct nbd_handle *h[NBD_CONNS_MAX];
  struct pollfd pfd[NBD_CONNS_MAX + 1];
  int err[NBD_CONNS_MAX];     /* out: <0 if the connection failed */
  unsigned n;
  int timeout_ms;
};

/* Close what is to be closed, fail what timed out (nm->lock held; now
 * may be older than a connection's progress, which issuers move).
 * Returns whether anything is in flight.
 */
static bool
tidy (struct nbd_member *nm, uint64_t now)
{
  bool busy = false;

  for (unsigned i = 0; i < nm->nconns; i++) {
    struct nbd_conn *c = &nm->conn[i];

    if (c->state == CONN_LIVE && c->in_flight == 0 &&
        (c->gen != nm->gen || nm->retired))
      c->state = CONN_CLOSING;        /* made before the member failed, or
                                       * the member is out of service */
    if ((c->state == CONN_LIVE || c->state == CONN_CLOSING) &&
        c->in_flight > 0 && c->fail == 0 &&
        c->progress_ms + nm->timeout_ms <= now)
      nbd_conn_fail (nm, c, -ETIMEDOUT);
    if (c->state == CONN_CLOSING && (c->fail || c->in_flight == 0))
      nbd_conn_close (nm, c);
    busy |= c->in_flight > 0;
  }
  return busy;
}

/* The connections to poll and how long, nm->lock held: until the first
 * connection with commands in flight times out, else for the timeout
 * (commands issued meanwhile do not wake the loop: it then finds them).
 */
static void
collect (struct nbd_member *nm, struct turn *t, uint64_t now)
{
  uint64_t wait = nm->timeout_ms;

  t->n = 0;
  for (unsigned i = 0; i < nm->nconns; i++) {
    struct nbd_conn *c = &nm->conn[i];

    if (c->state != CONN_LIVE && c->state != CONN_CLOSING)
      continue;
    if (c->in_flight > 0) {
      uint64_t until = c->progress_ms + nm->timeout_ms;
      uint64_t left = until > now ? until - now : 0;

      wait = left < wait ? left : wait;
    }
    t->c[t->n] = c;
    t->h[t->n++] = c->h;
  }
  t->timeout_ms = (int) wait + 1;
}

/* Each handle's socket and what libnbd waits for on it (not locked: a
 * handle is closed only by this thread).  One that waits for nothing is
 * dead (a thread issuing on it found its socket broken): it fails, and
 * the poll does not wait.
 */
static void
set_events (struct turn *t)
{
  for (unsigned i = 0; i < t->n; i++) {
    unsigned dir = nbd_aio_get_direction (t->h[i]);

    t->err[i] = 0;
    t->pfd[i] = (struct pollfd) { .fd = -1 };
    if (dir == 0) {
      t->err[i] = -ECONNRESET;
      t->timeout_ms = 0;
    }
    else
      t->pfd[i] = (struct pollfd) {
        .fd = nbd_aio_get_fd (t->h[i]),
        .events = (dir & LIBNBD_AIO_DIRECTION_READ ? POLLIN : 0) |
                  (dir & LIBNBD_AIO_DIRECTION_WRITE ? POLLOUT : 0),
      };
  }
}

/* Tell libnbd what the sockets are ready for: it reads replies (running
 * the callbacks) and sends what is queued.  A failure is kept in err.
 */
static bool
notify (struct turn *t)
{
  bool failed = false;

  for (unsigned i = 0; i < t->n; i++) {
    short ev = t->pfd[i].revents;
    int r = 0;

    /* One event at a time: reading comes first (the reply is to an
     * older command), and a read when the socket has nothing would
     * leave libnbd waiting for a reply with a write half sent.
     */
    deferred.on = true;
    if (ev & (POLLIN | POLLHUP | POLLERR | POLLNVAL))
      r = nbd_aio_notify_read (t->h[i]);
    else if (ev & POLLOUT)
      r = nbd_aio_notify_write (t->h[i]);
    deferred.on = false;
    wake_deferred ();
    if (r == -1)
      t->err[i] = nbd_err ();
    else if (ev && nbd_aio_get_direction (t->h[i]) == 0)
      t->err[i] = -ECONNRESET;      /* dead, or closed by the server */
    failed |= t->err[i] < 0;
  }
  return failed;
}

/* One turn; false when the loop is to end. */
static bool
turn (struct nbd_member *nm, struct turn *t)
{
  uint64_t spent, now = nbd_now_ms ();
  bool busy;

  pthread_mutex_lock (&nm->lock);
  busy = tidy (nm, now);
  if (nm->loop_stop && !busy) {
    pthread_mutex_unlock (&nm->lock);
    return false;
  }
  collect (nm, t, now);
  pthread_mutex_unlock (&nm->lock);
  set_events (t);
  t->pfd[t->n] = (struct pollfd) { .fd = nm->kick_fd, .events = POLLIN };
  if (poll (t->pfd, t->n + 1, t->timeout_ms) > 0 &&
      (t->pfd[t->n].revents & POLLIN))
    (void) !read (nm->kick_fd, &spent, sizeof spent);
  if (notify (t)) {
    pthread_mutex_lock (&nm->lock);
    for (unsigned i = 0; i < t->n; i++)
      if (t->err[i] < 0)
        nbd_conn_fail (nm, t->c[i], t->err[i]);
    pthread_mutex_unlock (&nm->lock);
  }
  return true;
}

static void *
loop_main (void *arg)
{
  struct nbd_member *nm = arg;
  struct turn t;

  while (turn (nm, &t))
    ;
  return NULL;
}

int
nbd_loop_ensure (struct nbd_member *nm)
{
  sigset_t all, old;
  int r;

  if (nm->loop_on)
    return 0;
  /* Signals are for the program's own threads, not this one. */
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &old);
  r = pthread_create (&nm->loop, NULL, loop_main, nm);
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  if (r != 0)
    return -r;
  /* Named, as the job's threads: otherwise it takes the name of the
   * thread that started it (often the job's), and top -H and perf would
   * count its time as the job's.
   */
  pthread_setname_np (nm->loop, "raid5-nbd");
  nm->loop_on = true;
  nm->loop_stop = false;
  return 0;
}

void
nbd_loop_stop (struct nbd_member *nm)
{
  pthread_mutex_lock (&nm->lock);
  if (!nm->loop_on) {
    pthread_mutex_unlock (&nm->lock);
    return;
  }
  nm->loop_stop = true;
  nbd_kick (nm);
  pthread_mutex_unlock (&nm->lock);
  pthread_join (nm->loop, NULL);
  pthread_mutex_lock (&nm->lock);
  nm->loop_on = false;
  nm->loop_stop = false;
  pthread_mutex_unlock (&nm->lock);
}
