/* tests/integration/random-io.c -- random I/O over several NBD connections,
 * checked against an in-memory model of the array.
 *
 *   random-io URI SIZE|auto [options]     (random-io --help lists them)
 *
 * Each thread owns one libnbd handle (one connection) and issues
 * synchronous requests: reads, writes (some FUA), zeroes (with and without
 * NO_HOLE, some FUA or FAST_ZERO), trims and flushes, at random unaligned
 * offsets and sizes from 1 byte to a few MiB, shaped by the array's chunk
 * and stripe so that many requests cross chunk and stripe boundaries.
 *
 * Exactness under concurrency: before a request is sent its byte range is
 * reserved in a table of in-flight ranges and a new random range is drawn
 * until it overlaps none of them, so the model's content of that range
 * cannot change while the request is in flight.  Ranges of different
 * requests may share a stripe, even a chunk: that is the case the plugin's
 * stripe locks must make safe.  The model is updated (and the range
 * released) after the reply, under one lock.
 *
 * Every read is compared with the model; trimmed bytes are unknown until
 * written again or read (a read teaches the model what a trimmed byte
 * holds, so it must read the same afterwards).  At the end the whole
 * export is read and compared, and the model is saved for member-check.
 *
 * --power-loss (with --crash-ok): the server's death is a power cut, which
 * keeps only what was flushed.  A write is durable once acknowledged with
 * FUA, or once a flush sent after its reply has been acknowledged (NBD's
 * rule); the ranges of the others are kept in a list, and at the cut they
 * become unknown like the requests in flight.  Trims too: what a read of
 * a trimmed range taught the model is not durable before the trim is.  The run starts with a flush
 * so that what earlier runs wrote is durable.
 *
 * Exit status: 0 all reads matched, 1 a mismatch or an NBD error, 2 usage.
 */

#include <config.h>

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libnbd.h>

#include "model.h"
#include "workload.h"

#define MAX_THREADS 16
#define MAX_LEN (32u << 20)           /* libnbd allows 64M; nbdcopy uses 32M */
#define FINAL_READ (4u << 20)
#define OPLOG_SIZE 65536              /* recent requests kept for reports */

enum op_type { OP_READ, OP_WRITE, OP_ZERO, OP_TRIM, OP_FLUSH, OP_TYPES };
static const char *op_name[OP_TYPES] = { "read", "write", "zero", "trim", "flush" };

/* Options. */
static const char *uri;
static uint64_t want_size;            /* 0 = auto */
static uint64_t seed;
static unsigned nr_ops = 2000;
static unsigned nr_threads = 4;
static struct shape shape = {         /* chunk 0: guess from the export */
  .disks = 3, .max_len = 4u << 20,
};
static const char *model_in, *model_out;
static bool initial_unknown;
static bool no_trim, no_zero, no_flush, no_fua, read_only, no_learn, no_final;
static bool verbose;
static bool crash_ok;                 /* --crash-ok */
static bool write_hole;               /* --write-hole */
static bool resized_ok;               /* --resized-ok */
static unsigned old_disks;            /* --old-disks: mid-reshape, 0: none */
static bool power_loss;               /* --power-loss */

/* Shared state.  lock guards the model, the in-flight table and the log. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct model model;
static struct range { uint64_t off, len; bool busy; } inflight[MAX_THREADS];
static struct logent {
  unsigned id, conn;
  enum op_type type;
  uint32_t flags;
  uint64_t off, len;
} oplog[OPLOG_SIZE];                  /* ring: entry i % OPLOG_SIZE */
static size_t oplog_len;              /* requests completed */
static unsigned next_op;              /* under lock */
static volatile bool failed;
static volatile bool disconnected;    /* --crash-ok: the server went away */
static unsigned reports;              /* mismatch reports printed, under lock */
static unsigned op_count[OP_TYPES];   /* under lock */
/* --power-loss: writes not yet durable, in completion order (done: the
 * completion's number), under lock.  A flush makes durable what completed
 * before it was sent.
 */
static struct pending { uint64_t off, len, done; } *pending;
static size_t npending, pending_cap;
static uint64_t completions;          /* requests completed, under lock */
static uint64_t final_known;          /* final read: known bytes compared */
static uint64_t final_differ;         /* ... and how many of them differed */

struct thread {
  unsigned id;
  pthread_t tid;
  struct nbd_handle *nbd;
  struct rng rng;
  unsigned char *buf;
  bool dead;                          /* connection lost (--crash-ok) */
  uint64_t flush_sent;                /* completions when its flush went */
  bool can_fua, can_flush, can_trim, can_zero, can_fast_zero;
};
static struct thread threads[MAX_THREADS];

static bool
overlaps_inflight (uint64_t off, uint64_t len)
{
  unsigned i;

  for (i = 0; i < nr_threads; i++)
    if (inflight[i].busy &&
        off < inflight[i].off + inflight[i].len &&
        inflight[i].off < off + len)
      return true;
  return false;
}

/* Reserve a random range that overlaps no in-flight request.  The lock is
 * dropped between attempts so that completing requests can release theirs.
 *
 * Now and then a zero or trim covers up to the whole region: one request
 * over many stripes, like mkfs discarding the whole device.  Such a range
 * would almost never be free, so while one waits (huge_waiting) the other
 * threads reserve nothing new.
 */
static unsigned huge_waiting;         /* under lock */

static void
reserve_range (struct thread *t, enum op_type type, uint64_t *off,
               uint64_t *len)
{
  bool huge = (type == OP_ZERO || type == OP_TRIM) &&
    rng_below (&t->rng, 25) == 0;

  pthread_mutex_lock (&lock);
  huge_waiting += huge;
  for (;;) {
    if (huge)
      shape_pick_huge (&t->rng, &shape, off, len);
    else if (huge_waiting == 0)
      shape_pick (&t->rng, &shape, off, len);
    if ((huge || huge_waiting == 0) && !overlaps_inflight (*off, *len))
      break;
    pthread_mutex_unlock (&lock);
    sched_yield ();
    pthread_mutex_lock (&lock);
  }
  inflight[t->id] = (struct range) { *off, *len, true };
  huge_waiting -= huge;
  pthread_mutex_unlock (&lock);
}

static void
log_op (struct thread *t, unsigned id, enum op_type type, uint32_t flags,
        uint64_t off, uint64_t len)
{
  oplog[oplog_len++ % OPLOG_SIZE] =
    (struct logent) { id, t->id, type, flags, off, len };
  op_count[type]++;
}

/* Print the last few logged ops that touched array offset at. */
static void
print_history (uint64_t at)
{
  size_t i, shown = 0;

  fprintf (stderr, "  last ops covering %#" PRIx64 " (newest first):\n", at);
  for (i = oplog_len; i-- > 0 && i + OPLOG_SIZE >= oplog_len && shown < 6;) {
    const struct logent *e = &oplog[i % OPLOG_SIZE];
    if (e->type == OP_READ || at < e->off || at >= e->off + e->len)
      continue;
    fprintf (stderr, "    op %u conn %u %s%s%s off=%#" PRIx64 " len=%" PRIu64 "\n",
             e->id, e->conn, op_name[e->type],
             e->flags & LIBNBD_CMD_FLAG_FUA ? " fua" : "",
             e->flags & LIBNBD_CMD_FLAG_NO_HOLE ? " no-hole" : "",
             e->off, e->len);
    shown++;
  }
  if (shown == 0)
    fprintf (stderr, "    (none logged: initial or --model-in content)\n");
}

/* Report a read that differs from the model.  Called under lock. */
static void
report_mismatch (const char *what, unsigned conn, uint64_t off, uint64_t len,
                 const unsigned char *buf, const struct model_diff *d)
{
  uint64_t c = d->first / shape.chunk;
  unsigned data = shape.disks - 1;

  failed = true;
  if (reports++ >= 3)
    return;
  fprintf (stderr,
           "random-io: MISMATCH: %s conn %u off=%#" PRIx64 " len=%" PRIu64 ": "
           "%" PRIu64 " bytes differ, first at array offset %#" PRIx64
           " (chunk %" PRIu64 ", stripe %" PRIu64 ", data index %" PRIu64
           ", %" PRIu64 " into the chunk), last at %#" PRIx64 "\n"
           "  expected 0x%02x, read 0x%02x\n",
           what, conn, off, len, d->differ, d->first, c, c / data, c % data,
           d->first % shape.chunk, d->last,
           model.data[d->first], buf[d->first - off]);
  print_bytes ("expected", model.data + off, off, len, d->first);
  print_bytes ("read", buf, off, len, d->first);
  print_history (d->first);
}

static void
report_nbd_error (struct thread *t, unsigned id, enum op_type type,
                  uint64_t off, uint64_t len)
{
  fprintf (stderr, "random-io: op %u conn %u %s off=%#" PRIx64 " len=%" PRIu64
           " failed: %s (errno %d)\n", id, t->id, op_name[type], off, len,
           nbd_get_error (), nbd_get_errno ());
  failed = true;
}

/* Send one request.  Returns 0, or -1 with errno from libnbd. */
static int
send_op (struct thread *t, enum op_type type, uint32_t flags,
         uint64_t off, uint64_t len)
{
  switch (type) {
  case OP_READ:  return nbd_pread (t->nbd, t->buf, len, off, 0);
  case OP_WRITE: return nbd_pwrite (t->nbd, t->buf, len, off, flags);
  case OP_ZERO:  return nbd_zero (t->nbd, len, off, flags);
  case OP_TRIM:  return nbd_trim (t->nbd, len, off, flags);
  case OP_FLUSH: return nbd_flush (t->nbd, 0);
  default:       abort ();
  }
}

/* Forget the whole stripes of disks members that [off, off+len) meets. */
static void
forget_stripes (uint64_t off, uint64_t len, unsigned disks)
{
  uint64_t sd = shape.chunk * (disks - 1);
  uint64_t end = (off + len + sd - 1) / sd * sd;

  off = off / sd * sd;
  model_forget (&model, off, (end < model.size ? end : model.size) - off);
}

/* Forget [off, off+len) after a crash; degraded (--write-hole), its
 * whole stripes: the missing member's chunks of them are computed from
 * parity the crash may have left stale (the write hole).  Mid-reshape
 * (--old-disks) an address is in the old shape or the new one, as far
 * as the reshape has gone: the stripes of both are forgotten.
 */
static void
forget_crashed (uint64_t off, uint64_t len)
{
  if (!write_hole) {
    model_forget (&model, off, len);
    return;
  }
  forget_stripes (off, len, shape.disks);
  if (old_disks != 0 && old_disks != shape.disks)
    forget_stripes (off, len, old_disks);
}

/* --power-loss: a write, zero or trim that completed without FUA is not
 * durable yet.  Called under lock.
 */
static void
note_pending (uint64_t off, uint64_t len)
{
  if (npending == pending_cap) {
    size_t cap = pending_cap ? pending_cap * 2 : 1024;
    struct pending *p = realloc (pending, cap * sizeof *p);

    if (p == NULL) {
      perror ("random-io: realloc");
      exit (1);
    }
    pending = p;
    pending_cap = cap;
  }
  pending[npending++] = (struct pending) { off, len, completions };
}

/* A flush sent when completions was `before` has been acknowledged: what
 * had completed by then is durable.  Called under lock.
 */
static void
flushed (uint64_t before)
{
  size_t i, k = 0;

  for (i = 0; i < npending; i++)
    if (pending[i].done >= before)
      pending[k++] = pending[i];
  npending = k;
}

/* With --crash-ok, a request that failed because the server died is not
 * an error: whether it took effect is unknown, so its range is; with
 * --power-loss, so are the ranges of writes not yet durable.
 */
static bool
lost_connection (struct thread *t, enum op_type type, uint64_t off,
                 uint64_t len)
{
  if (!crash_ok ||
      (nbd_aio_is_dead (t->nbd) != 1 && nbd_aio_is_closed (t->nbd) != 1))
    return false;
  if (type != OP_READ && type != OP_FLUSH)
    forget_crashed (off, len);
  t->dead = disconnected = true;
  return true;
}

/* After a power cut (every thread has ended): what was not durable. */
static void
forget_pending (void)
{
  size_t i;

  for (i = 0; i < npending; i++)
    forget_crashed (pending[i].off, pending[i].len);
  npending = 0;
}

/* Apply a completed request to the model and release its range. */
static void
complete_op (struct thread *t, unsigned id, enum op_type type, uint32_t flags,
             uint64_t off, uint64_t len, int r)
{
  struct model_diff d;

  pthread_mutex_lock (&lock);
  if (r == -1 && lost_connection (t, type, off, len))
    ;
  else if (r == -1 && type == OP_ZERO && (flags & LIBNBD_CMD_FLAG_FAST_ZERO) &&
      nbd_get_errno () == ENOTSUP)
    model_forget (&model, off, len);    /* allowed to refuse; be safe */
  else if (r == -1)
    report_nbd_error (t, id, type, off, len);
  else if (type == OP_READ) {
    if (model_compare (&model, off, t->buf, len, !no_learn, &d))
      report_mismatch ("read", t->id, off, len, t->buf, &d);
  }
  else if (type == OP_WRITE)
    model_write (&model, off, t->buf, len);
  else if (type == OP_ZERO)
    model_zero (&model, off, len);
  else if (type == OP_TRIM)
    model_forget (&model, off, len);
  /* A trim is a write too: until it is durable, the cut may bring back
   * what it trimmed -- and a read of the trimmed range has taught the
   * model what the trim left, which the cut may take away.
   */
  if (power_loss && r == 0) {
    if ((type == OP_WRITE || type == OP_ZERO || type == OP_TRIM) &&
        !(flags & LIBNBD_CMD_FLAG_FUA))
      note_pending (off, len);
    else if (type == OP_FLUSH)
      flushed (t->flush_sent);
  }
  completions++;
  log_op (t, id, type, flags, off, len);
  inflight[t->id].busy = false;
  pthread_mutex_unlock (&lock);
}

static enum op_type
pick_type (struct thread *t)
{
  unsigned k = rng_below (&t->rng, 100);

  if (read_only || k < 36)
    return OP_READ;
  if (k < 72)
    return OP_WRITE;
  if (k < 86)
    return no_zero || !t->can_zero ? OP_WRITE : OP_ZERO;
  if (k < 96)
    return no_trim || !t->can_trim ? OP_READ : OP_TRIM;
  return no_flush || !t->can_flush ? OP_READ : OP_FLUSH;
}

static uint32_t
pick_flags (struct thread *t, enum op_type type)
{
  uint32_t f = 0;

  if ((type == OP_WRITE || type == OP_ZERO || type == OP_TRIM) &&
      !no_fua && t->can_fua && rng_below (&t->rng, 8) == 0)
    f |= LIBNBD_CMD_FLAG_FUA;
  if (type == OP_ZERO && rng_below (&t->rng, 2) == 0)
    f |= LIBNBD_CMD_FLAG_NO_HOLE;
  if (type == OP_ZERO && t->can_fast_zero && rng_below (&t->rng, 8) == 0)
    f |= LIBNBD_CMD_FLAG_FAST_ZERO;
  return f;
}

/* One random operation. */
static void
do_op (struct thread *t, unsigned id)
{
  enum op_type type = pick_type (t);
  uint32_t flags = pick_flags (t, type);
  uint64_t off = 0, len = 0;
  int r;

  if (type != OP_FLUSH)
    reserve_range (t, type, &off, &len);
  else {
    pthread_mutex_lock (&lock);
    t->flush_sent = completions;
    pthread_mutex_unlock (&lock);
  }
  if (type == OP_WRITE)
    fill_pattern (&t->rng, t->buf, off, len, id);
  if (verbose)
    fprintf (stderr, "op %u conn %u %s off=%#" PRIx64 " len=%" PRIu64
             " flags=%#x\n", id, t->id, op_name[type], off, len, flags);
  r = send_op (t, type, flags, off, len);
  complete_op (t, id, type, flags, off, len, r);
}

static void *
thread_main (void *arg)
{
  struct thread *t = arg;

  for (;;) {
    unsigned id;

    pthread_mutex_lock (&lock);
    id = next_op++;
    pthread_mutex_unlock (&lock);
    if (id >= nr_ops || failed || t->dead)
      break;
    do_op (t, id);
  }
  return NULL;
}

static int
connect_thread (struct thread *t)
{
  t->nbd = nbd_create ();
  /* A TLS URI may name its CA: nbds://HOST/?tls-certificates=DIR. */
  if (t->nbd == NULL ||
      nbd_set_strict_mode (t->nbd,
                           nbd_get_strict_mode (t->nbd) & ~LIBNBD_STRICT_ALIGN) == -1 ||
      nbd_set_uri_allow_local_file (t->nbd, true) == -1 ||
      nbd_connect_uri (t->nbd, uri) == -1) {
    fprintf (stderr, "random-io: connection %u: %s\n", t->id, nbd_get_error ());
    return -1;
  }
  t->can_fua = nbd_can_fua (t->nbd) == 1;
  t->can_flush = nbd_can_flush (t->nbd) == 1;
  t->can_trim = nbd_can_trim (t->nbd) == 1;
  t->can_zero = nbd_can_zero (t->nbd) == 1;
  t->can_fast_zero = nbd_can_fast_zero (t->nbd) == 1;
  t->buf = malloc (shape.max_len);
  if (t->buf == NULL) {
    perror ("random-io: malloc");
    return -1;
  }
  return 0;
}

static void
disconnect_thread (struct thread *t)
{
  if (t->nbd) {
    nbd_shutdown (t->nbd, 0);
    nbd_close (t->nbd);
  }
  free (t->buf);
}

/* Check the export's size and pick the request shape from it. */
static int
check_export (struct nbd_handle *nbd)
{
  int64_t size = nbd_get_size (nbd);
  int64_t pref = nbd_get_block_size (nbd, LIBNBD_SIZE_PREFERRED);

  if (size == -1) {
    fprintf (stderr, "random-io: %s\n", nbd_get_error ());
    return -1;
  }
  if (want_size && (uint64_t) size != want_size) {
    fprintf (stderr, "random-io: export size is %" PRId64 ", expected %" PRIu64
             "\n", size, want_size);
    return -1;
  }
  if (shape.chunk == 0)
    shape.chunk = pref > 1 ? pref / (shape.disks - 1) : 65536;
  if (nbd_can_multi_conn (nbd) != 1 && nr_threads > 1)
    fprintf (stderr, "random-io: warning: server does not advertise multi-conn\n");
  if (read_only == false && nbd_is_read_only (nbd) == 1) {
    fprintf (stderr, "random-io: export is read-only (use --read-only)\n");
    return -1;
  }
  want_size = size;
  return 0;
}

static int
setup_model (void)
{
  if (model_in) {
    if (model_load (&model, model_in) == -1)
      return -1;
    if (model.size != want_size && resized_ok) {
      printf ("random-io: the export has %" PRIu64 " bytes, %s %" PRIu64
              ": resized, nothing done\n", want_size, model_in, model.size);
      return 1;
    }
    if (model.size != want_size) {
      fprintf (stderr, "random-io: %s holds %" PRIu64 " bytes, export has %"
               PRIu64 "\n", model_in, model.size, want_size);
      return -1;
    }
    return 0;
  }
  return model_init (&model, want_size, !initial_unknown);
}

/* The final read: connection t->id reads blocks id, id + threads, ...
 * of FINAL_READ bytes and compares each under the lock.  A mismatch does
 * not stop it: every known byte is compared, so that the count of those
 * that differ (printed by verify-only) is whole.
 */
static void *
final_thread (void *arg)
{
  struct thread *t = arg;
  unsigned char *buf = malloc (FINAL_READ);
  uint64_t off, len, step = (uint64_t) nr_threads * FINAL_READ;
  struct model_diff d;

  if (buf == NULL) {
    perror ("random-io: malloc");
    failed = true;
    return NULL;
  }
  for (off = (uint64_t) t->id * FINAL_READ; off < model.size; off += step) {
    int r;

    len = model.size - off < FINAL_READ ? model.size - off : FINAL_READ;
    r = nbd_pread (t->nbd, buf, len, off, 0);
    pthread_mutex_lock (&lock);
    if (r == -1)
      report_nbd_error (t, nr_ops, OP_READ, off, len);
    else {
      final_known += model_count_known (&model, off, len);
      if (model_compare (&model, off, buf, len, !no_learn, &d)) {
        report_mismatch ("final read", t->id, off, len, buf, &d);
        final_differ += d.differ;
      }
    }
    pthread_mutex_unlock (&lock);
    if (r == -1)
      break;
  }
  free (buf);
  return NULL;
}

/* Read the whole export over every connection and compare. */
static int
final_check (void)
{
  unsigned i;

  for (i = 0; i < nr_threads; i++)
    if (pthread_create (&threads[i].tid, NULL, final_thread, &threads[i])) {
      perror ("random-io: pthread_create");
      failed = true;
      break;
    }
  while (i-- > 0)
    pthread_join (threads[i].tid, NULL);
  return failed ? -1 : 0;
}

static void
usage (FILE *fp, int status)
{
  fprintf (fp,
"usage: random-io URI SIZE|auto [options]\n"
"  SIZE           expected export size (fail if different); auto: any\n"
"  --seed N       PRNG seed (default: time; printed)\n"
"  --ops N        random requests over all connections (default 2000)\n"
"  --threads N    connections, one thread each (default 4, max %d)\n"
"  --chunk SIZE   array chunk; shapes request sizes (default: preferred\n"
"                 block size / (disks - 1))\n"
"  --disks N      array members (default 3)\n"
"  --old-disks N  mid-reshape from N members: --write-hole forgets the\n"
"                 stripes of both shapes\n"
"  --max-len SIZE largest request (default 4M, max 32M)\n"
"  --region OFF:LEN  confine requests to this array range\n"
"  --model-in FILE   start from this model (FILE and FILE.known)\n"
"  --resized-ok   an export whose size is no longer the model's (an array\n"
"                 grown meanwhile): say so, do nothing, exit 0\n"
"  --initial zero|unknown  start model without --model-in (default zero)\n"
"  --model-out FILE  save the final model (FILE and FILE.known)\n"
"  --no-trim --no-zero --no-flush --no-fua   leave out those requests\n"
"  --read-only    reads only (random reads and the final read)\n"
"  --verify-only  no random requests: read the export and compare\n"
"  --no-learn     bytes of unknown content stay unknown when read\n"
"  --no-final     skip the final read of the whole export\n"
"  --crash-ok     the server may die: requests in flight then make their\n"
"                 range unknown, and the model is saved without a final read\n"
"  --write-hole   with --crash-ok, on a degraded array: the whole stripes\n"
"                 of requests in flight become unknown (the write hole)\n"
"  --power-loss   with --crash-ok, the server's death loses what was not\n"
"                 flushed: writes, zeroes and trims not yet durable\n"
"                 become unknown too\n"
"                 (the run starts with a flush)\n"
"  -v, --verbose  print every request\n", MAX_THREADS);
  exit (status);
}

static uint64_t
size_arg (const char *opt, const char *s)
{
  uint64_t v;

  if (parse_size (s, &v) == -1) {
    fprintf (stderr, "random-io: %s: bad size '%s'\n", opt, s);
    exit (2);
  }
  return v;
}

static void
parse_region (const char *s)
{
  char *copy = strdup (s), *colon = copy ? strchr (copy, ':') : NULL;

  if (colon == NULL) {
    fprintf (stderr, "random-io: --region: expected OFF:LEN, got '%s'\n", s);
    exit (2);
  }
  *colon = '\0';
  shape.region_off = size_arg ("--region", copy);
  shape.region_len = size_arg ("--region", colon + 1);
  free (copy);
}

enum { O_SEED = 256, O_OPS, O_THREADS, O_CHUNK, O_DISKS, O_MAX_LEN, O_REGION,
       O_MODEL_IN, O_INITIAL, O_MODEL_OUT, O_NO_TRIM, O_NO_ZERO, O_NO_FLUSH,
       O_NO_FUA, O_READ_ONLY, O_VERIFY_ONLY, O_NO_LEARN, O_NO_FINAL,
       O_CRASH_OK, O_WRITE_HOLE, O_POWER_LOSS, O_OLD_DISKS, O_RESIZED_OK };

static const struct option long_options[] = {
  { "seed", 1, NULL, O_SEED }, { "ops", 1, NULL, O_OPS },
  { "threads", 1, NULL, O_THREADS }, { "chunk", 1, NULL, O_CHUNK },
  { "disks", 1, NULL, O_DISKS }, { "max-len", 1, NULL, O_MAX_LEN },
  { "old-disks", 1, NULL, O_OLD_DISKS },
  { "resized-ok", 0, NULL, O_RESIZED_OK },
  { "region", 1, NULL, O_REGION }, { "model-in", 1, NULL, O_MODEL_IN },
  { "initial", 1, NULL, O_INITIAL }, { "model-out", 1, NULL, O_MODEL_OUT },
  { "no-trim", 0, NULL, O_NO_TRIM }, { "no-zero", 0, NULL, O_NO_ZERO },
  { "no-flush", 0, NULL, O_NO_FLUSH }, { "no-fua", 0, NULL, O_NO_FUA },
  { "read-only", 0, NULL, O_READ_ONLY },
  { "verify-only", 0, NULL, O_VERIFY_ONLY },
  { "no-learn", 0, NULL, O_NO_LEARN }, { "no-final", 0, NULL, O_NO_FINAL },
  { "crash-ok", 0, NULL, O_CRASH_OK },
  { "write-hole", 0, NULL, O_WRITE_HOLE },
  { "power-loss", 0, NULL, O_POWER_LOSS },
  { "verbose", 0, NULL, 'v' }, { "help", 0, NULL, 'h' },
  { NULL, 0, NULL, 0 },
};

static void
parse_option (int c, const char *arg)
{
  switch (c) {
  case O_SEED: seed = strtoull (arg, NULL, 0); break;
  case O_OPS: nr_ops = size_arg ("--ops", arg); break;
  case O_THREADS: nr_threads = size_arg ("--threads", arg); break;
  case O_CHUNK: shape.chunk = size_arg ("--chunk", arg); break;
  case O_DISKS: shape.disks = size_arg ("--disks", arg); break;
  case O_OLD_DISKS: old_disks = size_arg ("--old-disks", arg); break;
  case O_RESIZED_OK: resized_ok = true; break;
  case O_MAX_LEN: shape.max_len = size_arg ("--max-len", arg); break;
  case O_REGION: parse_region (arg); break;
  case O_MODEL_IN: model_in = arg; break;
  case O_INITIAL: initial_unknown = strcmp (arg, "unknown") == 0; break;
  case O_MODEL_OUT: model_out = arg; break;
  case O_NO_TRIM: no_trim = true; break;
  case O_NO_ZERO: no_zero = true; break;
  case O_NO_FLUSH: no_flush = true; break;
  case O_NO_FUA: no_fua = true; break;
  case O_READ_ONLY: read_only = true; break;
  case O_VERIFY_ONLY: read_only = true; nr_ops = 0; break;
  case O_NO_LEARN: no_learn = true; break;
  case O_NO_FINAL: no_final = true; break;
  case O_CRASH_OK: crash_ok = true; break;
  case O_WRITE_HOLE: write_hole = true; break;
  case O_POWER_LOSS: power_loss = true; break;
  case 'v': verbose = true; break;
  case 'h': usage (stdout, 0); break;
  default: usage (stderr, 2);
  }
}

static void
parse_args (int argc, char *argv[])
{
  int c;

  seed = (uint64_t) time (NULL) ^ ((uint64_t) getpid () << 32);
  while ((c = getopt_long (argc, argv, "vh", long_options, NULL)) != -1)
    parse_option (c, optarg);
  if (argc - optind != 2)
    usage (stderr, 2);
  uri = argv[optind];
  if (strcmp (argv[optind + 1], "auto") != 0)
    want_size = size_arg ("SIZE", argv[optind + 1]);
  if (power_loss && !crash_ok) {
    fprintf (stderr, "random-io: --power-loss needs --crash-ok\n");
    exit (2);
  }
  if (nr_threads < 1 || nr_threads > MAX_THREADS || shape.disks < 3 ||
      (old_disks != 0 && old_disks < 3) ||
      shape.max_len < 1 || shape.max_len > MAX_LEN ||
      (shape.chunk & (shape.chunk - 1)) != 0) {
    fprintf (stderr, "random-io: --threads, --disks, --old-disks, --max-len "
             "or --chunk out of range\n");
    exit (2);
  }
}

/* Fix the region once the export size is known. */
static int
setup_region (void)
{
  if (shape.region_len == 0 && shape.region_off == 0)
    shape.region_len = model.size;
  if (shape.region_len == 0 ||
      shape.region_off + shape.region_len > model.size) {
    fprintf (stderr, "random-io: --region outside the export\n");
    return -1;
  }
  return 0;
}

static int
run_threads (void)
{
  unsigned i;

  for (i = 0; i < nr_threads; i++) {
    threads[i].rng.s = (seed * 0x9E3779B97F4A7C15u + i * 0xBF58476D1CE4E5B9u) | 1;
    if (pthread_create (&threads[i].tid, NULL, thread_main, &threads[i])) {
      perror ("random-io: pthread_create");
      return -1;
    }
  }
  for (i = 0; i < nr_threads; i++)
    pthread_join (threads[i].tid, NULL);
  return failed ? -1 : 0;
}

/* --verify-only: what the final read compared, for scripts (soak.sh). */
static void
print_verified (void)
{
  printf ("random-io: verified %" PRIu64 " known bytes, %" PRIu64
          " differ\n", final_known, final_differ);
  fflush (stdout);
}

static void
print_summary (void)
{
  printf ("random-io: seed %" PRIu64 ", %u connections, %zu ops (read %u, "
          "write %u, zero %u, trim %u, flush %u), %" PRIu64 " of %" PRIu64
          " bytes known: OK\n", seed, nr_threads, oplog_len, op_count[OP_READ],
          op_count[OP_WRITE], op_count[OP_ZERO], op_count[OP_TRIM],
          op_count[OP_FLUSH], model_count_known (&model, 0, model.size),
          model.size);
}

int
main (int argc, char *argv[])
{
  unsigned i;
  int r = 1, setup;

  parse_args (argc, argv);
  if (verbose)
    fprintf (stderr, "random-io: seed %" PRIu64 "\n", seed);
  for (i = 0; i < nr_threads; i++) {
    threads[i].id = i;
    if (connect_thread (&threads[i]) == -1)
      goto out;
  }
  if (check_export (threads[0].nbd) == -1 || (setup = setup_model ()) == -1 ||
      (setup == 0 && setup_region () == -1))
    goto out;
  if (setup == 1) {             /* --resized-ok, and it was */
    r = 0;
    goto out;
  }
  if (power_loss && nbd_flush (threads[0].nbd, 0) == -1) {
    fprintf (stderr, "random-io: the first flush: %s\n", nbd_get_error ());
    goto out;
  }
  if (crash_ok) {               /* tells a test when to start the kill timer */
    printf ("random-io: running\n");
    fflush (stdout);
  }
  if (run_threads () == -1)
    goto out;
  if (disconnected && power_loss) {
    printf ("random-io: the power went after %zu requests; %zu writes not "
            "flushed and requests in flight then are unknown in the model\n",
            oplog_len, npending);
    forget_pending ();
  }
  if (disconnected)
    printf ("random-io: the server went away after %zu requests; requests "
            "in flight then are unknown in the model\n", oplog_len);
  else if (!no_final && final_check () == -1) {
    if (nr_ops == 0)
      print_verified ();
    goto out;
  }
  if (nr_ops == 0 && !no_final)
    print_verified ();
  if (model_out && model_save (&model, model_out) == -1)
    goto out;
  print_summary ();
  r = 0;
 out:
  if (r)
    fprintf (stderr, "random-io: FAILED (seed %" PRIu64 ")\n", seed);
  for (i = 0; i < nr_threads; i++)
    disconnect_thread (&threads[i]);
  model_free (&model);
  free (pending);
  return r;
}
