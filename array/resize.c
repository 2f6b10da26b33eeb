/* array/resize.c -- what mdadm --grow changes besides the members: the
 * component size grown into the members' room (array_resize, array.h),
 * and an internal bitmap added or removed (array_set_bitmap).
 *
 * The size: what mdadm --grow --size=max|SIZE asks of md
 * (md.c update_size, raid5.c raid5_resize), once every member of an
 * array has been replaced by a bigger one or the members' files or
 * devices grew -- offline, or while served (requests held meanwhile, as
 * md suspends the array; clients see the size when they connect).  The same stripes, the same data offset: the array
 * gains whole stripes at its end, and the new space is resynced from
 * the old end (md's recovery_cp), its bitmap chunks set first.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array/object.h"
#include "array/state.h"

/* Why the array cannot grow its component now, or NULL. */
static const char *
not_now (const struct array *a)
{
  if (!a->meta.enabled)
    return "the members have no md superblocks (metadata=none): there is "
      "no component size to record";
  if (health_out (&a->health) >= 0)
    return "the array is degraded: rebuild it first (each member's room "
      "must be known)";
  if (a->grow.active)
    return "a grow by members is under way: let it finish first";
  if (a->replace.slot >= 0)
    return "a member is being replaced: let the replace finish first";
  if (a->integrity.on)
    return "an integrity record covers the members' old size: a new record "
      "would be needed";
  if (a->job.kind != R5_JOB_NONE)
    return a->job.kind == R5_JOB_RESYNC
      ? "a resync is due: let it finish first (offline: raid5ctl repair)"
      : "a job is running: let it finish first";
  return NULL;
}

/* Each member's size read again, and the spare's: files and devices may
 * have grown while open (served).  No request runs (the shape lock is
 * held).
 */
static int
sizes_now (struct array *a, struct array_err *err)
{
  int r;

  for (unsigned i = 0; i < a->geom.members; i++) {
    uint64_t was = a->members[i].size;

    if ((r = io_member_size_now (&a->members[i])) < 0) {
      array_set_err (err, "member %u (%s): cannot read its size: %s", i,
                     array_member_path (a, i), strerror (-r));
      return r;
    }
    /* Cut short under the server: its old size kept (what the array
     * needs of it; the background thread takes it out).
     */
    if (a->members[i].size < array_member_need (a)) {
      array_set_err (err, "member %u (%s) is now %" PRIu64 " bytes, short of "
                     "the array's data (%" PRIu64 "): cut under the server?",
                     i, array_member_path (a, i), a->members[i].size,
                     array_member_need (a));
      a->members[i].size = was;
      return -EIO;
    }
  }
  if (io_member_is_open (&a->spare) &&
      (r = io_member_size_now (&a->spare)) < 0) {
    array_set_err (err, "spare=%s: cannot read its size: %s", a->spare.path,
                   strerror (-r));
    return r;
  }
  return 0;
}

/* Sectors after the data offset of member m (the spare: -1). */
static uint64_t
room_of (const struct array *a, int m)
{
  uint64_t doff = a->geom.data_offset / 512;
  uint64_t size = (m < 0 ? a->spare.size : a->members[m].size) / 512;

  return size > doff ? size - doff : 0;
}

/* The new component size (sectors): want (0: all the room the smallest
 * member has), whole chunks, no less than now.  The spare counts as a
 * member (md.c update_size walks every rdev, spares too): it must be
 * able to take any slot.  sizes[i]: member i's data size to record --
 * want, or with want 0 all its room (mdadm writes each member's "size"
 * as asked, super_1_rdev_size_change records it as data_size).  0,
 * -EALREADY (no more), or -errno.
 */
static int
new_size (struct array *a, uint64_t want, uint64_t sizes[],
          uint64_t *out, struct array_err *err)
{
  const uint64_t chunk = a->geom.chunk / 512;
  const uint64_t now = a->meta.live.common.size;
  uint64_t room = UINT64_MAX;
  int small = 0;
  char who[PATH_MAX + 32];

  for (int i = io_member_is_open (&a->spare) ? -1 : 0;
       i < (int) a->geom.members; i++)
    if (room_of (a, i) < room)
      room = room_of (a, i), small = i;
  if (small < 0)
    snprintf (who, sizeof who, "the spare (%s)", a->spare.path);
  else
    snprintf (who, sizeof who, "member %d (%s)", small,
              array_member_path (a, (unsigned) small));
  if (want > room) {
    array_set_err (err, "%s has room for %" PRIu64 " sectors after its "
                   "data offset, not %" PRIu64, who, room, want);
    return -ENOSPC;
  }
  *out = (want ? want : room) / chunk * chunk;  /* raid5_resize: whole chunks */
  if (*out < now) {
    array_set_err (err, "%" PRIu64 " sectors per member is less than the %"
                   PRIu64 " the array uses: shrinking would cut off its "
                   "end", *out, now);
    return -EINVAL;
  }
  if (*out == now) {
    array_set_err (err, "the component size stays %" PRIu64 " sectors: "
                   "%s has no whole chunk more of room", now, who);
    return -EALREADY;
  }
  for (unsigned i = 0; i < a->geom.members; i++)
    sizes[i] = want ? want : room_of (a, (int) i);
  return 0;
}

static int
new_geometry (const struct array *a, uint64_t sectors, struct r5_geom *g,
              struct array_err *err)
{
  int r = r5_geom_init (g, &(struct r5_geom_params) {
      .members = a->geom.members, .chunk = a->geom.chunk,
      .layout = a->geom.layout, .data_offset = a->geom.data_offset,
      .member_bytes = a->geom.data_offset + sectors * 512 });

  if (r < 0)
    array_set_err (err, "%" PRIu64 " sectors per member: not a usable "
                   "geometry: %s", sectors, strerror (-r));
  return r;
}

/* Record the new size (job.lock and the shape lock held: no request in
 * flight): superblocks and bitmap, then the geometry, and the resync it
 * leaves due (a server's job thread takes it up).
 */
static int
record (struct array *a, uint64_t sectors, const uint64_t sizes[],
        bool clean, const struct r5_geom *g, struct array_err *err)
{
  int r;

  if ((r = meta_resize (a, sectors, sizes, clean, err)) < 0)
    return r;
  a->geom = *g;
  if (meta_resync_due (a) && a->job.kind == R5_JOB_NONE) {
    job_begin (a, R5_JOB_RESYNC);
    a->job.cursor = meta_resync_from (a) * 512 / a->geom.chunk;
  }
  return 0;
}

int
array_resize (struct array *a, uint64_t sectors, bool clean,
              struct array_err *err)
{
  uint64_t sizes[R5_MAX_MEMBERS], to;
  const char *why;
  struct r5_geom g;
  int r;

  if ((r = array_writable (a, "grow the component size", err)) < 0)
    return r;
  pthread_mutex_lock (&a->job.lock);
  pthread_rwlock_wrlock (&a->shape_lock);
  if ((why = not_now (a)) != NULL) {
    array_set_err (err, "cannot grow the component size: %s", why);
    r = -EBUSY;
  }
  else if (a->ppl.on) {         /* raid5_resize: -EINVAL with a log */
    array_set_err (err, "cannot grow the component size: the array keeps a "
                   "partial parity log, and md does not grow such an array");
    r = -EINVAL;
  }
  else if ((r = sizes_now (a, err)) == 0 &&
           (r = new_size (a, sectors, sizes, &to, err)) == 0 &&
           (r = new_geometry (a, to, &g, err)) == 0)
    r = record (a, to, sizes, clean, &g, err);
  pthread_rwlock_unlock (&a->shape_lock);
  pthread_mutex_unlock (&a->job.lock);
  return r;
}

int
array_set_bitmap (struct array *a, bool on, struct array_err *err)
{
  const char *why;
  int r;

  if ((r = array_writable (a, on ? "add a bitmap" : "remove the bitmap",
                           err)) < 0)
    return r;
  pthread_mutex_lock (&a->job.lock);
  pthread_rwlock_wrlock (&a->shape_lock);
  if ((why = not_now (a)) != NULL) {
    array_set_err (err, "cannot %s: %s", on ? "add a bitmap"
                   : "remove the bitmap", why);
    r = -EBUSY;
  }
  else if (on && a->ppl.on) {
    array_set_err (err, "cannot add a bitmap: the array keeps a partial "
                   "parity log (md keeps one or the other)");
    r = -EINVAL;
  }
  else if (on == a->meta.has_bitmap) {
    array_set_err (err, "the array has %s", on ? "an internal bitmap "
                   "already" : "no bitmap");
    r = -EALREADY;
  }
  else
    r = meta_set_bitmap (a, on, err);
  pthread_rwlock_unlock (&a->shape_lock);
  pthread_mutex_unlock (&a->job.lock);
  return r;
}
