/* tools/offline.h -- what the offline jobs (raid5ctl rebuild, re-add,
 * replace, grow) share: the array's log held back until every check has
 * passed, the pace of --max-speed, and running the job with progress.  Single-threaded: the job runs in the
 * calling thread (array_job_run).
 */
#ifndef TOOLS_OFFLINE_H
#define TOOLS_OFFLINE_H

#include <stdint.h>

#include "array/array.h"
#include "raid/jobplan.h"
#include "tools/progress.h"

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
