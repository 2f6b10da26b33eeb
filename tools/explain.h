/* tools/explain.h -- raid5ctl explain, internal: one stripe of a request
 * as the planner (raid/plan.h) planned it, taken apart for the reader.
 *
 * explain.c drives: it plans the request a stripe at a time and adds up
 * the cost.  explain-stripe.c takes one stripe's plan apart: it cuts the
 * touched bytes into the planner's segments (plan.h: at most three
 * intervals of chunk offsets, each touching a fixed set of data chunks),
 * reads back from the plan's own I/Os which strategy each segment got,
 * and prints the I/Os, the XOR steps and their buffers by name (old D4,
 * new P, ...); explain-why.c says why.  The strategy is inferred from what the plan
 * does, never recomputed; the planner's own per-kind counts must agree
 * (struct explain_stripe.agrees), or explain says so.
 */
#ifndef TOOLS_EXPLAIN_H
#define TOOLS_EXPLAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "raid/plan.h"
#include "tools/json.h"
#include "tools/teach.h"

/* A segment: chunk offsets [x, y) of the stripe, the data indices it
 * touches, and the strategy the plan used there.
 */
struct explain_seg {
  uint64_t x, y;
  uint64_t mask;              /* bit dd set: data index dd is touched */
  enum r5_seg_kind kind;
};

struct explain_stripe {
  const struct teach *t;
  const struct r5_plan *p;    /* this stripe's plan only */
  enum r5_op op;
  uint64_t index;
  uint64_t member_base;       /* member offset of the stripe */
  uint64_t array_base;        /* array offset of its first data byte */
  uint64_t a, b;              /* touched bytes, stripe-data coordinates */
  uint64_t req_off;           /* array offset of client buffer byte 0 */
  unsigned parity;
  bool whole;                 /* zero/trim of the whole stripe */
  unsigned nseg;              /* 0: nothing to do (a partial trim) */
  struct explain_seg seg[3];
  bool agrees;                /* inferred kinds == the planner's counts */
};

/* Fill in s (whose t, p, op, index, a, b and req_off are set) from its
 * plan.
 */
void explain_analyse (struct explain_stripe *s) __attribute__((nonnull));

/* The stripe, its segments with the reasons, and its I/Os, as text or as
 * one JSON object (an element of "stripes").
 */
void explain_print_stripe (const struct explain_stripe *s)
  __attribute__((nonnull));
void explain_json_stripe (struct json *j, const struct explain_stripe *s)
  __attribute__((nonnull));

/* The strategy's name for people ("RCW (reconstruct-write)"). */
const char *explain_kind_title (enum r5_seg_kind kind);

/* Shared by explain-stripe.c and explain-why.c. */
#define EXPLAIN_CELL 24         /* "D12", "P" */
#define EXPLAIN_LABEL 64        /* "new P (= old D12)" */
#define EXPLAIN_WHY 400         /* one reason */

/* Why seg got its strategy, in words; out has EXPLAIN_WHY bytes. */
const char *explain_why (const struct explain_stripe *s,
                         const struct explain_seg *seg, char *out)
  __attribute__((nonnull));

/* What member holds in this stripe ("D4", "P"); EXPLAIN_CELL bytes. */
const char *explain_cell (const struct explain_stripe *s, unsigned member,
                          char *out) __attribute__((nonnull));

/* A buffer by what it holds: "new D4", "old P", "zeroes", "new P";
 * EXPLAIN_LABEL bytes.
 */
const char *explain_buf_label (const struct explain_stripe *s,
                               struct r5_buf b, char *out)
  __attribute__((nonnull));

/* "D4, D5" (each after prefix) for the data indices of the stripe that
 * are in mask (in = true) or not in it.
 */
const char *explain_list_chunks (const struct explain_stripe *s,
                                 uint64_t mask, bool in, const char *prefix,
                                 char *out, size_t len)
  __attribute__((nonnull));

/* Is the request a write of data (write or zero)? */
bool explain_writing (const struct explain_stripe *s) __attribute__((nonnull));

/* What a partial trim of a stripe does (nothing), and why. */
extern const char explain_partial_trim[];

/* The picture (explain-svg.c, --svg): stripes are drawn into a buffer
 * as walk meets them; close writes the whole SVG to stdout with the
 * footer lines (the cost) under them, and frees e (footer NULL: frees
 * it, writing nothing, after a failure).  open returns NULL
 * and close TOOL_FAIL after the error line (out of memory, or stdout);
 * close returns 0 otherwise.
 */
struct explain_svg;
struct explain_svg *explain_svg_open (const struct teach *t,
                                      const char *request)
  __attribute__((nonnull));
void explain_svg_stripe (struct explain_svg *e,
                         const struct explain_stripe *s)
  __attribute__((nonnull));
int explain_svg_close (struct explain_svg *e, const char *const *footer,
                       unsigned nfooter) __attribute__((nonnull (1)));

/* raid5ctl explain check (explain-check.c): argv[0] is "check". */
int explain_check_main (int argc, char **argv);
/* raid5ctl explain grow (explain-grow.c). */
int explain_grow_main (int argc, char **argv);

#endif /* TOOLS_EXPLAIN_H */
