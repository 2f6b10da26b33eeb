/* array/internal.h -- the array's state, shared by the files of array/ only. */
#ifndef ARRAY_INTERNAL_H
#define ARRAY_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "array/array.h"
#include "array/stripe_lock.h"
#include "io/member.h"
#include "io/uring.h"

/* Scratch bytes one batch of stripes may use (at least one stripe's worth
 * is always allowed); bounds per-thread memory.
 */
#define ARRAY_SCRATCH_BUDGET (4u << 20)

struct array_counters {
  _Atomic uint64_t reads, writes, zeroes, trims, flushes;
  _Atomic uint64_t segs[R5_SEG_KINDS];
  _Atomic uint64_t member_failures;
};

struct array {
  struct r5_geom geom;
  struct io_member members[R5_MAX_MEMBERS];  /* read-only after open */
  _Atomic enum member_state state[R5_MAX_MEMBERS];
  /* The member out of service (missing or faulty), or -1.  Changes once,
   * from -1, by compare-and-swap; a second loss sets failed instead.
   */
  _Atomic int out;
  _Atomic bool failed;
  struct stripe_locks locks;
  void *zero;                 /* geom.chunk read-only zero bytes (mmap) */
  array_log_fn log;
  pthread_key_t worker_key;   /* -> struct worker, one per thread */
  bool key_made, locks_made;
  struct array_counters count;
};

/* Per-thread reusable memory for executing requests. */
struct worker {
  struct r5_plan plan;
  void *scratch;              /* 4096-aligned, scratch_cap bytes */
  size_t scratch_cap;
  struct io_op *ops;
  size_t ops_cap;
};

/* Format one line into err (printf-style). */
void array_set_err (struct array_err *err, const char *fmt, ...)
  __attribute__((format (printf, 2, 3)));

/* Report through the log hook, if any. */
void array_log (const struct array *a, enum array_log_level level,
                const char *fmt, ...)
  __attribute__((format (printf, 3, 4)));

/* Worker of the calling thread, created on first use; NULL if out of
 * memory.
 */
struct worker *array_worker (struct array *a);
void array_worker_free (void *w);

#endif /* ARRAY_INTERNAL_H */
