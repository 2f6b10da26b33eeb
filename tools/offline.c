/* tools/offline.c -- the offline jobs' options, log, pace and run
 * (offline.h).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "raid/number.h"
#include "tools/offline.h"
#include "tools/raid5ctl.h"

#define HELD_MAX 4

static char held[HELD_MAX][ARRAY_ERR_LEN];
static unsigned nheld;

int
offline_option (struct offline_opts *o, int c, const char *arg)
{
  uint64_t v;

  switch (c) {
  case 's':
    if (r5_parse_uint (arg, 0, R5_MAX_MEMBERS - 1, &v) < 0)
      return tool_error ("--slot %s: not a slot number (0 to %d)", arg,
                         R5_MAX_MEMBERS - 1);
    o->slot = (int) v;
    return TOOL_OK;
  case 'f': o->force = true; return TOOL_OK;
  case 'd':
  case 'B': return disk_cache_option (&o->cache, c);
  case 'x': return tool_parse_speed ("--max-speed", arg, &o->max_kib);
  default: return TOOL_FAIL;       /* tool_getopt said why */
  }
}

int
offline_open (const struct offline_opts *o, struct array_config *cfg,
              const char *const *more, unsigned nmore, struct array **a)
{
  const char *all[2 * R5_MAX_MEMBERS];
  struct array_err err;

  if (o->n > R5_MAX_MEMBERS || nmore > R5_MAX_MEMBERS)
    return tool_error ("%u disks: an array is opened from at most %d",
                       o->n > R5_MAX_MEMBERS ? o->n : nmore, R5_MAX_MEMBERS);
  for (unsigned i = 0; i < o->n; i++) {
    cfg->paths[i] = strcmp (o->disks[i], "missing") ? o->disks[i] : NULL;
    all[i] = cfg->paths[i];
  }
  for (unsigned i = 0; i < nmore; i++)
    all[o->n + i] = more[i];
  cfg->direct = disk_use_direct (o->cache, all, o->n + nmore);
  cfg->tls = *tool_tls ();
  if (array_open (cfg, offline_log, a, &err) < 0)
    return tool_error ("%s", err.msg);
  if (cfg->direct && o->cache == DISK_CACHE_AUTO)
    disk_say_direct ();
  return TOOL_OK;
}

void
offline_log_reset (void)
{
  nheld = 0;
}

void
offline_log (enum array_log_level level, const char *msg)
{
  if (level == ARRAY_LOG_DEBUG)
    return;
  if (nheld < HELD_MAX)
    snprintf (held[nheld++], sizeof held[0], "%s", msg);
  else
    fprintf (stderr, "raid5ctl %s: %s\n", tool_sub (), msg);
}

void
offline_log_release (void)
{
  for (unsigned i = 0; i < nheld && nheld <= HELD_MAX; i++)
    fprintf (stderr, "raid5ctl %s: %s\n", tool_sub (), held[i]);
  nheld = HELD_MAX + 1;       /* from now on, say it at once */
}

void
offline_pace (const struct progress *p, uint64_t done, uint64_t max_kib)
{
  double kib;
  uint64_t due;
  struct timespec ts;

  if (max_kib == 0 || done <= p->base)
    return;
  kib = (double) ((done - p->base) * p->step_bytes) / 1024;
  due = p->start_ns + (uint64_t) (kib / (double) max_kib * 1e9);
  ts = (struct timespec) { (time_t) (due / 1000000000),
                           (long) (due % 1000000000) };
  while (clock_nanosleep (CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
    ;
}

/* The running job, for the progress callback. */
struct paced {
  struct progress prog;
  uint64_t max_kib;
};

static void
on_progress (void *opaque, uint64_t done, uint64_t total)
{
  struct paced *run = opaque;

  progress_update (&run->prog, done, total);
  offline_pace (&run->prog, done, run->max_kib);
}

int
offline_run (struct array *a, enum r5_job job, uint64_t max_kib)
{
  struct paced run = { .max_kib = max_kib };
  struct array_job_status st;
  struct array_err err;
  char note[96] = "";

  array_job_status (a, &st);
  progress_init (&run.prog, r5_job_name (job), array_geom (a)->chunk);
  progress_resume (&run.prog, st.done);
  if (st.done > 0)
    snprintf (note, sizeof note, " (resumed at stripe %" PRIu64 " of %"
              PRIu64 ")", st.done, st.total);
  /* Paced (--max-speed): steps of a tenth of a second's worth, so that
   * the pace holds on small members too (a step was up to 32 MiB).
   */
  if (array_job_run (a, job, &(struct array_job_watch) {
                       .progress = on_progress, .opaque = &run,
                       .step_bytes = max_kib * 1024 / 10 }, &err) < 0) {
    progress_clear (&run.prog);
    return tool_error ("%s", err.msg);
  }
  progress_finish (&run.prog, note);
  return TOOL_OK;
}
