/* tools/teach.c -- the geometry raid5ctl's teaching commands talk about,
 * and the words they share (see teach.h).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "raid/layout.h"
#include "raid/number.h"
#include "tools/raid5ctl.h"
#include "tools/teach.h"

void
teach_init (struct teach *t)
{
  memset (t, 0, sizeof *t);
  t->members = 3;
  t->chunk = 512 * 1024;
  t->layout = R5_LEFT_SYMMETRIC;
  t->missing = -1;
}

int
teach_split_from (struct teach *t, int *argc, char **argv)
{
  for (int i = 1; i < *argc; i++) {
    if (strcmp (argv[i], "--") == 0)
      break;
    if (strcmp (argv[i], "--from") != 0)
      continue;
    t->from = argv + i + 1;
    t->nfrom = (unsigned) (*argc - i - 1);
    *argc = i;
    if (t->nfrom == 0)
      return tool_error ("--from needs the member disks after it");
    return 0;
  }
  return 0;
}

static int
parse_members (struct teach *t, const char *arg)
{
  uint64_t n;

  if (tool_parse_uint ("--disks", arg, R5_MIN_MEMBERS, R5_MAX_MEMBERS, &n)
      != TOOL_OK)
    return TOOL_FAIL;
  t->members = (unsigned) n;
  return 0;
}

static int
parse_chunk (struct teach *t, const char *arg)
{
  uint64_t c;

  if (r5_parse_size (arg, 1024, R5_MIN_CHUNK, R5_MAX_CHUNK, &c) < 0 ||
      (c & (c - 1)) != 0)
    return tool_error ("--chunk %s: must be a power of two from 4K to 64M",
                       arg);
  t->chunk = c;
  return 0;
}

static int
parse_data_offset (struct teach *t, const char *arg)
{
  uint64_t d;

  if (r5_parse_size (arg, 1024, 0, UINT64_C (1) << 50, &d) < 0 ||
      d % R5_SECTOR != 0)
    return tool_error ("--data-offset %s: must be a multiple of 512 bytes "
                       "(at most 1P)", arg);
  t->data_offset = d;
  return 0;
}

static int
parse_missing (struct teach *t, const char *arg)
{
  uint64_t n;

  if (r5_parse_uint (arg, 0, R5_MAX_MEMBERS - 1, &n) < 0)
    return tool_error ("--missing %s: expected a member slot (0 to %u)",
                       arg, R5_MAX_MEMBERS - 1);
  t->missing = (int) n;
  return 0;
}

int
teach_option (struct teach *t, int c, const char *arg)
{
  if (c == 'M')
    return parse_missing (t, arg);
  if (c == 'J' || c == 'G') {
    *(c == 'J' ? &t->json : &t->svg) = true;
    return 0;
  }
  if (c != 'N' && c != 'C' && c != 'L' && c != 'O')
    return 1;
  t->flags_given = true;
  switch (c) {
  case 'N': return parse_members (t, arg);
  case 'C': return parse_chunk (t, arg);
  case 'O': return parse_data_offset (t, arg);
  default:
    if (r5_layout_parse (arg, &t->layout) < 0)
      return tool_error ("--layout %s: expected " R5_LAYOUT_NAMES, arg);
    return 0;
  }
}

/* Without members there is no size: make the array as large as NBD's
 * signed 64-bit sizes allow, so that any offset a learner picks maps.
 */
static int
geometry_from_flags (struct teach *t)
{
  uint64_t stripe_data = t->chunk * (t->members - 1);
  const struct r5_geom_params gp = {
    .members = t->members, .chunk = t->chunk, .layout = t->layout,
    .data_offset = t->data_offset,
    .member_bytes = t->data_offset + (INT64_MAX / stripe_data) * t->chunk,
  };
  char why[160];

  if (r5_geom_init (&t->g, &gp) < 0)
    return tool_error ("%s", r5_geom_explain (why, sizeof why, &gp));
  return 0;
}

int
teach_geometry (struct teach *t)
{
  int r;

  if (t->from != NULL && t->flags_given)
    return tool_error ("--from takes the geometry from the superblocks: "
                       "drop --disks, --chunk, --layout and --data-offset");
  r = t->from != NULL ? teach_from_members (t) : geometry_from_flags (t);
  if (r != 0)
    return r;
  if (t->missing >= (int) t->g.members)
    return tool_error ("--missing %d: the array has members 0 to %u",
                       t->missing, t->g.members - 1);
  return 0;
}

int
teach_parse_bytes (const char *what, const char *arg, uint64_t *out)
{
  if (r5_parse_size (arg, 1, 0, UINT64_MAX, out) < 0)
    return tool_error ("%s '%s': expected a size in bytes (suffixes s, K, "
                       "M, G, T, P, E)", what, arg);
  return 0;
}

const char *
teach_size (uint64_t bytes, char *buf, size_t len)
{
  static const char units[] = "KMGTPE";
  unsigned i = 0;

  if (bytes == 0 || bytes % 1024 != 0) {
    snprintf (buf, len, "%" PRIu64, bytes);
    return buf;
  }
  bytes /= 1024;
  while (bytes % 1024 == 0 && units[i + 1] != '\0')
    bytes /= 1024, i++;
  snprintf (buf, len, "%" PRIu64 "%c", bytes, units[i]);
  return buf;
}

uint64_t
teach_chunk_number (const struct r5_geom *g, uint64_t stripe, unsigned dd)
{
  return stripe * g->data_members + dd;
}

const char *
teach_cell (const struct r5_geom *g, uint64_t stripe, unsigned member,
            char *buf, size_t len)
{
  int dd = r5_data_index (g, stripe, member);

  if (dd < 0)
    snprintf (buf, len, "P");
  else
    snprintf (buf, len, "D%" PRIu64,
              teach_chunk_number (g, stripe, (unsigned) dd));
  return buf;
}

static void
print_slots (const struct teach *t)
{
  printf ("members:");
  for (unsigned m = 0; m < t->g.members; m++) {
    printf ("%s %u ", m ? "," : "", m);
    if (t->slot_path[m] == NULL)
      printf ("missing");
    else
      tool_print_shell_word (t->slot_path[m]);
  }
  printf ("\n");
}

const char *
teach_geometry_line (const struct teach *t, char *buf, size_t len)
{
  const struct r5_geom *g = &t->g;
  char c[32], d[32], cap[32], sector[40] = "";
  char size[48] = "";

  if (g->data_offset != 0)
    snprintf (sector, sizeof sector, " (sector %" PRIu64 ")",
              g->data_offset / R5_SECTOR);
  if (t->sized)
    snprintf (size, sizeof size, ", capacity %s",
              tool_human (g->capacity, cap, sizeof cap));
  snprintf (buf, len, "%u members, %s, chunk %s, data offset %s%s%s",
            g->members, r5_layout_name (g->layout),
            teach_size (g->chunk, c, sizeof c),
            teach_size (g->data_offset, d, sizeof d), sector, size);
  return buf;
}

void
teach_print_geometry (const struct teach *t)
{
  char line[200];

  printf ("%s\n", teach_geometry_line (t, line, sizeof line));
  if (t->from != NULL)
    print_slots (t);
  if (t->missing >= 0)
    printf ("member %d is missing%s%s\n", t->missing,
            *t->missing_why ? ": " : " (--missing)", t->missing_why);
}

void
teach_json_geometry (struct json *j, const struct teach *t)
{
  const struct r5_geom *g = &t->g;

  tool_json_open (j, "geometry", '{');
  tool_json_u64 (j, "members", g->members);
  tool_json_str (j, "layout", r5_layout_name (g->layout));
  tool_json_u64 (j, "md_layout", (uint64_t) g->layout);
  tool_json_u64 (j, "chunk", g->chunk);
  tool_json_u64 (j, "data_offset", g->data_offset);
  tool_json_u64 (j, "stripe_data", g->stripe_data);
  if (t->sized)
    tool_json_u64 (j, "capacity", g->capacity);
  else
    tool_json_null (j, "capacity");
  if (t->missing >= 0)
    tool_json_i64 (j, "missing", t->missing);
  else
    tool_json_null (j, "missing");
  tool_json_close (j, '{');
}

void
teach_json_ratio (struct json *j, const char *key, uint64_t num,
                  uint64_t den, unsigned decimals)
{
  uint64_t scale = 1;
  unsigned __int128 scaled;
  char text[48];

  for (unsigned i = 0; i < decimals; i++)
    scale *= 10;
  scaled = ((unsigned __int128) num * scale + den / 2) / den;
  if (decimals == 0) {
    tool_json_u64 (j, key, (uint64_t) scaled);
    return;
  }
  snprintf (text, sizeof text, "%" PRIu64 ".%0*" PRIu64,
            (uint64_t) (scaled / scale), (int) decimals,
            (uint64_t) (scaled % scale));
  tool_json_decimal (j, key, text);
}

const char *
teach_layout_rule (enum r5_layout layout)
{
  switch (layout) {
  case R5_LEFT_SYMMETRIC:
    return "Parity starts on the last member and moves one member LEFT "
      "each stripe.\nData starts on the member just after parity and wraps "
      "around (SYMMETRIC),\nso D0, D1, D2, ... fall on consecutive members "
      "and a long read keeps all busy.";
  case R5_LEFT_ASYMMETRIC:
    return "Parity starts on the last member and moves one member LEFT "
      "each stripe.\nData fills the other members in member order, "
      "skipping parity (ASYMMETRIC),\nso each stripe's first chunk is on "
      "member 0 unless member 0 holds parity.";
  case R5_RIGHT_SYMMETRIC:
    return "Parity starts on member 0 and moves one member RIGHT each "
      "stripe.\nData starts on the member just after parity and wraps "
      "around (SYMMETRIC),\nso D0, D1, D2, ... fall on consecutive members "
      "and a long read keeps all busy.";
  case R5_RIGHT_ASYMMETRIC:
    return "Parity starts on member 0 and moves one member RIGHT each "
      "stripe.\nData fills the other members in member order, skipping "
      "parity (ASYMMETRIC),\nso each stripe's first chunk is on member 0 "
      "unless member 0 holds parity.";
  case R5_PARITY_FIRST:
    return "Parity stays on member 0 in every stripe (FIRST, RAID-4's "
      "placement).\nData fills members 1 to N-1 in order.  Member 0 takes a "
      "parity write for\nevery write to the array, so writes queue there, "
      "while healthy reads never\nuse it.";
  case R5_PARITY_LAST:
    return "Parity stays on the last member in every stripe (LAST, RAID-4's "
      "placement).\nData fills members 0 to N-2 in order.  The last member "
      "takes a parity write\nfor every write to the array, so writes queue "
      "there, while healthy reads\nnever use it.";
  }
  return "";
}

int
teach_getopt (struct teach *t, int *argc, char **argv,
              const struct teach_extra *extra)
{
  struct option longopts[] = {
    TEACH_LONGOPTS,
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },     /* the extra option, if any */
    { NULL, 0, NULL, 0 },
  };
  size_t n = sizeof longopts / sizeof longopts[0];
  int c;

  if (extra->name)
    longopts[n - 2] = (struct option) { extra->name, required_argument,
                                        NULL, 'x' };
  if (teach_split_from (t, argc, argv) != 0)
    return TOOL_FAIL;
  while ((c = tool_getopt (*argc, argv, "h", longopts)) != -1) {
    if (c == 'h') {
      extra->usage ();
      tool_tls_help ();       /* --from DISK... */
      exit (TOOL_OK);
    }
    if (c == '?' || (c == 'x' ? extra->take (optarg, extra->ctx)
                              : teach_option (t, c, optarg)) != 0)
      return TOOL_FAIL;
  }
  if (t->svg && !extra->draws)
    return tool_error ("--svg: only raid5ctl layout and explain draw "
                       "pictures");
  if (t->svg && t->json)
    return tool_error ("--svg and --json: one report at a time");
  return 0;
}
