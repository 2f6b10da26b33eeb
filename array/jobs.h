/* array/jobs.h -- the jobs room: the array's one job at a time (md's
 * sync_action), its state, and the calls that start, step and end it.
 *
 *   job.c      the job's life: begin, end, status, the background thread
 *   runner*.c  a job's long-lived runner (runner.h), scrub.c its parts
 *   pacing.c   how fast it goes (pacing.h)
 *   rebuild.c  a member put into a slot and rebuilt (array_rebuild_start)
 *   replace*.c a member copied to its replacement (replace.h)
 *   grow.c     the array grown by members (grow.h)
 *
 * Who calls what: array.c makes and ends the job state (job_init,
 * job_destroy); rebuild.c begins and preempts jobs (job_begin,
 * job_preempt) and ends a rebuild (rebuild_done, from job.c); fail.c
 * stops a rebuild whose member failed (job_abort_rebuild); the runner and
 * scrub.c ask which slot a rebuild writes (job_slot); exec.c counts the
 * clients for the pacing (struct job_clients).  Everything else reads
 * the job through array_job_status (array.h).
 */
#ifndef ARRAY_JOBS_H
#define ARRAY_JOBS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "array/array.h"
#include "raid/jobplan.h"
#include "io/member.h"
#include "io/signature.h"
#include "raid/pace.h"

struct array;

/* What the running job found (md's mismatch_cnt, in sectors; wrong
 * stripes; the first ARRAY_FOUND_MAX of them), and what the last one to
 * end did.  Under job.lock.
 */
struct job_tally {
  _Atomic uint64_t mismatches;
  uint64_t stripes_bad;
  /* Stripes a scrub skipped, or a rebuild could not compute all of, for
   * the bad blocks their rows list (md's rule: a device bad in a stripe
   * is failed for that stripe).
   */
  _Atomic uint64_t bb_stripes;
  /* Sectors a scrub rewrote from the others where one member listed
   * them, and cleared (bb_scrub_rewrite).
   */
  _Atomic uint64_t bb_rewritten;
  /* Stripes a read-only check skipped for read errors it may not
   * correct (scrub.c).
   */
  _Atomic uint64_t unread_stripes;
  unsigned nfound;
  struct array_mismatch found[ARRAY_FOUND_MAX];
};
struct job_last {
  enum r5_job kind;
  int result;
  uint64_t mismatches, stripes_bad, bb_stripes, unread_stripes;
  uint64_t bb_rewritten;
  uint64_t ended;             /* jobs ended since open */
  char why[ARRAY_ERR_LEN];    /* why it stopped ("" if it did not): the
                               * step's reason, naming member and offset */
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

/* How a job of kind that ended with result (0 or -errno) ended, in
 * words: what -ECANCELED and -ENODEV mean for it (a stop the job's own
 * member or another job caused, a member out of service), else
 * strerror's.  For the log and status (status.c).
 */
const char *job_result_text (enum r5_job kind, int result)
  __attribute__((returns_nonnull));

/* With job.lock held: start kind at stripe 0 (a rebuild's slot is the
 * out slot, job_slot); end the running job as cancelled.
 */
void job_begin (struct array *a, enum r5_job kind)
  __attribute__((nonnull));
void job_preempt (struct array *a) __attribute__((nonnull));

/* A disk joining the array (a rebuild's new member, a grow's new ones,
 * rebuild.c): path opened as a's members are (O_DIRECT or not, the
 * member timeout), at least need bytes, none of a's members but slot
 * except's (-1: none), locked, holding nothing but a's own superblock
 * unless force -- then what it holds is in *sigs, to be wiped (guard.h;
 * override says how the refusal is overridden: "--force" if NULL).
 * Returns 0, or -errno with err naming path; m may be open on error
 * (the caller closes it).
 */
struct join_new {
  const char *path;
  uint64_t need;
  int except;
  bool force;
  const char *override;
};
int join_open_new (struct array *a, const struct join_new *jn,
                   struct io_member *m, struct io_sig_list *sigs,
                   struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* job.lock held: m (open, checked; taken from *m) is rebuilt into the
 * out slot, as a new member (rebuild.c; replace.c's replacement when the
 * member it replaced failed).  0 or -errno.
 */
int rebuild_onto (struct array *a, unsigned slot, struct io_member *m,
                  struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* A new member took slot: what was kept of the member left out of it at
 * assembly (its path for a re-add, one event behind) no longer holds.
 * job.lock held.
 */
void rebuild_slot_taken (struct array *a, unsigned slot)
  __attribute__((nonnull));

/* The member just put into slot could not be recorded or readied there
 * (its superblock write or a write to it failed): the slot is out of
 * service again (faulty), and the superblocks say so.  job.lock held.
 */
void rebuild_join_failed (struct array *a, unsigned slot)
  __attribute__((nonnull));

/* The rebuild reached the end (rebuild.c); job.lock held. */
int rebuild_done (struct array *a, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

#endif /* ARRAY_JOBS_H */
