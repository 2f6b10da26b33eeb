/* tools/explain-grow.c -- raid5ctl explain grow: on a small example, how
 * md grows a RAID-5 by members (raid/reshape.h): which chunks move where,
 * why the data offset moves down first, and why the new shape's writes
 * trail the old shape's reads, so a crash loses nothing.  Every figure
 * is raid/reshape's own: its window, its plan's reads and writes, its
 * rule for when the line must be recorded.
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "raid/layout.h"
#include "raid/reshape.h"
#include "tools/explain.h"
#include "tools/raid5ctl.h"
#include "tools/teach.h"

#define ROWS_SHOWN 8          /* member rows drawn of each shape */

static uint64_t opt_add = 1;

static void
usage (void)
{
  printf (
"usage: raid5ctl explain grow [--add K] [GEOMETRY]\n"
"\n"
"Show how md grows an array from N to N+K members (mdadm --grow\n"
"--raid-devices), on the geometry given: the members' rows before and\n"
"after (which chunk is where), the window the reshape moves at a time\n"
"(whole stripes of both shapes), how far the data offset moves down so\n"
"that no backup is needed, and, window by window, where the old shape is\n"
"read and the new one written -- the writes stay below every old byte\n"
"not yet moved, and the superblocks record how far the reshape has come\n"
"whenever the next window would pass what they say.\n"
"\n"
"  --add K              members added (1)\n"
TEACH_OPTIONS_HELP);
}

/* --add K: a count here (grow's own --add takes a disk each time, so the
 * command line's given-twice rule lets it repeat): once.
 */
static int
take_add (const char *arg, void *ctx)
{
  static bool given;

  (void) ctx;
  if (given)
    return tool_error ("option --add given twice: give it once (the "
                       "number of members added)");
  given = true;
  return tool_parse_uint ("--add", arg, 1, R5_MAX_MEMBERS - R5_MIN_MEMBERS,
                          &opt_add);
}

/* The example: the user's shape with room for the shift before its data
 * and a few windows of stripes.
 */
static int
make_reshape (const struct teach *t, struct r5_reshape *r)
{
  struct r5_geom from = t->g;
  uint64_t shift = r5_reshape_min_shift (&from, (unsigned) opt_add);
  uint64_t doff = from.data_offset > shift ? from.data_offset : shift;
  uint64_t stripes = 3 * (shift / from.chunk);
  char why[200];
  struct r5_geom_params p = {
    from.members, from.chunk, from.layout, doff, doff + stripes * from.chunk,
  };

  if (from.members + opt_add > R5_MAX_MEMBERS)
    return tool_error ("--add %" PRIu64 ": %u members is more than %u",
                       opt_add, from.members + (unsigned) opt_add,
                       R5_MAX_MEMBERS);
  if (r5_geom_init (&from, &p) < 0)
    return tool_error ("%s", r5_geom_explain (why, sizeof why, &p));
  if (r5_reshape_init (r, &from, (unsigned) opt_add, shift) < 0)
    return tool_error ("cannot grow %u members by %" PRIu64, from.members,
                       opt_add);
  return 0;
}

/* Cell of member m in row `row` of g: "D7" (array chunk 7), "P", or "."
 * past the old end (zeroes in the new shape).
 */
static void
cell (const struct r5_geom *g, uint64_t old_cap, uint64_t row, unsigned m,
      char *out, size_t len)
{
  int dd = r5_data_index (g, row, m);
  uint64_t chunk_no;

  if (dd < 0) {
    snprintf (out, len, "P");
    return;
  }
  chunk_no = row * g->data_members + (unsigned) dd;
  if (chunk_no * g->chunk >= old_cap)
    snprintf (out, len, "0");
  else
    snprintf (out, len, "D%" PRIu64, chunk_no);
}

static void
draw (const char *title, const struct r5_geom *g, uint64_t old_cap)
{
  char c[24];

  printf ("%s\n  %-10s", title, "offset");
  for (unsigned m = 0; m < g->members; m++)
    printf (" %6s%-2u", "member", m);
  printf ("\n");
  /* All of them when a cut would leave out a row or two. */
  uint64_t shown = g->stripes <= ROWS_SHOWN + 2 ? g->stripes : ROWS_SHOWN;

  for (uint64_t row = 0; row < shown; row++) {
    printf ("  %-10" PRIu64, (g->data_offset + row * g->chunk) >> 10);
    for (unsigned m = 0; m < g->members; m++) {
      cell (g, old_cap, row, m, c, sizeof c);
      printf (" %8s", c);
    }
    printf ("\n");
  }
  if (g->stripes > shown)             /* the walk below goes further */
    printf ("  ...        (%" PRIu64 " more rows, to offset %" PRIu64 "K)\n",
            g->stripes - shown,
            (g->data_offset + (g->stripes - 1) * g->chunk) >> 10);
  printf ("  (offsets in KiB; D = array chunk, P = parity, 0 = zeroes)\n\n");
}

/* Window by window: what is read, what is written, when the line is
 * recorded, and how far the writes stay below the old bytes not moved.
 */
static void
walk (const struct r5_reshape *r)
{
  uint64_t safe = 0, kib = 1024;

  for (uint64_t line = 0; line < r->end;
       line += r5_reshape_window_len (r, line)) {
    uint64_t len = r5_reshape_window_len (r, line);
    uint64_t rd0 = r5_reshape_from_member_start (r, line);
    uint64_t rd1 = line + len < r->from.capacity ?
      r5_reshape_from_member_start (r, line + len) :
      r->from.data_offset + r->from.member_data;
    uint64_t wr0 = r5_reshape_to_member_end (r, line);
    uint64_t wr1 = r5_reshape_to_member_end (r, line + len);
    bool rec = r5_reshape_must_record (r, safe, line);

    if (rec)
      safe = line;
    printf ("  window at array %" PRIu64 "K: %s", line / kib,
            rec ? "record the line here first; " : "");
    if (line < r->from.capacity)
      printf ("read old [%" PRIu64 "K, %" PRIu64 "K), ", rd0 / kib,
              rd1 / kib);
    else
      printf ("past the old end: zeroes, ");
    printf ("write new [%" PRIu64 "K, %" PRIu64 "K); the old bytes the "
            "superblocks count as not moved start at %" PRIu64 "K\n",
            wr0 / kib, wr1 / kib,
            r5_reshape_from_member_start (r, safe) / kib);
  }
}

static void
print_text (const struct r5_reshape *r)
{
  const struct r5_geom *f = &r->from, *g = &r->to;

  printf ("Growing %u members to %u (%" PRIu64 "K chunks, %s): a stripe "
          "holds %u data chunks instead of %u, so the array grows from %"
          PRIu64 "K to %" PRIu64 "K on the same member space.\n\n",
          f->members, g->members, f->chunk >> 10, r5_layout_name (f->layout),
          g->data_members, f->data_members, f->capacity >> 10,
          g->capacity >> 10);
  draw ("Before (the old shape):", f, f->capacity);
  draw ("After (the new shape):", g, f->capacity);
  printf ("The reshape moves a window of %" PRIu64 "K at a time: %" PRIu64
          " old stripes, %" PRIu64 " new ones (mdadm's backup_blocks, the "
          "least common multiple of the two).  It reads the window in the "
          "old shape, computes the new parity, writes it in the new shape, "
          "and zeroes the new space past the old end.\n\n",
          r->window >> 10, r->window / f->stripe_data,
          r->window / g->stripe_data);
  printf ("The data offset moves down by %" PRIu64 "K first (from %" PRIu64
          "K to %" PRIu64 "K; mdadm's least: one window's share of an old "
          "member), so that the new shape's writes always land below the "
          "old bytes still to be read; on real members no lower than 36K "
          "past the superblock's start and past its bitmap and bad-block "
          "log (mdadm's room before the data), else the offset is kept and "
          "the first windows go through mdadm's backup, on the new member "
          "or in a backup file.  The superblocks say how far the "
          "reshape has come (reshape_position): after a crash, bytes below "
          "it are read in the new shape, the rest in the old.  So a window "
          "may only be written while its writes stay below the old bytes "
          "past that line, else the line is recorded first:\n",
          (f->data_offset - g->data_offset) >> 10, f->data_offset >> 10,
          g->data_offset >> 10);
  walk (r);
  printf ("\nThe gap grows as the reshape goes on (each new row holds more "
          "data than an old one), so the line needs recording less and less "
          "often; md also records it every few seconds to show progress.\n");
}

int
explain_grow_main (int argc, char **argv)
{
  struct teach t;
  struct r5_reshape r;
  const struct teach_extra extra = { "add", take_add, NULL, usage, false };

  teach_init (&t);
  if (teach_getopt (&t, &argc, argv, &extra) != 0 ||
      teach_geometry (&t) != 0)
    return TOOL_FAIL;
  if (optind < argc)
    return tool_error ("grow: unexpected argument '%s'",
                       argv[optind]);
  if (make_reshape (&t, &r) != 0)
    return TOOL_FAIL;
  print_text (&r);
  return TOOL_OK;
}
