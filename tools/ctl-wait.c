/* tools/ctl-wait.c -- --wait: follow a job the server started (check,
 * repair, rebuild) by polling `status --json`, draw its progress, and
 * report its result as the offline commands do.
 *
 * The job is ours while the server's running job is of its kind: the
 * server runs one job at a time and ours started with the OK.  When it
 * is gone, the server's "last_job" is its result, unless another job ran
 * and ended in between (then a rebuild is judged by its slot's state).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tools/check.h"
#include "tools/ctl.h"
#include "tools/jscan.h"
#include "tools/progress.h"
#include "tools/raid5ctl.h"

#define POLL_NS 250000000L

/* What one status says about the job. */
struct job_view {
  char kind[16], last_kind[16];
  bool paused;
  uint64_t done, total, chunk;
  int64_t last_result;
  uint64_t last_mismatches, last_bad;
  unsigned nfound;
  struct array_mismatch found[ARRAY_FOUND_MAX];
  char state[16], health[R5_MAX_MEMBERS + 3];
  char slot_state[16], slot_path[4096];
};

static bool
read_found (const char *list, struct job_view *v)
{
  const char *m;
  uint64_t parity = 0, units = 0;

  for (v->nfound = 0; v->nfound < ARRAY_FOUND_MAX &&
         (m = jscan_index (list, v->nfound)) != NULL; v->nfound++) {
    struct array_mismatch *f = &v->found[v->nfound];

    if (!jscan_u64 (jscan_get (m, "stripe"), &f->stripe) ||
        !jscan_u64 (jscan_get (m, "array_offset"), &f->array_off) ||
        !jscan_u64 (jscan_get (m, "array_length"), &f->array_len) ||
        !jscan_u64 (jscan_get (m, "parity_member"), &parity) ||
        !jscan_u64 (jscan_get (m, "member_offset"), &f->member_off) ||
        !jscan_u64 (jscan_get (m, "units_4k"), &units))
      return false;
    f->parity = (unsigned) parity;
    f->units = (unsigned) units;
  }
  return true;
}

/* The member in slot: its state and path. */
static bool
read_slot (const char *s, unsigned slot, struct job_view *v)
{
  const char *m = jscan_index (jscan_get (s, "members") ?: "", slot);

  return m && jscan_str (jscan_get (m, "state"), v->slot_state,
                         sizeof v->slot_state) &&
    jscan_str (jscan_get (m, "path"), v->slot_path, sizeof v->slot_path);
}

static bool
parse_status (const char *s, unsigned slot, struct job_view *v)
{
  const char *j = jscan_get (s, "job"), *l = jscan_get (s, "last_job");

  return j && l && jscan_str (jscan_get (j, "kind"), v->kind, sizeof v->kind)
    && jscan_bool (jscan_get (j, "paused"), &v->paused)
    && jscan_u64 (jscan_get (j, "done_stripes"), &v->done)
    && jscan_u64 (jscan_get (j, "total_stripes"), &v->total)
    && jscan_u64 (jscan_get (s, "chunk_bytes"), &v->chunk)
    && read_found (jscan_get (j, "found") ?: "", v)
    && jscan_str (jscan_get (l, "kind"), v->last_kind, sizeof v->last_kind)
    && jscan_i64 (jscan_get (l, "result"), &v->last_result)
    && jscan_u64 (jscan_get (l, "mismatch_sectors"), &v->last_mismatches)
    && jscan_u64 (jscan_get (l, "stripes_bad"), &v->last_bad)
    && jscan_str (jscan_get (s, "state"), v->state, sizeof v->state)
    && jscan_str (jscan_get (s, "health"), v->health, sizeof v->health)
    && read_slot (s, slot, v);
}

static int
fetch (const struct ctl_wait *w, struct job_view *v)
{
  char *reply;
  int r;

  if (ctl_request (w->path, "status --json", &reply) != TOOL_OK)
    return TOOL_FAIL;
  if ((r = ctl_reply (reply, NULL)) == TOOL_OK &&
      !parse_status (reply, w->slot, v))
    r = tool_error ("%s: status --json: a reply raid5ctl does not "
                    "understand", w->path);
  free (reply);
  return r;
}

static void
report_check (const struct ctl_wait *w, const struct job_view *v)
{
  struct check_result r = {
    .repair = w->kind == ARRAY_JOB_REPAIR, .stripes = v->total,
    .stripes_bad = v->last_bad, .mismatches = v->last_mismatches,
    .list = v->found, .n = v->nfound < w->list ? v->nfound : w->list,
  };

  r.more_listable = r.n < v->nfound;
  check_report (&r, w->json);
}

/* The job is over: 0 or its -errno from the last status, or 1 when
 * another job ended after it and overwrote its result.  A rebuild is
 * judged by its slot then.
 */
static int64_t
outcome (const struct ctl_wait *w, const struct job_view *v)
{
  if (strcmp (v->last_kind, array_job_name (w->kind)) == 0)
    return v->last_result;
  if (w->kind == ARRAY_JOB_REBUILD)
    return strcmp (v->slot_state, "active") == 0 ? 0 : -EIO;
  return 1;
}

/* Why a job stopped, in words (r < 0, from last_job.result). */
static const char *
why_stopped (const struct ctl_wait *w, int64_t r)
{
  if (r == -ENODEV)
    return "the array became degraded";
  if (r == -ECANCELED)
    return w->kind == ARRAY_JOB_REBUILD ? "the new member failed"
      : "a rebuild took over";
  return strerror ((int) -r);
}

static int
result (const struct ctl_wait *w, const struct job_view *v,
        struct progress *p)
{
  const char *name = array_job_name (w->kind);
  int64_t r = outcome (w, v);

  if (r == 0) {
    progress_update (p, v->total, v->total);
    progress_finish (p, "");
    return TOOL_OK;
  }
  progress_clear (p);
  if (r > 0)
    return tool_error ("the %s ended, and a %s ran after it: its result is "
                       "lost (see raid5ctl status)", name, v->last_kind);
  return tool_error ("the %s stopped after %" PRIu64 " of %" PRIu64
                     " stripes: %s", name, v->done, v->total,
                     why_stopped (w, r));
}

static void
report_rebuild (const struct ctl_wait *w, const struct job_view *v)
{
  printf ("rebuild: slot %u (%s) is %s; the array is %s %s%s\n", w->slot,
          v->slot_path, v->slot_state, v->state, v->health,
          strcmp (v->kind, "resync") == 0 ? " (a resync follows)" : "");
}

int
ctl_wait (const struct ctl_wait *w)
{
  const char *name = array_job_name (w->kind);
  struct timespec tick = { 0, POLL_NS };
  char paused[32];
  struct progress p;
  struct job_view v;
  int r;

  if (fetch (w, &v) != TOOL_OK)
    return TOOL_FAIL;
  snprintf (paused, sizeof paused, "%s (paused)", name);
  progress_init (&p, name, v.chunk);      /* ours started at stripe 0 */
  while (strcmp (v.kind, name) == 0) {
    p.what = v.paused ? paused : name;
    progress_update (&p, v.done, v.total);
    nanosleep (&tick, NULL);
    if (fetch (w, &v) != TOOL_OK)
      return progress_clear (&p), TOOL_FAIL;
  }
  p.what = name;
  if ((r = result (w, &v, &p)) != TOOL_OK)
    return r;
  if (w->kind == ARRAY_JOB_REBUILD) {
    report_rebuild (w, &v);
    return TOOL_OK;
  }
  report_check (w, &v);
  return check_status (&(struct check_result) {
      .repair = w->kind == ARRAY_JOB_REPAIR, .stripes_bad = v.last_bad });
}
