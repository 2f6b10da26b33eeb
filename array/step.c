/* array/step.c -- one step of a job: a batch of stripes from the cursor,
 * under their stripe locks so that clients keep reading and writing
 * around it, cut into parts that threads run at once (scrub.c); then the
 * parts' wrong stripes recorded in order and the cursor moved on.
 */
#include <config.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array/scrub.h"
#include "raid/layout.h"

#define MAX_PARTS 4               /* threads per step, at most */
#define MEMORY_SCRATCH (512u << 10)   /* a part's slices, all members */
/* A step with members in memory covers up to this much of each member
 * (the view's window; less if its reach is less): its stripes need no
 * room in the step's buffer, and a step is a thread started and joined
 * per part, views looked up and stripes locked, which 4 MiB of a member
 * (a buffer's worth) did not repay.
 */
#define MEMORY_STEP IO_VIEW_WINDOW

/* Scratch for one step: all members' chunks of a batch of stripes plus
 * one computed chunk each.  16 MiB keeps several MiB in flight on every
 * member of a small array (deep enough for disks to stream) and bounds
 * memory on wide ones.
 */
#define STEP_BUFFER (16u << 20)

unsigned
job_batch_stripes (const struct array *a)
{
  uint64_t b = STEP_BUFFER / ((a->geom.members + 1) * a->geom.chunk);

  return b ? (unsigned) b : 1;
}

/* The batch's columns, then (members in memory) each part's slices. */
static size_t
cols_bytes (const struct array *a)
{
  return (size_t) job_batch_stripes (a) * (a->geom.members + 1) *
    a->geom.chunk;
}

size_t
job_buf_bytes (const struct array *a)
{
  return cols_bytes (a) + MAX_PARTS * MEMORY_SCRATCH;
}

/* Members in memory (tmpfs) are read in place through mappings where
 * they can be (view_members), else by the kernel copying pages: then a
 * part goes a slice of each chunk at a time, so that a copy lands in a
 * small scratch of its own, in the processor's cache where XOR finds it.
 * Disks get the whole part as one batch, deep enough to stream.  Returns
 * the slice's bytes, or 0 for whole batches.
 */
static uint64_t
slice_bytes (const struct array *a)
{
  uint64_t slice = a->geom.chunk;   /* a power of two >= 4 KiB */

  for (unsigned m = 0; m < a->geom.members; m++)
    if (!a->members[m].in_memory)
      return 0;
  while (slice > SCRUB_UNIT &&
         slice * (a->geom.members + 1) > MEMORY_SCRATCH)
    slice /= 2;                 /* a slice of each member and one computed */
  return slice;
}

static void
record (struct array *a, const struct bad_stripe *b,
        const struct array_job_watch *watch)
{
  struct job *j = &a->job;
  struct array_mismatch mm = {
    .stripe = b->stripe, .parity = b->parity, .units = b->units,
    .member_off = r5_stripe_member_off (&a->geom, b->stripe) + b->first,
    .last_off = r5_stripe_member_off (&a->geom, b->stripe) + b->last,
    .array_off = r5_stripe_array_off (&a->geom, b->stripe),
    .array_len = a->geom.stripe_data,
    .csum_member = b->csum_member, .csum_units = b->csum_units,
    .csum_healed = b->csum_healed, .csum_off = b->csum_off,
  };

  /* job.lock is held by the caller of job_step. */
  j->mismatches += r5_cmp_sectors (b->units);
  j->stripes_bad++;
  if (j->nfound < ARRAY_FOUND_MAX)
    j->found[j->nfound++] = mm;
  if (watch && watch->found)
    watch->found (watch->opaque, &mm);
}

/* A re-add rebuilds only what the bitmap marks: pass the run of stripes
 * from the cursor whose bits are clear (at most a batch's worth).  A bit
 * is set before any write to its stripes is planned and never cleared
 * while a slot is out, so one seen clear under the stripe locks means no
 * write touched the stripe since the member left, and a write waiting for
 * the lock replans once the mark has passed, with the member in service.
 */
static void
pass_unmarked (struct array *a)
{
  uint64_t c = a->job.cursor, end = a->geom.stripes, k = c;
  struct stripe_range range;

  while (k < end && k - c < job_batch_stripes (a) &&
         !meta_stripe_marked (a, k))
    k++;
  if (k == c)
    return;
  stripe_lock_range (&a->locks, c, k - 1, STRIPE_EXCLUSIVE, &range);
  for (k = c; k < end && k - c < job_batch_stripes (a) &&
         !meta_stripe_marked (a, k); k++)
    ;
  a->job.cursor = k;
  health_rebuilt_to (&a->health, k);
  stripe_unlock_range (&a->locks, &range);
}

/* Stripes the next step covers: up to a batch (sliced, up to MEMORY_STEP
 * or reach bytes of each member, if more), and for a bitmap-guided resync
 * only stripes whose bit is set (clear ones are skipped here).
 */
static unsigned
next_batch (struct array *a, enum r5_job kind, uint64_t slice,
            uint64_t reach, uint64_t *first)
{
  bool guided = kind == R5_JOB_REBUILD &&
    a->health.bitmap_rebuild;
  uint64_t c, end = a->geom.stripes;
  uint64_t most = reach < MEMORY_STEP ? reach : MEMORY_STEP;
  unsigned n = 0, max = job_batch_stripes (a);

  if (guided)
    pass_unmarked (a);
  c = a->job.cursor;

  if (slice && most / a->geom.chunk > max)
    max = (unsigned) (most / a->geom.chunk);
  if (kind == R5_JOB_RESYNC)
    while (c < end && !meta_resync_visits (a, c))
      c++;
  a->job.cursor = c;          /* skipped stripes need no lock */
  while (n < max && c + n < end &&
         !(kind == R5_JOB_RESYNC && !meta_resync_visits (a, c + n)) &&
         !(guided && !meta_stripe_marked (a, c + n)))
    n++;
  *first = c;
  return n;
}

static long online_cpus;
static pthread_once_t online_once = PTHREAD_ONCE_INIT;

static void
count_cpus (void)
{
  online_cpus = sysconf (_SC_NPROCESSORS_ONLN);
}

/* A part per processor; paced by latency (job.c), one: the job's
 * short steps would start a thread each many times a second, and a
 * thread's stack is mapped and unmapped each time -- the whole process's
 * address space locked and every processor's TLB flushed, under the
 * clients' requests.
 */
static unsigned
parts_for (const struct array *a, unsigned n)
{
  long cpus;
  unsigned k;

  if (a->job.latency_max_us)
    return 1;
  pthread_once (&online_once, count_cpus);   /* sysconf reads /sys */
  cpus = online_cpus;
  k = cpus > MAX_PARTS ? MAX_PARTS : cpus > 1 ? (unsigned) cpus : 1;
  return k < n ? k : n;
}

/* What the step's parts share: its stripes, their buffers, the room for
 * every part's ops, compares and wrong stripes, the members' mappings.
 */
struct step {
  struct array *a;
  enum r5_job kind;
  uint64_t first;
  unsigned n;
  uint64_t slice;             /* slice_bytes(); 0 on disks */
  char *buf;
  struct io_op *ops;          /* k * n * (members + 1) */
  struct plan_cmp_out *cmp;   /* k * n */
  struct bad_stripe *bad;     /* k * n */
  _Atomic unsigned next;      /* members in memory: the next unit */
  char *base[R5_MAX_MEMBERS];
  struct plan_views views;
};

/* Cut the step into k parts: on disks each its own share, read as one
 * batch; in memory each the whole step, its units taken through the
 * shared counter.
 */
static void
cut_parts (struct step *st, struct part *parts, unsigned k)
{
  const struct array *a = st->a;
  size_t col_bytes = (size_t) (a->geom.members + 1) * a->geom.chunk;
  bool shared = st->slice != 0;
  unsigned at = 0, n = st->n;

  for (unsigned i = 0; i < k; i++) {
    unsigned len = shared ? n : n / k + (i < n % k);

    parts[i] = (struct part) {
      .a = st->a, .kind = st->kind, .first = st->first + at, .n = len,
      .slice = st->slice, .buf = st->buf + at * col_bytes,
      .scratch = st->buf + cols_bytes (a) + (size_t) i * MEMORY_SCRATCH,
      .ops = st->ops + (size_t) i * n * (a->geom.members + 1),
      .cmp = st->cmp + (size_t) i * n, .bad = st->bad + (size_t) i * n,
      .next = shared ? &st->next : NULL,
      .views = shared ? &st->views : NULL,
    };
    at += shared ? 0 : len;
  }
}

/* Members in memory are read (and a rebuilt one written) in place where
 * they can be: in base[m], the bytes of stripes [first, first+n) of each
 * member mapped through the job's views, or NULL to read or write them.
 */
static void
view_members (struct step *st)
{
  struct array *a = st->a;
  bool rebuild = st->kind == R5_JOB_REBUILD;
  uint64_t off = r5_stripe_member_off (&a->geom, st->first);
  uint64_t len = (uint64_t) st->n * a->geom.chunk;

  for (unsigned m = 0; m < a->geom.members; m++) {
    bool written = rebuild && (int) m == job_slot (a);

    if (io_view_get (&a->job.views[m], &a->members[m], off, len,
                     written ? IO_VIEW_WRITE : IO_VIEW_READ, &st->base[m]) < 0)
      st->base[m] = NULL;
  }
  st->views = (struct plan_views) { st->base, off, len,
                                    rebuild ? job_slot (a) : -1 };
}

static int
by_stripe (const void *x, const void *y)
{
  const struct bad_stripe *a = x, *b = y;

  return (a->stripe > b->stripe) - (a->stripe < b->stripe);
}

/* Record the parts' wrong stripes, in stripe order. */
static void
record_parts (struct array *a, struct part *parts, unsigned k,
              const struct array_job_watch *watch)
{
  struct bad_stripe *all = parts[0].bad;
  unsigned n = parts[0].nbad;

  for (unsigned i = 1; i < k; i++)
    for (unsigned b = 0; b < parts[i].nbad; b++)
      all[n++] = parts[i].bad[b];   /* parts[0].bad has room for k * n */
  qsort (all, n, sizeof *all, by_stripe);
  for (unsigned b = 0; b < n; b++)
    record (a, &all[b], watch);
}

/* Run the parts, the first in this thread.  Returns the first error. */
static int
run_parts (struct part *parts, unsigned k)
{
  pthread_t tid[MAX_PARTS];
  bool started[MAX_PARTS] = { false };
  int r = 0;

  for (unsigned i = 1; i < k; i++)
    if ((started[i] =
         pthread_create (&tid[i], NULL, scrub_run_part, &parts[i]) == 0))
      pthread_setname_np (tid[i], "raid5-part");   /* as job.c's */
  for (unsigned i = 1; i < k; i++)
    if (!started[i])
      scrub_run_part (&parts[i]);   /* no thread: do it here */
  scrub_run_part (&parts[0]);
  for (unsigned i = 1; i < k; i++)
    if (started[i])
      pthread_join (tid[i], NULL);
  for (unsigned i = 0; i < k && r == 0; i++)
    r = parts[i].r;
  return r;
}

int
job_step (struct array *a, uint64_t reach, char *buf,
          const struct array_job_watch *watch, struct array_err *err)
{
  enum r5_job kind = a->job.kind;   /* job.lock is held */
  struct part parts[MAX_PARTS];
  struct stripe_range range;
  struct step st = { .a = a, .kind = kind, .buf = buf,
                     .slice = slice_bytes (a) };
  unsigned k;
  int r;

  st.n = next_batch (a, kind, st.slice, reach, &st.first);
  if (st.n == 0)
    return 0;
  k = parts_for (a, st.n);
  st.ops = malloc ((size_t) k * st.n * (a->geom.members + 1) *
                   sizeof *st.ops);
  st.cmp = malloc ((size_t) k * st.n * sizeof *st.cmp);
  st.bad = malloc ((size_t) k * st.n * sizeof *st.bad);
  if (st.ops == NULL || st.cmp == NULL || st.bad == NULL) {
    free (st.ops);
    free (st.cmp);
    free (st.bad);
    array_set_err (err, "out of memory");
    return -ENOMEM;
  }
  stripe_lock_range (&a->locks, st.first, st.first + st.n - 1,
                     STRIPE_EXCLUSIVE, &range);
  /* Paced by latency, members in memory are read (and a rebuilt one
   * written) through the I/O path, not mapped: mapping and unmapping
   * windows takes the whole process's address-space lock and flushes
   * every processor's TLB under the clients' requests -- a latency
   * outside the requests, which the pacer cannot see (measured: clients'
   * p99 0.2 -> 1.1 ms with the job at 100 MB/s per member, the requests'
   * own p99 under 70 us throughout).
   */
  if (st.slice && !a->job.latency_max_us)
    view_members (&st);
  else
    st.views = (struct plan_views) { st.base, 0, 0, -1 };  /* none */
  cut_parts (&st, parts, k);
  r = run_parts (parts, k);
  record_parts (a, parts, k, watch);
  if (r == 0) {
    a->job.cursor = st.first + st.n;    /* still under the stripe locks */
    if (kind == R5_JOB_REBUILD) {
      health_rebuilt_to (&a->health, st.first + st.n);
      a->job.rebuilt += st.n;
    }
    else
      a->job.checked += st.n;
  }
  stripe_unlock_range (&a->locks, &range);
  for (unsigned i = 0; i < k && r < 0; i++)
    if (parts[i].r == r)
      *err = parts[i].err;
  free (st.ops);
  free (st.cmp);
  free (st.bad);
  return r;
}
