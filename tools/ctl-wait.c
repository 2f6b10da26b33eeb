/* tools/ctl-wait.c -- --wait: follow a job the server started (check,
 * repair, rebuild, a grow's reshape) by polling `status --json`, draw its
 * progress, and report its result as the offline commands do.
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
#include "tools/ctl-json.h"
#include "tools/ctl.h"
#include "tools/progress.h"
#include "raid/layout.h"
#include "tools/raid5ctl.h"

/* The status is asked for after 10 ms, then at twice the last wait, up
 * to every 250 ms: a short job (a re-add of a few regions) is seen to end
 * at once, a long one costs the server four status requests a second. */
#define POLL_FIRST_NS 10000000L
#define POLL_MAX_NS 250000000L

/* What one status says about the job. */
struct job_view {
  char kind[16], last_kind[16];
  bool paused;
  uint64_t done, total, chunk;
  int64_t last_result;
  uint64_t last_mismatches, last_bad;
  uint64_t last_unread;       /* stripes skipped for read errors */
  uint64_t last_listed;       /* ... and for bad blocks in their rows */
  uint64_t last_rewritten;    /* listed sectors rewritten and cleared */
  unsigned nfound;
  struct array_mismatch found[ARRAY_FOUND_MAX];
  char state[16], health[R5_MAX_MEMBERS + 3];
  char slot_state[16], slot_path[4096];
  bool slot_replacing;        /* the slot has a replacement attached */
  uint64_t members, size;     /* raid_disks, size_bytes (served) */
  bool growing;               /* a grow under way */
};

/* The checksum fields of a found stripe, when the server has a record. */
static void
read_csum (json_object *m, struct array_mismatch *f)
{
  uint64_t member, units = 0, healed = 0;

  f->csum_member = -1;
  if (!ctl_json_u64 (m, "checksum_member", &member) ||
      !ctl_json_u64 (m, "checksum_units", &units) ||
      !ctl_json_u64 (m, "checksum_offset", &f->csum_off) ||
      !ctl_json_u64 (m, "checksum_healed", &healed))
    return;
  f->csum_member = (int) member;
  f->csum_units = (unsigned) units;
  f->csum_healed = (unsigned) healed;
}

static bool
read_found (json_object *list, struct job_view *v)
{
  uint64_t parity = 0, units = 0;
  size_t n = list ? json_object_array_length (list) : 0;

  for (v->nfound = 0; v->nfound < ARRAY_FOUND_MAX && v->nfound < n;
       v->nfound++) {
    json_object *m = json_object_array_get_idx (list, v->nfound);
    struct array_mismatch *f = &v->found[v->nfound];

    if (!ctl_json_u64 (m, "stripe", &f->stripe) ||
        !ctl_json_u64 (m, "array_offset", &f->array_off) ||
        !ctl_json_u64 (m, "array_length", &f->array_len) ||
        !ctl_json_u64 (m, "parity_member", &parity) ||
        !ctl_json_u64 (m, "member_offset", &f->member_off) ||
        !ctl_json_u64 (m, "last_member_offset", &f->last_off) ||
        !ctl_json_u64 (m, "units_4k", &units))
      return false;
    f->parity = (unsigned) parity;
    f->units = (unsigned) units;
    read_csum (m, f);
  }
  return list != NULL;
}

/* The member in slot: its state and path. */
static bool
read_slot (json_object *s, unsigned slot, struct job_view *v)
{
  json_object *ms = ctl_json_member (s, "members", json_type_array);
  json_object *m = ms && slot < json_object_array_length (ms)
    ? json_object_array_get_idx (ms, slot) : NULL;

  v->slot_replacing = m && ctl_json_member (m, "replacement",
                                            json_type_string) != NULL;
  return ctl_json_str (m, "state", v->slot_state, sizeof v->slot_state) &&
    ctl_json_str (m, "path", v->slot_path, sizeof v->slot_path);
}

static bool
parse_status (json_object *s, unsigned slot, struct job_view *v)
{
  json_object *j = ctl_json_member (s, "job", json_type_object);
  json_object *l = ctl_json_member (s, "last_job", json_type_object);

  return j && l && ctl_json_str (j, "kind", v->kind, sizeof v->kind)
    && ctl_json_bool (j, "paused", &v->paused)
    && ctl_json_u64 (j, "done_stripes", &v->done)
    && ctl_json_u64 (j, "total_stripes", &v->total)
    && ctl_json_u64 (s, "chunk_bytes", &v->chunk)
    && read_found (ctl_json_member (j, "found", json_type_array), v)
    && ctl_json_str (l, "kind", v->last_kind, sizeof v->last_kind)
    && ctl_json_i64 (l, "result", &v->last_result)
    && ctl_json_u64 (l, "mismatch_sectors", &v->last_mismatches)
    && ctl_json_u64 (l, "stripes_bad", &v->last_bad)
    && ctl_json_u64 (l, "read_error_stripes", &v->last_unread)
    && ctl_json_u64 (l, "bad_block_stripes", &v->last_listed)
    && ctl_json_u64 (l, "bad_block_sectors_rewritten", &v->last_rewritten)
    && ctl_json_str (s, "state", v->state, sizeof v->state)
    && ctl_json_str (s, "health", v->health, sizeof v->health)
    && ctl_json_u64 (s, "raid_disks", &v->members)
    && ctl_json_u64 (s, "size_bytes", &v->size)
    && (v->growing = ctl_json_member (s, "grow", json_type_object) != NULL,
        read_slot (s, slot, v));
}

/* The geometry a status gives. */
static bool
parse_geom (json_object *s, struct r5_geom *g)
{
  struct r5_geom_params p;
  uint64_t members, size;
  char layout[32];

  if (!ctl_json_u64 (s, "raid_disks", &members) ||
      !ctl_json_u64 (s, "chunk_bytes", &p.chunk) ||
      !ctl_json_str (s, "layout", layout, sizeof layout) ||
      r5_layout_parse (layout, &p.layout) < 0 ||
      !ctl_json_u64 (s, "data_offset_bytes", &p.data_offset) ||
      !ctl_json_u64 (s, "size_bytes", &size) || members < R5_MIN_MEMBERS ||
      members > R5_MAX_MEMBERS || p.chunk == 0)
    return false;
  p.members = (unsigned) members;
  p.member_bytes = p.data_offset + size / (p.chunk * (members - 1)) * p.chunk;
  return r5_geom_init (g, &p) == 0 && g->capacity == size;
}

struct view_of {
  const struct ctl_wait *w;
  struct job_view *v;
};

static bool
view_fn (json_object *s, void *opaque)
{
  struct view_of *o = opaque;

  return parse_status (s, o->w->slot, o->v);
}

static int
fetch (const struct ctl_wait *w, struct job_view *v)
{
  return ctl_status (w->path, view_fn, &(struct view_of) { w, v });
}

static bool
geom_fn (json_object *s, void *opaque)
{
  return parse_geom (s, opaque);
}

int
ctl_array_open (const char *path, struct ctl_array *out)
{
  out->path = path;
  return ctl_status (path, geom_fn, &out->geom);
}

/* --files: what the file systems keep in the n stripes listed, read
 * from the server.
 */
static int
explain_files (const struct ctl_wait *w, const struct job_view *v,
               unsigned n, struct check_files *files)
{
  struct ctl_array c;
  int r;

  if (ctl_array_open (w->path, &c) != TOOL_OK)
    return TOOL_FAIL;
  r = check_files (&c.geom, &(struct fsmap_src) {
                     ctl_array_read, &c, c.geom.capacity },
                   w->fs_off, v->found, n, files);
  if (r < 0)
    return tool_error ("--files: cannot read the array's partition table: "
                       "%s", strerror (-r));
  return TOOL_OK;
}

static int
report_check (const struct ctl_wait *w, const struct job_view *v)
{
  struct check_files files = { .n = 0 };
  struct check_result r = {
    .repair = w->kind == R5_JOB_REPAIR, .stripes = v->total,
    .stripes_bad = v->last_bad, .mismatches = v->last_mismatches,
    .unread = v->last_unread, .listed = v->last_listed, .list = v->found,
    .rewritten = v->last_rewritten,
    .n = v->nfound < w->list ? v->nfound : w->list,
  };

  r.more_listable = r.n < v->nfound;
  if (w->files && explain_files (w, v, r.n, &files) != TOOL_OK)
    return TOOL_FAIL;
  r.files = w->files ? &files : NULL;
  check_report (&r, w->json);
  check_files_free (&files);
  return TOOL_OK;
}

/* The job is over: 0 or its -errno from the last status, or 1 when
 * another job ended after it and overwrote its result.  A rebuild is
 * judged by its slot then.
 */
static int64_t
outcome (const struct ctl_wait *w, const struct job_view *v)
{
  if (strcmp (v->last_kind, r5_job_name (w->kind)) == 0)
    return v->last_result;
  if (w->kind == R5_JOB_REBUILD)
    return strcmp (v->slot_state, "active") == 0 ? 0 : -EIO;
  if (w->kind == R5_JOB_REPLACE)      /* a rebuild took over */
    return -ENODEV;
  if (w->kind == R5_JOB_RESHAPE)
    return v->growing ? -EIO : 0;
  return 1;
}

/* Why a job stopped, in words (r < 0, from last_job.result). */
static const char *
why_stopped (const struct ctl_wait *w, int64_t r)
{
  if (r == -ENODEV && w->kind == R5_JOB_REPLACE)
    return "the member being replaced failed: the new one is rebuilt into "
      "its slot instead (see raid5ctl status)";
  if (r == -ENODEV)
    return "the array became degraded";
  if (r == -ECANCELED)
    return w->kind == R5_JOB_REBUILD ? "the new member failed"
      : w->kind == R5_JOB_REPLACE ? "the new member failed, or the "
      "replace was cancelled: the old member stays" : "a rebuild took over";
  return strerror ((int) -r);
}

static int
result (const struct ctl_wait *w, const struct job_view *v,
        struct progress *p)
{
  const char *name = r5_job_name (w->kind);
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

/* As the offline grow says it; the export's size is read by a client
 * when it connects (nbdkit's get_size).
 */
static void
report_grow (const struct job_view *v)
{
  char size[32];

  printf ("grow: the array has %" PRIu64 " members, %s (%" PRIu64 " bytes); "
          "clients see the new size when they connect again: then grow the "
          "file system (resize2fs, xfs_growfs)\n", v->members,
          tool_human (v->size, size, sizeof size), v->size);
}

/* The slot's state after a rebuild or replace; and, when the rows of
 * some stripes could not be computed (another member lists them bad),
 * that data was lost there -- the job itself succeeded, so the exit
 * status cannot say it.
 */
static void
report_rebuild (const struct ctl_wait *w, const struct job_view *v)
{
  const char *name = r5_job_name (w->kind);

  printf ("%s: slot %u (%s) is %s; the array is %s %s%s\n", name, w->slot,
          v->slot_path, v->slot_state, v->state, v->health,
          strcmp (v->kind, "resync") == 0 ? " (a resync follows)" : "");
  if (strcmp (v->last_kind, name) == 0 && v->last_listed > 0)
    printf ("%s: %" PRIu64 " stripes not wholly %s: rows another member "
            "lists bad could not be computed, so those bytes are lost "
            "(listed bad on the new member; the server's log names the "
            "array bytes)\n", name, v->last_listed,
            w->kind == R5_JOB_REBUILD ? "rebuilt" : "copied");
}

int
ctl_wait (const struct ctl_wait *w)
{
  const char *name = r5_job_name (w->kind);
  struct timespec tick = { 0, POLL_FIRST_NS };
  char paused[32];
  struct progress p;
  struct job_view v;
  int r;

  if (fetch (w, &v) != TOOL_OK)
    return TOOL_FAIL;
  snprintf (paused, sizeof paused, "%s (paused)", name);
  progress_init (&p, name, v.chunk);      /* ours started at stripe 0 */
  /* A replace held while another slot is rebuilt (the server's job is
   * that rebuild, the replacement still attached) is still ours.
   */
  while (strcmp (v.kind, name) == 0 ||
         (w->kind == R5_JOB_REPLACE && v.slot_replacing &&
          strcmp (v.kind, "rebuild") == 0)) {
    p.what = v.paused ? paused : strcmp (v.kind, name) != 0
      ? "replace held (a rebuild first)" : name;
    progress_update (&p, v.done, v.total);
    nanosleep (&tick, NULL);
    tick.tv_nsec = tick.tv_nsec * 2 > POLL_MAX_NS ? POLL_MAX_NS
                                                  : tick.tv_nsec * 2;
    if (fetch (w, &v) != TOOL_OK)
      return progress_clear (&p), TOOL_FAIL;
  }
  p.what = name;
  if ((r = result (w, &v, &p)) != TOOL_OK)
    return r;
  if (w->kind == R5_JOB_REBUILD || w->kind == R5_JOB_REPLACE) {
    report_rebuild (w, &v);
    return TOOL_OK;
  }
  if (w->kind == R5_JOB_RESHAPE || w->kind == R5_JOB_RESYNC) {
    report_grow (&v);
    return TOOL_OK;
  }
  if (report_check (w, &v) != TOOL_OK)
    return TOOL_FAIL;
  return check_status (&(struct check_result) {
      .repair = w->kind == R5_JOB_REPAIR, .stripes_bad = v.last_bad,
      .unread = v.last_unread });
}
