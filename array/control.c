/* array/control.c -- the array's control commands, as lines of text:
 * what the plugin's control socket and raid5ctl --control speak.  The
 * commands, their syntax and their help are the table below
 * (commands.h); raid5ctl reads the same table.
 *
 * The reply is the command's output followed by a last line "OK" or
 * "ERROR: why".  Pure text in, text out: no sockets here.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array/commands.h"
#include "array/object.h"
#include "raid/number.h"

#define MAX_WORDS (R5_MAX_MEMBERS + 2)

static unsigned
split (char *line, char **w)
{
  unsigned n = 0;
  char *save = NULL;

  for (char *t = strtok_r (line, " \t\r\n", &save); t && n < MAX_WORDS;
       t = strtok_r (NULL, " \t\r\n", &save))
    w[n++] = t;
  return n;
}

/* Numbers as raid5ctl and the plugin take them (raid/number.h): word w
 * from min to max, or -EINVAL with err naming it and the range.
 */
static int
parse_num (const char *what, const char *w, uint64_t min, uint64_t max,
           uint64_t *v, struct array_err *err)
{
  if (r5_parse_uint (w, min, max, v) == 0)
    return 0;
  array_set_err (err, "%s %s: expected a whole number from %" PRIu64
                 " to %" PRIu64, what, w, min, max);
  return -EINVAL;
}

static int
cmd_status (struct array *a, char **w, unsigned n, FILE *out,
            struct array_err *err)
{
  if (n == 2 && strcmp (w[1], "--json") != 0)
    return -EINVAL;
  array_status_print (a, n == 2, out);
  return 0;
}

static int
cmd_scrub (struct array *a, char **w, unsigned n, FILE *out,
           struct array_err *err)
{
  int r = array_job_start (a, strcmp (w[0], "check") == 0 ? R5_JOB_CHECK
                                                          : R5_JOB_REPAIR,
                           err);

  if (r == 0)
    fprintf (out, "%s started\n", w[0]);
  return r;
}

static int
cmd_hold (struct array *a, char **w, unsigned n, FILE *out,
          struct array_err *err)
{
  array_job_pause (a, strcmp (w[0], "pause") == 0);
  fprintf (out, "%s: %s\n", w[0], r5_job_name (a->job.kind));
  return 0;
}

static int
cmd_speed (struct array *a, char **w, unsigned n, FILE *out,
           struct array_err *err)
{
  uint64_t min = 0, max = 0, *dst;
  bool raised;

  for (unsigned i = 1; i < n; i += 2) {
    dst = strcmp (w[i], "--min") == 0 ? &min
        : strcmp (w[i], "--max") == 0 ? &max : NULL;
    if (dst == NULL || i + 1 >= n)
      return -EINVAL;
    if (parse_num (w[i], w[i + 1], 1, ARRAY_SYNC_SPEED_LIMIT, dst, err) < 0)
      return -EINVAL;
  }
  if (min > 0 && max > 0 && min > max) {
    array_set_err (err, "--min %" PRIu64 " is above --max %" PRIu64
                   " (KiB/s per member)", min, max);
    return -EINVAL;
  }
  if (min == 0 && max > 0 && max < (uint64_t) a->job.rate.min) {
    array_set_err (err, "--max %" PRIu64 " is below the min, %" PRIu64
                   " K/sec (per member): give a lower --min too", max,
                   (uint64_t) a->job.rate.min);
    return -EINVAL;
  }
  raised = max == 0 && min > (uint64_t) a->job.rate.max;
  array_set_sync_speed (a, min, max);
  fprintf (out, "speed limits: min %" PRIu64 " K/sec, max %" PRIu64
           " K/sec (per member)%s\n", (uint64_t) a->job.rate.min,
           (uint64_t) a->job.rate.max, raised ? "; the max raised to the "
           "min" : "");
  return 0;
}

/* The words after a slot: PATH and, for rebuild and replace, --force
 * (either order).
 */
static int
slot_words (char **w, unsigned n, const char **path, bool *force)
{
  *path = NULL;
  *force = false;
  for (unsigned i = 2; i < n; i++) {
    if (strcmp (w[i], "--force") == 0 && !*force &&
        (strcmp (w[0], "rebuild") == 0 || strcmp (w[0], "replace") == 0))
      *force = true;
    else if (*path == NULL && strncmp (w[i], "--", 2) != 0)
      *path = w[i];
    else
      return -EINVAL;
  }
  return 0;
}

/* fail SLOT, rebuild SLOT [PATH] [--force], re-add SLOT [PATH],
 * replace SLOT PATH [--force].
 */
static int
cmd_slot (struct array *a, char **w, unsigned n, FILE *out,
          struct array_err *err)
{
  const char *path;
  uint64_t slot;
  bool force;
  int r;

  if (parse_num ("SLOT", w[1], 0, R5_MAX_MEMBERS - 1, &slot, err) < 0 ||
      slot_words (w, n, &path, &force) < 0)
    return -EINVAL;
  if (strcmp (w[0], "replace") == 0 && path == NULL)
    return -EINVAL;
  if (strcmp (w[0], "fail") == 0)
    r = array_fail (a, (unsigned) slot, err);
  else if (strcmp (w[0], "re-add") == 0)
    r = array_readd_start (a, (unsigned) slot, path, err);
  else if (strcmp (w[0], "replace") == 0)
    r = array_replace_start (a, (unsigned) slot, path, force, err);
  else
    r = array_rebuild_start (a, (unsigned) slot, path, force, err);
  if (r == -EALREADY) {       /* a replace asked again after its end */
    fprintf (out, "%s: " ACMD_UNCHANGED "%s\n", w[0], err->msg);
    return 0;
  }
  if (r >= 0)
    fprintf (out, "%s: slot %" PRIu64 "%s\n", w[0], slot,
             strcmp (w[0], "fail") == 0 ? " failed"
             : strcmp (w[0], "re-add") == 0 && r == 1
             ? ": re-added; it left part-way through a rebuild onto it, so "
               "it is rebuilt whole (as md does)"
             : strcmp (w[0], "re-add") == 0
             ? ": re-added, rebuilding what the bitmap marks"
             : strcmp (w[0], "replace") == 0
             ? ": replace started (the member stays in service)"
             : ": rebuild started");
  return r < 0 ? r : 0;
}

/* grow --bitmap=internal|none: the internal bitmap added or removed. */
static int
grow_bitmap (struct array *a, const char *what, FILE *out,
             struct array_err *err)
{
  bool on = strcmp (what, "internal") == 0;
  int r;

  if (!on && strcmp (what, "none") != 0)
    return -EINVAL;
  if ((r = array_set_bitmap (a, on, err)) == -EALREADY) {
    fprintf (out, "grow: " ACMD_UNCHANGED "%s\n", err->msg);
    return 0;
  }
  if (r == 0)
    fprintf (out, "grow: %s\n", on ? "internal bitmap added" : "bitmap "
             "removed");
  return r;
}

/* grow --size=max|SECTORS [--assume-clean]: the component size grown
 * (array_resize), its new space resynced by the job thread.
 */
static int
grow_size (struct array *a, char **w, unsigned n, FILE *out,
           struct array_err *err)
{
  uint64_t sectors = 0, was = a->geom.capacity;
  bool clean = false;
  char *end;
  int r;

  for (unsigned i = 1; i < n; i++) {
    if (strcmp (w[i], "--assume-clean") == 0 && !clean)
      clean = true;
    else if (strncmp (w[i], "--size=", 7) != 0)
      return -EINVAL;
    else if (strcmp (w[i] + 7, "max") != 0) {
      errno = 0;
      sectors = strtoull (w[i] + 7, &end, 10);
      if (errno || *end || sectors == 0)
        return -EINVAL;
    }
  }
  if ((r = array_resize (a, sectors, clean, err)) == -EALREADY) {
    fprintf (out, "grow: " ACMD_UNCHANGED "%s\n", err->msg);
    return 0;
  }
  if (r < 0)
    return r;
  fprintf (out, "grow: %" PRIu64 " sectors of each member, %" PRIu64
           " bytes (was %" PRIu64 ")%s; clients see the new size when they "
           "connect again\n", a->geom.member_data / 512, a->geom.capacity,
           was, clean ? "" : ": the new space is being resynced");
  return 0;
}

/* grow [PATH...] [--force] [--backup-file=FILE]: the paths join in new
 * slots and the array is reshaped onto them; without paths, a stopped
 * reshape goes on.  With --size=, the component size grows instead.
 */
static int
cmd_grow (struct array *a, char **w, unsigned n, FILE *out,
          struct array_err *err)
{
  const char *paths[R5_MAX_MEMBERS] = { NULL };
  unsigned k = 0, was = a->geom.members;
  bool force = false;
  int r;

  for (unsigned i = 1; i < n; i++)
    if (strncmp (w[i], "--size=", 7) == 0)
      return grow_size (a, w, n, out, err);
  if (n == 2 && strncmp (w[1], "--bitmap=", 9) == 0)
    return grow_bitmap (a, w[1] + 9, out, err);
  for (unsigned i = 1; i < n; i++) {
    if (strcmp (w[i], "--force") == 0 && !force)
      force = true;
    else if (strncmp (w[i], "--backup-file=", 14) == 0) {
      if ((r = array_grow_backup_file (a, w[i] + 14, err)) < 0)
        return r;
    }
    else if (strncmp (w[i], "--", 2) == 0 || k == R5_MAX_MEMBERS)
      return -EINVAL;
    else
      paths[k++] = w[i];
  }
  if ((r = array_grow_start (a, paths, k, force, err)) < 0)
    return r;
  if (k > 0)
    fprintf (out, "grow: %u to %u members: reshape started\n", was,
             a->geom.members);
  else
    fprintf (out, "grow: the reshape goes on (%u members)\n", was);
  return 0;
}

/* read OFFSET LENGTH: array bytes as hex, ARRAY_READ_LINE of them a
 * line (what raid5ctl check --control --files reads the file system
 * through).  At most ARRAY_READ_MAX bytes, within the array.
 */
#define ARRAY_READ_LINE 64u

static int
cmd_read (struct array *a, char **w, unsigned n, FILE *out,
          struct array_err *err)
{
  uint64_t off, len;
  unsigned char *buf;
  int r;

  if (parse_num ("OFFSET", w[1], 0, UINT64_MAX, &off, err) < 0 ||
      parse_num ("LENGTH", w[2], 0, UINT64_MAX, &len, err) < 0)
    return -EINVAL;
  if (len == 0 || len > ARRAY_READ_MAX || off >= array_capacity (a) ||
      len > array_capacity (a) - off) {
    array_set_err (err, "read %" PRIu64 " %" PRIu64 ": 1 to %u bytes within "
                   "the array's %" PRIu64, off, len, ARRAY_READ_MAX,
                   array_capacity (a));
    return -EINVAL;
  }
  if ((buf = malloc (len)) == NULL)
    return -ENOMEM;
  if ((r = array_read (a, buf, len, off, err)) == 0)
    for (uint64_t i = 0; i < len; i++)
      fprintf (out, "%02x%s", buf[i],
               (i + 1) % ARRAY_READ_LINE == 0 || i + 1 == len ? "\n" : "");
  free (buf);
  return r;
}

const struct array_cmd array_cmds[] = {
  { "status", "a served array's state: health, job, speed, counters",
    "status [--json]", 1, 2, ACMD_JSON, 0, "[--json]",
    "The state of the array as the server sees it: health ([UUU] as md\n"
    "shows it), members, the running job's progress and speed, the sync\n"
    "speed limits, the last job's result and the request counters; with\n"
    "--json, one JSON object.\n", cmd_status },
  { "check", "count parity mismatches like md, and say where they are",
    "check", 1, 1,
    ACMD_WAIT | ACMD_JSON | ACMD_LIST | ACMD_FILES | ACMD_FS_OFFSET, 0,
    "[--wait [--json] [--list N] [--files [--fs-offset SIZE]]]", NULL,
    cmd_scrub },
  { "repair", "rewrite wrong parity from the data", "repair", 1, 1,
    ACMD_WAIT | ACMD_JSON | ACMD_LIST, 0, "[--wait [--json] [--list N]]",
    NULL, cmd_scrub },
  { "rebuild", "compute the member of a slot out of service (resumable)",
    "rebuild SLOT [PATH] [--force]", 2, 4,
    ACMD_WAIT | ACMD_SLOT | ACMD_NEW | ACMD_FORCE, 2,
    "[--wait] [--force] SLOT [PATH]", NULL, cmd_slot },
  { "re-add", "bring back a member that missed writes (bitmap-guided)",
    "re-add SLOT [PATH]", 2, 3, ACMD_WAIT | ACMD_SLOT, 2,
    "[--wait] SLOT [PATH]", NULL, cmd_slot },
  { "replace", "copy a member onto a new disk while it serves (md's "
    "--replace)", "replace SLOT PATH [--force]", 3, 4,
    ACMD_WAIT | ACMD_SLOT | ACMD_NEW | ACMD_FORCE, 2,
    "[--wait] [--force] SLOT PATH", NULL, cmd_slot },
  { "grow", "add members and reshape the array onto them (resumable)",
    "grow [PATH...] [--force] [--backup-file=FILE] | grow "
    "--size=max|SECTORS [--assume-clean] | grow --bitmap=internal|none", 1,
    MAX_WORDS, ACMD_WAIT | ACMD_ADD | ACMD_FORCE | ACMD_BACKUP | ACMD_SIZE |
    ACMD_ASSUME_CLEAN | ACMD_BITMAP, 0,
    "[--wait] [--force] [--backup-file FILE] --add PATH [--add PATH...]",
    NULL, cmd_grow },
  { "fail", "take a member of a served array out of service", "fail SLOT",
    2, 2, ACMD_SLOT, 1, "SLOT",
    "Take the member in SLOT out of service by hand (md's --fail): it is\n"
    "marked faulty in the other members' superblocks and the array goes\n"
    "on degraded.  Put a member back with raid5ctl rebuild --control.\n",
    cmd_slot },
  { "pause", "hold a served array's running job", "pause", 1, 1, 0, 0, "",
    "Hold the running job (resync, check, repair, rebuild) where it is;\n"
    "raid5ctl resume continues it.\n", cmd_hold },
  { "resume", "continue a served array's held job", "resume", 1, 1, 0, 0,
    "", "Continue the job that raid5ctl pause held.\n", cmd_hold },
  { "speed", "a served array's sync speed limits (min, max)",
    "speed [--min KIB] [--max KIB] (KiB/s per member, > 0)", 1, 5,
    ACMD_MIN | ACMD_MAX, 0, "[--min SIZE] [--max SIZE]",
    "Set the sync speed limits of resync, check, repair and rebuild, per\n"
    "member and second (md's sync_speed_min and sync_speed_max): a job runs\n"
    "at up to max while clients are idle and at min while they are busy.\n"
    "A bare number is KiB (per second); suffixes K, M, G, T; 1K to 1T.\n"
    "A --min above the max raises the max to it; a --max below the min is\n"
    "refused (give a lower --min with it).  Without options, print the\n"
    "limits.\n", cmd_speed },
  /* raid5ctl's own: neither a subcommand nor in its help. */
  { "read", "array bytes, as hex", "read OFFSET LENGTH", 3, 3, ACMD_HIDDEN,
    0, "", NULL, cmd_read },
};
const size_t array_ncmds = sizeof array_cmds / sizeof array_cmds[0];

const struct array_cmd *
array_cmd_find (const char *name)
{
  for (size_t i = 0; i < array_ncmds; i++)
    if (strcmp (array_cmds[i].name, name) == 0)
      return &array_cmds[i];
  return NULL;
}

const char *
array_cmd_names (void)
{
  static char names[160];

  if (names[0] == '\0')
    for (size_t i = 0, at = 0; i < array_ncmds; i++)
      if (!(array_cmds[i].opts & ACMD_HIDDEN))
        at += (size_t) snprintf (names + at, sizeof names - at, "%s%s",
                                 i ? ", " : "", array_cmds[i].name);
  return names;
}

static int
dispatch (struct array *a, char **w, unsigned n, FILE *out,
          struct array_err *err)
{
  const struct array_cmd *c = array_cmd_find (w[0]);
  int r;

  if (c == NULL) {
    array_set_err (err, "unknown command '%s' (%s)", w[0],
                   array_cmd_names ());
    return -EINVAL;
  }
  r = n < c->min_words || n > c->max_words ? -EINVAL
    : c->run (a, w, n, out, err);
  if (r == -EINVAL && err->msg[0] == '\0')
    array_set_err (err, "usage: %s", c->wire);
  return r;
}

char *
array_control (struct array *a, const char *line)
{
  char *copy = strdup (line), *w[MAX_WORDS], *text = NULL;
  struct array_err err = { "" };
  size_t len = 0;
  FILE *out = open_memstream (&text, &len);
  unsigned n;
  int r;

  if (copy == NULL || out == NULL) {
    if (out)
      fclose (out);
    free (copy);
    free (text);
    return strdup ("ERROR: out of memory\n");
  }
  n = split (copy, w);
  r = n == 0 ? (array_set_err (&err, "empty command"), -EINVAL)
             : dispatch (a, w, n, out, &err);
  if (r < 0)
    fprintf (out, "ERROR: %s\n", err.msg[0] ? err.msg : strerror (-r));
  else
    fputs ("OK\n", out);
  fclose (out);
  free (copy);
  return text;
}
