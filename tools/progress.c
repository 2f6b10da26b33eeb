/* tools/progress.c -- a progress bar for long jobs (see progress.h). */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "tools/progress.h"
#include "tools/raid5ctl.h"

#define BAR_WIDTH 24
#define REDRAW_NS 200000000ULL

static uint64_t
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000 + (uint64_t) ts.tv_nsec;
}

void
progress_init (struct progress *p, const char *what, uint64_t step_bytes)
{
  *p = (struct progress) {
    .what = what, .step_bytes = step_bytes, .tty = isatty (2),
    .start_ns = now_ns (),
  };
}

void
progress_resume (struct progress *p, uint64_t done)
{
  p->base = p->done = done;
  p->start_ns = now_ns ();
}

/* Member bytes of this run. */
static uint64_t
run_bytes (const struct progress *p)
{
  return (p->done > p->base ? p->done - p->base : 0) * p->step_bytes;
}

/* Member bytes per second so far, 0 before any time has passed. */
static uint64_t
speed (const struct progress *p, uint64_t now)
{
  double secs = (double) (now - p->start_ns) / 1e9;

  return secs > 0 ? (uint64_t) ((double) run_bytes (p) / secs) : 0;
}

static void
draw (struct progress *p, uint64_t now)
{
  unsigned permille = p->total ? (unsigned) (p->done * 1000 / p->total) : 0;
  unsigned fill = permille * BAR_WIDTH / 1000;
  uint64_t bps = speed (p, now), eta;
  char bar[BAR_WIDTH + 1], sp[32];

  for (unsigned i = 0; i < BAR_WIDTH; i++)
    bar[i] = i < fill ? '=' : i == fill ? '>' : '.';
  bar[BAR_WIDTH] = '\0';
  eta = bps ? (p->total - p->done) * p->step_bytes / bps : 0;
  fprintf (stderr, "\r\033[K%s [%s] %3u.%u%%  %s/s  ETA %" PRIu64 ":%02"
           PRIu64, p->what, bar, permille / 10, permille % 10,
           tool_human (bps, sp, sizeof sp), eta / 60, eta % 60);
  p->drawn = true;
}

void
progress_update (void *opaque, uint64_t done, uint64_t total)
{
  struct progress *p = opaque;
  uint64_t now = now_ns ();

  p->done = done;
  p->total = total;
  if (!p->tty || (now - p->last_ns < REDRAW_NS && done < total))
    return;
  p->last_ns = now;
  draw (p, now);
}

void
progress_clear (struct progress *p)
{
  if (p->drawn)
    fputs ("\r\033[K", stderr);
  p->drawn = false;
}

void
progress_finish (struct progress *p, const char *note)
{
  uint64_t now = now_ns ();
  char sz[32], sp[32];

  progress_clear (p);
  fprintf (stderr, "raid5ctl %s: %s: %s of each member in %.1f s (%s/s per "
           "member)%s\n", tool_sub (), p->what,
           tool_human (run_bytes (p), sz, sizeof sz),
           (double) (now - p->start_ns) / 1e9, tool_human (speed (p, now), sp,
                                                           sizeof sp), note);
}
