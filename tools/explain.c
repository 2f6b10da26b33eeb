/* tools/explain.c -- raid5ctl explain: what a read, write, zero or trim of
 * an array range does on the members, and why.
 *
 * The request is planned by the real planner (r5_plan_range), one stripe
 * at a time so that each stripe's plan can be shown on its own; each
 * stripe is taken apart by explain-stripe.c.  Then the cost: member I/Os
 * and bytes, write amplification, reads per client byte; and for writes
 * the classic lesson, computed by the same planner.
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "raid/layout.h"
#include "tools/explain.h"
#include "tools/raid5ctl.h"

#define SCRATCH_BUDGET (UINT64_C (1) << 30)
#define DEFAULT_SHOW 8u
#define MAX_STRIPES (UINT64_C (1) << 22)
#define LESSON_WRITE 4096u

struct explain_req {
  enum r5_op op;
  uint64_t off, len;
  uint64_t show;              /* stripes described in detail */
};

/* What the whole request costs (indexed by enum r5_io_kind). */
struct explain_cost {
  uint64_t ios[4], bytes[4];
  uint64_t xors, xor_bytes;
  uint64_t segs[R5_SEG_KINDS];
  uint64_t stripes, hidden_segs[R5_SEG_KINDS];
  bool agrees;
};

static const char *const op_names[] = {
  [R5_OP_READ] = "read", [R5_OP_WRITE] = "write",
  [R5_OP_ZERO] = "zero", [R5_OP_TRIM] = "trim",
};

static void
usage (void)
{
  printf (
"usage: raid5ctl explain read|write|zero|trim OFFSET LENGTH [--stripes K]\n"
"                        [GEOMETRY] [--missing SLOT] [--json|--svg]\n"
"                        [--from DISK...]\n"
"       raid5ctl explain check [--stripe S] [--member K] [GEOMETRY]\n"
"                        [--json] [--from DISK...]\n"
"       raid5ctl explain grow [--add K] [GEOMETRY]\n"
"\n"
"Run the planner on a request and say, per stripe and per segment (a run\n"
"of chunk offsets where the same data chunks are touched), which strategy\n"
"it chose and why: full-stripe write, reconstruct-write (RCW: read the\n"
"untouched chunks), read-modify-write (RMW: read old data and old parity),\n"
"degraded read or write, data-only, zero-stripe, trim-stripe.  Then every\n"
"member I/O in the order it runs (reads, XOR steps, writes: member, member\n"
"offset, length, what it carries), and the cost: bytes read and written,\n"
"member I/Os, write amplification and reads per client byte.\n"
"explain check shows on one row why parity can say that a stripe is wrong\n"
"but not which chunk, and what a checksum adds (its own --help: --stripe S,\n"
"--member K).\n"
"explain grow shows how md grows the array by members: which chunks move\n"
"where, and why the new shape's writes trail the old shape's reads (its\n"
"own --help).\n"
"OFFSET and LENGTH are bytes; suffixes s (512-byte sectors), K, M, G, T.\n"
"\n"
"  --stripes K          describe at most K stripes in detail (%u)\n"
"  --svg                draw them as an SVG picture (on standard output):\n"
"                       per stripe the request, 1. its reads, 2. the XOR\n"
"                       steps, 3. its writes, each to scale in its chunk\n"
TEACH_OPTIONS_HELP
"\n"
"Examples:\n"
"  raid5ctl explain write 0 4K --chunk 64K             RCW: 1 read, 2 writes\n"
"  raid5ctl explain write 0 4K --chunk 64K --disks 5   RMW: 2 reads, 2 writes\n"
"  raid5ctl explain write 0 128K --chunk 64K           full stripe: no reads\n"
"  raid5ctl explain read 64K 4K --chunk 64K --missing 1   degraded read\n"
"  raid5ctl explain write 0 4K --chunk 64K --svg > w.svg  as a picture\n",
          DEFAULT_SHOW);
}

static int
parse_op (const char *s, enum r5_op *op)
{
  for (unsigned i = 0; i < sizeof op_names / sizeof op_names[0]; i++)
    if (strcmp (s, op_names[i]) == 0) {
      *op = (enum r5_op) i;
      return 0;
    }
  return tool_error ("'%s': expected read, write, zero or trim", s);
}

/* More would never be walked: check_range refuses longer requests. */
static int
take_show (const char *arg, void *ctx)
{
  return tool_parse_uint ("--stripes", arg, 0, MAX_STRIPES, ctx);
}

static int
parse_args (int argc, char **argv, struct teach *t, struct explain_req *q)
{
  const struct teach_extra extra = { "stripes", take_show, &q->show, usage, true };

  if (teach_getopt (t, &argc, argv, &extra) != 0)
    return TOOL_FAIL;
  if (argc - optind != 3)
    return tool_error ("expected read|write|zero|trim OFFSET LENGTH (see "
                       "raid5ctl explain --help)");
  if (parse_op (argv[optind], &q->op) != 0 ||
      teach_parse_bytes ("OFFSET", argv[optind + 1], &q->off) != 0 ||
      teach_parse_bytes ("LENGTH", argv[optind + 2], &q->len) != 0)
    return TOOL_FAIL;
  if (q->len == 0)
    return tool_error ("LENGTH 0: nothing to explain");
  return teach_geometry (t);
}

static int
check_range (const struct teach *t, const struct explain_req *q)
{
  const struct r5_geom *g = &t->g;
  char cap[32];

  if (q->off >= g->capacity || q->len > g->capacity - q->off)
    return t->sized
      ? tool_error ("[%" PRIu64 ", +%" PRIu64 ") is beyond the end of the "
                    "array (%" PRIu64 " bytes, %s)", q->off, q->len,
                    g->capacity, tool_human (g->capacity, cap, sizeof cap))
      : tool_error ("[%" PRIu64 ", +%" PRIu64 ") is beyond the largest array "
                    "this geometry can describe", q->off, q->len);
  if ((q->off + q->len - 1) / g->stripe_data - q->off / g->stripe_data >=
      MAX_STRIPES)
    return tool_error ("LENGTH %" PRIu64 " spans more than %" PRIu64
                       " stripes; explain a smaller range", q->len,
                       MAX_STRIPES);
  return 0;
}

/* Plan [pos, stop), one stripe's part of the request, into p. */
static int
plan_stripe (struct r5_plan *p, const struct teach *t,
             const struct explain_req *q, uint64_t pos, uint64_t stop)
{
  uint64_t planned;

  r5_plan_reset (p);
  while (pos < stop) {
    if (r5_plan_range (p, &t->g, &(struct r5_range) {
          .op = q->op, .off = pos, .len = stop - pos, .req_off = q->off,
          .missing = t->missing, .budget = SCRATCH_BUDGET }, &planned) < 0)
      return tool_error ("out of memory");
    pos += planned;
  }
  return 0;
}

static void
add_cost (struct explain_cost *c, const struct explain_stripe *s, bool shown)
{
  const struct r5_plan *p = s->p;

  for (size_t i = 0; i < p->nios; i++) {
    c->ios[p->ios[i].kind]++;
    c->bytes[p->ios[i].kind] += p->ios[i].len;
  }
  for (size_t i = 0; i < p->nxors; i++) {
    c->xors++;
    c->xor_bytes += p->xors[i].len;
  }
  for (unsigned k = 0; k < R5_SEG_KINDS; k++) {
    c->segs[k] += p->segs[k];
    if (!shown)
      c->hidden_segs[k] += p->segs[k];
  }
  c->stripes++;
  c->agrees &= s->agrees;
}

/* What walk does with each stripe it describes in detail. */
struct explain_show {
  void (*fn) (void *ctx, const struct explain_stripe *s);
  void *ctx;
};

static void
show_text (void *ctx, const struct explain_stripe *s)
{
  (void) ctx;
  explain_print_stripe (s);
}

static void
show_json (void *ctx, const struct explain_stripe *s)
{
  explain_json_stripe (ctx, s);
}

static void
show_svg (void *ctx, const struct explain_stripe *s)
{
  explain_svg_stripe (ctx, s);
}

/* Plan the request stripe by stripe, adding to *c; hand the first
 * q->show stripes to show (NULL: none).
 */
static int
walk (const struct teach *t, const struct explain_req *q,
      struct explain_cost *c, const struct explain_show *show)
{
  const struct r5_geom *g = &t->g;
  uint64_t end = q->off + q->len, stop;
  struct r5_plan p;
  int r = 0;

  r5_plan_init (&p);
  *c = (struct explain_cost) { .agrees = true };
  for (uint64_t pos = q->off; pos < end && r == 0; pos = stop) {
    uint64_t index = pos / g->stripe_data, base = index * g->stripe_data;
    struct explain_stripe s = { .t = t, .p = &p, .op = q->op,
                                .index = index, .req_off = q->off };
    bool shown = c->stripes < q->show;

    stop = end - base < g->stripe_data ? end : base + g->stripe_data;
    if ((r = plan_stripe (&p, t, q, pos, stop)) != 0)
      break;
    s.a = pos - base;
    s.b = stop - base;
    explain_analyse (&s);
    if (shown && show != NULL)
      show->fn (show->ctx, &s);
    add_cost (c, &s, shown);
  }
  r5_plan_free (&p);
  return r;
}

static uint64_t
total_ios (const struct explain_cost *c)
{
  return c->ios[0] + c->ios[1] + c->ios[2] + c->ios[3];
}

/* Bytes the members take: written, zeroed or punched. */
static uint64_t
out_bytes (const struct explain_cost *c)
{
  return c->bytes[R5_IO_WRITE] + c->bytes[R5_IO_ZERO] + c->bytes[R5_IO_TRIM];
}

/* "full-stripe x 1, rcw x 2", or "none". */
static const char *
kinds_text (const uint64_t *segs, char *out, size_t len)
{
  size_t n = 0;

  *out = '\0';
  for (unsigned k = 0; k < R5_SEG_KINDS && n < len; k++)
    if (segs[k] > 0)
      n += (size_t) snprintf (out + n, len - n, "%s%s x %" PRIu64,
                              n ? ", " : "", r5_seg_kind_name (k), segs[k]);
  return n ? out : strcpy (out, "none");
}

static void
print_kinds (const uint64_t *segs)
{
  char text[256];

  printf ("%s", kinds_text (segs, text, sizeof text));
}

static void
print_out_bytes (const struct explain_cost *c)
{
  char b[32];

  printf (", writes %" PRIu64 " (%s)", c->ios[R5_IO_WRITE],
          teach_size (c->bytes[R5_IO_WRITE], b, sizeof b));
  if (c->ios[R5_IO_ZERO])
    printf (", zeroes %" PRIu64 " (%s)", c->ios[R5_IO_ZERO],
            teach_size (c->bytes[R5_IO_ZERO], b, sizeof b));
  if (c->ios[R5_IO_TRIM])
    printf (", trims %" PRIu64 " (%s)", c->ios[R5_IO_TRIM],
            teach_size (c->bytes[R5_IO_TRIM], b, sizeof b));
  printf ("\n");
}

static void
print_cost (const struct explain_req *q, const struct explain_cost *c)
{
  char a[32], b[32], l[32];

  if (c->stripes > q->show) {
    printf ("... and %" PRIu64 " more stripes (--stripes shows them): ",
            c->stripes - q->show);
    print_kinds (c->hidden_segs);
    printf ("\n\n");
  }
  teach_size (q->len, l, sizeof l);
  printf ("cost of this %s of %s over %" PRIu64 " stripe%s:\n",
          op_names[q->op], l, c->stripes, c->stripes == 1 ? "" : "s");
  printf ("  reads %" PRIu64 " (%s)", c->ios[R5_IO_READ],
          teach_size (c->bytes[R5_IO_READ], a, sizeof a));
  if (q->op != R5_OP_READ)
    print_out_bytes (c);
  else
    printf ("\n");
  printf ("  member I/Os %" PRIu64, total_ios (c));
  if (c->xors > 0)
    printf (", XOR steps %" PRIu64 " over %s\n", c->xors,
            teach_size (c->xor_bytes, a, sizeof a));
  else
    printf (", no XOR\n");
  if (q->op == R5_OP_WRITE || q->op == R5_OP_ZERO)
    printf ("  write amplification %.2f: %s to the members for %s from the "
            "client\n", (double) out_bytes (c) / (double) q->len,
            teach_size (out_bytes (c), b, sizeof b), l);
  else if (q->op == R5_OP_TRIM)
    printf ("  punched on the members: %s for %s asked (parts of stripes "
            "are left alone)\n", teach_size (out_bytes (c), b, sizeof b), l);
  printf ("  reads per client byte %.2f\n",
          (double) c->bytes[R5_IO_READ] / (double) q->len);
  printf ("  strategies: ");
  print_kinds (c->segs);
  printf ("\n");
  if (!c->agrees)
    printf ("  note: for some stripes the planner's count of strategies "
            "differs from what its I/Os show\n");
}

/* The cost of op [off, off+len) on this chunk and layout with `members`
 * members, none missing.
 */
static int
lesson_case (const struct teach *t, unsigned members, uint64_t off,
             uint64_t len, struct explain_cost *c)
{
  struct teach v = *t;
  uint64_t sd = t->g.chunk * (members - 1);
  struct explain_req q = { R5_OP_WRITE, off, len, 0 };

  v.missing = -1;
  if (r5_geom_init (&v.g, &(struct r5_geom_params) {
      .members = members, .chunk = t->g.chunk, .layout = t->g.layout,
      .data_offset = 0, .member_bytes = (INT64_MAX / sd) * t->g.chunk }) < 0)
    return tool_error ("lesson: no geometry for %u members", members);
  return walk (&v, &q, c, NULL);
}

static const char *
only_kind (const struct explain_cost *c)
{
  if (c->segs[R5_SEG_RCW] > 0)
    return "RCW:";
  if (c->segs[R5_SEG_RMW] > 0)
    return "RMW:";
  return "full-stripe:";
}

static int
print_small_write (const struct teach *t, unsigned members, const char *note)
{
  struct explain_cost c;

  if (lesson_case (t, members, 0, LESSON_WRITE, &c) != 0)
    return TOOL_FAIL;
  printf ("  a 4K write, %2u members: %s %" PRIu64 " read%s + %" PRIu64
          " writes%s\n", members, only_kind (&c), c.ios[R5_IO_READ],
          c.ios[R5_IO_READ] == 1 ? "" : "s", c.ios[R5_IO_WRITE], note);
  return 0;
}

/* Parity-first and parity-last: the member that pays for every write. */
static void
print_fixed_parity (const struct r5_geom *g)
{
  unsigned pm = r5_parity_member (g, 0);

  if (r5_layout_period (g) != 1)
    return;
  printf ("  %s: parity is on m%u in every stripe, so every write also "
          "writes m%u;\n  the left-* and right-* layouts move parity and "
          "spread those writes over all %u members\n",
          r5_layout_name (g->layout), pm, pm, g->members);
}

static int
print_lesson (const struct teach *t)
{
  const struct r5_geom *g = &t->g;
  struct explain_cost c;
  char sd[32];

  printf ("\nthe lesson: parity changes with the data, so a write smaller "
          "than a stripe reads first\n");
  if (print_small_write (t, 3, " (RCW reads the other data chunk)") != 0 ||
      print_small_write (t, 5, " (RMW reads old data + old parity, at any "
                         "width)") != 0 ||
      (g->members != 3 && g->members != 5 &&
       print_small_write (t, g->members, " (this array)") != 0) ||
      lesson_case (t, g->members, 0, g->stripe_data, &c) != 0)
    return TOOL_FAIL;
  teach_size (g->stripe_data, sd, sizeof sd);
  printf ("  a full stripe (%s at a multiple of %s), %u members: %" PRIu64
          " reads + %" PRIu64 " writes, amplification %.2f = %u/%u\n", sd, sd,
          g->members, c.ios[R5_IO_READ], c.ios[R5_IO_WRITE],
          (double) g->members / (double) g->data_members, g->members,
          g->data_members);
  print_fixed_parity (g);
  return 0;
}

static int
print_text (const struct teach *t, const struct explain_req *q)
{
  struct explain_cost c;
  char l[32];

  teach_print_geometry (t);
  printf ("%s %s (%" PRIu64 " bytes) at array offset %" PRIu64 ":\n\n",
          op_names[q->op], teach_size (q->len, l, sizeof l), q->len, q->off);
  if (walk (t, q, &c, &(struct explain_show) { show_text, NULL }) != 0)
    return TOOL_FAIL;
  print_cost (q, &c);
  if (q->op == R5_OP_WRITE || q->op == R5_OP_ZERO)
    return print_lesson (t);
  if (q->op == R5_OP_READ)
    printf ("\nthe lesson: a healthy read moves only the bytes asked for, "
            "with no parity;\n  bytes of a missing member cost a read of "
            "each of the other %u members.\n", t->g.members - 1);
  return 0;
}

static void
json_cost (struct json *j, const struct explain_req *q,
           const struct explain_cost *c)
{
  tool_json_open (j, "cost", '{');
  tool_json_u64 (j, "reads", c->ios[R5_IO_READ]);
  tool_json_u64 (j, "read_bytes", c->bytes[R5_IO_READ]);
  tool_json_u64 (j, "writes", c->ios[R5_IO_WRITE]);
  tool_json_u64 (j, "write_bytes", c->bytes[R5_IO_WRITE]);
  tool_json_u64 (j, "zeroes", c->ios[R5_IO_ZERO]);
  tool_json_u64 (j, "zero_bytes", c->bytes[R5_IO_ZERO]);
  tool_json_u64 (j, "trims", c->ios[R5_IO_TRIM]);
  tool_json_u64 (j, "trim_bytes", c->bytes[R5_IO_TRIM]);
  tool_json_u64 (j, "member_ios", total_ios (c));
  tool_json_u64 (j, "xors", c->xors);
  tool_json_u64 (j, "xor_bytes", c->xor_bytes);
  if (q->op == R5_OP_READ || q->op == R5_OP_TRIM)
    tool_json_null (j, "write_amplification");
  else
    teach_json_ratio (j, "write_amplification", out_bytes (c), q->len, 3);
  teach_json_ratio (j, "reads_per_client_byte", c->bytes[R5_IO_READ], q->len,
                    3);
  tool_json_open (j, "strategies", '{');
  for (unsigned k = 0; k < R5_SEG_KINDS; k++)
    if (c->segs[k] > 0)
      tool_json_u64 (j, r5_seg_kind_name (k), c->segs[k]);
  tool_json_close (j, '{');
  tool_json_close (j, '{');
}

static int
print_json (const struct teach *t, const struct explain_req *q)
{
  struct explain_cost c;
  struct json j;

  tool_json_init (&j, stdout);
  tool_json_open (&j, NULL, '{');
  teach_json_geometry (&j, t);
  tool_json_str (&j, "op", op_names[q->op]);
  tool_json_u64 (&j, "offset", q->off);
  tool_json_u64 (&j, "length", q->len);
  tool_json_open (&j, "stripes", '[');
  if (walk (t, q, &c, &(struct explain_show) { show_json, &j }) != 0)
    return TOOL_FAIL;
  tool_json_close (&j, '[');
  tool_json_u64 (&j, "stripes_total", c.stripes);
  tool_json_u64 (&j, "stripes_listed", c.stripes < q->show ? c.stripes : q->show);
  json_cost (&j, q, &c);
  tool_json_bool (&j, "planner_agrees", c.agrees);
  tool_json_close (&j, '{');
  return 0;
}

/* The picture: the stripes shown, then the cost in three lines. */
static int
print_svg (const struct teach *t, const struct explain_req *q)
{
  char req[96], l[32], a[32], b[32], kinds[256], more[320] = "";
  char cost[200], strategies[300];
  const char *footer[3] = { cost, strategies, more };
  struct explain_svg *e;
  struct explain_cost c;

  snprintf (req, sizeof req, "%s %" PRIu64 " %s", op_names[q->op], q->off,
            teach_size (q->len, l, sizeof l));
  if ((e = explain_svg_open (t, req)) == NULL)
    return TOOL_FAIL;
  if (walk (t, q, &c, &(struct explain_show) { show_svg, e }) != 0) {
    explain_svg_close (e, NULL, 0);
    return TOOL_FAIL;
  }
  snprintf (cost, sizeof cost, "cost over %" PRIu64 " stripe%s: reads %"
            PRIu64 " (%s), writes %" PRIu64 " (%s), member I/Os %" PRIu64
            ", XOR steps %" PRIu64, c.stripes, c.stripes == 1 ? "" : "s",
            c.ios[R5_IO_READ], teach_size (c.bytes[R5_IO_READ], a, sizeof a),
            c.ios[R5_IO_WRITE] + c.ios[R5_IO_ZERO] + c.ios[R5_IO_TRIM],
            teach_size (out_bytes (&c), b, sizeof b), total_ios (&c), c.xors);
  snprintf (strategies, sizeof strategies, "strategies: %s",
            kinds_text (c.segs, kinds, sizeof kinds));
  if (c.stripes > q->show)
    snprintf (more, sizeof more, "%" PRIu64 " more stripes not drawn "
              "(--stripes draws them): %s", c.stripes - q->show,
              kinds_text (c.hidden_segs, kinds, sizeof kinds));
  return explain_svg_close (e, footer, *more ? 3 : 2) == 0 ? 0 : TOOL_FAIL;
}

int
explain_main (int argc, char **argv)
{
  struct teach t;
  struct explain_req q = { .show = DEFAULT_SHOW };

  if (argc > 1 && strcmp (argv[1], "check") == 0)
    return explain_check_main (argc - 1, argv + 1);
  if (argc > 1 && strcmp (argv[1], "grow") == 0)
    return explain_grow_main (argc - 1, argv + 1);
  teach_init (&t);
  if (parse_args (argc, argv, &t, &q) != 0 || check_range (&t, &q) != 0)
    return TOOL_FAIL;
  if (t.json)
    return print_json (&t, &q) == 0 ? TOOL_OK : TOOL_FAIL;
  if (t.svg)
    return print_svg (&t, &q) == 0 ? TOOL_OK : TOOL_FAIL;
  return print_text (&t, &q) == 0 ? TOOL_OK : TOOL_FAIL;
}
