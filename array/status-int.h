/* array/status-int.h -- what the status files (status.c, status-json.c)
 * share, and nobody else calls: the names and figures both reports give.
 */
#ifndef ARRAY_STATUS_INT_H
#define ARRAY_STATUS_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "array/array.h"
#include "array/state.h"

struct array;

/* status.c: slot's state ("active", "re-adding", ...). */
const char *status_member_state_name (const struct array *a, unsigned slot)
  __attribute__((nonnull));

/* status.c: "healthy", "degraded" or "failed". */
const char *status_array_state (const struct array *a)
  __attribute__((nonnull));

/* status.c: what the superblocks say ("active", "needs-resync", "clean";
 * "raw" without them).
 */
const char *status_metadata_state (const struct array *a)
  __attribute__((nonnull));

/* status.c: sectors of slot's read errors corrected. */
uint64_t status_corrected (const struct array *a, unsigned slot)
  __attribute__((nonnull));

/* status.c: md's [UU_] letters into buf (room for every member and a
 * NUL).
 */
void status_health (const struct array *a, char *buf)
  __attribute__((nonnull));

/* status.c: members in service. */
unsigned status_in_service (const struct array *a) __attribute__((nonnull));

/* status.c: ms until the next try of c (0: due). */
uint64_t status_next_try_ms (const struct comeback *c)
  __attribute__((nonnull));

/* status.c: does a faulty member of this kind come back by itself? */
bool status_returns_by_itself (const struct array *a, unsigned slot,
                               enum fault_kind k)
  __attribute__((nonnull));

/* status.c: mdadm's consistency policy ("ppl", "bitmap", "resync"), or
 * NULL for raw members.
 */
const char *status_policy_name (const struct array *a)
  __attribute__((nonnull));

/* status-json.c: the report as one line of JSON; job.lock held (it
 * reads the members' paths and the comeback state, which change under
 * it: a slot's member is swapped -- a rebuild's start, a replace's end
 * or promotion, the spare taken -- and the old one's path freed).
 */
void status_print_json (struct array *a, const struct array_job_status *j,
                        const struct array_stats *st, FILE *out)
  __attribute__((nonnull));

#endif /* ARRAY_STATUS_INT_H */
