/* tools/offline.h -- what the offline jobs (raid5ctl rebuild, re-add,
 * replace, grow) share: the array's log held back until every check has
 * passed, the pace of --max-speed, and running the job with progress.  Single-threaded: the job runs in the
 * calling thread (array_job_run).
 */
#ifndef TOOLS_OFFLINE_H
#define TOOLS_OFFLINE_H

#include <stdbool.h>
#include <stdint.h>

#include "array/array.h"
#include "raid/geom.h"
#include "raid/jobplan.h"
#include "tools/disk.h"
#include "tools/progress.h"

/* What every offline job takes besides its own options: --force,
 * --max-speed, --direct, --buffered, and the array's members in order
 * ("missing" for an empty slot).
 */
struct offline_opts {
  int slot;                   /* --slot, where the job takes one; -1 until
                               * given (the caller's to set first) */
  bool force;
  enum disk_cache_mode cache; /* --direct, --buffered, or by the members */
  uint64_t max_kib;           /* per member and second; 0: no limit */
  unsigned n;
  const char *disks[R5_MAX_MEMBERS + 1]; /* + a replacement among them */
};

/* Their entries of a getopt_long table (--slot: the caller's own). */
#define OFFLINE_LONGOPTS                                  \
  { "force", no_argument, NULL, 'f' },                    \
  { "max-speed", required_argument, NULL, 'x' },          \
  { "direct", no_argument, NULL, 'd' },                   \
  { "buffered", no_argument, NULL, 'B' }

/* Take option c (arg: its argument): TOOL_OK, or TOOL_FAIL with the
 * error said (by tool_getopt for an option that is not one of them).
 */
int offline_option (struct offline_opts *o, int c, const char *arg)
  __attribute__((nonnull (1)));

/* Open the array of o's members with *cfg (its members count and its own
 * fields set by the caller): paths from o->disks, O_DIRECT as --direct,
 * --buffered or the members and the nmore other paths the job will open
 * (new members) say, TLS from the command line.  TOOL_OK, or TOOL_FAIL
 * with the error said (more than R5_MAX_MEMBERS disks, array_open's).
 */
int offline_open (const struct offline_opts *o, struct array_config *cfg,
                  const char *const *more, unsigned nmore, struct array **a)
  __attribute__((nonnull (1, 2, 5)));

/* An array_log_fn for array_open(): debug lines dropped, the first few
 * others held back (a refusal should be one line), the rest said at once
 * on stderr as "raid5ctl SUB: ...".  offline_log_reset() before opening.
 */
void offline_log (enum array_log_level level, const char *msg)
  __attribute__((nonnull));
void offline_log_reset (void);

/* Every check passed: say what was held back; from now on lines go out
 * as they come.
 */
void offline_log_release (void);

/* Sleep until the steps done since p->base are due at max_kib KiB per
 * second of each member (0: no limit).  CLOCK_MONOTONIC, as progress.
 */
void offline_pace (const struct progress *p, uint64_t done, uint64_t max_kib)
  __attribute__((nonnull));

/* Run a's job of kind `job` (started already, or under way from before)
 * to its end in this thread, showing its progress under r5_job_name (job)
 * and paced to max_kib (0: no limit); a resumed job says where it took
 * up again.  TOOL_OK, or TOOL_FAIL with the job's error said.
 */
int offline_run (struct array *a, enum r5_job job, uint64_t max_kib)
  __attribute__((nonnull));

#endif /* TOOLS_OFFLINE_H */
