/* tools/map.c -- raid5ctl map: where an array byte lives, worked out step
 * by step with md's formulas (raid5_compute_sector), and with a length,
 * every piece of the range: one per chunk touched, the unit the planner
 * cuts member I/O into.
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "raid/layout.h"
#include "tools/raid5ctl.h"
#include "tools/teach.h"

#define TEXT_PIECES 64u         /* pieces listed in text */
#define JSON_PIECES 4096u       /* and in JSON */
#define MAX_PIECES (1u << 24)   /* counted */

struct map_req {
  uint64_t off, len;          /* len 0: one byte, explained */
};

static void
usage (void)
{
  printf (
"usage: raid5ctl map OFFSET [LENGTH] [GEOMETRY] [--json] [--from DISK...]\n"
"\n"
"Where array byte OFFSET lives: its chunk, stripe, data index, the member\n"
"and member offset (bytes and sectors, data offset included), the stripe's\n"
"parity member, each step with md's formula.  With LENGTH, every piece of\n"
"the range: one per chunk it touches, as the planner cuts member I/O.\n"
"OFFSET and LENGTH are bytes; suffixes s (512-byte sectors), K, M, G, T.\n"
"\n"
TEACH_OPTIONS_HELP
"\n"
"Examples:\n"
"  raid5ctl map 600s --chunk 64K --data-offset 2048s\n"
"        array sector 600 of 3 members: member 1, sector 2392\n"
"  raid5ctl map 60K 8K --chunk 64K     a write across a chunk boundary\n"
"  raid5ctl map 1G --from d0.img d1.img d2.img\n");
}

static int
parse_args (int argc, char **argv, struct teach *t, struct map_req *q)
{
  const struct teach_extra extra = { NULL, NULL, NULL, usage, false };

  if (teach_getopt (t, &argc, argv, &extra) != 0)
    return TOOL_FAIL;
  if (optind >= argc)
    return tool_error ("no OFFSET given (see raid5ctl map --help)");
  if (argc - optind > 2)
    return tool_error ("unexpected argument '%s' (see raid5ctl map --help)",
                       argv[optind + 2]);
  if (teach_parse_bytes ("OFFSET", argv[optind], &q->off) != 0 ||
      (argc - optind == 2 &&
       teach_parse_bytes ("LENGTH", argv[optind + 1], &q->len) != 0))
    return TOOL_FAIL;
  if (argc - optind == 2 && q->len == 0)
    return tool_error ("LENGTH 0: nothing to map");
  return teach_geometry (t);
}

static int
check_range (const struct teach *t, const struct map_req *q)
{
  char cap[32];
  uint64_t len = q->len ? q->len : 1;

  if (q->off < t->g.capacity && len <= t->g.capacity - q->off) {
    if (len / t->g.chunk <= MAX_PIECES)
      return 0;
    return tool_error ("LENGTH %" PRIu64 " touches more than %u chunks; "
                       "map lists at most that many", len, MAX_PIECES);
  }
  if (q->len == 0)
    return t->sized
      ? tool_error ("offset %" PRIu64 " is beyond the end of the array (%"
                    PRIu64 " bytes, %s)", q->off, t->g.capacity,
                    tool_human (t->g.capacity, cap, sizeof cap))
      : tool_error ("offset %" PRIu64 " is beyond the largest array this "
                    "geometry can describe", q->off);
  return t->sized
    ? tool_error ("[%" PRIu64 ", +%" PRIu64 ") is beyond the end of the array "
                  "(%" PRIu64 " bytes, %s)", q->off, len, t->g.capacity,
                  tool_human (t->g.capacity, cap, sizeof cap))
    : tool_error ("[%" PRIu64 ", +%" PRIu64 ") is beyond the largest array "
                  "this geometry can describe", q->off, len);
}

static void
print_parity_step (const struct r5_geom *g, const struct r5_loc *l)
{
  printf ("  parity member  %-9u", l->parity);
  switch (g->layout) {
  case R5_LEFT_SYMMETRIC:
  case R5_LEFT_ASYMMETRIC:
    printf ("= N-1 - (stripe mod N) = %u - (%" PRIu64 " mod %u)   [left]\n",
            g->members - 1, l->stripe, g->members);
    break;
  case R5_RIGHT_SYMMETRIC:
  case R5_RIGHT_ASYMMETRIC:
    printf ("= stripe mod N = %" PRIu64 " mod %u   [right]\n", l->stripe,
            g->members);
    break;
  case R5_PARITY_FIRST:
    printf ("= 0 in every stripe   [parity-first]\n");
    break;
  case R5_PARITY_LAST:
    printf ("= N-1 = %u in every stripe   [parity-last]\n", g->members - 1);
    break;
  }
}

static void
print_member_step (const struct r5_geom *g, const struct r5_loc *l)
{
  printf ("  member         %-9u", l->member);
  switch (g->layout) {
  case R5_LEFT_SYMMETRIC:
  case R5_RIGHT_SYMMETRIC:
    printf ("= (parity + 1 + index) mod N = (%u + 1 + %u) mod %u   "
            "[symmetric]\n", l->parity, l->dd, g->members);
    break;
  case R5_LEFT_ASYMMETRIC:
  case R5_RIGHT_ASYMMETRIC:
    printf ("= index%s, as index %u %s parity %u   [asymmetric: data "
            "skips parity]\n", l->dd < l->parity ? "" : " + 1", l->dd,
            l->dd < l->parity ? "<" : ">=", l->parity);
    break;
  case R5_PARITY_FIRST:
    printf ("= index + 1 = %u + 1   [parity-first: data on members 1 to "
            "N-1]\n", l->dd);
    break;
  case R5_PARITY_LAST:
    printf ("= index = %u   [parity-last: data on members 0 to N-2]\n",
            l->dd);
    break;
  }
}

/* What a missing member means for this byte. */
static void
print_missing (const struct teach *t, const struct r5_loc *l)
{
  if (t->missing == (int) l->member)
    printf ("  member %u is missing: a read rebuilds this byte as the XOR of "
            "byte %" PRIu64 "\n  of the other %u members (the rest of the "
            "stripe and its parity)\n", l->member, l->member_off,
            t->g.members - 1);
  else if (t->missing == (int) l->parity)
    printf ("  member %u, this stripe's parity, is missing: reads are as "
            "usual; writes\n  here store the data and skip parity\n",
            l->parity);
}

static void
print_stripe_line (const struct r5_geom *g, const struct r5_loc *l)
{
  char a[32], b[32], x[32], y[32];
  uint64_t mo = r5_stripe_member_off (g, l->stripe);

  printf ("  stripe %" PRIu64 ": array bytes [%s, %s), member bytes [%s, %s) "
          "on every member\n", l->stripe,
          teach_size (l->stripe * g->stripe_data, a, sizeof a),
          teach_size ((l->stripe + 1) * g->stripe_data, b, sizeof b),
          teach_size (mo, x, sizeof x), teach_size (mo + g->chunk, y, sizeof y));
}

static void
print_byte (const struct teach *t, uint64_t off)
{
  const struct r5_geom *g = &t->g;
  struct r5_loc l;
  char c[32], d[32];
  uint64_t cn = off / g->chunk;

  if (r5_map (g, off, &l) < 0)
    return;                     /* checked by check_range */
  teach_size (g->chunk, c, sizeof c);
  printf ("array byte %" PRIu64 " (sector %" PRIu64 "%s):\n", off,
          off / R5_SECTOR, off % R5_SECTOR ? ", not sector-aligned" : "");
  printf ("  chunk number   %-9" PRIu64 "= %" PRIu64 " / %s; byte %" PRIu64
          " within the chunk\n", cn, off, c, l.chunk_off);
  printf ("  stripe         %-9" PRIu64 "= chunk %" PRIu64 " / %u data chunks "
          "per stripe\n", l.stripe, cn, g->data_members);
  printf ("  data index     %-9u= chunk %" PRIu64 " mod %u: D%" PRIu64
          " is data chunk %u of stripe %" PRIu64 "\n", l.dd, cn,
          g->data_members, cn, l.dd, l.stripe);
  print_parity_step (g, &l);
  print_member_step (g, &l);
  printf ("  member offset  %" PRIu64 " (sector %" PRIu64 ") = data offset %s "
          "+ stripe %" PRIu64 " x %s + %" PRIu64 "\n", l.member_off,
          l.member_off / R5_SECTOR, teach_size (g->data_offset, d, sizeof d),
          l.stripe, c, l.chunk_off);
  print_stripe_line (g, &l);
  print_missing (t, &l);
}

/* One piece: the part of the range inside one chunk. */
struct piece {
  uint64_t off, len;
  struct r5_loc l;
};

static void
next_piece (const struct r5_geom *g, uint64_t off, uint64_t end,
            struct piece *p)
{
  p->off = off;
  if (r5_map (g, off, &p->l) < 0)
    abort ();                   /* checked by check_range */
  p->len = g->chunk - p->l.chunk_off;
  if (p->len > end - off)
    p->len = end - off;
}

static void
print_piece (const struct r5_geom *g, const struct piece *p, int missing)
{
  char range[64];

  snprintf (range, sizeof range, "[%" PRIu64 ", %" PRIu64 ")", p->off,
            p->off + p->len);
  printf ("  %-24s %6" PRIu64 "  D%-7" PRIu64 " %4u%s %14" PRIu64 " %10"
          PRIu64 " %10" PRIu64 "   m%u\n", range, p->l.stripe,
          teach_chunk_number (g, p->l.stripe, p->l.dd), p->l.member,
          (int) p->l.member == missing ? "*" : " ", p->l.member_off,
          p->l.member_off / R5_SECTOR, p->len, p->l.parity);
}

static void
print_pieces (const struct teach *t, const struct map_req *q)
{
  const struct r5_geom *g = &t->g;
  uint64_t end = q->off + q->len, bytes[R5_MAX_MEMBERS] = { 0 };
  uint64_t n = 0;
  struct piece p;

  printf ("\nrange [%" PRIu64 ", %" PRIu64 "), %" PRIu64 " bytes; a piece "
          "never crosses a chunk:\n", q->off, end, q->len);
  printf ("  %-24s %6s  %-8s %6s %14s %10s %10s   %s\n", "array bytes",
          "stripe", "chunk", "member", "member offset", "sector", "length",
          "parity");
  for (uint64_t off = q->off; off < end; off += p.len, n++) {
    next_piece (g, off, end, &p);
    bytes[p.l.member] += p.len;
    if (n < TEXT_PIECES)
      print_piece (g, &p, t->missing);
  }
  if (n > TEXT_PIECES)
    printf ("  ... and %" PRIu64 " more pieces\n", n - TEXT_PIECES);
  printf ("per member:");
  for (unsigned m = 0; m < g->members; m++)
    printf ("%s m%u %" PRIu64, m ? "," : "", m, bytes[m]);
  printf (" bytes of data (a write also updates each stripe's parity)\n");
  if (t->missing >= 0 && bytes[t->missing] > 0)
    printf ("* member %d is missing: its pieces are rebuilt from the other "
            "members on read\n", t->missing);
}

static void
json_byte (struct json *j, const struct r5_geom *g, const struct r5_loc *l,
           uint64_t off)
{
  tool_json_u64 (j, "offset", off);
  tool_json_u64 (j, "chunk_number", off / g->chunk);
  tool_json_u64 (j, "chunk_offset", l->chunk_off);
  tool_json_u64 (j, "stripe", l->stripe);
  tool_json_u64 (j, "data_index", l->dd);
  tool_json_u64 (j, "member", l->member);
  tool_json_u64 (j, "member_offset", l->member_off);
  tool_json_u64 (j, "member_sector", l->member_off / R5_SECTOR);
  tool_json_u64 (j, "parity", l->parity);
  tool_json_u64 (j, "stripe_array_offset", l->stripe * g->stripe_data);
  tool_json_u64 (j, "stripe_array_end", (l->stripe + 1) * g->stripe_data);
  tool_json_u64 (j, "stripe_member_offset", r5_stripe_member_off (g, l->stripe));
}

static void
json_pieces (struct json *j, const struct r5_geom *g, const struct map_req *q)
{
  uint64_t end = q->off + q->len, n = 0;
  struct piece p;

  tool_json_u64 (j, "length", q->len);
  tool_json_open (j, "pieces", '[');
  for (uint64_t off = q->off; off < end; off += p.len, n++) {
    next_piece (g, off, end, &p);
    if (n >= JSON_PIECES)
      continue;
    tool_json_open (j, NULL, '{');
    json_byte (j, g, &p.l, p.off);
    tool_json_u64 (j, "length", p.len);
    tool_json_close (j, '{');
  }
  tool_json_close (j, '[');
  tool_json_u64 (j, "pieces_total", n);
  tool_json_bool (j, "pieces_truncated", n > JSON_PIECES);
}

static void
print_json (const struct teach *t, const struct map_req *q)
{
  struct json j;
  struct r5_loc l;

  if (r5_map (&t->g, q->off, &l) < 0)
    return;
  tool_json_init (&j, stdout);
  tool_json_open (&j, NULL, '{');
  teach_json_geometry (&j, t);
  json_byte (&j, &t->g, &l, q->off);
  tool_json_bool (&j, "member_missing", t->missing == (int) l.member);
  if (q->len > 0)
    json_pieces (&j, &t->g, q);
  tool_json_close (&j, '{');
}

int
map_main (int argc, char **argv)
{
  struct teach t;
  struct map_req q = { 0, 0 };

  teach_init (&t);
  if (parse_args (argc, argv, &t, &q) != 0 || check_range (&t, &q) != 0)
    return TOOL_FAIL;
  if (t.json) {
    print_json (&t, &q);
    return TOOL_OK;
  }
  teach_print_geometry (&t);
  print_byte (&t, q.off);
  if (q.len > 0)
    print_pieces (&t, &q);
  return TOOL_OK;
}
