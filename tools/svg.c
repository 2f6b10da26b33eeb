/* tools/svg.c -- the shapes of raid5ctl's pictures (see svg.h). */
#include <config.h>

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "tools/svg.h"

static const struct {
  const char *cls, *colour, *name;
} palette[SVG_FILLS] = {
  [SVG_DATA] = { "data", "#9fc5e8", "data" },
  [SVG_PARITY] = { "parity", "#f6b26b", "parity" },
  [SVG_MISSING] = { "missing", "#cccccc", "missing member" },
  [SVG_TOUCHED] = { "touched", "#ffd966", "touched by the request" },
  [SVG_READ] = { "read", "#6aa84f", "read" },
  [SVG_WRITTEN] = { "written", "#cc0000", "written" },
};

static void
put_escaped (FILE *f, const char *text)
{
  for (; *text; text++)
    switch (*text) {
    case '&': fputs ("&amp;", f); break;
    case '<': fputs ("&lt;", f); break;
    case '>': fputs ("&gt;", f); break;
    case '"': fputs ("&quot;", f); break;
    default: fputc (*text, f);
    }
}

void
svg_begin (struct svg *s, FILE *f, unsigned width, unsigned height,
           const char *title)
{
  s->f = f;
  fprintf (f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
           "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" "
           "height=\"%u\" viewBox=\"0 0 %u %u\">\n<title>", width, height,
           width, height);
  put_escaped (f, title);
  fprintf (f, "</title>\n<style>\n"
           "  text { font-family: sans-serif; font-size: %dpx; fill: #222; }\n"
           "  .bold { font-weight: bold; }\n"
           "  .label { paint-order: stroke; stroke: #ffffff; "
           "stroke-width: 3px; }\n"
           "  .chunk { stroke: #333; stroke-width: 1; }\n"
           "  .band { stroke: none; }\n"
           "  .swatch { stroke: #333; stroke-width: 1; }\n"
           "  .missing { stroke-dasharray: 4 3; }\n", SVG_FONT);
  for (unsigned i = 0; i < SVG_FILLS; i++)
    fprintf (f, "  .%s { fill: %s; }\n", palette[i].cls, palette[i].colour);
  fprintf (f, "</style>\n<rect width=\"100%%\" height=\"100%%\" "
           "fill=\"#ffffff\"/>\n");
}

void
svg_end (struct svg *s)
{
  fputs ("</svg>\n", s->f);
}

void
svg_box (struct svg *s, double x, double y, enum svg_fill fill,
         const char *label)
{
  fprintf (s->f, "<rect class=\"chunk %s\" x=\"%.1f\" y=\"%.1f\" "
           "width=\"%d\" height=\"%d\"/>\n", palette[fill].cls, x, y,
           SVG_BOX_W, SVG_BOX_H);
  if (label != NULL)
    svg_box_label (s, x, y, label);
}

void
svg_box_label (struct svg *s, double x, double y, const char *label)
{
  fprintf (s->f, "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" "
           "text-anchor=\"middle\">", x + SVG_BOX_W / 2.0,
           y + SVG_BOX_H / 2.0 + SVG_FONT / 3.0);
  put_escaped (s->f, label);
  fputs ("</text>\n", s->f);
}

void
svg_band (struct svg *s, double x, double y, double from, double to,
          enum svg_fill fill)
{
  const double inner_w = SVG_BOX_W - 2, h = SVG_BOX_H - 2;
  double w = (to - from) * inner_w;

  if (w < 2)                  /* a 512-byte band of a 64M chunk: seen */
    w = 2;
  fprintf (s->f, "<rect class=\"band %s\" x=\"%.1f\" y=\"%.1f\" "
           "width=\"%.1f\" height=\"%.1f\"/>\n", palette[fill].cls,
           x + 1 + from * inner_w, y + 1, w, h);
}

void
svg_text (struct svg *s, double x, double y, const char *anchor, int bold,
          const char *fmt, ...)
{
  char text[512];
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (text, sizeof text, fmt, ap);
  va_end (ap);
  fprintf (s->f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"%s>", x, y,
           anchor, bold ? " class=\"bold\"" : "");
  put_escaped (s->f, text);
  fputs ("</text>\n", s->f);
}

double
svg_legend (struct svg *s, double x, double y, const enum svg_fill *fills,
            unsigned n)
{
  const double swatch = SVG_FONT, advance = SVG_FONT * 0.52;
  double at = x;

  for (unsigned i = 0; i < n; i++) {
    const char *name = palette[fills[i]].name;

    fprintf (s->f, "<rect class=\"swatch %s\" x=\"%.1f\" y=\"%.1f\" "
             "width=\"%.0f\" height=\"%.0f\"/>\n", palette[fills[i]].cls,
             at, y - swatch + 2, swatch, swatch);
    svg_text (s, at + swatch + 5, y, "start", 0, "%s", name);
    at += swatch + 5 + (double) strlen (name) * advance + 2 * SVG_GAP;
  }
  return at - x;
}
