/* array/control.c -- the array's control commands, as lines of text:
 * what the plugin's control socket and raid5ctl --control speak.
 *
 *   status [--json]           md-style state, the job's progress, counters
 *   check | repair            start a scrub in the background
 *   rebuild SLOT [PATH]       replace the member in SLOT and rebuild it
 *   re-add SLOT [PATH]        bring back the member that left SLOT,
 *                             rebuilding what the bitmap marks (md --re-add)
 *   fail SLOT                 take a member out of service by hand
 *   pause | resume            hold or continue the running job
 *   speed [--min KIB] [--max KIB]   sync speed limits, KiB/s per member
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

#include "array/internal.h"

#define MAX_WORDS 8

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

static int
parse_u64 (const char *s, uint64_t *v)
{
  char *end;

  if (*s < '0' || *s > '9')
    return -EINVAL;
  errno = 0;
  *v = strtoull (s, &end, 10);
  return *end || errno ? -EINVAL : 0;
}

static int
cmd_speed (struct array *a, char **w, unsigned n, FILE *out,
           struct array_err *err)
{
  uint64_t min = 0, max = 0, *dst;

  for (unsigned i = 1; i < n; i += 2) {
    dst = strcmp (w[i], "--min") == 0 ? &min
        : strcmp (w[i], "--max") == 0 ? &max : NULL;
    if (dst == NULL || i + 1 >= n || parse_u64 (w[i + 1], dst) < 0 ||
        *dst == 0) {
      array_set_err (err, "usage: speed [--min KIB] [--max KIB] (KiB/s per "
                     "member, > 0)");
      return -EINVAL;
    }
  }
  array_set_sync_speed (a, min, max);
  fprintf (out, "speed limits: min %" PRIu64 " K/sec, max %" PRIu64
           " K/sec (per member)\n", (uint64_t) a->job.speed_min,
           (uint64_t) a->job.speed_max);
  return 0;
}

static int
cmd_slot (struct array *a, char **w, unsigned n, FILE *out,
          struct array_err *err)
{
  uint64_t slot;
  int r;

  if (n < 2 || parse_u64 (w[1], &slot) < 0 || slot >= R5_MAX_MEMBERS ||
      (strcmp (w[0], "fail") == 0 && n != 2) || n > 3) {
    array_set_err (err, "usage: %s SLOT%s", w[0],
                   strcmp (w[0], "fail") ? " [PATH]" : "");
    return -EINVAL;
  }
  if (strcmp (w[0], "fail") == 0)
    r = array_fail (a, (unsigned) slot, err);
  else if (strcmp (w[0], "re-add") == 0)
    r = array_readd_start (a, (unsigned) slot, n == 3 ? w[2] : NULL, err);
  else
    r = array_rebuild_start (a, (unsigned) slot, n == 3 ? w[2] : NULL, err);
  if (r == 0)
    fprintf (out, "%s: slot %" PRIu64 "%s\n", w[0], slot,
             strcmp (w[0], "fail") == 0 ? " failed"
             : strcmp (w[0], "re-add") == 0
             ? ": re-added, rebuilding what the bitmap marks"
             : ": rebuild started");
  return r;
}

static int
dispatch (struct array *a, char **w, unsigned n, FILE *out,
          struct array_err *err)
{
  if (strcmp (w[0], "status") == 0 && n <= 2) {
    bool json = n == 2 && strcmp (w[1], "--json") == 0;

    if (n == 2 && !json)
      return array_set_err (err, "usage: status [--json]"), -EINVAL;
    array_status_print (a, json, out);
    return 0;
  }
  if ((strcmp (w[0], "check") == 0 || strcmp (w[0], "repair") == 0) &&
      n == 1) {
    int r = array_job_start (a, w[0][0] == 'c' ? ARRAY_JOB_CHECK
                                               : ARRAY_JOB_REPAIR, err);
    if (r == 0)
      fprintf (out, "%s started\n", w[0]);
    return r;
  }
  if ((strcmp (w[0], "pause") == 0 || strcmp (w[0], "resume") == 0) &&
      n == 1) {
    array_job_pause (a, w[0][0] == 'p');
    fprintf (out, "%s: %s\n", w[0], array_job_name (a->job.kind));
    return 0;
  }
  if (strcmp (w[0], "speed") == 0)
    return cmd_speed (a, w, n, out, err);
  if (strcmp (w[0], "rebuild") == 0 || strcmp (w[0], "fail") == 0 ||
      strcmp (w[0], "re-add") == 0)
    return cmd_slot (a, w, n, out, err);
  array_set_err (err, "unknown command '%s' (status, check, repair, rebuild, "
                 "re-add, fail, pause, resume, speed)", w[0]);
  return -EINVAL;
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
