/* io/nbd.c -- the NBD backend (backend.h): a member that is an export
 * of an NBD server, reached with libnbd's asynchronous API.  This file
 * opens and closes members and says what they can do; nbd-int.h says how
 * the rest is cut up (connections, the member's event loop, batches).
 *
 * Connections: one, or up to member-connections (io_nbd_set_connections)
 * if the server offers multi-conn (then a flush on any connection covers
 * writes made on all of them, which is what lets several be used at
 * all).  They are shared: every batch issues its commands on them, many
 * in flight on each at once, and a thread of the member's own (its loop)
 * reads the replies and wakes the batches' threads.
 *
 * Fail fast: a connection that fails, or on which nothing completes for
 * the timeout (io/nbd.h) while commands are in flight, is closed; its
 * commands fail (-ECONNRESET..., -ETIMEDOUT), so the array takes the
 * member out of service at once and sends it nothing more.  The next op
 * that does come (the array's tries to reach it again, array/comeback.c,
 * or a rebuild or re-add by hand) connects again first, and fails with
 * the connection's error (-ECONNREFUSED, -ENOENT...) if the server is
 * still not there.  Ops that fail so are marked link_lost (batch.h); an
 * error the server itself replies with (EIO, ENOSPC...) is not.  A server
 * that hangs up on an idle connection fails the next batch's ops on the
 * member (-ECONNRESET, link_lost).  An idle member is read now and then
 * (io_member_idle_probe_ms), so that a server gone silent while nothing
 * was asked of it is found out all the same.
 *
 * TLS (nbds://, nbds+unix://; io/tls.h, nbd-tls.c): every connection
 * of a member is made with the settings it was opened with, the server
 * verified each time.
 *
 * Requests are cut at the server's maximum block size where it gives one,
 * else at NBD_MAX_REQUEST (libnbd refuses more than 64 MiB).  A flush is
 * sent once the writes issued on the member before it have finished
 * (nbd-run.c).
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <libnbd.h>

#include "io/backend.h"
#include "io/nbd.h"
#include "io/nbd-int.h"

/* How many connections a member over NBD may have (member-connections=):
 * enough for the server to work on several commands at once (nbdkit
 * serves each connection with its own threads) and for one big write not
 * to hold up the small commands behind it; each costs the server threads.
 */
static _Atomic unsigned conns_wanted = IO_NBD_CONNECTIONS_DEFAULT;

int
io_nbd_set_connections (unsigned n)
{
  if (n < 1 || n > IO_NBD_CONNECTIONS_MAX)
    return -ERANGE;
  conns_wanted = n;
  return 0;
}

static struct nbd_member *
nm_of (const struct io_member *m)
{
  return m->state;
}

/* The first connection of an open: where TLS is what failed, why in
 * words (io_set_why).
 */
static int
connect_first (struct nbd_handle **out, const struct nbd_member *nm)
{
  char msg[256] = "";
  int r = nbd_connect (out, nm, msg, sizeof msg);

  return r < 0 ? nbd_tls_explain (&nm->tls, r, msg) : r;
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
  bool writes = mode == IO_OPEN_RW || mode == IO_OPEN_RW_DIRECT;

  if (size < 0)
    return nbd_err ();
  if (writes && nbd_is_read_only (h) == 1)
    return -EROFS;
  m->size = (uint64_t) size;
  nm->can_flush = nbd_can_flush (h) == 1;
  nm->can_fua = nbd_can_fua (h) == 1;
  nm->can_zero = nbd_can_zero (h) == 1;
  nm->max_request = max_request (h);
  return nbd_can_multi_conn (h) == 1 && mode != IO_OPEN_RO ? conns_wanted : 1;
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
    nm->conn[nm->nconns++].h = h;
  } while (nm->nconns < (unsigned) want &&
           nbd_connect (&h, nm, NULL, 0) == 0);
  if ((r = nbd_member_start (nm)) < 0) {
    for (unsigned i = 0; i < nm->nconns; i++)
      nbd_close (nm->conn[i].h);
    free_member (nm);
    return r;
  }
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
  nbd_member_stop (nm);
  free_member (nm);
  m->state = NULL;
}

/* One op alone (setup and tools). */
static int
run_one (const struct io_member *m, struct io_op *op)
{
  op->member = 0;
  (void) nbd_run (m, op, 1, 0);
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
  nbd_conns_refresh (nm_of (m));
}

/* A member out of service: its server need not wait for us (nbdkit,
 * stopped, ends once its clients have gone).
 */
static void
nbd_member_let_go (struct io_member *m)
{
  nbd_conns_retire (nm_of (m));
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
  .let_go = nbd_member_let_go,
  .idle_probe_ms = nbd_member_idle_probe_ms,
  .may_return = true,
};
