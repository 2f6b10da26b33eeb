/* array/sync.c -- resync after an unclean stop (parity recomputed from
 * the data, as md's resync does), and the array's background thread.
 *
 * A resync walks the stripes from the checkpoint (or, with a bitmap, the
 * stripes whose bits were set at the crash), one stripe at a time under
 * its stripe lock, so clients keep reading and writing.  Stripes from the
 * cursor on may have stale parity; client writes there use
 * reconstruct-write (plan.rcw_from).  Mismatches are counted as md does:
 * 8 sectors per 4 KiB unit of the chunk whose parity was wrong.  On a
 * degraded array a resync can repair nothing and is dropped, like md's.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "array/internal.h"
#include "raid/layout.h"
#include "raid/parity.h"

#define UNIT 4096u                /* md's stripe_head unit */
#define IDLE_TICK_MS 50

static void
sleep_ns (uint64_t ns)
{
  struct timespec ts = { (time_t) (ns / 1000000000), (long) (ns % 1000000000) };

  nanosleep (&ts, NULL);
}

void
sync_init (struct array *a)
{
  struct sync *y = &a->sync;

  y->speed_min = ARRAY_SYNC_SPEED_MIN;
  y->speed_max = ARRAY_SYNC_SPEED_MAX;
  if (!a->meta.enabled || a->meta.resync_cp == MD_MAX_SECTOR)
    return;
  y->cursor = a->meta.resync_cp * 512 / a->geom.chunk;
  y->pending = y->cursor < a->geom.stripes;
}

/* Does a bitmap-guided resync skip this stripe? */
static bool
bitmap_skips (const struct array *a, uint64_t stripe)
{
  const struct meta *m = &a->meta;
  uint64_t k;

  if (m->resync_bits == NULL)
    return false;
  k = stripe * a->geom.chunk / m->bm.chunksize;
  return !((m->resync_bits[k >> 3] >> (k & 7)) & 1);
}

/* Compare the parity of a stripe with the XOR of its data; buf holds
 * N+1 chunks.  With repair, wrong parity is rewritten from the data (md
 * never changes data).  Returns the number of 4 KiB units whose parity
 * was wrong, with the first one's offset in the chunk in *first, or
 * -errno (-ENODEV: a member failed and was taken out of service).
 */
static int
scrub_locked (struct array *a, uint64_t stripe, char *buf, bool repair,
              uint64_t *first, struct array_err *err)
{
  const struct r5_geom *g = &a->geom;
  unsigned n = g->members, pd = r5_parity_member (g, stripe);
  char *fresh = buf + (size_t) n * g->chunk;
  struct io_op ops[R5_MAX_MEMBERS];
  void *v[R5_MAX_MEMBERS + 1];
  unsigned nv = 0;
  int bad = 0, r;

  for (unsigned m = 0; m < n; m++) {
    ops[m] = (struct io_op) { .kind = IO_READ, .member = m,
                              .buf = buf + (size_t) m * g->chunk,
                              .off = r5_stripe_member_off (g, stripe),
                              .len = g->chunk };
    if (m != pd)
      v[nv++] = ops[m].buf;
  }
  if ((r = io_run (a->members, ops, n, 0)) < 0)
    return array_io_failed (a, ops, n, r, err) < 0 ? -EIO : -ENODEV;
  v[nv++] = fresh;
  r5_xor_gen (nv, g->chunk, v);
  for (uint64_t off = g->chunk; off > 0; off -= UNIT)
    if (memcmp (fresh + off - UNIT, (char *) ops[pd].buf + off - UNIT,
                UNIT) != 0) {
      bad++;
      *first = off - UNIT;
    }
  if (bad == 0 || !repair)
    return bad;
  ops[0] = (struct io_op) { .kind = IO_WRITE, .member = pd, .buf = fresh,
                            .off = ops[pd].off, .len = g->chunk };
  if ((r = io_run (a->members, ops, 1, 0)) < 0)
    return array_io_failed (a, ops, 1, r, err) < 0 ? -EIO : -ENODEV;
  return bad;
}

/* Scrub one stripe under its lock; degraded arrays cannot be checked. */
static int
scrub_stripe (struct array *a, uint64_t stripe, char *buf, bool repair,
              uint64_t *first, struct array_err *err)
{
  struct stripe_range range;
  int r;

  stripe_lock_range (&a->locks, stripe, stripe, STRIPE_EXCLUSIVE, &range);
  r = a->out >= 0 ? -ENODEV : scrub_locked (a, stripe, buf, repair, first,
                                            err);
  stripe_unlock_range (&a->locks, &range);
  return r;
}

/* One step: the stripe at the cursor.  Returns 0, -ENODEV if the array
 * is (or just became) degraded, or another -errno.
 */
static int
resync_step (struct array *a, char *buf, struct array_err *err)
{
  uint64_t stripe = a->sync.cursor, first;
  int r = 0;

  if (!bitmap_skips (a, stripe)) {
    r = scrub_stripe (a, stripe, buf, true, &first, err);
    if (r > 0) {
      a->sync.mismatches += (uint64_t) r * (UNIT / 512);
      r = 0;
    }
  }
  if (r == 0)
    a->sync.cursor = stripe + 1;
  return r;
}

static int
resync_finish (struct array *a, int r, struct array_err *err)
{
  if (r == -ENODEV)
    array_log (a, ARRAY_LOG_ERROR, "resync dropped at stripe %" PRIu64
               ": the array is degraded, parity cannot be checked",
               (uint64_t) a->sync.cursor);
  else if (r < 0)
    return r;
  else
    array_log (a, ARRAY_LOG_DEBUG, "resync done: %" PRIu64 " mismatched "
               "sectors rewritten", (uint64_t) a->sync.mismatches);
  a->sync.pending = false;
  return meta_resync_done (a, err);
}

/* Sleep so that this stripe's member bytes keep to the speed limit:
 * max while clients are idle, min while they are busy.
 */
static void
throttle (struct array *a, uint64_t started_ns)
{
  uint64_t kib = a->sync.inflight > 0 ? a->sync.speed_min : a->sync.speed_max;
  uint64_t want = a->geom.chunk * 1000000000ULL / (kib * 1024);
  uint64_t spent = array_now_ns () - started_ns;

  if (want > spent)
    sleep_ns (want - spent < 100000000ULL ? want - spent : 100000000ULL);
}

int
array_resync (struct array *a, array_progress_fn progress, void *opaque,
              struct array_err *err)
{
  size_t len = (size_t) (a->geom.members + 1) * a->geom.chunk;
  char *buf;
  int r = 0;

  if (!a->sync.pending)
    return 0;
  if (posix_memalign ((void **) &buf, 4096, len) != 0) {
    array_set_err (err, "out of memory for the resync");
    return -ENOMEM;
  }
  while (r == 0 && a->sync.cursor < a->geom.stripes) {
    r = resync_step (a, buf, err);
    if (progress && (a->sync.cursor % 64 == 0 ||
                     a->sync.cursor == a->geom.stripes))
      progress (opaque, a->sync.cursor, a->geom.stripes);
  }
  free (buf);
  return resync_finish (a, r, err);
}

/* The background thread: marks the array clean when idle, and runs a
 * pending resync at the configured speed.
 */
static void *
background (void *arg)
{
  struct array *a = arg;
  size_t len = (size_t) (a->geom.members + 1) * a->geom.chunk;
  struct array_err err;
  char *buf = NULL;

  while (!a->sync.stop) {
    uint64_t t0 = array_now_ns ();
    int r;

    if (meta_mark_clean (a, true, &err) < 0)
      array_log (a, ARRAY_LOG_ERROR, "%s", err.msg);
    if (!a->sync.pending || a->failed) {
      sleep_ns (IDLE_TICK_MS * 1000000ULL);
      continue;
    }
    if (buf == NULL && posix_memalign ((void **) &buf, 4096, len) != 0) {
      array_log (a, ARRAY_LOG_ERROR, "resync: out of memory");
      break;
    }
    r = a->sync.cursor < a->geom.stripes ? resync_step (a, buf, &err) : 0;
    if (r < 0 || a->sync.cursor >= a->geom.stripes) {
      if (resync_finish (a, r, &err) < 0)
        array_log (a, ARRAY_LOG_ERROR, "resync: %s", err.msg);
      a->sync.pending = false;
    }
    throttle (a, t0);
  }
  free (buf);
  return NULL;
}

int
array_start_background (struct array *a)
{
  int r;

  if (!a->meta.enabled || a->sync.started)
    return 0;
  a->sync.stop = false;
  r = pthread_create (&a->sync.thread, NULL, background, a);
  if (r != 0)
    return -r;
  a->sync.started = true;
  return 0;
}

void
array_stop_background (struct array *a)
{
  if (!a->sync.started)
    return;
  a->sync.stop = true;
  pthread_join (a->sync.thread, NULL);
  a->sync.started = false;
}

void
array_set_sync_speed (struct array *a, uint64_t min_kib, uint64_t max_kib)
{
  a->sync.speed_min = min_kib ? min_kib : 1;
  a->sync.speed_max = max_kib >= a->sync.speed_min ? max_kib
                                                   : a->sync.speed_min;
}

int
array_check (struct array *a, bool repair, array_progress_fn progress,
             array_mismatch_fn found, void *opaque,
             struct array_check_result *res, struct array_err *err)
{
  const struct r5_geom *g = &a->geom;
  size_t len = (size_t) (g->members + 1) * g->chunk;
  char *buf;
  int r = 0;

  memset (res, 0, sizeof *res);
  if (posix_memalign ((void **) &buf, 4096, len) != 0) {
    array_set_err (err, "out of memory for the check");
    return -ENOMEM;
  }
  for (uint64_t s = 0; s < g->stripes && r >= 0; s++) {
    uint64_t first = 0;

    r = scrub_stripe (a, s, buf, repair, &first, err);
    if (r > 0 && found) {
      struct array_mismatch mm = {
        .stripe = s, .parity = r5_parity_member (g, s),
        .member_off = r5_stripe_member_off (g, s) + first,
        .units = (unsigned) r, .array_off = s * g->stripe_data,
        .array_len = g->stripe_data,
      };
      found (opaque, &mm);
    }
    if (r > 0) {
      res->mismatches += (uint64_t) r * (UNIT / 512);
      res->stripes_bad++;
    }
    res->stripes_done = s + 1;
    if (progress && (s % 64 == 63 || s + 1 == g->stripes))
      progress (opaque, s + 1, g->stripes);
  }
  free (buf);
  if (r == -ENODEV)
    array_set_err (err, "the array is degraded (slot %d out of service): "
                   "parity cannot be checked", a->out);
  return r < 0 ? r : 0;
}

void
array_get_sync (const struct array *a, struct array_sync *out)
{
  out->pending = a->sync.pending;
  out->done = a->sync.cursor;
  out->total = a->geom.stripes;
  out->mismatches = a->sync.mismatches;
}
