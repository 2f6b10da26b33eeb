/* io/batch.c -- io_run(): a batch of member I/O, start to finish, cut
 * into one sub-batch per backend (backend.h).
 */
#include <config.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "io/backend.h"
#include "io/batch.h"
#include "io/engine.h"

/* Test-only: has this member's injected failure struck?  Counted per op,
 * in batch order, before any backend sees the op.
 */
static bool
injected_failure (const struct io_member *m)
{
  _Atomic int64_t *left = (_Atomic int64_t *) &m->fail_after;
  int64_t n = *left;

  while (n > 0 && !atomic_compare_exchange_weak (left, &n, n - 1))
    ;
  return n == 0;
}

void
io_ops_fail_all (struct io_op *ops, size_t n, int err)
{
  for (size_t i = 0; i < n; i++)
    ops[i].result = err;
}

int
io_ops_first_error (const struct io_op *ops, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (ops[i].result < 0)
      return ops[i].result;
  return 0;
}

/* The one backend of every op's member, or NULL if they differ, if one
 * is not open, if a failure is armed on one, or if an op would write to
 * a member opened for reading only (the slow path).
 */
static const struct io_backend *
sole_backend (const struct io_member *members, const struct io_op *ops,
              size_t n)
{
  const struct io_backend *b = members[ops[0].member].backend;

  for (size_t i = 0; i < n; i++) {
    const struct io_member *m = &members[ops[i].member];

    if (m->backend != b || m->fail_after >= 0 ||
        (m->reads_only && io_op_writes (&ops[i])))
      return NULL;
  }
  return b;
}

/* A batch being cut per backend. */
struct split {
  const struct io_member *members;
  struct io_op *ops;
  size_t n;
  unsigned flags;
  struct io_op *sub;          /* room for n: one backend's ops */
  size_t *from;               /* room for n: where each came from in ops */
};

/* Run the ops of backend b that are still to run (result 1) as one
 * sub-batch, in batch order; their results are copied back.
 */
static void
run_backend (struct split *sp, const struct io_backend *b)
{
  size_t k = 0;

  for (size_t i = 0; i < sp->n; i++)
    if (sp->ops[i].result == 1 &&
        sp->members[sp->ops[i].member].backend == b) {
      sp->from[k] = i;
      sp->sub[k] = sp->ops[i];
      sp->sub[k++].result = -ECANCELED;   /* unless the backend says so */
    }
  (void) b->run (sp->members, sp->sub, k, sp->flags);
  for (size_t j = 0; j < k; j++) {
    sp->ops[sp->from[j]].result = sp->sub[j].result;
    sp->ops[sp->from[j]].link_lost = sp->sub[j].link_lost;
  }
}

/* Members of several backends, members not open, an injected failure,
 * or members opened for reading only (whose writes fail -EROFS, whatever
 * their backend would let through): strike the failures, then each
 * backend runs its own ops.  The
 * sub-batches run one after another (each is waited for in full).
 */
static int
run_mixed (const struct io_member *members, struct io_op *ops, size_t n,
           unsigned flags)
{
  struct split sp = { members, ops, n, flags, malloc (n * sizeof *sp.sub),
                      malloc (n * sizeof *sp.from) };

  if (sp.sub == NULL || sp.from == NULL) {
    free (sp.sub);
    free (sp.from);
    io_ops_fail_all (ops, n, -ECANCELED);
    return -ENOMEM;
  }
  for (size_t i = 0; i < n; i++) {
    const struct io_member *m = &members[ops[i].member];

    ops[i].result = m->backend == NULL ? -EBADF
      : m->reads_only && io_op_writes (&ops[i]) ? -EROFS
      : injected_failure (m) ? -EIO : 1;       /* 1: still to run */
  }
  for (size_t i = 0; i < n; i++)
    if (ops[i].result == 1)
      run_backend (&sp, members[ops[i].member].backend);
  free (sp.sub);
  free (sp.from);
  return io_ops_first_error (ops, n);
}

static uint64_t
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000 + (uint64_t) ts.tv_nsec;
}

#define ACCOUNTED 64           /* members 0..63 have figures */

/* Count the batch once for each member it reached (io_stats). */
static void
account (const struct io_member *members, const struct io_op *ops, size_t n,
         uint64_t ns)
{
  uint64_t reached = 0, errors[ACCOUNTED];

  for (size_t i = 0; i < n; i++) {
    unsigned m = ops[i].member;

    if (m >= ACCOUNTED)
      continue;
    if (!(reached & (1ull << m)))
      errors[m] = 0;
    reached |= 1ull << m;
    errors[m] += ops[i].result < 0 && ops[i].result != -ECANCELED;
  }
  for (unsigned m = 0; reached; m++, reached >>= 1) {
    struct io_stats *st = (struct io_stats *) &members[m].stats;

    if (!(reached & 1))
      continue;
    atomic_fetch_add_explicit (&st->batches, 1, memory_order_relaxed);
    atomic_fetch_add_explicit (&st->busy_ns, ns, memory_order_relaxed);
    if (errors[m])
      atomic_fetch_add_explicit (&st->errors, errors[m], memory_order_relaxed);
  }
}

int
io_run (const struct io_member *members, struct io_op *ops, size_t n,
        unsigned flags)
{
  const struct io_backend *b;
  uint64_t t0;
  int r;

  if (n == 0)
    return 0;
  for (size_t i = 0; i < n; i++)
    ops[i].link_lost = false;   /* only a backend that lost it says so */
  t0 = now_ns ();
  if ((b = sole_backend (members, ops, n)) != NULL)
    r = b->run (members, ops, n, flags);
  else
    r = run_mixed (members, ops, n, flags);
  account (members, ops, n, now_ns () - t0);
  return r;
}
