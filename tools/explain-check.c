/* tools/explain-check.c -- raid5ctl explain check: on one row of a
 * stripe, what parity can say (that the row is wrong) and cannot (which
 * unit), and what a checksum per unit adds (raid/integrity.h).  The
 * bytes are real: the row's units are made, XORed by raid/parity and
 * summed by raid/integrity's crc32c, then one byte of one member spoiled.
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "raid/integrity.h"
#include "raid/layout.h"
#include "raid/parity.h"
#include "tools/explain.h"
#include "tools/raid5ctl.h"
#include "tools/teach.h"

#define SHOW 8                /* bytes of each unit shown */

struct row {
  const struct teach *t;
  uint64_t stripe;
  unsigned parity, bad;       /* members */
  unsigned char unit[R5_MAX_MEMBERS][R5I_UNIT];
  uint32_t crc[R5_MAX_MEMBERS];   /* as recorded, before the spoiling */
};

static void
usage (void)
{
  printf (
"usage: raid5ctl explain check [--stripe S] [--member K] [GEOMETRY]\n"
"                              [--json] [--from DISK...]\n"
"\n"
"On one row of stripe S (one 4 KiB unit of each member), show why a check\n"
"can say that a stripe is wrong but not which chunk: the XOR of the row is\n"
"zero when parity is right; spoil one byte of member K and it is not --\n"
"but every member is as good a culprit, since rewriting any one of them\n"
"makes the row right again (md's repair rewrites the parity, and so keeps\n"
"the bad data).  Then what a checksum per unit adds (the plugin's\n"
"integrity=FILE): the member whose unit fails it is the wrong one, and\n"
"the unit rebuilt from the others is checked before it is written back.\n"
"\n"
"  --stripe S           the stripe (0)\n"
"  --member K           the member whose byte goes bad (the stripe's\n"
"                       second data member)\n"
TEACH_OPTIONS_HELP);
}

/* The unit of member m: a line of text naming it, repeated. */
static void
fill (struct row *r, unsigned m)
{
  int dd = r5_data_index (&r->t->g, r->stripe, m);
  char text[64];
  size_t n;

  if (dd < 0)
    return;
  n = (size_t) snprintf (text, sizeof text, "D%d of stripe %" PRIu64 ". ",
                         dd, r->stripe);
  for (size_t at = 0; at < R5I_UNIT; at++)
    r->unit[m][at] = (unsigned char) text[at % n];
}

/* XOR of every unit of the row but skip (or all: -1) into out. */
static void
xor_but (const struct row *r, int skip, unsigned char *out)
{
  void *v[R5_MAX_MEMBERS + 1];
  unsigned k = 0;

  for (unsigned m = 0; m < r->t->g.members; m++)
    if ((int) m != skip)
      v[k++] = (void *) r->unit[m];
  v[k++] = out;
  r5_xor_gen (k, R5I_UNIT, v);
}

static const char *
name (const struct row *r, unsigned m, char *buf, size_t len)
{
  int dd = r5_data_index (&r->t->g, r->stripe, m);

  if (dd < 0)
    snprintf (buf, len, "P ");
  else
    snprintf (buf, len, "D%d", dd);
  return buf;
}

static void
bytes (const unsigned char *u)
{
  for (unsigned i = 0; i < SHOW; i++)
    printf (" %02x", u[i]);
}

static bool
zero (const unsigned char *u)
{
  for (unsigned i = 0; i < R5I_UNIT; i++)
    if (u[i])
      return false;
  return true;
}

static void
print_row (const struct row *r)
{
  unsigned char x[R5I_UNIT];
  char nm[16];

  for (unsigned m = 0; m < r->t->g.members; m++) {
    printf ("  member %u  %s ", m, name (r, m, nm, sizeof nm));
    bytes (r->unit[m]);
    printf ("%s\n", m == r->parity ? "   (the XOR of the data)" : "");
  }
  xor_but (r, -1, x);
  printf ("  the XOR of the whole row:");
  bytes (x);
  printf (" ...  %s\n", zero (x) ? "all zero" : "NOT zero");
}

static void
print_culprits (const struct row *r)
{
  unsigned char x[R5I_UNIT];
  char nm[16];

  printf ("But which unit?  Rewriting any one of them makes the row right "
          "again:\n");
  for (unsigned m = 0; m < r->t->g.members; m++) {
    xor_but (r, (int) m, x);
    printf ("  if %s (member %u) were wrong, it should be", name (r, m, nm,
                                                               sizeof nm), m);
    bytes (x);
    printf ("%s\n", m == r->bad ? "   <- the true one" : "");
  }
  printf ("One equation, %u unknowns: parity detects one wrong unit in a row "
          "but cannot\nlocate it.  md's repair takes P's answer (it rewrites "
          "the parity), so %s\n\n", r->t->g.members,
          r->bad == r->parity ? "here it\nhappens to be right."
          : "the bad\nbyte stays, now with parity that agrees with it.");
}

static void
print_checksums (const struct row *r)
{
  unsigned char x[R5I_UNIT];
  char nm[16];

  printf ("What a checksum adds (integrity=FILE: a crc32c of every 4 KiB of "
          "every\nmember, recorded when it is written, kept outside the "
          "members):\n");
  for (unsigned m = 0; m < r->t->g.members; m++) {
    uint32_t now = r5i_crc (r->unit[m], R5I_UNIT);

    printf ("  member %u  %s  crc32c %08x, recorded %08x: %s\n", m,
            name (r, m, nm, sizeof nm), now, r->crc[m],
            now == r->crc[m] ? "right" : "WRONG");
  }
  xor_but (r, (int) r->bad, x);
  printf ("The checksum names member %u.  Its unit rebuilt from the others "
          "has crc32c\n%08x, the recorded one%s, so it is written back: %s"
          "\nCost: 4 bytes per 4 KiB (0.1%%) in the record, a crc32c of every "
          "unit read\nand written.\n", r->bad, r5i_crc (x, R5I_UNIT),
          r5i_crc (x, R5I_UNIT) == r->crc[r->bad] ? "" : " NOT",
          r->bad == r->parity
          ? "the parity was the wrong\none, and repair rewrites it as md "
            "would -- but now it knows."
          : "a read returns the right\nbytes and heals the member, and "
            "repair rewrites that member, not the parity.");
}

static void
print_text (struct row *r)
{
  char chunk[32];

  printf ("explain check: one row of stripe %" PRIu64 " (%u members, chunk "
          "%s, %s;\nparity on member %u), the first %d bytes of each "
          "member's 4 KiB unit:\n", r->stripe, r->t->g.members,
          teach_size (r->t->g.chunk, chunk, sizeof chunk),
          r5_layout_name (r->t->g.layout), r->parity, SHOW);
  print_row (r);
  printf ("all zero: parity is right, and check counts nothing.\n\n");
  r->unit[r->bad][0] ^= 0x01;
  printf ("Byte 0 of member %u goes bad (%02x -> %02x), as a disk may return "
          "it without\nan error:\n", r->bad, r->unit[r->bad][0] ^ 0x01,
          r->unit[r->bad][0]);
  print_row (r);
  printf ("not zero: the row is wrong, and md adds 8 to mismatch_cnt.\n");
  print_culprits (r);
  print_checksums (r);
}

/* Does every member's answer make the row right again? */
static unsigned
candidates (const struct row *r)
{
  unsigned char x[R5I_UNIT], y[R5I_UNIT];
  struct row *c = malloc (sizeof *c);
  unsigned n = 0;

  if (c == NULL)
    return 0;
  for (unsigned m = 0; m < r->t->g.members; m++) {
    *c = *r;
    xor_but (c, (int) m, x);
    memcpy (c->unit[m], x, R5I_UNIT);
    xor_but (c, -1, y);
    n += zero (y);
  }
  free (c);
  return n;
}

static void
print_json (struct row *r)
{
  unsigned char x[R5I_UNIT];
  struct json j;
  uint32_t now;
  int named = -1;

  tool_json_init (&j, stdout);
  tool_json_open (&j, NULL, '{');
  tool_json_u64 (&j, "stripe", r->stripe);
  tool_json_u64 (&j, "parity_member", r->parity);
  tool_json_u64 (&j, "spoiled_member", r->bad);
  xor_but (r, -1, x);
  tool_json_bool (&j, "row_right_before", zero (x));
  r->unit[r->bad][0] ^= 0x01;
  xor_but (r, -1, x);
  tool_json_bool (&j, "row_right_after", zero (x));
  tool_json_u64 (&j, "candidates", candidates (r));
  for (unsigned m = 0; m < r->t->g.members; m++)
    if (r5i_crc (r->unit[m], R5I_UNIT) != r->crc[m])
      named = named == -1 ? (int) m : -2;
  if (named >= 0)
    tool_json_u64 (&j, "named_member", (uint64_t) named);
  else
    tool_json_null (&j, "named_member");
  xor_but (r, (int) r->bad, x);
  tool_json_bool (&j, "rebuilt_matches_record",
                  r5i_crc (x, R5I_UNIT) == r->crc[r->bad]);
  tool_json_open (&j, "members", '[');
  for (unsigned m = 0; m < r->t->g.members; m++) {
    now = r5i_crc (r->unit[m], R5I_UNIT);
    tool_json_open (&j, NULL, '{');
    tool_json_u64 (&j, "member", m);
    tool_json_u64 (&j, "crc32c", now);
    tool_json_u64 (&j, "recorded", r->crc[m]);
    tool_json_bool (&j, "fails", now != r->crc[m]);
    tool_json_close (&j, '}');
  }
  tool_json_close (&j, ']');
  tool_json_close (&j, '}');
  fputc ('\n', stdout);
}

static uint64_t opt_stripe;
static int opt_member = -1;

static int
take (const char *arg, void *ctx)
{
  const char *what = ctx;
  uint64_t v;

  /* The array's own bounds are judged once its geometry is known. */
  if (strcmp (what, "stripe") == 0)
    return tool_parse_uint ("--stripe", arg, 0, UINT64_MAX, &opt_stripe);
  if (tool_parse_uint ("--member", arg, 0, R5_MAX_MEMBERS - 1, &v) != TOOL_OK)
    return TOOL_FAIL;
  opt_member = (int) v;
  return 0;
}

/* --stripe and --member: the extra option of teach_getopt is one, so the
 * other is taken by a second pass over what is left.
 */
static int
options (struct teach *t, int *argc, char **argv)
{
  const struct teach_extra extra = { "stripe", take, (void *) "stripe",
                                     usage, false };

  for (int i = 1; i + 1 < *argc; i++)
    if (strcmp (argv[i], "--member") == 0) {
      if (take (argv[i + 1], (void *) "member") != 0)
        return TOOL_FAIL;
      memmove (&argv[i], &argv[i + 2], (size_t) (*argc - i - 1) * sizeof *argv);
      *argc -= 2;
      break;
    }
  if (teach_getopt (t, argc, argv, &extra) != 0)
    return TOOL_FAIL;
  if (*argc - optind != 0)
    return tool_error ("unexpected argument '%s' (see raid5ctl explain check "
                       "--help)", argv[optind]);
  return teach_geometry (t);
}

int
explain_check_main (int argc, char **argv)
{
  struct teach t;
  struct row *r;
  int ret = TOOL_OK;

  teach_init (&t);
  if (options (&t, &argc, argv) != 0)
    return TOOL_FAIL;
  if (opt_stripe >= t.g.stripes)
    return tool_error ("--stripe %" PRIu64 ": the array has %" PRIu64
                       " stripes", opt_stripe, t.g.stripes);
  if (opt_member >= (int) t.g.members)
    return tool_error ("--member %d: the array has %u members", opt_member,
                       t.g.members);
  if ((r = calloc (1, sizeof *r)) == NULL)
    return tool_error ("out of memory");
  r->t = &t;
  r->stripe = opt_stripe;
  r->parity = r5_parity_member (&t.g, opt_stripe);
  r->bad = opt_member >= 0 ? (unsigned) opt_member
    : r5_data_member (&t.g, opt_stripe, 1);
  for (unsigned m = 0; m < t.g.members; m++)
    fill (r, m);
  xor_but (r, (int) r->parity, r->unit[r->parity]);
  for (unsigned m = 0; m < t.g.members; m++)
    r->crc[m] = r5i_crc (r->unit[m], R5I_UNIT);
  if (t.json)
    print_json (r);
  else
    print_text (r);
  free (r);
  return ret;
}
