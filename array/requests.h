/* array/requests.h -- the request room's shared state: what a client
 * request needs besides its plan (exec.c runs it, runplan.h is the one
 * executor): the epochs that let a member be swapped under running
 * requests, and each request thread's reusable memory.
 *
 * Who calls what: exec.c (and keepalive.c's probe reads) enter and leave
 * epochs; rebuild.c and keepalive.c quiesce them; exec.c makes a thread's
 * worker, array.c frees it (the thread key's destructor).
 */
#ifndef ARRAY_REQUESTS_H
#define ARRAY_REQUESTS_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "array/scratch_pool.h"
#include "io/batch.h"
#include "raid/plan.h"

struct array;
struct array_err;
struct r5_geom;

/* Scratch of all requests together (scratch_pool.h): this much, in
 * buffers of at least ARRAY_SCRATCH_MIN_BUF and at least one stripe's
 * worst case each, and never fewer than ARRAY_SCRATCH_MIN_BUFS buffers.
 */
#define ARRAY_SCRATCH_POOL (16u << 20)
#define ARRAY_SCRATCH_MIN_BUF (1u << 20)
#define ARRAY_SCRATCH_MIN_BUFS 4u
/* Small requests (a 4K write needs a few KiB) take a small buffer
 * instead, so that they are not held back by the few big ones: as many
 * as nbdkit has request threads for four connections.
 */
#define ARRAY_SCRATCH_SMALL_BUF (256u << 10)
#define ARRAY_SCRATCH_SMALL_BUFS 64u

/* Grace periods for swapping a member (rebuild.c): every request runs
 * inside an epoch; quiesce() starts a new one and waits until no request
 * of the old one is left, so nobody still holds a plan (or a file
 * descriptor) made before the swap.  Two counters suffice because
 * quiesce() calls are serialised (job.lock) and each waits its old epoch
 * out.
 */
struct epochs {
  _Atomic uint64_t epoch;
  _Atomic uint64_t active[2];
};

/* Enter and leave a request's epoch (exec.c). */
uint64_t epoch_enter (struct epochs *e) __attribute__((nonnull));
void epoch_exit (struct epochs *e, uint64_t epoch) __attribute__((nonnull));
void epoch_quiesce (struct epochs *e) __attribute__((nonnull));

/* Sync every member that takes writes (a member being rebuilt too: the
 * stripes it has passed are written to it); one that fails its sync is
 * failed.  What array_flush does for a client, for the array's own use
 * (it holds the shape lock already, or changes the shape).  0 or -errno.
 */
int array_sync (struct array *a, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Make the requests' pools fit g's stripes (a grow adds members); no
 * request may be running.  0 or -errno (err set; the old pools stay).
 */
int array_pools_fit (struct array *a, const struct r5_geom *g,
                     struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Per-thread reusable memory for executing requests. */
struct worker {
  struct r5_plan plan;
  void *scratch;              /* from a pool while a request runs */
  struct scratch_pool *scratch_from;  /* which */
  struct io_op *ops;
  size_t ops_cap;
};

/* Worker of the calling thread, created on first use; NULL if out of
 * memory.
 */
struct worker *array_worker (struct array *a);
void array_worker_free (void *w);

#endif /* ARRAY_REQUESTS_H */
