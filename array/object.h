/* array/object.h -- the live array object, struct array: what each room
 * keeps, put together (state.h, jobs.h, requests.h, the write path's
 * features: meta.h, ppl.h, integrity.h), and the few helpers every room
 * uses (time, errors, the log).  Included by array/'s files only; the
 * rooms' calls are in their own headers, which say who may call what.
 */
#ifndef ARRAY_OBJECT_H
#define ARRAY_OBJECT_H

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

#include "array/array.h"
#include "array/badblocks.h"
#include "array/grow.h"
#include "array/health.h"
#include "array/integrity.h"
#include "array/jobs.h"
#include "array/meta.h"
#include "array/ppl.h"
#include "array/replace.h"
#include "array/requests.h"
#include "array/state.h"
#include "array/stripe_lock.h"
#include "io/member.h"
#include "io/signature.h"
#include "io/batch.h"
#include "io/view.h"

struct array_counters {
  _Atomic uint64_t reads, writes, zeroes, trims, flushes;
  _Atomic uint64_t segs[R5_SEG_KINDS];
  _Atomic uint64_t member_failures;
  _Atomic uint64_t corrected[R5_MAX_MEMBERS];   /* sectors, read errors */
  _Atomic uint64_t bb_lost;   /* requests failed: a row bad on two members */
};

/* a->members: the slots, then a slot's replacement (replace.h). */
#define ARRAY_MEMBERS (ARRAY_REPLACEMENT + 1)

struct array {
  struct r5_geom geom;
  /* Changed only with the shape lock held exclusively (a grow adds, a
   * replace swaps), or the requests that may use the entry waited out
   * (epoch_quiesce: a rebuild, a replace's start and end).
   */
  struct io_member members[ARRAY_MEMBERS];
  struct health health;       /* who is in service (health.h) */
  /* Members left out at assembly that could return to the out slot (a
   * re-add without a path takes this one), and whether the bitmap covers
   * what they missed.  Set at assembly, under job.lock after.
   */
  char *left_out[R5_MAX_MEMBERS];
  bool left_re_addable[R5_MAX_MEMBERS];
  bool one_behind[R5_MAX_MEMBERS];  /* taken one event behind at start */
  struct array_bb bb;         /* each slot's md bad-block table
                               * (badblocks.h) */
  struct stripe_locks locks;
  struct scratch_pool pool;   /* requests' scratch */
  struct scratch_pool small;  /* ... of requests needing little */
  void *zero;                 /* geom.chunk read-only zero bytes (mmap) */
  array_log_fn log;
  pthread_key_t worker_key;   /* -> struct worker, one per thread */
  bool key_made, locks_made, pool_made, small_made;
  struct array_counters count;
  /* Read errors of each member since its last good read (heal.c). */
  _Atomic unsigned read_errors[R5_MAX_MEMBERS];
  struct meta meta;           /* md superblocks, if the members have them */
  struct job job;
  struct grow grow;           /* the reshape, while one is under way */
  struct replace replace;     /* a hot replace, while one is under way */
  struct io_member spare;     /* hot spare (spare=PATH), fd -1 if none */
  bool spare_force;           /* spare-force=true: overwrite what it holds */
  struct io_sig_list spare_sigs;  /* ... and that is what it held */
  struct epochs epochs;
  bool manual_readd;          /* array_config's: no comeback */
  bool read_only;             /* array_config's: nothing written */
  unsigned member_timeout_ms; /* array_config's, for members opened later */
  struct io_tls tls;          /* array_config's, for members opened later */
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
  /* The array's shape (geom, members, grow, the requests' pools) changes
   * only under this held exclusively (a grow starting); every request
   * holds it shared, taken at array_read/write/zero/trim/flush.  It
   * prefers writers: a grow is not starved by a steady load.
   */
  pthread_rwlock_t shape_lock;
  bool shape_lock_made;
};

/* The stripe (row of chunks) holding member offset off, which is at or
 * past the data offset: the same on every member.
 */
static inline uint64_t
array_member_stripe (const struct array *a, uint64_t off)
{
  return (off - a->geom.data_offset) / a->geom.chunk;
}

/* The bytes of each member the array uses: to its data's end, in every
 * shape it is in (a grow's old one too).  A member file shorter than
 * this lost bytes the array needs (io_member_shrunk).
 */
static inline uint64_t
array_member_need (const struct array *a)
{
  uint64_t need = a->geom.data_offset + a->geom.member_data;
  uint64_t old = a->grow.r.from.data_offset + a->grow.r.from.member_data;

  return a->grow.active && old > need ? old : need;
}

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

/* Tests crash the process at a named point (RAID5_TEST_CRASH=POINT or
 * POINT@K, the K-th time it is passed; 1 by default): it kills itself
 * there with SIGKILL, as a crash would.  A no-op otherwise.
 */
void array_test_crash (const char *point) __attribute__((nonnull));

/* Format one line into err (printf-style). */
void array_set_err (struct array_err *err, const char *fmt, ...)
  __attribute__((format (printf, 2, 3)));

/* 0 if a may be written to, else -EROFS with err saying that what
 * (a job's or command's name) writes and the array is read-only.
 */
int array_writable (const struct array *a, const char *what,
                    struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Report through the log hook, if any. */
void array_log (const struct array *a, enum array_log_level level,
                const char *fmt, ...)
  __attribute__((format (printf, 3, 4)));

#endif /* ARRAY_OBJECT_H */
