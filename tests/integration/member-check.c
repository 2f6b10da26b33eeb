/* tests/integration/member-check.c -- check RAID-5 member files directly.
 *
 *   member-check [options] MEMBER...       (member-check --help lists them)
 *
 * MEMBER is a path (file or block device) or the word "missing" (at most
 * one).  The order is the member role, as on the plugin's command line.
 *
 * This is an independent reading of Linux md's RAID-5 layouts (md's
 * raid5_compute_sector), written from the formulas in
 * md-raid5-reference.md section 1 and sharing no code with the plugin:
 *
 *   chunk number c = array offset / chunk,  stripe s = c / (N-1),
 *   data index dd = c % (N-1),  member offset = data_offset + s*chunk + off%chunk
 *   left-*:  pd = (N-1) - s%N        right-*: pd = s%N
 *   *-asymmetric: member = dd < pd ? dd : dd+1
 *   *-symmetric:  member = (pd + 1 + dd) % N
 *   parity-first: pd = 0, member = dd+1      (md's ALGORITHM_PARITY_0)
 *   parity-last:  pd = N-1, member = dd      (md's ALGORITHM_PARITY_N)
 *
 * For every stripe it checks that the parity chunk is the XOR of the data
 * chunks (all bytes, known to the model or not) and that every data chunk
 * holds the model's bytes where the model knows them.  With a member
 * missing, that member's chunks are rebuilt as the XOR of the others, so
 * parity cannot be checked but every data chunk (rebuilt ones included)
 * still is.  The array size given by md's formula must equal the model's.
 *
 * --generate writes members from a model instead (same formulas), so the
 * checker can be tested on known-good and damaged members and the plugin's
 * read path can be tested on members it did not write.
 *
 * Exit status: 0 all good, 1 a check failed, 2 usage or I/O error.
 */

#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model.h"

#define MAX_MEMBERS 32

enum layout { LEFT_ASYM, RIGHT_ASYM, LEFT_SYM, RIGHT_SYM, PARITY_FIRST,
              PARITY_LAST, LAYOUTS };
static const char *layout_name[LAYOUTS] = {
  "left-asymmetric", "right-asymmetric", "left-symmetric", "right-symmetric",
  "parity-first", "parity-last",
};

/* Options and the array's shape. */
static unsigned n;                      /* members */
static const char *path[MAX_MEMBERS];
static int fd[MAX_MEMBERS];             /* -1 = missing */
static uint64_t member_size[MAX_MEMBERS];
static int missing = -1;
static uint64_t chunk = 512 * 1024;
static enum layout layout = LEFT_SYM;
static uint64_t data_offset;
static const char *model_path;
static bool outside_zero, generate, quiet, lenient_parity;
static uint64_t gen_size;
static uint64_t want_stripes;          /* 0: as many as the members hold */
static unsigned print_map;
static unsigned max_errors = 10;

static uint64_t stripes;
static struct model model;
static unsigned errors;
static unsigned stale_parity;           /* --lenient-parity: tolerated */
static unsigned char *buf[MAX_MEMBERS];  /* one chunk per member */

static unsigned
parity_member (uint64_t s)
{
  switch (layout) {
  case LEFT_ASYM: case LEFT_SYM: return (n - 1) - s % n;
  case RIGHT_ASYM: case RIGHT_SYM: return s % n;
  case PARITY_FIRST: return 0;
  case PARITY_LAST: return n - 1;
  case LAYOUTS: break;
  }
  abort ();
}

static unsigned
data_member (uint64_t s, unsigned dd)
{
  unsigned pd = parity_member (s);

  switch (layout) {
  case LEFT_ASYM: case RIGHT_ASYM: return dd < pd ? dd : dd + 1;
  case LEFT_SYM: case RIGHT_SYM: return (pd + 1 + dd) % n;
  case PARITY_FIRST: return dd + 1;
  case PARITY_LAST: return dd;
  case LAYOUTS: break;
  }
  abort ();
}

static uint64_t
member_offset (uint64_t s)
{
  return data_offset + s * chunk;
}

static uint64_t
array_offset (uint64_t s, unsigned dd)
{
  return (s * (n - 1) + dd) * chunk;
}

/* One failed check: print it, unless there were too many already. */
static bool
report (void)
{
  errors++;
  if (errors == max_errors + 1)
    fprintf (stderr, "member-check: (more errors not shown)\n");
  return errors <= max_errors;
}

/* ---- reading and writing members ---- */

static int
pread_all (int i, unsigned char *p, uint64_t len, uint64_t off)
{
  while (len > 0) {
    ssize_t r = pread (fd[i], p, len, off);
    if (r <= 0) {
      fprintf (stderr, "member-check: %s: read at %" PRIu64 ": %s\n", path[i],
               off, r == 0 ? "unexpected end of file" : strerror (errno));
      return -1;
    }
    p += r, off += r, len -= r;
  }
  return 0;
}

static int
pwrite_all (int i, const unsigned char *p, uint64_t len, uint64_t off)
{
  while (len > 0) {
    ssize_t r = pwrite (fd[i], p, len, off);
    if (r <= 0) {
      fprintf (stderr, "member-check: %s: write at %" PRIu64 ": %m\n", path[i],
               off);
      return -1;
    }
    p += r, off += r, len -= r;
  }
  return 0;
}

static void
xor_into (unsigned char *dst, const unsigned char *src, uint64_t len)
{
  uint64_t i;

  for (i = 0; i < len; i++)
    dst[i] ^= src[i];
}

/* XOR of every member's chunk except member skip, into out. */
static void
xor_others (unsigned char *out, unsigned skip)
{
  unsigned i;

  memset (out, 0, chunk);
  for (i = 0; i < n; i++)
    if (i != skip)
      xor_into (out, buf[i], chunk);
}

static int
open_members (void)
{
  unsigned i;

  for (i = 0; i < n; i++) {
    off_t end;
    fd[i] = -1;
    if ((int) i == missing)
      continue;
    fd[i] = open (path[i], generate ? O_RDWR | O_CREAT : O_RDONLY, 0644);
    if (fd[i] == -1) {
      fprintf (stderr, "member-check: %s: %m\n", path[i]);
      return -1;
    }
    if (generate && ftruncate (fd[i], gen_size) == -1) {
      fprintf (stderr, "member-check: %s: truncate: %m\n", path[i]);
      return -1;
    }
    end = lseek (fd[i], 0, SEEK_END);   /* works for block devices too */
    if (end == -1) {
      fprintf (stderr, "member-check: %s: %m\n", path[i]);
      return -1;
    }
    member_size[i] = end;
  }
  return 0;
}

/* md's array size: whole chunks of the smallest member after data_offset. */
static int
compute_geometry (void)
{
  uint64_t smallest = UINT64_MAX;
  unsigned i;

  for (i = 0; i < n; i++)
    if (fd[i] != -1 && member_size[i] < smallest)
      smallest = member_size[i];
  if (smallest < data_offset + chunk) {
    fprintf (stderr, "member-check: smallest member (%" PRIu64 " bytes) "
             "cannot hold data-offset + one chunk\n", smallest);
    return -1;
  }
  stripes = (smallest - data_offset) / chunk;
  if (want_stripes) {
    if (want_stripes > stripes) {
      fprintf (stderr, "member-check: --stripes %" PRIu64 ": the members "
               "hold %" PRIu64 "\n", want_stripes, stripes);
      return -1;
    }
    stripes = want_stripes;
  }
  if (model_path && model.size != stripes * chunk * (n - 1)) {
    errors++;
    fprintf (stderr, "member-check: FAIL: the model has %" PRIu64 " bytes but "
             "md's formula gives %" PRIu64 " stripes * %" PRIu64 " * %u = %"
             PRIu64 " (smallest member %" PRIu64 " bytes)\n", model.size,
             stripes, chunk, n - 1, stripes * chunk * (n - 1), smallest);
    return -1;
  }
  return 0;
}

/* ---- checks ---- */

/* If the model's bytes of data index dd are on another member of this
 * stripe, name it: that points at a layout bug rather than lost data.
 */
static void
suggest_member (uint64_t s, unsigned dd, unsigned holder)
{
  uint64_t a = array_offset (s, dd);
  struct model_diff d;
  unsigned i;

  if (model_count_known (&model, a, chunk) == 0)
    return;
  for (i = 0; i < n; i++)
    if (i != holder && model_compare (&model, a, buf[i], chunk, false, &d) == 0)
      fprintf (stderr, "  (the expected content is on member %u instead)\n", i);
}

static void
check_data (uint64_t s, unsigned dd)
{
  unsigned i = data_member (s, dd);
  uint64_t a = array_offset (s, dd);
  struct model_diff d;

  if (model_compare (&model, a, buf[i], chunk, false, &d) == 0 || !report ())
    return;
  fprintf (stderr, "member-check: FAIL: stripe %" PRIu64 ", data index %u on "
           "member %u (%s%s), member offset %" PRIu64 ", array offset %" PRIu64
           ": %" PRIu64 " bytes differ from the model, first at array offset %"
           PRIu64 " = member offset %" PRIu64 "\n", s, dd, i, path[i],
           (int) i == missing ? ", rebuilt from the others" : "",
           member_offset (s), a, d.differ, d.first,
           member_offset (s) + (d.first - a));
  print_bytes ("model", model.data + a, a, chunk, d.first);
  print_bytes ("member", buf[i], a, chunk, d.first);
  suggest_member (s, dd, i);
}

/* With --lenient-parity, a stripe holding bytes the model does not know
 * (e.g. writes in flight when the server was killed) may have stale
 * parity: the RAID-5 write hole.
 */
static bool
tolerate_stale (uint64_t s)
{
  uint64_t len = chunk * (n - 1);

  if (!lenient_parity || !model_path ||
      model_count_known (&model, array_offset (s, 0), len) == len)
    return false;
  if (stale_parity++ < max_errors)
    fprintf (stderr, "member-check: note: stripe %" PRIu64 " has stale parity "
             "and bytes of unknown content (tolerated)\n", s);
  return true;
}

/* Parity: the XOR of all N chunks of a stripe is zero. */
static void
check_parity (uint64_t s, unsigned char *tmp)
{
  unsigned pd = parity_member (s);
  uint64_t i, bad = 0, first = 0;

  xor_others (tmp, pd);
  for (i = 0; i < chunk; i++)
    if (tmp[i] != buf[pd][i] && bad++ == 0)
      first = i;
  if (bad == 0 || tolerate_stale (s) || !report ())
    return;
  fprintf (stderr, "member-check: FAIL: stripe %" PRIu64 ": parity on member "
           "%u (%s) at member offset %" PRIu64 " is not the XOR of the data "
           "chunks: %" PRIu64 " bytes differ, first at member offset %" PRIu64
           " (array offsets %" PRIu64 "..%" PRIu64 ")\n", s, pd, path[pd],
           member_offset (s), bad, member_offset (s) + first,
           array_offset (s, 0), array_offset (s, n - 1) - 1);
  print_bytes ("xor", tmp, member_offset (s), chunk, member_offset (s) + first);
  print_bytes ("parity", buf[pd], member_offset (s), chunk,
               member_offset (s) + first);
}

static int
check_stripe (uint64_t s, unsigned char *tmp)
{
  unsigned i, dd;

  for (i = 0; i < n; i++)
    if (fd[i] != -1 && pread_all (i, buf[i], chunk, member_offset (s)) == -1)
      return -1;
  if (missing >= 0)
    xor_others (buf[missing], missing);
  else
    check_parity (s, tmp);
  if (model_path)
    for (dd = 0; dd < n - 1; dd++)
      check_data (s, dd);
  return 0;
}

/* Bytes of member i in [from, to) must be zero. */
static int
check_zero (unsigned i, uint64_t from, uint64_t to, const char *what)
{
  uint64_t off, j, len;

  for (off = from; off < to; off += len) {
    len = to - off < chunk ? to - off : chunk;
    if (pread_all (i, buf[0], len, off) == -1)
      return -1;
    for (j = 0; j < len; j++)
      if (buf[0][j] != 0) {
        if (report ())
          fprintf (stderr, "member-check: FAIL: member %u (%s): %s is not "
                   "zero: byte 0x%02x at member offset %" PRIu64 "\n",
                   i, path[i], what, buf[0][j], off + j);
        return 0;
      }
  }
  return 0;
}

static int
check_outside (void)
{
  unsigned i;

  for (i = 0; i < n; i++) {
    if (fd[i] == -1)
      continue;
    if (check_zero (i, 0, data_offset, "the area before data-offset") == -1 ||
        check_zero (i, member_offset (stripes), member_size[i],
                    "the area after the last stripe") == -1)
      return -1;
  }
  return 0;
}

/* ---- generating members from the model ---- */

static int
generate_stripe (uint64_t s)
{
  unsigned dd, pd = parity_member (s);

  for (dd = 0; dd < n - 1; dd++)
    memcpy (buf[data_member (s, dd)], model.data + array_offset (s, dd), chunk);
  xor_others (buf[pd], pd);
  for (dd = 0; dd < n; dd++)
    if (fd[dd] != -1 && pwrite_all (dd, buf[dd], chunk, member_offset (s)) == -1)
      return -1;
  return 0;
}

/* Print the data chunk numbers and parity of the first count stripes, as
 * in md-raid5-reference.md: "[D0 D1 P] [D3 P D2] [P D4 D5]".
 */
static void
print_layout_map (unsigned count)
{
  uint64_t s;
  unsigned i;

  for (s = 0; s < count; s++) {
    printf ("%s[", s ? " " : "");
    for (i = 0; i < n; i++) {
      unsigned dd;
      for (dd = 0; dd < n - 1 && data_member (s, dd) != i; dd++)
        ;
      if (i == parity_member (s))
        printf ("%sP", i ? " " : "");
      else
        printf ("%sD%" PRIu64, i ? " " : "", s * (n - 1) + dd);
    }
    printf ("]");
  }
  printf ("\n");
}

/* ---- command line ---- */

static void
usage (FILE *fp, int status)
{
  fprintf (fp,
"usage: member-check [options] MEMBER...   (MEMBER: path or 'missing')\n"
"  --chunk SIZE        chunk size (default 512K)\n"
"  --layout NAME       left-symmetric|left-asymmetric|right-symmetric|\n"
"                      right-asymmetric|parity-first|parity-last or\n"
"                      ls|la|rs|ra (default ls)\n"
"  --data-offset SIZE  first data byte on each member (default 0)\n"
"  --stripes N         the array's stripes (md's component size, which a\n"
"                      grow keeps: default as many as the members hold)\n"
"  --model FILE        expected array content (FILE and FILE.known); without\n"
"                      it only parity is checked\n"
"  --outside-zero      bytes before data-offset and after the last stripe\n"
"                      must be zero\n"
"  --lenient-parity    tolerate stale parity in stripes that hold bytes the\n"
"                      model does not know (after a crash: the write hole)\n"
"  --generate SIZE     write members of SIZE bytes from --model instead of\n"
"                      checking (a 'missing' member is not written)\n"
"  --print-map N       print which member holds what in stripes 0..N-1\n"
"  --max-errors N      failures printed (default 10)\n"
"  -q, --quiet         no summary line\n");
  exit (status);
}

static uint64_t
size_arg (const char *opt, const char *s)
{
  uint64_t v;

  if (parse_size (s, &v) == -1) {
    fprintf (stderr, "member-check: %s: bad size '%s'\n", opt, s);
    exit (2);
  }
  return v;
}

static enum layout
layout_arg (const char *s)
{
  static const char *shortname[LAYOUTS] = { "la", "ra", "ls", "rs" };
  unsigned i;

  for (i = 0; i < LAYOUTS; i++)
    if (strcmp (s, layout_name[i]) == 0 ||
        (shortname[i] && strcmp (s, shortname[i]) == 0))
      return i;
  fprintf (stderr, "member-check: unknown layout '%s'\n", s);
  exit (2);
}

enum { O_CHUNK = 256, O_LAYOUT, O_DATA_OFFSET, O_MODEL, O_OUTSIDE_ZERO,
       O_GENERATE, O_PRINT_MAP, O_MAX_ERRORS, O_LENIENT_PARITY, O_STRIPES };

static const struct option long_options[] = {
  { "chunk", 1, NULL, O_CHUNK }, { "layout", 1, NULL, O_LAYOUT },
  { "data-offset", 1, NULL, O_DATA_OFFSET }, { "model", 1, NULL, O_MODEL },
  { "outside-zero", 0, NULL, O_OUTSIDE_ZERO },
  { "generate", 1, NULL, O_GENERATE }, { "print-map", 1, NULL, O_PRINT_MAP },
  { "max-errors", 1, NULL, O_MAX_ERRORS }, { "quiet", 0, NULL, 'q' },
  { "lenient-parity", 0, NULL, O_LENIENT_PARITY },
  { "stripes", 1, NULL, O_STRIPES },
  { "help", 0, NULL, 'h' }, { NULL, 0, NULL, 0 },
};

static void
parse_option (int c, const char *arg)
{
  switch (c) {
  case O_CHUNK: chunk = size_arg ("--chunk", arg); break;
  case O_LAYOUT: layout = layout_arg (arg); break;
  case O_DATA_OFFSET: data_offset = size_arg ("--data-offset", arg); break;
  case O_MODEL: model_path = arg; break;
  case O_OUTSIDE_ZERO: outside_zero = true; break;
  case O_GENERATE: generate = true; gen_size = size_arg ("--generate", arg); break;
  case O_PRINT_MAP: print_map = size_arg ("--print-map", arg); break;
  case O_MAX_ERRORS: max_errors = size_arg ("--max-errors", arg); break;
  case O_LENIENT_PARITY: lenient_parity = true; break;
  case O_STRIPES: want_stripes = size_arg ("--stripes", arg); break;
  case 'q': quiet = true; break;
  case 'h': usage (stdout, 0); break;
  default: usage (stderr, 2);
  }
}

static void
parse_args (int argc, char *argv[])
{
  int c;

  while ((c = getopt_long (argc, argv, "qh", long_options, NULL)) != -1)
    parse_option (c, optarg);
  n = argc - optind;
  if (n < 3 || n > MAX_MEMBERS) {
    fprintf (stderr, "member-check: need 3..%d members\n", MAX_MEMBERS);
    exit (2);
  }
  for (c = 0; c < (int) n; c++) {
    path[c] = argv[optind + c];
    if (strcmp (path[c], "missing") == 0 && missing >= 0) {
      fprintf (stderr, "member-check: more than one member is missing\n");
      exit (2);
    }
    if (strcmp (path[c], "missing") == 0)
      missing = c;
  }
  if (chunk == 0 || (chunk & (chunk - 1)) != 0 ||
      (generate && model_path == NULL)) {
    fprintf (stderr, "member-check: bad --chunk, or --generate without "
             "--model\n");
    exit (2);
  }
}

static int
run (void)
{
  unsigned char *tmp = malloc (chunk);
  uint64_t s;
  unsigned i;
  int r = tmp ? 0 : -1;

  for (i = 0; i < n; i++)
    if ((buf[i] = malloc (chunk)) == NULL)
      r = -1;
  if (r == -1)
    perror ("member-check: malloc");
  for (s = 0; s < stripes && r == 0; s++)
    r = generate ? generate_stripe (s) : check_stripe (s, tmp);
  if (r == 0 && outside_zero && !generate)
    r = check_outside ();
  free (tmp);
  for (i = 0; i < n; i++)
    free (buf[i]);
  return r;
}

static void
print_summary (void)
{
  if (quiet)
    return;
  printf ("member-check: %u members%s, chunk %" PRIu64 ", %s, data-offset %"
          PRIu64 ", %" PRIu64 " stripes, array %" PRIu64 " bytes: ",
          n, missing >= 0 ? " (one missing)" : "", chunk,
          layout_name[layout], data_offset, stripes, stripes * chunk * (n - 1));
  if (generate)
    printf ("members written\n");
  else
    printf ("%s%s: %s\n",
            missing >= 0 ? "missing member rebuilt by XOR" : "parity checked",
            model_path ? ", data checked against the model" : "",
            errors ? "FAILED" : "OK");
}

int
main (int argc, char *argv[])
{
  parse_args (argc, argv);
  if (print_map) {
    print_layout_map (print_map);
    return 0;
  }
  if (model_path && model_load (&model, model_path) == -1)
    return 2;
  if (open_members () == -1 || compute_geometry () == -1)
    return errors ? 1 : 2;
  if (run () == -1)
    return 2;
  print_summary ();
  if (stale_parity)
    printf ("member-check: %u stripe(s) with stale parity tolerated\n",
            stale_parity);
  if (errors)
    fprintf (stderr, "member-check: %u check(s) failed\n", errors);
  model_free (&model);
  return errors ? 1 : 0;
}
