/* array/internal.h -- the array's state, shared by the files of array/ only. */
#ifndef ARRAY_INTERNAL_H
#define ARRAY_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "array/array.h"
#include "array/health.h"
#include "array/integrity.h"
#include "array/meta.h"
#include "array/ppl.h"
#include "array/stripe_lock.h"
#include "io/member.h"
#include "io/signature.h"
#include "io/batch.h"
#include "io/view.h"
#include "array/scratch_pool.h"
#include "raid/pace.h"

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

struct array_counters {
  _Atomic uint64_t reads, writes, zeroes, trims, flushes;
  _Atomic uint64_t segs[R5_SEG_KINDS];
  _Atomic uint64_t member_failures;
};

/* md's default sync speed limits, KiB/s per member. */
#define ARRAY_SYNC_SPEED_MIN 1000
#define ARRAY_SYNC_SPEED_MAX 200000

/* What the running job found (md's mismatch_cnt, in sectors; wrong
 * stripes; the first ARRAY_FOUND_MAX of them), and what the last one to
 * end did.  Under job.lock.
 */
struct job_tally {
  _Atomic uint64_t mismatches;
  uint64_t stripes_bad;
  unsigned nfound;
  struct array_mismatch found[ARRAY_FOUND_MAX];
};
struct job_last {
  enum r5_job kind;
  int result;
  uint64_t mismatches, stripes_bad;
  uint64_t ended;             /* jobs ended since open */
};

/* The job's rate (pacing.c): md's limits, KiB/s per member; the speed
 * measured over a window; the token bucket.  Limits change any time;
 * the rest is the job thread's.
 */
struct job_rate {
  _Atomic uint64_t min, max;
  _Atomic uint64_t kib;           /* measured */
  uint64_t mark_ns, mark_cursor;  /* the window's start */
  uint64_t next_ns;               /* the next step allowed */
  _Atomic uint64_t throttled_ns;  /* waited for the limit, since open */
};

/* The clients as the pacing sees them (exec.c counts): requests running,
 * when the last ended, this window's latencies.
 */
struct job_clients {
  _Atomic uint64_t inflight;
  _Atomic uint64_t last_ns;
  _Atomic uint64_t lat[R5_LAT_BUCKETS];
};

/* The latency-target mode (pacing.c, raid/pace.h): its target (0: off),
 * the pacer (job thread only) and what it last found, for status.
 */
struct job_pacer {
  _Atomic uint64_t target_us;
  struct r5_pace pace;
  uint64_t window_ns;
  _Atomic uint64_t paced_kib, p99_us, cuts;
};

struct job_runner;

/* The array's job (job.c): its kind, where it is, what it found, how it
 * is paced, and its runner (runner.h), made when the job's first step
 * runs and kept until it ends.  kind and cursor change only under
 * job.lock; cursor also only while the runner holds the stripe locks of
 * the stripes it finished, so a request that holds a stripe's lock sees
 * whether that stripe is done.
 */
struct job {
  pthread_mutex_t lock;       /* guards changes of kind, tally, last */
  bool lock_made;
  _Atomic int kind;           /* enum r5_job */
  _Atomic bool paused;
  _Atomic bool abort;         /* stop the job at the next step */
  _Atomic uint64_t cursor;    /* next stripe */
  struct job_tally tally;
  struct job_last last;
  struct job_rate rate;
  struct job_clients clients;
  struct job_pacer pacer;
  uint64_t checkpoint_ns;     /* last progress written to superblocks */
  _Atomic uint64_t checked, rebuilt;  /* stripes, since open */
  struct job_runner *runner;  /* the job thread's (or array_job_run's) */
  pthread_t thread;
  bool started;
  _Atomic bool stop;
};

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

/* A faulty member that may come back by itself (comeback.c): what its
 * last try found.  Under job.lock.
 */
enum comeback_state {
  COMEBACK_NONE,              /* nothing to bring back */
  COMEBACK_WAITING,           /* it does not answer yet: tried again */
  COMEBACK_REFUSED,           /* it answers, its re-add was refused */
  COMEBACK_HELD,              /* failed by hand: left out until told */
  COMEBACK_READDED,           /* re-added by a try, resyncing */
};
struct comeback {
  enum comeback_state state;
  int slot;
  uint32_t gen;               /* health_gen of the member that failed */
  unsigned tries;
  uint64_t delay_ns, next_ns; /* the backoff, and when the next try is */
  char why[ARRAY_ERR_LEN];    /* the last try's error, or the refusal */
};

/* Why the out slot's member was taken out (fail.c), which decides
 * whether it may come back by itself (comeback.c): only one whose host or
 * link was lost.  An I/O error the member reported says something about
 * its storage: it stays out until a person acts (re-add or rebuild).
 */
enum fault_kind {
  FAULT_NONE,                 /* no record for the slot's member */
  FAULT_IO_ERROR,             /* it answered with an error */
  FAULT_LINK_LOST,            /* it could not be reached (io_op link_lost) */
  FAULT_BY_HAND,              /* failed by hand (raid5ctl fail) */
};
/* The last member taken out, under fault_lock. */
struct fault {
  enum fault_kind kind;
  int slot;
  uint32_t gen;               /* health_gen of the member that failed */
  char why[ARRAY_ERR_LEN];    /* "read at 4096: Input/output error" */
};

/* What keepalive.c knows of each member: the batches it had seen, and
 * since when it has seen no new one.  The job's thread only.
 */
struct keepalive {
  uint64_t batches[R5_MAX_MEMBERS];
  uint64_t quiet_ns[R5_MAX_MEMBERS];
};

struct array {
  struct r5_geom geom;
  struct io_member members[R5_MAX_MEMBERS];  /* read-only after open */
  struct health health;       /* who is in service (health.h) */
  /* Members left out at assembly that could return to the out slot (a
   * re-add without a path takes this one), and whether the bitmap covers
   * what they missed.  Set at assembly, under job.lock after.
   */
  char *left_out[R5_MAX_MEMBERS];
  bool left_re_addable[R5_MAX_MEMBERS];
  bool one_behind[R5_MAX_MEMBERS];  /* taken one event behind at start */
  struct stripe_locks locks;
  struct scratch_pool pool;   /* requests' scratch */
  struct scratch_pool small;  /* ... of requests needing little */
  void *zero;                 /* geom.chunk read-only zero bytes (mmap) */
  array_log_fn log;
  pthread_key_t worker_key;   /* -> struct worker, one per thread */
  bool key_made, locks_made, pool_made, small_made;
  struct array_counters count;
  struct meta meta;           /* md superblocks, if the members have them */
  struct job job;
  struct io_member spare;     /* hot spare (spare=PATH), fd -1 if none */
  bool spare_force;           /* spare-force=true: overwrite what it holds */
  struct io_sig_list spare_sigs;  /* ... and that is what it held */
  struct epochs epochs;
  bool manual_readd;          /* array_config's: no comeback */
  struct comeback comeback;
  /* Taking a member out and recording why, one step for whoever reads
   * both (comeback, status).  Taken after job.lock, never before it.
   */
  pthread_mutex_t fault_lock;
  struct fault fault;
  struct keepalive keepalive;
  struct ppl ppl;             /* the partial parity log, if kept */
  struct integrity integrity; /* the checksums, if kept */
  /* Serialises writes padded to whole sectors (a log) or units (a
   * record), so that two sharing a sector or unit keep each other's
   * bytes (exec.c).
   */
  pthread_mutex_t pad_lock;
};

/* From the background thread, now and then: watch the faulty member if
 * it may come back by itself, and when its next try is due, try to
 * re-add it (comeback.c).  Takes job.lock; a try waits up to the member
 * timeout, without it.
 */
void comeback_tick (struct array *a) __attribute__((nonnull));

/* Probe the hot spare for what it holds besides this array's own
 * superblock (array/guard.h), at start and again just before a rebuild
 * takes it: what it holds then is in spare_sigs, to be wiped, with
 * spare_force; without, -EEXIST and err says what.  At setup or with
 * job.lock held.
 */
int spare_guard (struct array *a, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Would slot's member, taken out for a lost link, be tried again by
 * itself: re-add=auto, superblocks to decide by, a member of a kind that
 * can come back (io_member_can_return), and not one that a rebuild onto
 * another member left out?
 */
bool comeback_applies (const struct array *a, unsigned slot)
  __attribute__((nonnull));

/* The member of slot (the gen-th, health_gen) was failed by hand (md's
 * --fail): it is not tried again by itself.
 */
void comeback_hold (struct array *a, unsigned slot, uint32_t gen)
  __attribute__((nonnull));

/* Why slot's member is out of service: the kind of the last failure
 * recorded for the member now in the slot (FAULT_NONE if none is, or the
 * slot is not faulty), its description in why (ARRAY_ERR_LEN bytes, or
 * NULL).  Takes fault_lock.
 */
enum fault_kind fault_of (struct array *a, unsigned slot, char *why)
  __attribute__((nonnull (1)));

/* From the background thread, now and then: read each member in service
 * that has been idle for its probe interval (io_member_idle_probe_ms),
 * and fail it as any I/O error would if it does not answer
 * (keepalive.c).  A read waits up to the member timeout.
 */
void keepalive_tick (struct array *a) __attribute__((nonnull));

/* A copy of the comeback state, for status. */
void comeback_get (struct array *a, struct comeback *out)
  __attribute__((nonnull));

/* Set up the job state; a resync if the metadata asks for one, a rebuild
 * if a member was partly rebuilt (after meta_init).  Returns 0 or -errno.
 */
int job_init (struct array *a) __attribute__((nonnull));
void job_destroy (struct array *a) __attribute__((nonnull));

/* The rebuilding member failed: stop the rebuild (fail.c). */
void job_abort_rebuild (struct array *a) __attribute__((nonnull));

/* The member a rebuild writes: the out slot (health.h; it stays the out
 * slot until the rebuild is done), -1 while no rebuild runs.
 */
int job_slot (const struct array *a) __attribute__((nonnull));

/* With job.lock held: start kind at stripe 0 (a rebuild's slot is the
 * out slot, job_slot); end the running job as cancelled.
 */
void job_begin (struct array *a, enum r5_job kind)
  __attribute__((nonnull));
void job_preempt (struct array *a) __attribute__((nonnull));

/* The rebuild reached the end (rebuild.c); job.lock held. */
int rebuild_done (struct array *a, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Per-thread reusable memory for executing requests. */
struct worker {
  struct r5_plan plan;
  void *scratch;              /* from a pool while a request runs */
  struct scratch_pool *scratch_from;  /* which */
  struct io_op *ops;
  size_t ops_cap;
};

/* Monotonic time in nanoseconds. */
static inline uint64_t
array_now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000 + (uint64_t) ts.tv_nsec;
}

/* Sleep ns nanoseconds (less if a signal comes). */
static inline void
array_sleep_ns (uint64_t ns)
{
  struct timespec ts = { (time_t) (ns / 1000000000), (long) (ns % 1000000000) };

  nanosleep (&ts, NULL);
}

/* Format one line into err (printf-style). */
void array_set_err (struct array_err *err, const char *fmt, ...)
  __attribute__((format (printf, 2, 3)));

/* Report through the log hook, if any. */
void array_log (const struct array *a, enum array_log_level level,
                const char *fmt, ...)
  __attribute__((format (printf, 3, 4)));

/* After io_run() failed with r on ops: take the member it blames out of
 * service (fail.c); *gen (if not NULL) says which member of its slot it
 * was (health_gen).  Returns 1 if this call took it out, 0 if it already
 * was, or -errno with err set: nothing to blame (the batch could not
 * run), or the array has failed.  The superblocks are not touched.
 */
int array_take_out (struct array *a, const struct io_op *ops, size_t n,
                    int r, uint32_t *gen, struct array_err *err)
  __attribute__((nonnull (1, 2, 6), warn_unused_result));

/* array_take_out(), then record the failure in the superblocks.  Returns
 * 0 if the array goes on degraded and the work may be redone, else -errno.
 */
int array_io_failed (struct array *a, const struct io_op *ops, size_t n,
                     int r, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Fail the whole array; returns -EIO with err = "array has failed: WHY WHAT". */
int array_mark_failed (struct array *a, struct array_err *err,
                       const char *why, const char *what)
  __attribute__((nonnull));

/* Worker of the calling thread, created on first use; NULL if out of
 * memory.
 */
struct worker *array_worker (struct array *a);
void array_worker_free (void *w);

#endif /* ARRAY_INTERNAL_H */
