/* tools/check.h -- the report of a check or repair, shared by the
 * offline scrub (check.c) and by --control ... --wait (ctl-wait.c), so
 * both say it the same way.
 */
#ifndef TOOLS_CHECK_H
#define TOOLS_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "array/array.h"

struct check_result {
  bool repair;                /* the job was a repair */
  uint64_t stripes;           /* stripes checked */
  uint64_t stripes_bad;       /* with wrong parity */
  uint64_t mismatches;        /* md's mismatch_cnt, 512-byte sectors */
  const struct array_mismatch *list;  /* the first n of them */
  unsigned n;
  bool more_listable;         /* --list N would show more than n */
  bool dirty;                 /* offline: the array had not been stopped
                               * cleanly (a repair was its resync) */
};

/* Print the report on stdout: a summary line and one line per stripe
 * listed ("check: 1008 stripes checked, 2 with wrong parity, mismatch_cnt
 * 16", "  stripe 3: array bytes [A, B), parity on member P from offset O,
 * U x 4 KiB wrong"), or one JSON object.
 */
void check_report (const struct check_result *r, bool json)
  __attribute__((nonnull));

/* The exit status of a finished check or repair: 2 for a check that
 * found wrong parity (as a test would), else TOOL_OK.
 */
int check_status (const struct check_result *r) __attribute__((nonnull));

#endif /* TOOLS_CHECK_H */
