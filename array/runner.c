/* array/runner.c -- a job's runner (runner.h).  Made once per job: the
 * step's buffer, the room of every part, the parts' plans, the members'
 * mappings and the part threads, parked between steps.  A step: a batch
 * of stripes from the cursor, under their stripe locks so that clients
 * keep reading and writing around it, cut into parts that the threads
 * run at once (scrub.c); then the parts' wrong stripes recorded in
 * order and the cursor moved on.  Whether members in memory are read in
 * place, and their mappings for a step: runner-map.c (runner-int.h
 * between them).
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include "array/pacing.h"
#include "array/runner-int.h"
#include "array/runner.h"
#include "array/scrub.h"
#include "raid/layout.h"
#include "raid/parity.h"

#define MEMORY_SCRATCH (512u << 10)   /* a part's slices, all members */
/* A step with members in memory covers up to this much of each member
 * (the view's window; less if its reach is less): its stripes need no
 * room in the step's buffer, and a step is stripes locked and views
 * looked up, which 4 MiB of a member (a buffer's worth) did not repay.
 */
#define MEMORY_STEP IO_VIEW_WINDOW

/* Scratch for one step: all members' chunks of a batch of stripes plus
 * one computed chunk each.  16 MiB keeps several MiB in flight on every
 * member of a small array (deep enough for disks to stream) and bounds
 * memory on wide ones.
 */
#define STEP_BUFFER (16u << 20)

static unsigned
batch_stripes (const struct array *a)
{
  uint64_t b = STEP_BUFFER / ((a->geom.members + 1) * a->geom.chunk);

  return b ? (unsigned) b : 1;
}

/* The batch's columns, then (members in memory) each part's slices. */
size_t
runner_cols_bytes (const struct array *a)
{
  return (size_t) batch_stripes (a) * (a->geom.members + 1) * a->geom.chunk;
}

/* Members in memory (tmpfs) are read in place through mappings where
 * they can be (runner_view_members), else by the kernel copying pages:
 * then a part goes a slice of each chunk at a time, as long as the
 * members' preferred request size (io_member_request_size) and no longer
 * than keeps a part's slices, all members' and one computed, in its
 * small scratch, in the processor's cache where XOR finds them.  Members
 * that prefer no size (disks, NBD) get the whole part as one batch, deep
 * enough to stream.  Returns the slice's bytes, or 0 for whole batches.
 */
static uint64_t
slice_bytes (const struct array *a)
{
  uint64_t slice = a->geom.chunk;   /* a power of two >= 4 KiB */

  for (unsigned m = 0; m < a->geom.members; m++) {
    uint64_t pref = io_member_request_size (&a->members[m]).preferred;

    if (pref == 0)
      return 0;
    while (slice > SCRUB_UNIT && slice > pref)
      slice /= 2;
  }
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
  j->tally.mismatches += r5_cmp_sectors (b->units);
  j->tally.stripes_bad++;
  if (j->tally.nfound < ARRAY_FOUND_MAX)
    j->tally.found[j->tally.nfound++] = mm;
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

  while (k < end && k - c < batch_stripes (a) &&
         !meta_stripe_marked (a, k))
    k++;
  if (k == c)
    return;
  stripe_lock_range (&a->locks, c, k - 1, STRIPE_EXCLUSIVE, &range);
  for (k = c; k < end && k - c < batch_stripes (a) &&
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
  unsigned n = 0, max = batch_stripes (a);

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
      all[n++] = parts[i].bad[b];   /* at most the step's stripes */
  qsort (all, n, sizeof *all, by_stripe);
  for (unsigned b = 0; b < n; b++)
    record (a, &all[b], watch);
}

/* Part i of a step of n stripes from first, cut k ways: on disks each
 * part its own share, read as one batch; in memory (shared) each the
 * whole step, its units taken through the shared counter.  The part's
 * plan is its own for the job's life.
 */
static void
fill_part (struct job_runner *r, unsigned i, uint64_t first, unsigned n,
           unsigned k)
{
  const struct array *a = r->a;
  size_t col_bytes = (size_t) (a->geom.members + 1) * a->geom.chunk;
  bool shared = r->slice != 0;
  unsigned at = shared ? 0 : i * (n / k) + (i < n % k ? i : n % k);
  struct part *p = &r->parts[i];

  p->a = r->a;
  p->kind = r->kind;
  p->first = first + at;
  p->n = shared ? n : n / k + (i < n % k);
  p->slice = r->slice;
  p->buf = r->buf + at * col_bytes;
  p->scratch = r->buf + runner_cols_bytes (a) + (size_t) i * MEMORY_SCRATCH;
  p->ops = r->ops + (size_t) i * r->room * (a->geom.members + 1);
  p->cmp = r->cmp + (size_t) i * r->room;
  p->bad = r->bad + (size_t) i * r->room;
  p->nbad = 0;
  p->unread_stripe = UINT64_MAX;
  p->listed_stripe = UINT64_MAX;
  p->next = shared ? &r->next : NULL;
  p->views = shared ? &r->mapped : NULL;
  p->r = 0;
  p->err.msg[0] = '\0';       /* a step's reason is its own */
}

static void *
crew_main (void *arg)
{
  struct crew_seat *w = arg;
  struct crew *c = &w->r->crew;
  uint64_t seen = 0;

  pthread_mutex_lock (&c->lock);
  for (;;) {
    while (!c->quit && c->gen == seen)
      pthread_cond_wait (&c->go, &c->lock);
    if (c->quit)
      break;
    seen = c->gen;
    if (w->index >= c->parts)
      continue;
    pthread_mutex_unlock (&c->lock);
    scrub_run_part (&w->r->parts[w->index]);
    pthread_mutex_lock (&c->lock);
    if (--c->running == 0)
      pthread_cond_signal (&c->done);
  }
  pthread_mutex_unlock (&c->lock);
  return NULL;
}

/* Run the step's k parts: 1..k-1 on the crew, 0 here.  Returns the
 * first error.
 */
static int
run_parts (struct job_runner *r, unsigned k)
{
  struct crew *c = &r->crew;
  int e = 0;

  pthread_mutex_lock (&c->lock);
  c->parts = k;
  c->running = k - 1;
  c->gen++;
  pthread_cond_broadcast (&c->go);
  pthread_mutex_unlock (&c->lock);
  scrub_run_part (&r->parts[0]);
  pthread_mutex_lock (&c->lock);
  while (c->running > 0)
    pthread_cond_wait (&c->done, &c->lock);
  pthread_mutex_unlock (&c->lock);
  for (unsigned i = 0; i < k && e == 0; i++)
    e = r->parts[i].r;
  return e;
}

/* Threads for parts 1.. : one per processor besides this one, as the
 * policies allow at most; fewer if some cannot be made.
 */
static int
crew_start (struct job_runner *r)
{
  struct crew *c = &r->crew;
  long cpus = sysconf (_SC_NPROCESSORS_ONLN);
  unsigned want = cpus > JOB_MAX_PARTS ? JOB_MAX_PARTS
    : cpus > 1 ? (unsigned) cpus : 1;

  if (pthread_mutex_init (&c->lock, NULL) != 0)
    return -ENOMEM;
  if (pthread_cond_init (&c->go, NULL) != 0) {
    pthread_mutex_destroy (&c->lock);
    return -ENOMEM;
  }
  if (pthread_cond_init (&c->done, NULL) != 0) {
    pthread_cond_destroy (&c->go);
    pthread_mutex_destroy (&c->lock);
    return -ENOMEM;
  }
  r->crew_made = true;
  for (unsigned i = 1; i < want; i++) {
    c->who[c->nthreads] = (struct crew_seat) { r, c->nthreads + 1 };
    if (pthread_create (&c->tid[c->nthreads], NULL, crew_main,
                        &c->who[c->nthreads]) != 0)
      break;
    /* Named, as job.c's: top -H, perf and bench.sh tell them apart. */
    pthread_setname_np (c->tid[c->nthreads++], "raid5-part");
  }
  return 0;
}

static void
crew_stop (struct job_runner *r)
{
  struct crew *c = &r->crew;

  if (!r->crew_made)
    return;
  pthread_mutex_lock (&c->lock);
  c->quit = true;
  pthread_cond_broadcast (&c->go);
  pthread_mutex_unlock (&c->lock);
  for (unsigned i = 0; i < c->nthreads; i++)
    pthread_join (c->tid[i], NULL);
  pthread_cond_destroy (&c->done);
  pthread_cond_destroy (&c->go);
  pthread_mutex_destroy (&c->lock);
}

/* Stripes a step may cover: a batch, or with members in memory (sliced)
 * up to a view's window of each.
 */
static unsigned
room_of (const struct array *a, uint64_t slice)
{
  unsigned b = batch_stripes (a);
  uint64_t w = MEMORY_STEP / a->geom.chunk;

  return slice && w > b ? (unsigned) w : b;
}

int
runner_open (struct array *a, struct job_runner **out, struct array_err *err)
{
  struct job_runner *r = calloc (1, sizeof *r);
  size_t cols = a->geom.members + 1;

  if (r == NULL)
    goto nomem;
  r->a = a;
  r->kind = a->job.kind;
  r->slice = slice_bytes (a);
  r->room = room_of (a, r->slice);
  for (unsigned i = 0; i < JOB_MAX_PARTS; i++)
    r5_plan_init (&r->parts[i].plan);
  for (unsigned m = 0; m < R5_MAX_MEMBERS; m++)
    io_view_init (&r->views[m]);
  r->ops = calloc ((size_t) JOB_MAX_PARTS * r->room * cols, sizeof *r->ops);
  r->cmp = calloc ((size_t) JOB_MAX_PARTS * r->room, sizeof *r->cmp);
  r->bad = calloc ((size_t) JOB_MAX_PARTS * r->room, sizeof *r->bad);
  if (posix_memalign ((void **) &r->buf, 4096, runner_cols_bytes (a) +
                      JOB_MAX_PARTS * MEMORY_SCRATCH) != 0)
    r->buf = NULL;
  if (r->ops == NULL || r->cmp == NULL || r->bad == NULL || r->buf == NULL ||
      crew_start (r) < 0)
    goto nomem;
  r->map = r->slice && runner_access_mapped (r);
  if (r->kind != R5_JOB_REBUILD)     /* measured now, not in a part */
    array_log (a, ARRAY_LOG_DEBUG, "%s: parity compared by %s",
               r5_job_name (r->kind), r5_xor_check_way ());
  *out = r;
  return 0;

 nomem:
  runner_close (r);
  array_set_err (err, "out of memory for the %s's buffers",
                 r5_job_name (a->job.kind));
  return -ENOMEM;
}

void
runner_close (struct job_runner *r)
{
  if (r == NULL)
    return;
  crew_stop (r);
  for (unsigned m = 0; m < R5_MAX_MEMBERS; m++)
    io_view_close (&r->views[m]);
  for (unsigned i = 0; i < JOB_MAX_PARTS; i++)
    r5_plan_free (&r->parts[i].plan);
  free (r->buf);
  free (r->ops);
  free (r->cmp);
  free (r->bad);
  free (r);
}

enum r5_job
runner_kind (const struct job_runner *r)
{
  return r->kind;
}

/* The step of n stripes from first is done (e: how it ended): the cursor
 * moves on, still under the stripe locks; the first failing part's
 * error is the step's.
 */
static void
advance (struct job_runner *r, uint64_t first, unsigned n, int e,
         struct array_err *err)
{
  struct array *a = r->a;

  if (e == 0) {
    a->job.cursor = first + n;
    if (r->kind == R5_JOB_REBUILD) {
      health_rebuilt_to (&a->health, first + n);
      a->job.rebuilt += n;
    }
    else
      a->job.checked += n;
  }
  for (unsigned i = 0; i < JOB_MAX_PARTS && e < 0; i++)
    if (r->parts[i].r == e) {
      *err = r->parts[i].err;
      break;
    }
}

int
runner_step (struct job_runner *r, uint64_t reach,
             const struct array_job_watch *watch, struct array_err *err)
{
  struct array *a = r->a;
  const struct job_policy *pol = pacing_policy (&a->job);
  struct stripe_range range;
  uint64_t first;
  unsigned n, k;
  int e;

  n = next_batch (a, r->kind, r->slice, reach, &first);
  if (n > r->room)
    n = r->room;
  /* Paced offline: the step no bigger than asked (at least a stripe). */
  if (watch && watch->step_bytes && n > watch->step_bytes / a->geom.chunk)
    n = watch->step_bytes / a->geom.chunk ?
      (unsigned) (watch->step_bytes / a->geom.chunk) : 1;
  if (n == 0)
    return 0;
  k = pol->parts < r->crew.nthreads + 1 ? pol->parts : r->crew.nthreads + 1;
  k = k < n ? k : n;
  stripe_lock_range (&a->locks, first, first + n - 1, STRIPE_EXCLUSIVE,
                     &range);
  if (r->slice && pol->map_members)
    runner_view_members (r, first, n);
  else
    r->mapped = (struct plan_views) { r->base, 0, 0, -1 };  /* none */
  r->next = 0;
  for (unsigned i = 0; i < k; i++)
    fill_part (r, i, first, n, k);
  e = run_parts (r, k);
  record_parts (a, r->parts, k, watch);
  advance (r, first, n, e, err);
  stripe_unlock_range (&a->locks, &range);
  return e;
}
