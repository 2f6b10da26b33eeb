/* tools/explain-stripe.c -- one stripe of raid5ctl explain: its segments,
 * the strategy its plan shows for each, and its member I/Os and XOR steps
 * with every buffer named (see explain.h).  The reasons are in
 * explain-why.c.
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "raid/layout.h"
#include "tools/explain.h"

#define WRAP 79                 /* columns for the reasons */

static const char *const titles[R5_SEG_KINDS] = {
  [R5_SEG_READ] = "read",
  [R5_SEG_DEGRADED_READ] = "degraded read",
  [R5_SEG_FULL_WRITE] = "full-stripe write",
  [R5_SEG_RCW] = "RCW (reconstruct-write)",
  [R5_SEG_RMW] = "RMW (read-modify-write)",
  [R5_SEG_DATA_ONLY] = "data-only write",
  [R5_SEG_ZERO_STRIPE] = "zero-stripe",
  [R5_SEG_TRIM_STRIPE] = "trim-stripe",
};

static const char *const verbs[] = {
  [R5_IO_READ] = "read", [R5_IO_WRITE] = "write",
  [R5_IO_ZERO] = "zero", [R5_IO_TRIM] = "trim",
};

const char *
explain_kind_title (enum r5_seg_kind kind)
{
  return (unsigned) kind < R5_SEG_KINDS ? titles[kind] : "?";
}

bool
explain_writing (const struct explain_stripe *s)
{
  return s->op == R5_OP_WRITE || s->op == R5_OP_ZERO;
}

/* The planner's cut (plan.h): the partial ends of the first and last
 * touched chunks split the chunk offsets into at most three segments.
 */
static void
cut_segments (struct explain_stripe *s)
{
  uint64_t c = s->t->g.chunk;
  unsigned dd0 = (unsigned) (s->a / c), dd1 = (unsigned) ((s->b - 1) / c);
  uint64_t lo0 = s->a - dd0 * c, hi1 = s->b - dd1 * c;
  uint64_t pt[4] = { 0, lo0 < hi1 ? lo0 : hi1, lo0 < hi1 ? hi1 : lo0, c };

  s->nseg = 0;
  for (unsigned i = 0; i < 3; i++) {
    uint64_t x = pt[i], y = pt[i + 1], mask = 0;

    for (unsigned dd = dd0; dd <= dd1 && x < y; dd++)
      if ((dd == dd0 ? lo0 : 0) <= x && y <= (dd == dd1 ? hi1 : c))
        mask |= UINT64_C (1) << dd;
    if (mask != 0)
      s->seg[s->nseg++] = (struct explain_seg) { x, y, mask, R5_SEG_READ };
  }
}

/* Does the plan have an I/O of this kind (on member, unless -1; into
 * scratch only, if asked) within the segment's bytes?
 */
static bool
seg_has (const struct explain_stripe *s, const struct explain_seg *seg,
         enum r5_io_kind kind, int member, bool scratch_only)
{
  uint64_t lo = s->member_base + seg->x, hi = s->member_base + seg->y;

  for (size_t i = 0; i < s->p->nios; i++) {
    const struct r5_io *io = &s->p->ios[i];

    if (io->kind == kind && (member < 0 || io->member == (unsigned) member) &&
        (!scratch_only || io->buf.kind == R5_BUF_SCRATCH) &&
        io->member_off < hi && lo < io->member_off + io->len)
      return true;
  }
  return false;
}

/* What the plan did in a segment: a read into scratch feeds a rebuild;
 * a write without parity is data-only; reading old parity is RMW; other
 * reads are RCW; no reads at all, a full-stripe write.
 */
static enum r5_seg_kind
infer_kind (const struct explain_stripe *s, const struct explain_seg *seg)
{
  if (s->op == R5_OP_READ)
    return seg_has (s, seg, R5_IO_READ, -1, true) ? R5_SEG_DEGRADED_READ
                                                  : R5_SEG_READ;
  if (!seg_has (s, seg, R5_IO_WRITE, (int) s->parity, false))
    return R5_SEG_DATA_ONLY;
  if (seg_has (s, seg, R5_IO_READ, (int) s->parity, false))
    return R5_SEG_RMW;
  if (seg_has (s, seg, R5_IO_READ, -1, false))
    return R5_SEG_RCW;
  return R5_SEG_FULL_WRITE;
}

void
explain_analyse (struct explain_stripe *s)
{
  const struct r5_geom *g = &s->t->g;
  uint64_t count[R5_SEG_KINDS] = { 0 };

  s->member_base = r5_stripe_member_off (g, s->index);
  s->array_base = s->index * g->stripe_data;
  s->parity = r5_parity_member (g, s->index);
  s->whole = (s->op == R5_OP_ZERO || s->op == R5_OP_TRIM) &&
    s->a == 0 && s->b == g->stripe_data;
  if (s->whole) {
    s->nseg = 1;
    s->seg[0] = (struct explain_seg) {
      0, g->chunk, (UINT64_C (1) << g->data_members) - 1,
      s->op == R5_OP_TRIM ? R5_SEG_TRIM_STRIPE : R5_SEG_ZERO_STRIPE };
  }
  else if (s->op == R5_OP_TRIM)
    s->nseg = 0;              /* partial trim: the plan is empty */
  else {
    cut_segments (s);
    for (unsigned i = 0; i < s->nseg; i++)
      s->seg[i].kind = infer_kind (s, &s->seg[i]);
  }
  for (unsigned i = 0; i < s->nseg; i++)
    count[s->seg[i].kind]++;
  s->agrees = memcmp (count, s->p->segs, sizeof count) == 0;
}

/* ---- names of things ---- */

const char *
explain_cell (const struct explain_stripe *s, unsigned member, char *out)
{
  return teach_cell (&s->t->g, s->index, member, out, EXPLAIN_CELL);
}

/* The read that filled scratch byte off; NULL: the byte is computed. */
static const struct r5_io *
scratch_source (const struct r5_plan *p, uint64_t off)
{
  for (size_t i = 0; i < p->nios; i++) {
    const struct r5_io *io = &p->ios[i];

    if (io->kind == R5_IO_READ && io->buf.kind == R5_BUF_SCRATCH &&
        io->buf.off <= off && off < io->buf.off + io->len)
      return io;
  }
  return NULL;
}

const char *
explain_buf_label (const struct explain_stripe *s, struct r5_buf b,
                   char *out)
{
  const struct r5_io *io;
  char c[EXPLAIN_CELL];

  if (b.kind == R5_BUF_ZERO)
    return strcpy (out, "zeroes");
  if (b.kind == R5_BUF_CLIENT) {
    snprintf (out, EXPLAIN_LABEL, "%sD%" PRIu64,
              s->op == R5_OP_WRITE ? "new " : "",
              (s->req_off + b.off) / s->t->g.chunk);
    return out;
  }
  if ((io = scratch_source (s->p, b.off)) == NULL)
    return strcpy (out, "new P");
  snprintf (out, EXPLAIN_LABEL, "%s%s", explain_writing (s) ? "old " : "",
            explain_cell (s, io->member, c));
  return out;
}

/* What an I/O moves: "old D1", "new P", "new P (= old D1)", "zero D3". */
static const char *
io_label (const struct explain_stripe *s, const struct r5_io *io, char *out)
{
  char c[EXPLAIN_CELL], b[EXPLAIN_LABEL];

  explain_cell (s, io->member, c);
  if (io->kind == R5_IO_READ)
    snprintf (out, EXPLAIN_LABEL, "%s%s%s", explain_writing (s) ? "old " : "",
              c, !explain_writing (s) && io->buf.kind == R5_BUF_SCRATCH
              ? " (for the XOR)" : "");
  else if (io->kind != R5_IO_WRITE)
    snprintf (out, EXPLAIN_LABEL, "%s %s",
              io->kind == R5_IO_ZERO ? "zero" : "punch", c);
  else if (io->member != s->parity)
    snprintf (out, EXPLAIN_LABEL, "%s", explain_buf_label (s, io->buf, b));
  else if (strcmp (explain_buf_label (s, io->buf, b), "new P") == 0)
    snprintf (out, EXPLAIN_LABEL, "new P");
  else
    snprintf (out, EXPLAIN_LABEL, "new P (= %.40s)", b);
  return out;
}

const char *
explain_list_chunks (const struct explain_stripe *s, uint64_t mask, bool in,
                     const char *prefix, char *out, size_t len)
{
  size_t n = 0;

  *out = '\0';
  for (unsigned dd = 0; dd < s->t->g.data_members && n < len; dd++)
    if ((((mask >> dd) & 1) != 0) == in)
      n += (size_t) snprintf (out + n, len - n, "%s%sD%" PRIu64,
                              n ? ", " : "", prefix,
                              teach_chunk_number (&s->t->g, s->index, dd));
  return out;
}

/* ---- text ---- */

/* "    TITLE: TEXT", TEXT wrapped at word boundaries to WRAP columns. */
static void
print_wrapped (const char *title, const char *text)
{
  int col = printf ("    %s:", title);

  while (*text) {
    size_t w = strcspn (text, " ");

    if (col + 1 + (int) w > WRAP && col > 6)
      col = printf ("\n      ") - 1;
    col += printf (" %.*s", (int) w, text);
    text += w;
    text += strspn (text, " ");
  }
  printf ("\n");
}

static void
print_seg (const struct explain_stripe *s, const struct explain_seg *seg)
{
  char x[32], y[32], in[EXPLAIN_WHY / 2], out[EXPLAIN_WHY / 2];
  char w[EXPLAIN_WHY];

  explain_list_chunks (s, seg->mask, true, "", in, sizeof in);
  explain_list_chunks (s, seg->mask, false, "", out, sizeof out);
  if (s->whole)
    printf ("  the whole stripe\n");
  else
    printf ("  chunk bytes [%s, %s): %s %s%s%s%s\n",
            teach_size (seg->x, x, sizeof x), teach_size (seg->y, y, sizeof y),
            in, s->op == R5_OP_READ ? "read" : "changed", *out ? "; " : "",
            out, *out ? " untouched" : "");
  explain_why (s, seg, w);
  print_wrapped (explain_kind_title (seg->kind), w);
}

static void
print_io (const struct explain_stripe *s, const struct r5_io *io)
{
  char l[32], x[32], y[32], what[EXPLAIN_LABEL];
  uint64_t co = io->member_off - s->member_base;

  printf ("    %-5s  m%-2u @ %-12" PRIu64 " %6s  %s [%s, %s)\n",
          verbs[io->kind], io->member, io->member_off,
          teach_size (io->len, l, sizeof l), io_label (s, io, what),
          teach_size (co, x, sizeof x), teach_size (co + io->len, y, sizeof y));
}

static void
print_xor (const struct explain_stripe *s, const struct r5_xor *xr)
{
  char l[32], b[EXPLAIN_LABEL];

  printf ("    %-5s  %-18s %6s  %s =", "xor", "",
          teach_size (xr->len, l, sizeof l), explain_buf_label (s, xr->dst, b));
  for (unsigned i = 0; i < xr->nsrc; i++)
    printf ("%s %s", i ? " ^" : "", explain_buf_label (s, xr->src[i], b));
  printf ("\n");
}

/* In the order they run: reads, XOR steps, writes. */
static void
print_ios (const struct explain_stripe *s)
{
  const struct r5_plan *p = s->p;

  for (size_t i = 0; i < p->nios; i++)
    if (p->ios[i].kind == R5_IO_READ)
      print_io (s, &p->ios[i]);
  for (size_t i = 0; i < p->nxors; i++)
    print_xor (s, &p->xors[i]);
  for (size_t i = 0; i < p->nios; i++)
    if (p->ios[i].kind != R5_IO_READ)
      print_io (s, &p->ios[i]);
}

void
explain_print_stripe (const struct explain_stripe *s)
{
  const struct r5_geom *g = &s->t->g;
  char a[32], b[32], x[32], y[32], mo[32];

  printf ("stripe %" PRIu64 ": array [%s, %s) at member offset %s, parity on "
          "m%u; touched [%s, %s)\n", s->index,
          teach_size (s->array_base, a, sizeof a),
          teach_size (s->array_base + g->stripe_data, b, sizeof b),
          teach_size (s->member_base, mo, sizeof mo), s->parity,
          teach_size (s->array_base + s->a, x, sizeof x),
          teach_size (s->array_base + s->b, y, sizeof y));
  if (s->nseg == 0)
    print_wrapped ("no I/O", explain_partial_trim);
  for (unsigned i = 0; i < s->nseg; i++)
    print_seg (s, &s->seg[i]);
  print_ios (s);
  if (!s->agrees)
    printf ("  note: the planner's own count of strategies differs from what "
            "its I/Os show\n");
  printf ("\n");
}

/* ---- JSON ---- */

static void
json_seg (struct json *j, const struct explain_stripe *s,
          const struct explain_seg *seg)
{
  char w[EXPLAIN_WHY];

  tool_json_open (j, NULL, '{');
  tool_json_u64 (j, "chunk_start", seg->x);
  tool_json_u64 (j, "chunk_end", seg->y);
  tool_json_open (j, "touched", '[');
  for (unsigned dd = 0; dd < s->t->g.data_members; dd++)
    if ((seg->mask >> dd) & 1)
      tool_json_u64 (j, NULL, teach_chunk_number (&s->t->g, s->index, dd));
  tool_json_close (j, '[');
  tool_json_str (j, "strategy", r5_seg_kind_name (seg->kind));
  tool_json_str (j, "why", explain_why (s, seg, w));
  tool_json_close (j, '{');
}

static void
json_io (struct json *j, const struct explain_stripe *s, const struct r5_io *io)
{
  char what[EXPLAIN_LABEL];

  tool_json_open (j, NULL, '{');
  tool_json_str (j, "op", verbs[io->kind]);
  tool_json_u64 (j, "member", io->member);
  tool_json_u64 (j, "member_offset", io->member_off);
  tool_json_u64 (j, "length", io->len);
  tool_json_str (j, "what", io_label (s, io, what));
  tool_json_close (j, '{');
}

static void
json_xor (struct json *j, const struct explain_stripe *s,
          const struct r5_xor *xr)
{
  char b[EXPLAIN_LABEL];

  tool_json_open (j, NULL, '{');
  tool_json_u64 (j, "length", xr->len);
  tool_json_str (j, "result", explain_buf_label (s, xr->dst, b));
  tool_json_open (j, "sources", '[');
  for (unsigned i = 0; i < xr->nsrc; i++)
    tool_json_str (j, NULL, explain_buf_label (s, xr->src[i], b));
  tool_json_close (j, '[');
  tool_json_close (j, '{');
}

static void
json_ios (struct json *j, const struct explain_stripe *s, bool reads)
{
  tool_json_open (j, reads ? "reads" : "writes", '[');
  for (size_t i = 0; i < s->p->nios; i++)
    if ((s->p->ios[i].kind == R5_IO_READ) == reads)
      json_io (j, s, &s->p->ios[i]);
  tool_json_close (j, '[');
}

void
explain_json_stripe (struct json *j, const struct explain_stripe *s)
{
  tool_json_open (j, NULL, '{');
  tool_json_u64 (j, "stripe", s->index);
  tool_json_u64 (j, "array_offset", s->array_base);
  tool_json_u64 (j, "array_end", s->array_base + s->t->g.stripe_data);
  tool_json_u64 (j, "member_offset", s->member_base);
  tool_json_u64 (j, "parity", s->parity);
  tool_json_u64 (j, "touched_offset", s->array_base + s->a);
  tool_json_u64 (j, "touched_end", s->array_base + s->b);
  tool_json_open (j, "segments", '[');
  for (unsigned i = 0; i < s->nseg; i++)
    json_seg (j, s, &s->seg[i]);
  tool_json_close (j, '[');
  if (s->nseg == 0)
    tool_json_str (j, "note", explain_partial_trim);
  json_ios (j, s, true);
  tool_json_open (j, "xors", '[');
  for (size_t i = 0; i < s->p->nxors; i++)
    json_xor (j, s, &s->p->xors[i]);
  tool_json_close (j, '[');
  json_ios (j, s, false);
  tool_json_bool (j, "planner_agrees", s->agrees);
  tool_json_close (j, '{');
}
