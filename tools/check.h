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

/* What the file systems keep in the stripes listed (check --files): the
 * one at a given offset, or one per partition of the array's partition
 * table; hits[] in order of stripe within each (hit.tag indexes the
 * list), strings owned.
 */
#define CHECK_FS_MAX 16
struct check_fs {
  unsigned number;            /* its partition's, 0 without a table */
  uint64_t off, len;          /* array bytes */
  char fstype[16];            /* "ext4", or "unknown" */
  char why[256];              /* when it could not be read: why */
};
struct check_files {
  char pttype[16];            /* the partition table's type, or "" */
  struct check_fs fs[CHECK_FS_MAX];
  unsigned nfs;
  struct fsmap_hit *hits;
  size_t n;
};

#define CHECK_FS_AUTO UINT64_MAX   /* fs_off: look for partitions */
#define CHECK_LIST_MAX 1000000u    /* --list N: 0 to this many stripes */

/* --fs-offset SIZE (bytes, with the suffixes of raid/number.h): TOOL_OK
 * with *fs_off set, or TOOL_FAIL after one line naming the value.
 */
int check_parse_fs_offset (const char *arg, uint64_t *fs_off)
  __attribute__((nonnull, warn_unused_result));

/* --list N (0 to CHECK_LIST_MAX): TOOL_OK with *list set, or TOOL_FAIL
 * after one line naming the option and the range.
 */
int check_parse_list (const char *arg, unsigned *list)
  __attribute__((nonnull, warn_unused_result));

struct check_result {
  bool repair;                /* the job was a repair */
  uint64_t stripes;           /* stripes the job went over; those
                               * checked are these but unread and listed */
  uint64_t stripes_bad;       /* with wrong parity */
  uint64_t mismatches;        /* md's mismatch_cnt, 512-byte sectors */
  const struct array_mismatch *list;  /* the first n of them */
  unsigned n;
  bool more_listable;         /* --list N would show more than n */
  uint64_t unread;            /* stripes skipped for read errors (read-only) */
  uint64_t listed;            /* stripes skipped for bad blocks in their rows */
  uint64_t rewritten;         /* listed sectors rewritten and cleared */
  bool dirty;                 /* offline: the array had not been stopped
                               * cleanly (a repair was its resync) */
  bool ppl;                   /* ... and keeps a partial parity log:
                               * replayed, not resynced */
  const struct check_files *files;    /* --files, or NULL */
};

/* check --files: what the file system at fs_off of the array of geometry
 * g, read from src (CHECK_FS_AUTO: in
 * each partition, or at 0 without a partition table) keeps in the rows of
 * each stripe listed that parity found wrong (every data chunk's, from
 * the first wrong 4 KiB unit to the last), into *f.  0, or -errno when
 * the partition table cannot be read; a file system that cannot be read
 * says why in its fs[].why.  check_files_free frees what it holds.
 */
int check_files (const struct r5_geom *g, const struct fsmap_src *src,
                 uint64_t fs_off, const struct array_mismatch *list,
                 unsigned n, struct check_files *f) __attribute__((nonnull));
void check_files_free (struct check_files *f) __attribute__((nonnull));

/* The hits of stripe i of the list, as text lines ("    file /a/b
 * (inode 12): bytes [0, 4096)") or JSON members of its object.
 */
struct json;
void check_files_text (const struct check_files *f, unsigned i)
  __attribute__((nonnull));
/* The file systems' lines before the stripes ("  file system: ext4 at
 * array byte 0", one per partition), and their JSON array.
 */
void check_files_text_head (const struct check_files *f)
  __attribute__((nonnull));
void check_files_json_head (const struct check_files *f, struct json *j)
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

/* The stripes a finished job checked: those it went over but the ones
 * it skipped (unread, listed).
 */
uint64_t check_stripes_checked (const struct check_result *r)
  __attribute__((nonnull));

/* The exit status of a finished check or repair: 2 for a check that
 * found wrong parity (as a test would), TOOL_FAIL for stripes a member
 * could not read, else TOOL_OK (stripes skipped for listed bad blocks
 * are known already: their member's log says so).
 */
int check_status (const struct check_result *r) __attribute__((nonnull));

#endif /* TOOLS_CHECK_H */
