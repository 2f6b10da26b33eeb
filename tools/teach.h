/* tools/teach.h -- what raid5ctl's teaching commands share (layout, map,
 * explain, mkfs-hint): the geometry they talk about, and how to say it.
 *
 * A geometry comes from flags (--disks, --chunk, --layout, --data-offset,
 * --missing; no member size, so the array is as large as 64-bit offsets
 * allow) or from members (--from DISK...: the md v1.2 superblocks give
 * it, and a member out of service becomes the missing one).  Nothing is
 * ever written; members are opened read-only.
 *
 * Sizes on the command line: geometry flags take a bare number as KiB
 * (as mdadm and raid5ctl create do); array offsets and lengths
 * (teach_parse_bytes) take a bare number as bytes.  Both accept the
 * suffixes s (512-byte sectors), K, M, G, T.
 *
 * Errors are printed here, one line (tool_error), and returned as
 * TOOL_FAIL.
 */
#ifndef TOOLS_TEACH_H
#define TOOLS_TEACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "raid/geom.h"
#include "tools/json.h"

struct teach {
  /* From the command line. */
  unsigned members;
  uint64_t chunk;             /* bytes */
  enum r5_layout layout;
  uint64_t data_offset;       /* bytes */
  int missing;                /* member out of service, or -1 */
  bool json;
  bool svg;                   /* --svg: a picture (layout, explain) */
  bool flags_given;           /* a geometry flag (not --missing) was given */
  char **from;                /* --from's disks ('missing' allowed), or NULL */
  unsigned nfrom;
  /* Set by teach_geometry(). */
  struct r5_geom g;
  bool sized;                 /* g.capacity is a real array's (--from) */
  const char *slot_path[R5_MAX_MEMBERS];  /* --from: the disk in each slot */
  char missing_why[200];      /* --from: why the missing member is out */
};

/* The options every teaching command takes; put them first in its table.
 * teach_option() handles their values.
 */
#define TEACH_LONGOPTS \
  { "disks", required_argument, NULL, 'N' }, \
  { "chunk", required_argument, NULL, 'C' }, \
  { "layout", required_argument, NULL, 'L' }, \
  { "data-offset", required_argument, NULL, 'O' }, \
  { "missing", required_argument, NULL, 'M' }, \
  { "json", no_argument, NULL, 'J' }, \
  { "svg", no_argument, NULL, 'G' }

/* The part of each command's --help about those options. */
#define TEACH_OPTIONS_HELP \
"Geometry (without members):\n" \
"  --disks N            members, 3 to 32 (3)\n" \
"  --chunk SIZE         chunk size, a power of two from 4K to 64M (512K)\n" \
"  --layout NAME        left-symmetric (ls, default), left-asymmetric (la),\n" \
"                       right-symmetric (rs), right-asymmetric (ra),\n" \
"                       parity-first, parity-last\n" \
"  --data-offset SIZE   where data starts on each member (0)\n" \
"  --missing SLOT       treat member SLOT as missing (failed)\n" \
"or from members (last on the line; every argument after it is a disk):\n" \
"  --from DISK...       read the md superblocks (as raid5ctl create or mdadm\n" \
"                       wrote them); a member out of service is the missing\n" \
"                       one; 'missing' may stand for an absent disk\n" \
"  --json               print the report as JSON\n" \
"  -h, --help           this text\n" \
"A bare number is KiB in the options above; suffixes s (sectors), K, M, G.\n"

/* Defaults: 3 members, 512K chunk, left-symmetric, data offset 0. */
void teach_init (struct teach *t) __attribute__((nonnull));

/* Take "--from DISK..." off the end of the command line: *argc is cut
 * before it.  Returns 0, or TOOL_FAIL (--from with no disk).
 */
int teach_split_from (struct teach *t, int *argc, char **argv)
  __attribute__((nonnull));

/* Handle option c (from TEACH_LONGOPTS) with its value.  Returns 0 if
 * taken, 1 if c is not one of ours, or TOOL_FAIL after the error line.
 */
int teach_option (struct teach *t, int c, const char *arg)
  __attribute__((nonnull (1)));

/* One extra option a teaching command takes besides the shared ones. */
struct teach_extra {
  const char *name;           /* long option with an argument, or NULL */
  int (*take) (const char *arg, void *ctx);   /* 0 or TOOL_FAIL */
  void *ctx;
  void (*usage) (void);       /* --help prints it and exits 0 */
  bool draws;                 /* --svg is taken (else refused) */
};

/* The option loop every teaching command shares: --from (see
 * teach_split_from), TEACH_LONGOPTS, the extra option and --help.  On
 * return optind is the first operand of the *argc words left.  Returns
 * 0 or TOOL_FAIL (after the error line).
 */
int teach_getopt (struct teach *t, int *argc, char **argv,
                  const struct teach_extra *extra)
  __attribute__((nonnull));

/* Build t->g from the flags, or from the superblocks of t->from
 * (teach-from.c).  Returns 0 or TOOL_FAIL.
 */
int teach_geometry (struct teach *t) __attribute__((nonnull));
int teach_from_members (struct teach *t) __attribute__((nonnull));

/* An array offset or length: a bare number is bytes.  what names it in
 * the error ("OFFSET").  Returns 0 or TOOL_FAIL.
 */
int teach_parse_bytes (const char *what, const char *arg, uint64_t *out)
  __attribute__((nonnull));

/* bytes, exactly and briefly: "0", "64K", "1M", "1088K", "4097". */
const char *teach_size (uint64_t bytes, char *buf, size_t len)
  __attribute__((nonnull));

/* What member holds in stripe: "D<chunk number>" or "P". */
const char *teach_cell (const struct r5_geom *g, uint64_t stripe,
                        unsigned member, char *buf, size_t len)
  __attribute__((nonnull));

/* The array chunk number of data index dd of stripe. */
uint64_t teach_chunk_number (const struct r5_geom *g, uint64_t stripe,
                             unsigned dd) __attribute__((nonnull));

/* One line naming the geometry ("3 members, left-symmetric, chunk 64K,
 * data offset 0"), then, with --from, the disks by slot, and the missing
 * member.
 */
void teach_print_geometry (const struct teach *t) __attribute__((nonnull));

/* That first line alone, without the newline, into buf. */
const char *teach_geometry_line (const struct teach *t, char *buf,
                                 size_t len) __attribute__((nonnull));

/* The geometry as the JSON object "geometry". */
void teach_json_geometry (struct json *j, const struct teach *t)
  __attribute__((nonnull));

/* num/den as a JSON number with `decimals` digits after the point (json.h
 * has no fractions; a JSON number is just its digits, so the fraction's
 * are written straight after json_u64's).  den > 0.
 */
void teach_json_ratio (struct json *j, const char *key, uint64_t num,
                       uint64_t den, unsigned decimals)
  __attribute__((nonnull (1)));

/* The rule of a layout in words (three lines), for legends. */
const char *teach_layout_rule (enum r5_layout layout);

#endif /* TOOLS_TEACH_H */
