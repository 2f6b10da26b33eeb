/* tools/svg.h -- raid5ctl's pictures: the few SVG shapes layout --svg
 * and explain --svg draw, with one palette, the way a teacher draws a
 * stripe map on a board: a box per chunk (data, parity, missing), bands
 * inside it over the bytes a request touches, reads and writes.
 *
 * Coordinates and sizes are SVG user units (pixels at scale 1).  Every
 * text given is escaped here (&, <, >, ") so paths and labels may hold
 * anything.  Output goes to the FILE given to svg_begin; write errors
 * are found by the caller's fflush/ferror, as for the text reports.
 *
 * Boxes never touch: callers leave SVG_GAP between them, so each chunk
 * box is one shape on the screen (the tests count them in a
 * screenshot).
 */
#ifndef TOOLS_SVG_H
#define TOOLS_SVG_H

#include <stdio.h>

/* What a shape shows; one fill colour each (svg.c's palette). */
enum svg_fill {
  SVG_DATA,                   /* a data chunk */
  SVG_PARITY,                 /* a parity chunk */
  SVG_MISSING,                /* a chunk on the missing member */
  SVG_TOUCHED,                /* bytes the request asks for */
  SVG_READ,                   /* bytes read from the member */
  SVG_WRITTEN,                /* bytes written (or zeroed, punched) */
  SVG_FILLS
};

#define SVG_GAP 8                /* between boxes */
#define SVG_BOX_W 96             /* a chunk box */
#define SVG_BOX_H 40
#define SVG_PITCH_X (SVG_BOX_W + SVG_GAP)   /* from one box to the next */
#define SVG_PITCH_Y (SVG_BOX_H + SVG_GAP)
#define SVG_MARGIN 16            /* around the picture */
#define SVG_FONT 13              /* text size, and a line is SVG_FONT + 5 */
#define SVG_LINE (SVG_FONT + 5)

struct svg {
  FILE *f;
};

/* The document: width x height, with the palette as a style sheet and a
 * white background; title is shown in viewers' tab.
 */
void svg_begin (struct svg *s, FILE *f, unsigned width, unsigned height,
                const char *title) __attribute__((nonnull));
void svg_end (struct svg *s) __attribute__((nonnull));

/* A chunk box at (x, y), SVG_BOX_W x SVG_BOX_H, filled as `fill`, with
 * label centred in it (NULL: none).
 */
void svg_box (struct svg *s, double x, double y, enum svg_fill fill,
              const char *label) __attribute__((nonnull (1)));

/* The label of the box at (x, y) alone, haloed so that it reads over
 * bands: boxes with bands are drawn as box (no label), bands, label.
 */
void svg_box_label (struct svg *s, double x, double y, const char *label)
  __attribute__((nonnull));

/* A band inside the box at (x, y), its whole height: the fraction
 * [from, to) of its width (chunk bytes over the chunk size).
 */
void svg_band (struct svg *s, double x, double y, double from, double to,
               enum svg_fill fill) __attribute__((nonnull));

/* Text with its left end (anchor "start"), middle ("middle") or right
 * end ("end") at (x, y); bold or not.  printf-style.
 */
void svg_text (struct svg *s, double x, double y, const char *anchor,
               int bold, const char *fmt, ...)
  __attribute__((nonnull (1, 4, 6), format (printf, 6, 7)));

/* A legend line at (x, y): a small swatch and a name for each of the n
 * fills; returns the width it took.
 */
double svg_legend (struct svg *s, double x, double y,
                   const enum svg_fill *fills, unsigned n)
  __attribute__((nonnull));

#endif /* TOOLS_SVG_H */
