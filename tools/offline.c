/* tools/offline.c -- the offline jobs' log, pace and run (offline.h). */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <time.h>

#include "tools/offline.h"
#include "tools/raid5ctl.h"

#define HELD_MAX 4

static char held[HELD_MAX][ARRAY_ERR_LEN];
static unsigned nheld;

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
  if (array_job_run (a, job, &(struct array_job_watch) {
                       .progress = on_progress, .opaque = &run }, &err) < 0) {
    progress_clear (&run.prog);
    return tool_error ("%s", err.msg);
  }
  progress_finish (&run.prog, note);
  return TOOL_OK;
}
