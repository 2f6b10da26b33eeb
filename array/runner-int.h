/* array/runner-int.h -- a job's runner inside (runner.h): what it owns
 * for the job's life, and the calls between runner.c and runner-map.c.
 * Shared by those two files only.
 */
#ifndef ARRAY_RUNNER_INT_H
#define ARRAY_RUNNER_INT_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "array/jobs.h"
#include "array/object.h"
#include "array/pacing.h"
#include "array/runplan.h"
#include "array/scrub.h"
#include "io/view.h"

/* The part threads: each waits for the next step (gen moves on), runs
 * its part if the step has one for it, and says so.  Part 0 is the
 * stepping thread's own.
 */
struct crew {
  pthread_mutex_t lock;
  pthread_cond_t go, done;
  uint64_t gen;               /* steps posted */
  unsigned parts;             /* this step's parts */
  unsigned running;           /* threads still in this step */
  bool quit;
  unsigned nthreads;
  pthread_t tid[JOB_MAX_PARTS];
  struct crew_seat {
    struct job_runner *r;
    unsigned index;
  } who[JOB_MAX_PARTS];
};

struct job_runner {
  struct array *a;
  enum r5_job kind;
  uint64_t slice;             /* slice_bytes(); 0 on disks */
  unsigned room;              /* stripes a step covers, at most */
  char *buf;                  /* the batch's columns, then parts' scratch */
  struct io_op *ops;          /* room * (members + 1) per part */
  struct plan_cmp_out *cmp;   /* room per part */
  struct bad_stripe *bad;     /* room per part */
  struct part parts[JOB_MAX_PARTS];
  struct io_view views[R5_MAX_MEMBERS];
  char *base[R5_MAX_MEMBERS];
  struct plan_views mapped;
  bool map;                   /* members in memory read in place */
  _Atomic unsigned next;      /* members in memory: the next unit */
  struct crew crew;
  bool crew_made;
};

/* runner.c: the bytes of a step's buffer before the parts' scratch (the
 * batch's columns).
 */
size_t runner_cols_bytes (const struct array *a) __attribute__((nonnull));

/* runner-map.c: r->base[m], the bytes of stripes [first, first+n) of
 * member m mapped through the runner's views, or NULL where they are
 * read or written instead; r->mapped says so to the parts.
 */
void runner_view_members (struct job_runner *r, uint64_t first, unsigned n)
  __attribute__((nonnull));

/* runner-map.c: read members in memory in place?  As RAID5_MEMBER_ACCESS
 * says, else as measured now.
 */
bool runner_access_mapped (struct job_runner *r) __attribute__((nonnull));

#endif /* ARRAY_RUNNER_INT_H */
