/* io/nbd-run.c -- a batch on NBD members (backend.h's run): its ops cut
 * into commands, issued on the members' shared connections with libnbd's
 * asynchronous calls, and waited for; then each op's result.
 *
 * No batch holds a connection: commands of many batches are in flight on
 * each at once, and the member's loop (nbd-loop.c) reads the replies.
 * Every command carries a record (struct cmd) that libnbd hands back to
 * its completion callback (the server's answer) and, exactly once, to its
 * free callback -- also when the command was refused, or dropped with its
 * connection -- where the command is counted finished and the batch's
 * thread woken by the last one.  The batch lives on its thread's stack:
 * that thread returns only once the last wake has been done (the wake
 * itself marks the batch woken, see batch_wait), so no callback touches
 * a batch that is gone.
 *
 * Flush order: a flush is sent only once every write, zero and punch
 * issued on the member before it has finished, on whichever connection:
 * NBD's flush covers the writes the server has answered (on every
 * connection, with multi-conn), not those still in flight.  Writes are
 * counted per epoch; a flush opens a new one and waits for the older ones
 * to drain.  FUA the server lacks is a flush after the batch's writes to
 * it, its failure charged to each of them.
 */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "io/backend.h"
#include "io/engine.h"
#include "io/nbd-int.h"

/* A flush of issue_op's not waiting for other writes: FUA's, after the
 * batch's own writes have finished.
 */
#define UNORDERED (1u << 31)

/* One op's outcome: its first error, and whether that was the link's. */
struct track {
  struct io_op *op;
  int err;
  bool lost;
};

/* A batch's ops' tracks are written under their member's nm->lock. */
struct batch {
  _Atomic uint32_t pending;   /* a futex: commands not yet finished, +1
                               * while its thread issues; NBD_WOKEN once
                               * the last one has woken it */
  struct cmd *cmds;           /* room for every command of the batch */
  size_t used;
};

/* A command in flight: libnbd's user_data, from issue to its free. */
struct cmd {
  struct batch *b;
  struct track *t;
  struct nbd_member *nm;
  struct nbd_conn *c;
  uint64_t epoch;             /* writes: the epoch it was issued in */
  bool write, done, lost;
  int err;
};

static struct nbd_member *
nm_of (const struct io_member *m)
{
  return m->state;
}

/* --- flush order (nm->lock held) --------------------------------------- */

static uint64_t
epoch_enter (struct nbd_member *nm)
{
  nm->ep_writes[nm->ep_current % NBD_EPOCHS]++;
  return nm->ep_current;
}

static void
epoch_leave (struct nbd_member *nm, uint64_t e)
{
  uint64_t was = nm->ep_oldest;

  nm->ep_writes[e % NBD_EPOCHS]--;
  while (nm->ep_oldest < nm->ep_current &&
         nm->ep_writes[nm->ep_oldest % NBD_EPOCHS] == 0)
    nm->ep_oldest++;
  if (nm->ep_oldest != was && nm->ep_waiters > 0)
    pthread_cond_broadcast (&nm->cond);
}

/* Return once every write issued on nm so far has finished. */
static void
epoch_wait (struct nbd_member *nm)
{
  uint64_t target;

  if (nm->ep_oldest == nm->ep_current &&
      nm->ep_writes[nm->ep_current % NBD_EPOCHS] == 0)
    return;                   /* nothing in flight */
  nm->ep_waiters++;
  while (nm->ep_current + 1 - nm->ep_oldest >= NBD_EPOCHS)
    pthread_cond_wait (&nm->cond, &nm->lock);
  target = nm->ep_current++;
  while (nm->ep_oldest <= target)
    pthread_cond_wait (&nm->cond, &nm->lock);
  nm->ep_waiters--;
}

/* --- callbacks ----------------------------------------------------------- */

/* The server's answer (or libnbd's, dropping the command: ENOTCONN, the
 * connection gone, whose cause is this thread's libnbd error).  A server
 * shutting down answers NBD_ESHUTDOWN (nbdkit on SIGTERM: a service
 * stopped, a host going down for a reboot): its host is going away, the
 * command was not done, and that is the link's doing, not the disk's --
 * the member comes back by itself when its server does.
 */
static int
cmd_answered (void *user_data, int *error)
{
  struct cmd *k = user_data;

  k->done = true;
  if (*error == ENOTCONN) {
    int e = nbd_get_errno ();

    k->lost = true;
    k->err = e > 0 && e != ENOTCONN ? -e : -ECONNRESET;
  }
  else if (*error != 0) {
    k->lost = *error == ESHUTDOWN;
    k->err = -*error;
  }
  return 1;                   /* retire it */
}

/* The command is over (answered, refused, or dropped unanswered with its
 * connection: then the connection's error, -ETIMEDOUT...).
 */
static void
cmd_free (void *user_data)
{
  struct cmd *k = user_data;
  struct nbd_member *nm = k->nm;
  struct batch *b = k->b;

  pthread_mutex_lock (&nm->lock);
  if (!k->done) {
    k->err = k->c->fail < 0 ? k->c->fail : -EIO;
    k->lost = true;
  }
  if (k->err < 0 && k->t->err == 0) {
    k->t->err = k->err;
    k->t->lost = k->lost;
  }
  if (k->write)
    epoch_leave (nm, k->epoch);
  nbd_conn_done (nm, k->c);
  pthread_mutex_unlock (&nm->lock);
  if (atomic_fetch_sub (&b->pending, 1) == 1)
    nbd_wake (&b->pending);   /* sets NBD_WOKEN; k and b are not ours */
}

/* --- issuing ------------------------------------------------------------- */

static const char zeroes[1u << 20];

/* One command on h: bytes [off, off+len) of op t (len 0 for a flush). */
static int64_t
send_cmd (struct nbd_handle *h, struct cmd *k, uint64_t off, uint64_t len,
          unsigned flags)
{
  const struct io_op *op = k->t->op;
  nbd_completion_callback cb = { .callback = cmd_answered, .user_data = k,
                                 .free = cmd_free };
  uint32_t fua = (flags & IO_FUA) && k->nm->can_fua ? LIBNBD_CMD_FLAG_FUA : 0;
  char *buf = (char *) op->buf + (off - op->off);

  switch (op->kind) {
  case IO_READ:
    return nbd_aio_pread (h, buf, len, off, cb, 0);
  case IO_WRITE:
    return nbd_aio_pwrite (h, buf, len, off, cb, fua);
  case IO_ZERO:
  case IO_PUNCH:
    if (!k->nm->can_zero)     /* len <= sizeof zeroes, see op_step */
      return nbd_aio_pwrite (h, zeroes, len, off, cb, fua);
    return nbd_aio_zero (h, len, off, cb, fua |
                         (op->kind == IO_ZERO ? LIBNBD_CMD_FLAG_NO_HOLE : 0));
  case IO_FSYNC:
    return nbd_aio_flush (h, cb, 0);
  }
  abort ();
}

/* The longest command op is cut into. */
static uint64_t
op_step (const struct nbd_member *nm, const struct io_op *op)
{
  bool zeroing = (op->kind == IO_ZERO || op->kind == IO_PUNCH) &&
    !nm->can_zero;

  return zeroing && sizeof zeroes < nm->max_request ? sizeof zeroes
                                                     : nm->max_request;
}

/* How many commands op makes. */
static size_t
op_cmds (const struct nbd_member *nm, const struct io_op *op)
{
  uint64_t step = op_step (nm, op);

  if (op->kind == IO_FSYNC)
    return nm->can_flush;
  return (op->len + step - 1) / step;
}

/* A new command record of op t on c (nm->lock held). */
static struct cmd *
cmd_new (struct batch *b, struct track *t, struct nbd_member *nm,
         struct nbd_conn *c)
{
  struct cmd *k = &b->cmds[b->used++];

  *k = (struct cmd) { .b = b, .t = t, .nm = nm, .c = c,
                      .write = io_op_writes (t->op) };
  if (k->write)
    k->epoch = epoch_enter (nm);
  return k;
}

/* libnbd refused to queue k (its free callback has run): never the
 * server's reply, so the connection's state if it is one of those.
 */
static void
refused (struct nbd_member *nm, struct track *t, int r)
{
  pthread_mutex_lock (&nm->lock);
  t->err = r;
  t->lost = r == -ENOTCONN || r == -EPIPE || r == -ECONNRESET ||
    r == -ESHUTDOWN;
  pthread_mutex_unlock (&nm->lock);
}

/* Issue op t's commands (k of them) on one connection of nm; a flush
 * first waits for the writes issued before it.
 */
static void
issue_op (struct batch *b, struct track *t, struct nbd_member *nm,
          size_t k, unsigned flags)
{
  const struct io_op *op = t->op;
  uint64_t step = op_step (nm, op), end = op->off + op->len;
  struct cmd *first = &b->cmds[b->used];
  struct nbd_conn *c;
  struct nbd_handle *h;
  bool kick = false;
  int err = 0;

  pthread_mutex_lock (&nm->lock);
  if (op->kind == IO_FSYNC && !(flags & UNORDERED))
    epoch_wait (nm);
  if ((c = nbd_conn_take (nm, k, &err)) == NULL) {
    t->err = err;
    t->lost = true;           /* no connection: the link's doing */
    pthread_mutex_unlock (&nm->lock);
    return;
  }
  for (size_t j = 0; j < k; j++)
    cmd_new (b, t, nm, c);
  h = c->h;
  pthread_mutex_unlock (&nm->lock);
  atomic_fetch_add (&b->pending, k);
  for (uint64_t off = op->off, j = 0; j < k; j++, off += step)
    if (send_cmd (h, &first[j], off, end - off < step ? end - off : step,
                  flags) == -1)
      refused (nm, t, nbd_err ());
  kick = (nbd_aio_get_direction (h) & LIBNBD_AIO_DIRECTION_WRITE) != 0;
  pthread_mutex_lock (&nm->lock);
  nbd_conn_leave (nm, c, kick);
  pthread_mutex_unlock (&nm->lock);
}

/* Wait until every command issued since the last wait has finished and
 * its free callback has let go of b.  The thread's own hold (the +1)
 * goes first: if it was the last, nothing is in flight and nobody owes a
 * wake; else the last command's nbd_wake will set NBD_WOKEN, and only
 * that lets us go -- pending's 0 would not: that wake may still be on its
 * way (put off by the loop) and must not find b gone.  Then the hold is
 * taken again for the next round's commands.
 */
static void
batch_wait (struct batch *b)
{
  uint32_t v;

  if (atomic_fetch_sub (&b->pending, 1) != 1)
    while ((v = atomic_load (&b->pending)) != NBD_WOKEN)
      nbd_sleep (&b->pending, v);
  atomic_store (&b->pending, 1);
}

/* --- the batch ------------------------------------------------------------ */

/* One member's part of the batch: its ops (indices into it), in batch
 * order, and the error that fails them all if it could not be reached.
 */
struct part {
  struct nbd_member *nm;
  size_t *idx, k;
  int err;
  bool lost;                  /* err is the link's */
  struct io_op fl;            /* FUA's flush, if one is sent */
  struct track ft;
};

/* Part p's member ready for its ops: its loop running (else p->err: no
 * thread), and no hang-up found while it was idle (else that error, the
 * link's, for all of them).
 */
static void
member_ready (struct part *p)
{
  struct nbd_member *nm = p->nm;

  pthread_mutex_lock (&nm->lock);
  p->err = nbd_loop_ensure (nm);
  if (p->err == 0 && nm->lost < 0) {
    p->err = nm->lost;
    p->lost = true;
    nm->lost = 0;
  }
  pthread_mutex_unlock (&nm->lock);
}

/* Cut the batch into one part per member, in member order. */
static size_t
cut_parts (const struct io_member *members, const struct io_op *ops,
           size_t n, size_t *idx, struct part *parts)
{
  unsigned lo = UINT32_MAX, hi = 0;
  size_t np = 0, at = 0;

  for (size_t i = 0; i < n; i++) {
    lo = ops[i].member < lo ? ops[i].member : lo;
    hi = ops[i].member > hi ? ops[i].member : hi;
  }
  for (unsigned m = lo; n && m <= hi; m++) {
    struct part *p = &parts[np];

    *p = (struct part) { .nm = nm_of (&members[m]), .idx = idx + at };
    for (size_t i = 0; i < n; i++)
      if (ops[i].member == m)
        p->idx[p->k++] = i;
    at += p->k;
    np += p->k > 0;
  }
  return np;
}

/* Issue every op of part p, unless its member cannot be reached. */
static void
start_part (struct batch *b, struct part *p, struct track *t, unsigned flags)
{
  member_ready (p);
  if (p->err < 0)
    return;
  for (size_t j = 0; j < p->k; j++) {
    struct track *tj = &t[p->idx[j]];
    size_t k = op_cmds (p->nm, tj->op);

    if (k > 0)
      issue_op (b, tj, p->nm, k, flags);
  }
}

/* Writes asked durable on a server without FUA: one flush per member
 * after them (they have all finished), its failure charged to each.
 */
static void
flush_for_fua (struct batch *b, struct part *parts, size_t np,
               struct track *t)
{
  for (size_t p = 0; p < np; p++) {
    struct part *pp = &parts[p];
    bool wrote = false;

    pp->fl = (struct io_op) { .kind = IO_FSYNC };
    pp->ft = (struct track) { .op = &pp->fl };
    for (size_t j = 0; j < pp->k; j++)
      wrote |= io_op_writes (t[pp->idx[j]].op);
    if (wrote && pp->err == 0 && !pp->nm->can_fua && pp->nm->can_flush)
      issue_op (b, &pp->ft, pp->nm, 1, UNORDERED);
  }
  batch_wait (b);
  for (size_t p = 0; p < np; p++)
    for (size_t j = 0; j < parts[p].k && parts[p].ft.err < 0; j++) {
      struct track *tj = &t[parts[p].idx[j]];

      if (io_op_writes (tj->op) && tj->err == 0) {
        tj->err = parts[p].ft.err;
        tj->lost = parts[p].ft.lost;
      }
    }
}

/* Each op's result, as io_run promises (batch.h). */
static void
results (struct part *parts, size_t np, struct track *t)
{
  for (size_t p = 0; p < np; p++)
    for (size_t j = 0; j < parts[p].k; j++) {
      struct track *tj = &t[parts[p].idx[j]];

      if (parts[p].err < 0) {
        tj->err = parts[p].err;
        tj->lost = parts[p].lost;
      }
      tj->op->result = tj->err;
      tj->op->link_lost = tj->lost && tj->err < 0;
    }
}

/* The batch's memory, one block: tracks, indices, parts, commands. */
struct mem {
  struct track *t;
  size_t *idx;
  struct part *parts;
  struct cmd *cmds;
};

static void *
batch_alloc (const struct io_member *members, const struct io_op *ops,
             size_t n, struct mem *m)
{
  size_t ncmds = n;           /* room for a FUA flush per member */
  char *p;

  for (size_t i = 0; i < n; i++)
    ncmds += op_cmds (nm_of (&members[ops[i].member]), &ops[i]);
  p = malloc (n * (sizeof *m->t + sizeof *m->idx + sizeof *m->parts) +
              ncmds * sizeof *m->cmds);
  if (p == NULL)
    return NULL;
  m->cmds = (struct cmd *) p;
  m->t = (struct track *) (m->cmds + ncmds);
  m->parts = (struct part *) (m->t + n);
  m->idx = (size_t *) (m->parts + n);
  return p;
}

int
nbd_run (const struct io_member *members, struct io_op *ops, size_t n,
         unsigned flags)
{
  struct mem m = { NULL };
  void *block = batch_alloc (members, ops, n, &m);
  struct batch b = { .pending = 1, .cmds = m.cmds };
  size_t np;

  if (block == NULL) {
    io_ops_fail_all (ops, n, -ECANCELED);
    return -ENOMEM;
  }
  for (size_t i = 0; i < n; i++)
    m.t[i] = (struct track) { .op = &ops[i] };
  np = cut_parts (members, ops, n, m.idx, m.parts);
  /* Every member's commands go out before any is waited for. */
  for (size_t p = 0; p < np; p++)
    start_part (&b, &m.parts[p], m.t, flags);
  batch_wait (&b);
  if (flags & IO_FUA)
    flush_for_fua (&b, m.parts, np, m.t);
  results (m.parts, np, m.t);
  free (block);
  return io_ops_first_error (ops, n);
}
