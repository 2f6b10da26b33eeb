/* tools/monitor.c -- raid5ctl monitor: watch served arrays through their
 * control sockets and report what happens to them, as mdadm --monitor
 * does for md arrays (mdadm(8) MONITOR MODE, mdmonitor.c).
 *
 * Each array's status --json is read every --delay seconds and compared
 * with the last one; each difference is an event, named as mdadm names
 * it where mdadm has one:
 *   DegradedArray   the array was found degraded, or became so
 *   Fail            a member went out of service (COMPONENT: its path)
 *   RebuildStarted  a job began: rebuild, re-add, resync, check, repair
 *                   (COMPONENT: the job's kind; mdadm counts check and
 *                   repair as rebuilds too)
 *   RebuildFinished that job ended (COMPONENT: its kind)
 *   SpareActive     a rebuilt member is in service (COMPONENT: its path)
 *   DeviceDisappeared  the server no longer answers
 *   TestMessage     --test, for each array at start
 * and two of our own: ReAdded (a member that missed writes is coming
 * back, bitmap-guided; COMPONENT: its path) and MismatchesFound (a check
 * ended with wrong parity; COMPONENT: md's mismatch_cnt in sectors).
 *
 * Without --program each event is a line on stdout, "EVENT ARRAY
 * [COMPONENT]"; with it, PROGRAM runs once per event with those words as
 * its arguments (mdadm's PROGRAM), and is waited for.  The ARRAY is the
 * control socket's path.  Exit status as mdadm's: 0 when it stops (after
 * --oneshot's one look, or when no array is left to watch), 1 on bad
 * usage or when an array cannot be read at start.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "array/array.h"
#include "raid/number.h"
#include "tools/ctl-json.h"
#include "tools/raid5ctl.h"

#define MAX_ARRAYS 64

/* What one status says, of what events are made of. */
struct look {
  char state[16];             /* healthy, degraded, failed */
  unsigned n;
  struct { char state[16], path[4096]; } m[R5_MAX_MEMBERS];
  char job[16];               /* running job, "idle" */
  uint64_t ended;             /* jobs ended since the server started */
  char last_kind[16];
  int64_t last_result;
  uint64_t last_mismatches;
};

struct watched {
  const char *path;
  bool gone;
  struct look last;
};

struct opts {
  const char *program;
  bool oneshot, test;
  double delay;               /* seconds */
};

static void
usage (void)
{
  printf (
"usage: raid5ctl monitor [--program PROGRAM] [--oneshot] [--test]\n"
"                        [--delay SECS] SOCKET...\n"
"\n"
"Watch the arrays served with these control sockets (nbdkit raid5 ...\n"
"control=SOCKET) and report each event, as mdadm --monitor does:\n"
"DegradedArray, Fail (member path), RebuildStarted and RebuildFinished\n"
"(job kind: rebuild, re-add, resync, check, repair), SpareActive (member\n"
"path), DeviceDisappeared, TestMessage, and ReAdded (member path) and\n"
"MismatchesFound (sectors) of our own.  Each event is a line on stdout,\n"
"\"EVENT SOCKET [COMPONENT]\", or with --program a run of PROGRAM EVENT\n"
"SOCKET [COMPONENT].\n"
"\n"
"  --program PROGRAM  run it for each event (mdadm's PROGRAM)\n"
"  --oneshot          look once (DegradedArray for a degraded array), exit\n"
"  --test             a TestMessage for each array at start\n"
"  --delay SECS       between looks (default 60, as mdadm; fractions too)\n"
"  -h, --help         this text\n"
"\n"
"Exit status: 0 when it stops (--oneshot, or no array left to watch); 1 on\n"
"an error, or when an array cannot be read at start.\n");
}

static bool
read_member (json_object *m, struct look *l)
{
  if (l->n == R5_MAX_MEMBERS ||
      !ctl_json_str (m, "state", l->m[l->n].state, sizeof l->m[0].state))
    return false;
  /* A missing member has no path. */
  if (!ctl_json_str (m, "path", l->m[l->n].path, sizeof l->m[0].path))
    snprintf (l->m[l->n].path, sizeof l->m[0].path, "missing");
  l->n++;
  return true;
}

static bool
parse (json_object *s, void *opaque)
{
  struct look *l = opaque;
  json_object *ms = ctl_json_member (s, "members", json_type_array);
  json_object *j = ctl_json_member (s, "job", json_type_object);
  json_object *lj = ctl_json_member (s, "last_job", json_type_object);

  *l = (struct look) { .n = 0 };
  for (size_t i = 0; ms && i < json_object_array_length (ms); i++)
    if (!read_member (json_object_array_get_idx (ms, i), l))
      return false;
  return ms && ctl_json_str (s, "state", l->state, sizeof l->state) &&
    ctl_json_str (j, "kind", l->job, sizeof l->job) &&
    ctl_json_u64 (lj, "number", &l->ended) &&
    ctl_json_str (lj, "kind", l->last_kind, sizeof l->last_kind) &&
    ctl_json_i64 (lj, "result", &l->last_result) &&
    ctl_json_u64 (lj, "mismatch_sectors", &l->last_mismatches);
}

/* One event: a line, or a run of the program. */
static void
event (const struct opts *o, const char *name, const char *array,
       const char *component)
{
  pid_t pid;
  int st;

  if (o->program == NULL) {
    printf ("%s %s%s%s\n", name, array, component ? " " : "",
            component ? component : "");
    fflush (stdout);
    return;
  }
  fflush (stdout);
  if ((pid = fork ()) == 0) {
    execlp (o->program, o->program, name, array, component, (char *) NULL);
    fprintf (stderr, "raid5ctl monitor: %s: %s\n", o->program,
             strerror (errno));
    _exit (127);
  }
  if (pid < 0)
    tool_error ("--program %s: cannot run it: %m", o->program);
  else
    waitpid (pid, &st, 0);
}

static bool
out_of_service (const char *state)
{
  return strcmp (state, "faulty") == 0 || strcmp (state, "missing") == 0;
}

static bool
coming_back (const char *state)
{
  return strcmp (state, "rebuilding") == 0 || strcmp (state, "re-adding") == 0;
}

/* The members' events from look a to look b. */
static void
member_events (const struct opts *o, const char *array,
               const struct look *a, const struct look *b)
{
  for (unsigned s = 0; s < b->n && s < a->n; s++) {
    const char *was = a->m[s].state, *is = b->m[s].state;
    bool same = strcmp (a->m[s].path, b->m[s].path) == 0;
    /* A hot spare took the slot between two looks: the member in service
     * failed (no look saw it out), and the spare rebuilds or is in.  A
     * replace's new member takes the slot with nobody failing.
     */
    bool spare_in = !same && !out_of_service (was) &&
      (strcmp (is, "rebuilding") == 0 ||
       (strcmp (is, "active") == 0 && strcmp (b->last_kind, "rebuild") == 0
        && b->ended != a->ended));

    if (spare_in) {
      event (o, "Fail", array, a->m[s].path);
      if (strcmp (is, "active") == 0)
        event (o, "SpareActive", array, b->m[s].path);
      continue;
    }
    if (strcmp (was, is) == 0)
      continue;
    bool back = strcmp (is, "active") == 0 && out_of_service (was);

    if (out_of_service (is) && !out_of_service (was))
      event (o, "Fail", array, a->m[s].path);
    /* A re-add (or a rebuild) quicker than a look is seen as the member
     * out of service, then in: the same path says it was a re-add.
     */
    if (strcmp (is, "re-adding") == 0 || (back && same))
      event (o, "ReAdded", array, b->m[s].path);
    if (strcmp (is, "active") == 0 && (coming_back (was) || back))
      event (o, "SpareActive", array, b->m[s].path);
  }
}

/* The jobs that began from look a to look b (one that also ended: it
 * began and ended between two looks).
 */
static void
jobs_started (const struct opts *o, const char *array, const struct look *a,
              const struct look *b)
{
  if (b->ended != a->ended && strcmp (a->job, b->last_kind) != 0 &&
      strcmp (b->job, b->last_kind) != 0)
    event (o, "RebuildStarted", array, b->last_kind);
  if (strcmp (b->job, "idle") != 0 && strcmp (b->job, a->job) != 0)
    event (o, "RebuildStarted", array, b->job);
}

/* The job that ended from look a to look b, and what a check found. */
static void
jobs_ended (const struct opts *o, const char *array, const struct look *a,
            const struct look *b)
{
  char sectors[32];

  if (b->ended == a->ended)
    return;
  event (o, "RebuildFinished", array, b->last_kind);
  if (strcmp (b->last_kind, "check") == 0 && b->last_result == 0 &&
      b->last_mismatches > 0) {
    snprintf (sectors, sizeof sectors, "%" PRIu64, b->last_mismatches);
    event (o, "MismatchesFound", array, sectors);
  }
}

static void
compare (const struct opts *o, struct watched *w, const struct look *now)
{
  jobs_started (o, w->path, &w->last, now);
  member_events (o, w->path, &w->last, now);
  if (strcmp (now->state, "healthy") != 0 &&
      strcmp (w->last.state, "healthy") == 0)
    event (o, "DegradedArray", w->path, NULL);
  jobs_ended (o, w->path, &w->last, now);
  w->last = *now;
}

static int
parse_opts (int argc, char **argv, struct opts *o)
{
  static const struct option longopts[] = {
    { "help", no_argument, NULL, 'h' },
    { "program", required_argument, NULL, 'p' },
    { "oneshot", no_argument, NULL, '1' },
    { "test", no_argument, NULL, 't' },
    { "delay", required_argument, NULL, 'd' },
    { NULL, 0, NULL, 0 },
  };
  int c;

  while ((c = tool_getopt (argc, argv, "h1t", longopts)) != -1)
    switch (c) {
    case 'h': usage (); exit (TOOL_OK);
    case 'p': o->program = optarg; break;
    case '1': o->oneshot = true; break;
    case 't': o->test = true; break;
    case 'd':
      if (r5_parse_decimal (optarg, 0.001, 86400, NULL, &o->delay) < 0)
        return tool_error ("--delay %s: not a number of seconds (0.001 to "
                           "86400)", optarg);
      break;
    default: return TOOL_FAIL;
    }
  if (argc - optind < 1)
    return tool_error ("which arrays? (usage: raid5ctl monitor [OPTIONS] "
                       "SOCKET...)");
  if (argc - optind > MAX_ARRAYS)
    return tool_error ("%d sockets: at most %d", argc - optind, MAX_ARRAYS);
  return TOOL_OK;
}

/* The first look at each array: events of what it is now. */
static int
first_looks (const struct opts *o, struct watched *w, unsigned n)
{
  for (unsigned i = 0; i < n; i++) {
    struct look *l = &w[i].last;

    if (ctl_status (w[i].path, parse, l) != TOOL_OK)
      return TOOL_FAIL;
    if (o->test)
      event (o, "TestMessage", w[i].path, NULL);
    if (strcmp (l->state, "healthy") != 0)
      event (o, "DegradedArray", w[i].path, NULL);
    if (strcmp (l->job, "idle") != 0 && !o->oneshot)
      event (o, "RebuildStarted", w[i].path, l->job);
  }
  return TOOL_OK;
}

static void
pause_for (double secs)
{
  struct timespec t = { (time_t) secs,
                        (long) ((secs - (double) (time_t) secs) * 1e9) };

  while (nanosleep (&t, &t) == -1 && errno == EINTR)
    ;
}

int
monitor_main (int argc, char **argv)
{
  struct opts o = { .delay = 60 };
  struct watched *w;
  struct look *now;
  unsigned n, left;

  if (parse_opts (argc, argv, &o) != TOOL_OK)
    return TOOL_FAIL;
  n = (unsigned) (argc - optind);
  if ((w = calloc (n, sizeof *w)) == NULL ||
      (now = malloc (sizeof *now)) == NULL) {
    free (w);
    return tool_error ("out of memory");
  }
  for (unsigned i = 0; i < n; i++)
    w[i].path = argv[optind + (int) i];
  if (first_looks (&o, w, n) != TOOL_OK) {
    free (w);
    free (now);
    return TOOL_FAIL;
  }
  for (left = n; !o.oneshot && left > 0; ) {
    pause_for (o.delay);
    for (unsigned i = 0; i < n; i++) {
      if (w[i].gone)
        continue;
      if (ctl_status (w[i].path, parse, now) != TOOL_OK) {
        w[i].gone = true;
        left--;
        event (&o, "DeviceDisappeared", w[i].path, NULL);
      }
      else
        compare (&o, &w[i], now);
    }
  }
  free (w);
  free (now);
  return TOOL_OK;
}
