/* array/grow.c -- growing the array by members (grow.h): the start, the
 * resume, its end (the steps: grow-move.c).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "array/grow.h"
#include "array/guard.h"
#include "array/jobs.h"
#include "array/object.h"
#include "array/requests.h"
#include "array/state.h"

int
grow_resume (struct array *a, const struct md_sb *sb, struct array_err *err)
{
  struct grow *g = &a->grow;
  struct r5_geom from;
  uint64_t doff = sb->data_offset * 512;
  unsigned add = (unsigned) sb->delta_disks;
  struct r5_geom_params p = {
    .members = sb->raid_disks - add, .chunk = sb->chunksize * 512ULL,
    .layout = (enum r5_layout) sb->layout, .data_offset = doff,
    .member_bytes = doff + sb->size * 512,
  };
  uint64_t shift = (uint64_t) -(int64_t) md_sb_new_offset (sb) * 512;
  int r;

  if ((r = r5_geom_init (&from, &p)) < 0 ||
      (r = shift ? r5_reshape_init (&g->r, &from, add, shift)
                 : r5_reshape_init_kept (&g->r, &from, add)) < 0) {
    array_set_err (err, "the grow the md superblocks record (%u to %" PRIu32
                   " members, data offset moved by %" PRId32 " sectors) "
                   "cannot be carried on here: %s", p.members, sb->raid_disks,
                   sb->new_offset, strerror (-r));
    return r == -ENOSPC ? -ENOTSUP : r;
  }
  a->geom = g->r.to;
  g->safe = sb->reshape_position * 512;
  g->active = true;
  return 0;
}

int
grow_done (struct array *a, struct array_err *err)
{
  struct grow *g = &a->grow;
  int r;

  /* Under the record lock: a client's write may be recording the line
   * (grow_record) just as the reshape ends, and a checkpoint applied
   * after RESHAPE_DONE would be one of a reshape no longer active.
   */
  pthread_mutex_lock (&g->record_lock);
  if ((r = array_sync (a, err)) < 0 ||
      (r = meta_apply (a, &(struct md_event) { .kind = MD_EV_RESHAPE_DONE },
                       err)) < 0) {
    pthread_mutex_unlock (&g->record_lock);
    return r;
  }
  g->active = false;
  g->safe = g->r.end;
  pthread_mutex_unlock (&g->record_lock);
  grow_backup_close (a, true);
  array_log (a, ARRAY_LOG_NOTICE, "grown from %u to %u members: %" PRIu64
             " bytes (was %" PRIu64 "), data from byte %" PRIu64 " of each "
             "member", g->r.from.members, g->r.to.members, g->r.to.capacity,
             g->r.from.capacity, g->r.to.data_offset);
  return 0;
}

void
grow_free (struct grow *g)
{
  io_mapfile_close (&g->backup);
  free (g->backup_path);
  g->backup_path = NULL;
  r5_plan_free (&g->plan);
  free (g->scratch);
  free (g->ops);
  free (g->lost);
  free (g->kept);
  g->scratch = NULL;
  g->ops = NULL;
  g->lost = NULL;
  g->kept = NULL;
  g->scratch_len = g->ops_cap = 0;
  g->nlost = g->lost_cap = g->nkept = g->kept_cap = 0;
}

/* What a grow needs of the array as it is; job.lock held. */
static int
check_growable (struct array *a, unsigned n, bool force,
                struct array_err *err)
{
  const char *no = NULL;

  if (!a->meta.enabled)
    no = "raw members (metadata=none) have no superblocks to record a grow";
  else if (a->grow.active)
    no = "the array is being grown already: let that grow end first";
  else if (a->job.kind == R5_JOB_RESYNC)
    no = "a resync is due (the array was not stopped cleanly): serve it "
         "until the resync ends, or run raid5ctl repair, first";
  else if (a->job.kind != R5_JOB_NONE)
    no = "a job is running (raid5ctl status says which): let it end first";
  else if (health_failed (&a->health))
    no = "the array has failed";
  else if (health_out (&a->health) >= 0 && !force)
    no = "the array is degraded: rebuild it first (a reshape without "
         "redundancy loses the array to one more failure), or --force";
  else if (a->ppl.on)
    no = "the array keeps a partial parity log: growing one is not "
         "supported here yet";
  else if (a->integrity.on)
    no = "the array keeps an integrity record: growing one is not "
         "supported here yet";
  else if (a->bb.listed > 0 && health_out (&a->health) >= 0)
    no = "the array is degraded and a member lists bad blocks in its md "
         "bad-block log (raid5ctl status says which): the reshape could "
         "not read their rows; rebuild first";
  else if (n == 0 || a->geom.members + n > R5_MAX_MEMBERS)
    no = "at most 32 members in all";
  if (no == NULL)
    return 0;
  array_set_err (err, "cannot grow: %s", no);
  return -EINVAL;
}

/* The new shape: data moved down by mdadm's least, room permitting --
 * md moves it no lower than its floor (md_sb_new_offset_floor: clear of
 * the superblock, the bad-block log and the bitmap).
 */
static int
new_shape (struct array *a, unsigned n, struct r5_reshape *rs,
           struct array_err *err)
{
  uint64_t shift = r5_reshape_min_shift (&a->geom, n);
  uint64_t floor = md_sb_new_offset_floor (&a->meta.live.common,
                                           a->meta.has_bitmap
                                           ? a->meta.bm_area_bytes : 0);
  uint64_t room = a->geom.data_offset > floor
    ? a->geom.data_offset - floor : 0;
  bool no_room = room < shift;
  int r;

  /* No room: md's grow with mdadm's backup, the data offset kept and the
   * critical section's windows through the backup file, or with none on
   * the new members, as mdadm backs it up without --backup-file.
   */
  if (no_room)
    array_log (a, ARRAY_LOG_NOTICE, "no room to move the data: it may move "
               "down %" PRIu64 " KiB (from byte %" PRIu64 " to byte %" PRIu64
               ", md's lowest: clear of the superblock, the bad-block log "
               "and the bitmap), and growing %u members by %u with %" PRIu64
               "K chunks moves it down %" PRIu64 " KiB: the data offset "
               "stays", room >> 10, a->geom.data_offset, floor,
               a->geom.members, n, a->geom.chunk >> 10, shift >> 10);
  if (no_room && (r = r5_reshape_init_kept (rs, &a->geom, n)) < 0)
    return r;
  if (no_room && a->grow.backup_path == NULL && !grow_backup_fits (a, rs)) {
    array_set_err (err, "cannot grow: no room to move the data, and the new "
                   "member cannot keep the critical section's backup (%"
                   PRIu64 " KiB windows: mdadm's backup without a file would "
                   "lie over rows the critical section writes): give a "
                   "backup file (--backup-file)", rs->window >> 10);
    return -ENOSPC;
  }
  if (no_room && (r = grow_backup_open (a, true, err)) < 0)
    return r;
  if (!no_room && (r = r5_reshape_init (rs, &a->geom, n, shift)) < 0)
    array_set_err (err, "cannot grow %u members by %u: %s", a->geom.members,
                   n, strerror (-r));
  return r;
}

/* Open the new members into the slots after the last; on error close
 * what was opened.
 */
static int
open_new_members (struct array *a, const char *const *paths, unsigned n,
                  bool force, const struct r5_reshape *rs,
                  struct array_err *err)
{
  unsigned first = a->geom.members;
  struct io_sig_list sigs[R5_MAX_MEMBERS];
  int r = 0;

  memset (sigs, 0, sizeof sigs);
  /* Every one opened and checked before any is wiped. */
  for (unsigned i = 0; i < n && r == 0; i++) {
    struct join_new jn = {
      .path = paths[i], .need = rs->to.data_offset + rs->to.member_data,
      .except = -1, .force = force,
    };

    for (unsigned j = 0; j < i && r == 0; j++)
      if (strcmp (paths[j], paths[i]) == 0) {
        array_set_err (err, "%s is given twice", paths[i]);
        r = -EINVAL;
      }
    if (r == 0)
      r = join_open_new (a, &jn, &a->members[first + i], &sigs[i], err);
  }
  for (unsigned i = 0; i < n && r == 0; i++)
    if (sigs[i].n > 0)
      r = array_guard_wipe (&a->members[first + i], &sigs[i], 0, 0, err);
  if (r < 0)
    for (unsigned i = 0; i < n; i++)
      io_member_close (&a->members[first + i]);
  return r;
}

/* GROW in the superblocks: the new devices, in sync, at once. */
static int
record_grow (struct array *a, unsigned first, unsigned n,
             const struct r5_reshape *rs, struct array_err *err)
{
  uint8_t uuids[16 * R5_MAX_MEMBERS];
  uint64_t size = UINT64_MAX;
  int r;

  /* The bitmap first (meta_write_bitmap_first's order): a crash amid
   * the GROW write that lands a new member's superblock alone leaves it
   * the freshest, and assembly reads the bitmap from the freshest.
   */
  if ((r = meta_bitmap_to_new (a, first, n, err)) < 0)
    return r;

  for (unsigned i = 0; i < n; i++) {
    uint64_t s = a->members[first + i].size / 512 -
      a->meta.live.common.data_offset;

    meta_random_uuid (uuids + 16 * i);
    size = s < size ? s : size;
  }
  return meta_apply (a, &(struct md_event) {
      .kind = MD_EV_GROW, .add = n, .device_uuid = uuids, .data_size = size,
      .new_offset = -(int32_t) ((rs->from.data_offset - rs->to.data_offset)
                                / 512),
    }, err);
}

/* The array takes the new shape and the superblocks record the grow;
 * shape_lock held exclusively (no request runs), job.lock held.  On
 * error the array keeps its old shape; the new members are closed.
 */
static int
begin_grow (struct array *a, unsigned n, const struct r5_reshape *rs,
            struct array_err *err)
{
  unsigned first = rs->from.members;
  int r;

  if ((r = array_pools_fit (a, &rs->to, err)) < 0)
    return r;
  a->grow.r = *rs;
  a->grow.safe = 0;
  a->job.cursor = 0;          /* the line, before the shape says so */
  a->geom = rs->to;
  a->grow.active = true;
  if ((rs->from.data_offset == rs->to.data_offset &&
       (r = grow_backup_begin (a, false, err)) < 0) ||
      (r = record_grow (a, first, n, rs, err)) < 0) {
    struct array_err ignored;

    if (rs->from.data_offset == rs->to.data_offset &&
        grow_backup_begin (a, true, &ignored) < 0)
      array_log (a, ARRAY_LOG_ERROR, "%s", ignored.msg);
    a->grow.active = false;
    a->geom = rs->from;
    return r;
  }
  a->grow.recorded_ns = array_now_ns ();
  /* The new members' superblocks reserve md's bad-block log as the
   * others' do (mdadm --add gives an added device one): a failed write
   * of the reshape's is recorded there rather than failing the member.
   */
  for (unsigned i = 0; i < n; i++)
    array_bb_new_member (a, first + i);
  job_begin (a, R5_JOB_RESHAPE);
  if (rs->from.data_offset == rs->to.data_offset)
    array_log (a, ARRAY_LOG_NOTICE, "growing from %u to %u members, the data "
               "offset kept: the critical section goes through the backup "
               "%s%s", first, first + n, a->grow.backup_path ? "file " :
               "on the new member (no room to move the data, no backup file "
               "given: mdadm's way)", a->grow.backup_path ?
               a->grow.backup_path : "");
  else
    array_log (a, ARRAY_LOG_NOTICE, "growing from %u to %u members: the "
               "data moves down %" PRIu64 " KiB on each (no backup needed)",
               first, first + n,
               (rs->from.data_offset - rs->to.data_offset) >> 10);
  return 0;
}

/* No new members: the grow under way, whose reshape stopped, goes on
 * from its line (one that runs just does); job.lock held.
 */
static int
go_on (struct array *a, struct array_err *err)
{
  if (a->job.kind == R5_JOB_RESHAPE)
    return 0;
  if (!a->grow.active) {
    array_set_err (err, "nothing to grow: the array has %u members and no "
                   "grow under way; give the members to add",
                   a->geom.members);
    return -EINVAL;
  }
  if (a->job.kind != R5_JOB_NONE) {
    array_set_err (err, "busy: a %s is running",
                   r5_job_name (a->job.kind));
    return -EBUSY;
  }
  job_begin (a, R5_JOB_RESHAPE);
  return 0;
}

int
array_grow_backup_file (struct array *a, const char *path,
                        struct array_err *err)
{
  struct grow *g = &a->grow;
  char *copy;
  int r;

  if ((r = array_writable (a, "grow", err)) < 0)
    return r;
  copy = strdup (path);
  pthread_mutex_lock (&a->job.lock);
  if (copy == NULL) {
    array_set_err (err, "out of memory");
    r = -ENOMEM;
  }
  else if (g->active && (g->backup_path == NULL ||
                         strcmp (g->backup_path, path) != 0)) {
    array_set_err (err, "a grow is under way with %s%s: its backup file "
                   "cannot change now", g->backup_path ? "the backup file "
                   : "no backup file", g->backup_path ? g->backup_path : "");
    r = -EBUSY;
  }
  else {
    free (g->backup_path);
    g->backup_path = copy;
    copy = NULL;
  }
  pthread_mutex_unlock (&a->job.lock);
  free (copy);
  return r;
}

int
array_grow_start (struct array *a, const char *const *paths, unsigned n,
                  bool force, struct array_err *err)
{
  struct r5_reshape rs;
  int r;

  if ((r = array_writable (a, "grow", err)) < 0)
    return r;
  pthread_mutex_lock (&a->job.lock);
  if (n == 0)
    r = go_on (a, err);
  else if ((r = check_growable (a, n, force, err)) == 0 &&
      (r = new_shape (a, n, &rs, err)) == 0 &&
      (r = grow_window_memory (a, &rs, err)) == 0 &&
      (r = open_new_members (a, paths, n, force, &rs, err)) == 0) {
    pthread_rwlock_wrlock (&a->shape_lock);
    r = begin_grow (a, n, &rs, err);
    pthread_rwlock_unlock (&a->shape_lock);
    if (r < 0)
      for (unsigned i = 0; i < n; i++)
        io_member_close (&a->members[rs.from.members + i]);
  }
  if (r < 0 && n > 0 && !a->grow.active)
    grow_backup_close (a, true);      /* a backup made for it goes too */
  pthread_mutex_unlock (&a->job.lock);
  return r;
}
