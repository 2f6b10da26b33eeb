/* tools/check.h -- the report of a check or repair, shared by the
 * offline scrub (check.c) and by --control ... --wait (ctl-wait.c), so
 * both say it the same way.
 */
#ifndef TOOLS_CHECK_H
#define TOOLS_CHECK_H

#include <stdbool.h>
#include <stdint.h>

#include "array/array.h"
#include "tools/fsmap.h"

/* What the file system keeps in the stripes listed (check --files):
 * hits[] in order of stripe (hit.tag indexes the list), strings owned.
 */
struct check_files {
  char fstype[16];            /* "ext4", or "unknown" */
  uint64_t fs_off;            /* array byte where it starts */
  char why[256];              /* when it could not be read: why */
  struct fsmap_hit *hits;
  size_t n;
};

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
  const struct check_files *files;    /* --files, or NULL */
};

/* check --files: what the file system at fs_off of a keeps in the rows
 * of each stripe listed that parity found wrong (every data chunk's,
 * from the first wrong 4 KiB unit to the last), into *f.  0, or -errno
 * (f->why says it; f->fstype what was found).  check_files_free frees
 * what it holds.
 */
int check_files (struct array *a, uint64_t fs_off,
                 const struct array_mismatch *list, unsigned n,
                 struct check_files *f) __attribute__((nonnull));
void check_files_free (struct check_files *f) __attribute__((nonnull));

/* The hits of stripe i of the list, as text lines ("    file /a/b
 * (inode 12): bytes [0, 4096)") or JSON members of its object.
 */
struct json;
void check_files_text (const struct check_files *f, unsigned i)
  __attribute__((nonnull));
void check_files_json (const struct check_files *f, unsigned i,
                       struct json *j) __attribute__((nonnull));

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
