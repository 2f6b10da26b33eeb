/* io/nbd-int.h -- what the NBD backend's files share (nbd.c: the backend
 * table and the member's life; nbd-conn.c: connections; nbd-loop.c: the
 * member's event loop; nbd-run.c: batches).  Nothing outside them
 * includes it.
 *
 * A member has up to nconns connections (one unless the server offers
 * multi-conn), shared by every batch: each batch issues its commands on
 * them with libnbd's asynchronous calls and sleeps until their completion
 * callbacks have all run.  One thread per member, its loop, polls the
 * connections' sockets and tells libnbd of each event
 * (nbd_aio_notify_read/write), which runs the callbacks; it also fails a
 * connection on which nothing completes for the member's timeout, and
 * closes connections.  libnbd serialises calls on a handle with a lock of
 * its own, held while callbacks run.
 *
 * Locking: nm->lock guards every field below marked (L).  Never call
 * libnbd on a handle while holding nm->lock: callbacks take nm->lock with
 * the handle's lock held.  Only the loop closes a handle that was
 * published (state LIVE), once no thread is inside a call on it (users).
 */
#ifndef IO_NBD_INT_H
#define IO_NBD_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <libnbd.h>

#include "io/batch.h"
#include "io/member.h"
#include "io/nbd.h"
#include "io/nbd-tls.h"

#define NBD_CONNS_MAX IO_NBD_CONNECTIONS_MAX
#define NBD_MAX_REQUEST (32u << 20)
#define NBD_EPOCHS 64           /* flushes waiting on writes at once */
#define NBD_SNDBUF (4 << 20)    /* bytes: a socket's send buffer */

enum nbd_conn_state {
  CONN_CLOSED,                /* no handle: a batch connects it */
  CONN_CONNECTING,            /* a batch's thread is connecting it */
  CONN_LIVE,                  /* takes commands while gen is the member's */
  CONN_CLOSING,               /* the loop closes it: at once if fail, else
                               * once nothing is in flight on it */
};

struct nbd_conn {
  enum nbd_conn_state state;  /* (L) */
  struct nbd_handle *h;       /* (L) LIVE and CLOSING */
  unsigned gen;               /* (L) the member's gen when it was made */
  unsigned in_flight;         /* (L) our commands on it not yet finished */
  unsigned users;             /* (L) threads inside a libnbd call on h */
  uint64_t progress_ms;       /* (L) its last completion, or when its
                               * in_flight last left 0 */
  int fail;                   /* (L) CLOSING: what its commands fail with
                               * (<0), 0 if it is only retired */
};

struct nbd_member {
  const char *uri;            /* the member's path (owned by io_member) */
  unsigned nconns;            /* slots: as many as the open connected */
  bool can_flush, can_fua, can_zero;
  unsigned timeout_ms;        /* the member's own (io_open_opts) */
  struct nbd_tls tls;         /* the member's own (io_open_opts) */
  uint32_t max_request;       /* bytes: the server's maximum, at most
                               * NBD_MAX_REQUEST (a multiple of 512) */
  _Atomic uint64_t reconnects;  /* connections made again */

  pthread_mutex_t lock;
  pthread_cond_t cond;        /* (L) a connection made, failed to be made
                               * or closed; writes drained for a flush */
  struct nbd_conn conn[NBD_CONNS_MAX];
  /* (L) Bumped when one of its connections fails: the member went away,
   * so every connection made before is suspect: it takes no more
   * commands and is closed once its own are done.
   */
  unsigned gen;
  /* (L) An idle connection failed (its server hung up): nothing of ours
   * was on it, so the next batch's ops fail with this (link_lost), not
   * sent on a connection made again behind the array's back.  0: none.
   */
  int lost;
  /* (L) Out of service (nbd_conns_retire): each connection is closed once
   * idle, also one made meanwhile for a request already under way;
   * nbd_conns_refresh puts it back in service.
   */
  bool retired;
  int connect_err;            /* (L) the last connect's outcome */
  uint64_t connects;          /* (L) connects finished so far */

  /* (L) Flush order: writes in flight counted per epoch; a flush opens
   * a new epoch and is sent once every older one has drained.
   */
  unsigned ep_writes[NBD_EPOCHS];
  uint64_t ep_oldest, ep_current;
  unsigned ep_waiters;

  /* The loop (nbd-loop.c): running in this process or not. */
  bool loop_on;               /* (L) */
  bool loop_stop;             /* (L) asked to end once nothing is in flight */
  pthread_t loop;
  int kick_fd;                /* eventfd: wakes the loop */
  struct nbd_member *next;    /* in the backend's list of members */
};

/* nbd-conn.c */

/* ms on CLOCK_MONOTONIC. */
uint64_t nbd_now_ms (void);

/* -errno for libnbd's last error on this thread (EIO if it gave none). */
int nbd_err (void);

/* Connect *out to nm's URI within its timeout (TLS as nm says).  0, or
 * -errno with libnbd's message in msg (len bytes; NULL: not wanted).
 */
int nbd_connect (struct nbd_handle **out, const struct nbd_member *nm,
                 char *msg, size_t len)
  __attribute__((nonnull (1, 2), warn_unused_result));

/* Set up nm's lock, loop fields and list entry; nm's connections are
 * those of conn[0..nconns) already made (LIVE).  0 or -errno.
 */
int nbd_member_start (struct nbd_member *nm) __attribute__((nonnull));

/* Stop nm's loop, close every connection, leave the list. */
void nbd_member_stop (struct nbd_member *nm) __attribute__((nonnull));

/* A LIVE connection of nm's current generation to issue n commands on
 * (the one with the fewest in flight), counted in its in_flight and
 * users; connected first if nm has none (or one more is due).  *err:
 * why there is none (connecting failed, nm's lost hang-up).  Called
 * with nm->lock held; it may be released meanwhile.
 */
struct nbd_conn *nbd_conn_take (struct nbd_member *nm, unsigned n, int *err)
  __attribute__((nonnull, warn_unused_result));

/* Done calling libnbd on c (users), nm->lock held; kick: wake the loop
 * (h wants to write).
 */
void nbd_conn_leave (struct nbd_member *nm, struct nbd_conn *c, bool kick)
  __attribute__((nonnull));

/* One of c's commands finished (nm->lock held). */
void nbd_conn_done (struct nbd_member *nm, struct nbd_conn *c)
  __attribute__((nonnull));

/* c failed with err (<0): close it (the loop does), its commands failing
 * with err; the member's other connections are suspect (gen).  nm->lock
 * held.
 */
void nbd_conn_fail (struct nbd_member *nm, struct nbd_conn *c, int err)
  __attribute__((nonnull));

/* Close c (state CLOSING) now: nm->lock held, released meanwhile.  Only
 * the loop, or anyone once the loop is stopped.
 */
void nbd_conn_close (struct nbd_member *nm, struct nbd_conn *c)
  __attribute__((nonnull));

/* Every connection closed and made again at its next use (nm idle). */
void nbd_conns_refresh (struct nbd_member *nm) __attribute__((nonnull));

/* Let go of every connection without waiting: the idle ones closed now,
 * the busy ones (and any made for requests already under way) once their
 * commands are done, until nbd_conns_refresh.  Takes nm->lock.
 */
void nbd_conns_retire (struct nbd_member *nm) __attribute__((nonnull));

/* Wake nm's loop (it polls again what it should). */
void nbd_kick (struct nbd_member *nm) __attribute__((nonnull));

/* nbd-loop.c */

/* nm's loop running in this process (started if not).  nm->lock held.
 * 0 or -errno (no thread).
 */
int nbd_loop_ensure (struct nbd_member *nm) __attribute__((nonnull));

/* Stop nm's loop once nothing is in flight, and wait for it.  nm->lock
 * not held.
 */
void nbd_loop_stop (struct nbd_member *nm) __attribute__((nonnull));

/* Sleep while *word is val (a futex; may return early: check again). */
void nbd_sleep (_Atomic uint32_t *word, uint32_t val) __attribute__((nonnull));

/* What nbd_wake leaves in the word it wakes. */
#define NBD_WOKEN UINT32_MAX

/* Set *word to NBD_WOKEN and wake whoever sleeps on it, at once or, from
 * a callback the loop runs, once libnbd has let go of the handle's lock
 * (the thread woken would otherwise often find it held).  The kernel
 * sets the word and wakes in one step (FUTEX_WAKE_OP), so a sleeper that
 * waits for NBD_WOKEN may free the word as soon as it sees it: the
 * caller does not touch it again.
 */
void nbd_wake (_Atomic uint32_t *word) __attribute__((nonnull));

/* nbd-run.c: the backend's run (backend.h). */
int nbd_run (const struct io_member *members, struct io_op *ops, size_t n,
             unsigned flags);

#endif /* IO_NBD_INT_H */
