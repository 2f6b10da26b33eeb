/* tools/explain-svg.c -- raid5ctl explain --svg: each stripe of the
 * request drawn as a teacher would, in three rows of chunk boxes -- the
 * request (the bytes it touches), 1. the reads, 3. the writes -- with
 * 2. the XOR steps between them in words, all from the stripe's plan
 * (see explain.h).  A band in a box covers the chunk bytes an I/O moves,
 * to scale.
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "raid/layout.h"
#include "tools/explain.h"
#include "tools/raid5ctl.h"
#include "tools/svg.h"

#define LABEL_W 90              /* "3. write" */
#define MIN_WIDTH 760u          /* the longest lines of text */

struct explain_svg {
  const struct teach *t;
  char title[320];
  char *body;                 /* the stripes, drawn into memory */
  size_t body_len;
  struct svg v;
  double y;                   /* next free line in the body */
};

struct explain_svg *
explain_svg_open (const struct teach *t, const char *request)
{
  struct explain_svg *e = calloc (1, sizeof *e);
  char line[200];
  FILE *f;

  if (e == NULL || (f = open_memstream (&e->body, &e->body_len)) == NULL) {
    free (e);
    tool_error ("out of memory");
    return NULL;
  }
  e->t = t;
  e->v.f = f;
  snprintf (e->title, sizeof e->title, "raid5ctl explain %s: %s", request,
            teach_geometry_line (t, line, sizeof line));
  e->y = SVG_MARGIN + 2 * SVG_LINE;
  return e;
}

static enum svg_fill
box_fill (const struct explain_stripe *s, unsigned m)
{
  if ((int) m == s->t->missing)
    return SVG_MISSING;
  return m == s->parity ? SVG_PARITY : SVG_DATA;
}

/* A row of boxes at e->y, named on the left; their labels come after
 * the bands (row_labels), so that they stay on top.
 */
static void
row (struct explain_svg *e, const struct explain_stripe *s, const char *name)
{
  svg_text (&e->v, SVG_MARGIN, e->y + SVG_BOX_H / 2.0 + SVG_FONT / 3.0, "start",
            1, "%s", name);
  for (unsigned m = 0; m < s->t->g.members; m++)
    svg_box (&e->v, SVG_MARGIN + LABEL_W + m * SVG_PITCH_X, e->y, box_fill (s, m),
             NULL);
}

static void
row_labels (struct explain_svg *e, const struct explain_stripe *s)
{
  char cell[EXPLAIN_CELL];

  for (unsigned m = 0; m < s->t->g.members; m++)
    svg_box_label (&e->v, SVG_MARGIN + LABEL_W + m * SVG_PITCH_X, e->y,
                   explain_cell (s, m, cell));
}

/* The bytes of the stripe's data the request touches, on each data box. */
static void
touched_bands (struct explain_svg *e, const struct explain_stripe *s)
{
  const struct r5_geom *g = &s->t->g;

  for (unsigned m = 0; m < g->members; m++) {
    int dd = r5_data_index (g, s->index, m);
    uint64_t lo, hi;

    if (dd < 0)
      continue;
    lo = (uint64_t) dd * g->chunk;
    hi = lo + g->chunk;
    lo = s->a > lo ? s->a : lo;
    hi = s->b < hi ? s->b : hi;
    if (lo < hi)
      svg_band (&e->v, SVG_MARGIN + LABEL_W + m * SVG_PITCH_X, e->y,
                (double) (lo - (uint64_t) dd * g->chunk) / (double) g->chunk,
                (double) (hi - (uint64_t) dd * g->chunk) / (double) g->chunk,
                SVG_TOUCHED);
  }
}

/* The plan's I/Os of one phase (reads, or the rest) on their boxes;
 * "none" after the row if there are none.
 */
static void
io_bands (struct explain_svg *e, const struct explain_stripe *s, bool reads)
{
  const struct r5_plan *p = s->p;
  const double chunk = (double) s->t->g.chunk;
  unsigned n = 0;

  for (size_t i = 0; i < p->nios; i++) {
    const struct r5_io *io = &p->ios[i];
    uint64_t co = io->member_off - s->member_base;

    if ((io->kind == R5_IO_READ) != reads)
      continue;
    svg_band (&e->v, SVG_MARGIN + LABEL_W + io->member * SVG_PITCH_X, e->y,
              (double) co / chunk, (double) (co + io->len) / chunk,
              reads ? SVG_READ : SVG_WRITTEN);
    n++;
  }
  if (n == 0)
    svg_text (&e->v, SVG_MARGIN + LABEL_W + s->t->g.members * SVG_PITCH_X,
              e->y + SVG_BOX_H / 2.0 + SVG_FONT / 3.0, "start", 0, "none");
}

/* 2. The XOR steps, a line each: "new P = old D1 ^ new D0  (64K)". */
static void
xor_lines (struct explain_svg *e, const struct explain_stripe *s)
{
  const struct r5_plan *p = s->p;
  char b[EXPLAIN_LABEL], l[32], text[400];

  e->y += SVG_FONT + 2;
  svg_text (&e->v, SVG_MARGIN, e->y, "start", 1, "2. XOR");
  if (p->nxors == 0)
    svg_text (&e->v, SVG_MARGIN + LABEL_W, e->y, "start", 0, "none");
  for (size_t i = 0; i < p->nxors; i++) {
    const struct r5_xor *x = &p->xors[i];
    int n = snprintf (text, sizeof text, "%s =",
                      explain_buf_label (s, x->dst, b));

    for (unsigned k = 0; k < x->nsrc && n < (int) sizeof text; k++)
      n += snprintf (text + n, sizeof text - (size_t) n, "%s %s",
                     k ? " \u2295" : "", explain_buf_label (s, x->src[k], b));
    svg_text (&e->v, SVG_MARGIN + LABEL_W, e->y, "start", 0, "%s   (%s)", text,
              teach_size (x->len, l, sizeof l));
    if (i + 1 < p->nxors)
      e->y += SVG_LINE;
  }
  e->y += SVG_GAP;
}

/* Above the rows: the stripe, and each segment's strategy. */
static void
heading (struct explain_svg *e, const struct explain_stripe *s)
{
  const struct r5_geom *g = &s->t->g;
  char a[32], b[32], x[32], y[32], mo[32];

  e->y += SVG_LINE;
  svg_text (&e->v, SVG_MARGIN, e->y, "start", 1, "stripe %" PRIu64 ": array "
            "[%s, %s) at member offset %s, parity on m%u; touched [%s, %s)",
            s->index, teach_size (s->array_base, a, sizeof a),
            teach_size (s->array_base + g->stripe_data, b, sizeof b),
            teach_size (s->member_base, mo, sizeof mo), s->parity,
            teach_size (s->array_base + s->a, x, sizeof x),
            teach_size (s->array_base + s->b, y, sizeof y));
  if (s->nseg == 0) {
    e->y += SVG_LINE;
    svg_text (&e->v, SVG_MARGIN, e->y, "start", 0, "no I/O: a trim of part of a "
              "stripe changes nothing");
  }
  for (unsigned i = 0; i < s->nseg; i++) {
    const struct explain_seg *seg = &s->seg[i];

    e->y += SVG_LINE;
    svg_text (&e->v, SVG_MARGIN, e->y, "start", 0, "chunk bytes [%s, %s): %s",
              teach_size (seg->x, x, sizeof x),
              teach_size (seg->y, y, sizeof y),
              explain_kind_title (seg->kind));
  }
  e->y += SVG_GAP;
}

void
explain_svg_stripe (struct explain_svg *e, const struct explain_stripe *s)
{
  heading (e, s);
  row (e, s, "request");
  touched_bands (e, s);
  row_labels (e, s);
  e->y += SVG_PITCH_Y;
  row (e, s, "1. read");
  io_bands (e, s, true);
  row_labels (e, s);
  e->y += SVG_BOX_H;
  xor_lines (e, s);
  row (e, s, "3. write");
  io_bands (e, s, false);
  row_labels (e, s);
  e->y += SVG_PITCH_Y + SVG_GAP;
}

static void
legend (struct svg *v, const struct teach *t, double y)
{
  enum svg_fill fills[] = { SVG_DATA, SVG_PARITY, SVG_TOUCHED, SVG_READ,
                            SVG_WRITTEN, SVG_MISSING };

  svg_legend (v, SVG_MARGIN, y, fills, t->missing >= 0 ? 6 : 5);
}

int
explain_svg_close (struct explain_svg *e, const char *const *footer,
                   unsigned nfooter)
{
  const double map_w = 2 * SVG_MARGIN + LABEL_W + e->t->g.members * SVG_PITCH_X;
  const unsigned width = map_w > MIN_WIDTH ? (unsigned) map_w : MIN_WIDTH;
  double y = e->y + SVG_LINE;
  struct svg v;

  if (fclose (e->v.f) != 0 || footer == NULL) {
    free (e->body);
    free (e);
    return footer == NULL ? 0 : tool_error ("out of memory");
  }
  svg_begin (&v, stdout, width,
             (unsigned) (y + nfooter * SVG_LINE + SVG_MARGIN),
             "raid5ctl explain");
  svg_text (&v, SVG_MARGIN, SVG_MARGIN + SVG_FONT, "start", 1, "%s", e->title);
  legend (&v, e->t, SVG_MARGIN + SVG_FONT + SVG_LINE);
  fwrite (e->body, 1, e->body_len, stdout);
  for (unsigned i = 0; i < nfooter; i++, y += SVG_LINE)
    svg_text (&v, SVG_MARGIN, y, "start", i == 0, "%s", footer[i]);
  svg_end (&v);
  free (e->body);
  free (e);
  return 0;
}
