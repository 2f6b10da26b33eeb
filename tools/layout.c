/* tools/layout.c -- raid5ctl layout: a table of stripes x members showing
 * where each data chunk (D0, D1, ...) and each parity chunk (P) lives,
 * with the member offset and array bytes of every stripe, and the rule of
 * the layout in words.
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "raid/layout.h"
#include "tools/raid5ctl.h"
#include "tools/svg.h"
#include "tools/teach.h"

#define MAX_ROWS 4096u

static void
usage (void)
{
  printf (
"usage: raid5ctl layout [--stripes K] [GEOMETRY] [--json|--svg]\n"
"                       [--from DISK...]\n"
"\n"
"Draw the first K stripes (default: twice the members, so the pattern is\n"
"seen once and then repeating): which member holds each data chunk\n"
"D0, D1, ... (numbered in array order) and each stripe's parity P, where\n"
"each stripe sits on the members and which array bytes it holds.\n"
"\n"
"  --stripes K          rows to draw, 1 to %u\n"
"  --svg                draw the map as an SVG picture (on standard output):\n"
"                       a box per chunk, data and parity in their colours\n"
TEACH_OPTIONS_HELP
"\n"
"Examples:\n"
"  raid5ctl layout                                  3 members, md's default\n"
"  raid5ctl layout --disks 4 --layout la --chunk 64K\n"
"  raid5ctl layout --chunk 64K --svg > layout.svg     the map as a picture\n"
"  raid5ctl layout --from d0.img d1.img d2.img      an array's own layout\n",
          MAX_ROWS);
}

static int
take_rows (const char *arg, void *ctx)
{
  return tool_parse_uint ("--stripes", arg, 1, MAX_ROWS, ctx);
}

static int
parse_args (int argc, char **argv, struct teach *t, uint64_t *rows)
{
  const struct teach_extra extra = { "stripes", take_rows, rows, usage, true };

  if (teach_getopt (t, &argc, argv, &extra) != 0)
    return TOOL_FAIL;
  if (optind < argc)
    return tool_error ("unexpected argument '%s' (see raid5ctl layout "
                       "--help)", argv[optind]);
  return teach_geometry (t);
}

/* Cells are 6 wide but the last, so that no line ends in blanks. */
static void
print_cells (const char *const *cell, unsigned n)
{
  for (unsigned m = 0; m < n; m++)
    printf (m + 1 < n ? " %-6s" : " %s", cell[m]);
  printf ("\n");
}

static void
print_titles (const struct teach *t)
{
  const struct r5_geom *g = &t->g;
  char name[R5_MAX_MEMBERS][16];
  const char *cell[R5_MAX_MEMBERS];

  printf ("%6s  %-13s  %-21s", "stripe", "member offset", "array bytes");
  for (unsigned m = 0; m < g->members; m++) {
    snprintf (name[m], sizeof name[m], "m%u%s", m,
              (int) m == t->missing ? "*" : "");
    cell[m] = name[m];
  }
  print_cells (cell, g->members);
}

static void
print_row (const struct teach *t, uint64_t s)
{
  const struct r5_geom *g = &t->g;
  char mo[32], a[32], b[32], range[64], name[R5_MAX_MEMBERS][24];
  const char *cell[R5_MAX_MEMBERS];

  snprintf (range, sizeof range, "[%s, %s)",
            teach_size (s * g->stripe_data, a, sizeof a),
            teach_size ((s + 1) * g->stripe_data, b, sizeof b));
  printf ("%6" PRIu64 "  %-13s  %-21s", s,
          teach_size (r5_stripe_member_off (g, s), mo, sizeof mo), range);
  for (unsigned m = 0; m < g->members; m++)
    cell[m] = teach_cell (g, s, m, name[m], sizeof name[m]);
  print_cells (cell, g->members);
}

/* The layout's rule, each line indented. */
static void
print_rule (enum r5_layout layout)
{
  const char *p = teach_layout_rule (layout), *nl;

  for (; *p; p = *nl ? nl + 1 : nl) {
    nl = strchrnul (p, '\n');
    printf ("  %.*s\n", (int) (nl - p), p);
  }
}

/* Where the layout puts stripe s's parity, as a formula of s and N. */
static const char *
parity_formula (enum r5_layout layout)
{
  switch (layout) {
  case R5_LEFT_SYMMETRIC:
  case R5_LEFT_ASYMMETRIC:
    return "N-1 - (s mod N)";
  case R5_RIGHT_SYMMETRIC:
  case R5_RIGHT_ASYMMETRIC:
    return "s mod N";
  case R5_PARITY_FIRST:
    return "0";
  case R5_PARITY_LAST:
    return "N-1";
  }
  return "?";
}

static void
print_legend (const struct teach *t)
{
  const struct r5_geom *g = &t->g;
  char c[32];

  teach_size (g->chunk, c, sizeof c);
  printf ("\nDk = array chunk k, array bytes [k x %s, (k+1) x %s).  P = "
          "parity, the XOR of\nthe stripe's %u data chunks.  Member offsets "
          "include the data offset.\n", c, c, g->data_members);
  printf ("%s (md layout %d):\n", r5_layout_name (g->layout),
          (int) g->layout);
  print_rule (g->layout);
  printf ("  Parity of stripe s is on member %s.\n",
          parity_formula (g->layout));
  if (t->missing >= 0)
    printf ("m%d* is missing: reading its chunks means XOR-ing the other %u "
            "members' chunks\nof the same stripe.\n", t->missing,
            g->members - 1);
}

/* Before stripe s: a marker where the pattern starts again (once, if
 * parity never moves).
 */
static void
print_repeat (const struct r5_geom *g, uint64_t s)
{
  unsigned period = r5_layout_period (g);

  if (s == 0 || s % period != 0)
    return;
  if (period > 1)
    printf ("%6s  -- stripe %" PRIu64 ": the pattern of stripe 0 again "
            "(it repeats every %u stripes) --\n", "", s, period);
  else if (s == 1)
    printf ("%6s  -- stripe 1 and on: the pattern of stripe 0 again "
            "(parity never moves) --\n", "");
}

static void
print_text (const struct teach *t, uint64_t rows)
{
  const struct r5_geom *g = &t->g;
  char c[32], sd[32];

  teach_print_geometry (t);
  printf ("A stripe is one %s chunk at the same offset on every member: "
          "%u data + 1 parity,\nholding %s of array data.\n\n",
          teach_size (g->chunk, c, sizeof c), g->data_members,
          teach_size (g->stripe_data, sd, sizeof sd));
  print_titles (t);
  for (uint64_t s = 0; s < rows; s++) {
    print_repeat (g, s);
    print_row (t, s);
  }
  print_legend (t);
}

static void
print_json (const struct teach *t, uint64_t rows)
{
  const struct r5_geom *g = &t->g;
  struct json j;
  char cell[32];

  tool_json_init (&j, stdout);
  tool_json_open (&j, NULL, '{');
  teach_json_geometry (&j, t);
  tool_json_u64 (&j, "period", r5_layout_period (g));
  tool_json_open (&j, "stripes", '[');
  for (uint64_t s = 0; s < rows; s++) {
    tool_json_open (&j, NULL, '{');
    tool_json_u64 (&j, "stripe", s);
    tool_json_u64 (&j, "member_offset", r5_stripe_member_off (g, s));
    tool_json_u64 (&j, "array_offset", s * g->stripe_data);
    tool_json_u64 (&j, "array_end", (s + 1) * g->stripe_data);
    tool_json_u64 (&j, "parity", r5_parity_member (g, s));
    tool_json_open (&j, "cells", '[');
    for (unsigned m = 0; m < g->members; m++)
      tool_json_str (&j, NULL, teach_cell (g, s, m, cell, sizeof cell));
    tool_json_close (&j, '[');
    tool_json_close (&j, '{');
  }
  tool_json_close (&j, '[');
  tool_json_close (&j, '{');
}

/* ---- the picture (--svg) ---- */

#define LABEL_W 170             /* "stripe 12  @ 1088K" */
#define RANGE_W 190             /* "array [0, 128K)" */

static enum svg_fill
cell_fill (const struct teach *t, uint64_t s, unsigned m)
{
  if ((int) m == t->missing)
    return SVG_MISSING;
  return r5_parity_member (&t->g, s) == m ? SVG_PARITY : SVG_DATA;
}

static void
svg_rows (struct svg *v, const struct teach *t, uint64_t rows, double y)
{
  const struct r5_geom *g = &t->g;
  const double x0 = SVG_MARGIN + LABEL_W;
  char cell[32], a[32], b[32], mo[32];

  svg_text (v, SVG_MARGIN + LABEL_W - SVG_GAP, y - 6, "end", 0, "member offset");
  for (unsigned m = 0; m < g->members; m++)
    svg_text (v, x0 + m * SVG_PITCH_X + SVG_BOX_W / 2.0, y - 6, "middle", 1,
              "m%u%s", m, (int) m == t->missing ? " (missing)" : "");
  for (uint64_t s = 0; s < rows; s++, y += SVG_PITCH_Y) {
    double mid = y + SVG_BOX_H / 2.0 + SVG_FONT / 3.0;

    svg_text (v, SVG_MARGIN, mid, "start", 1, "stripe %" PRIu64, s);
    svg_text (v, SVG_MARGIN + LABEL_W - SVG_GAP, mid, "end", 0, "@ %s",
              teach_size (r5_stripe_member_off (g, s), mo, sizeof mo));
    for (unsigned m = 0; m < g->members; m++)
      svg_box (v, x0 + m * SVG_PITCH_X, y, cell_fill (t, s, m),
               teach_cell (g, s, m, cell, sizeof cell));
    svg_text (v, x0 + g->members * SVG_PITCH_X, mid, "start", 0,
              "array [%s, %s)", teach_size (s * g->stripe_data, a, sizeof a),
              teach_size ((s + 1) * g->stripe_data, b, sizeof b));
  }
}

/* The legend, the repeat period and the layout's rule under the map. */
static void
svg_notes (struct svg *v, const struct teach *t, double y)
{
  const enum svg_fill fills[] = { SVG_DATA, SVG_PARITY, SVG_MISSING };
  const char *p = teach_layout_rule (t->g.layout), *nl;
  unsigned period = r5_layout_period (&t->g);

  svg_legend (v, SVG_MARGIN, y, fills, t->missing >= 0 ? 3 : 2);
  y += 1.5 * SVG_LINE;
  if (period > 1)
    svg_text (v, SVG_MARGIN, y, "start", 0, "Parity of stripe s is on member %s; "
              "the pattern repeats every %u stripes.",
              parity_formula (t->g.layout), period);
  else
    svg_text (v, SVG_MARGIN, y, "start", 0, "Parity is on member %s in every "
              "stripe.", parity_formula (t->g.layout));
  for (; *p; p = *nl ? nl + 1 : nl) {
    nl = strchrnul (p, '\n');
    y += SVG_LINE;
    svg_text (v, SVG_MARGIN, y, "start", 0, "%.*s", (int) (nl - p), p);
  }
}

static void
print_svg (const struct teach *t, uint64_t rows)
{
  const double map_w = LABEL_W + t->g.members * SVG_PITCH_X + RANGE_W;
  const unsigned width = 2 * SVG_MARGIN + (unsigned) (map_w > 640 ? map_w : 640);
  const unsigned height = (unsigned) (3 * SVG_LINE + 24 + rows * SVG_PITCH_Y +
                                      6 * SVG_LINE + SVG_MARGIN);
  char line[200], c[32];
  struct svg v;

  svg_begin (&v, stdout, width, height, "raid5ctl layout");
  svg_text (&v, SVG_MARGIN, SVG_MARGIN + SVG_FONT, "start", 1, "%s",
            teach_geometry_line (t, line, sizeof line));
  svg_text (&v, SVG_MARGIN, SVG_MARGIN + SVG_FONT + SVG_LINE, "start", 0,
            "Each box is one %s chunk; a row is a stripe: %u data + 1 "
            "parity at the same offset on every member.",
            teach_size (t->g.chunk, c, sizeof c), t->g.data_members);
  svg_rows (&v, t, rows, SVG_MARGIN + 3 * SVG_LINE + 24);
  svg_notes (&v, t, SVG_MARGIN + 3 * SVG_LINE + 24 + rows * SVG_PITCH_Y + SVG_LINE);
  svg_end (&v);
}

int
layout_main (int argc, char **argv)
{
  struct teach t;
  uint64_t rows = 0;

  teach_init (&t);
  if (parse_args (argc, argv, &t, &rows) != 0)
    return TOOL_FAIL;
  if (rows == 0)
    rows = 2 * (uint64_t) t.g.members;
  if (rows > t.g.stripes)
    rows = t.g.stripes;
  if (t.json)
    print_json (&t, rows);
  else if (t.svg)
    print_svg (&t, rows);
  else
    print_text (&t, rows);
  return TOOL_OK;
}
