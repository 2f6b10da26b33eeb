/* array/rebuild.c -- replacing a member: a new file or device, the old
 * one re-added, or the hot spare takes the slot of the member out of
 * service and is rebuilt from the others (scrub.c does the stripes).
 *
 * While it is rebuilt the member is MEMBER_REBUILDING: in service below
 * the job's cursor (reads use it, writes go to it too) and absent from
 * the cursor on (reads rebuild its bytes, writes skip it: the rebuild
 * will compute them).  When the cursor reaches the end the member becomes
 * active and the superblocks say so (events+1).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <sys/stat.h>

#include "array/internal.h"

/* Open a new member for slot: big enough, not one of ours, ours alone. */
static int
open_new (struct array *a, const char *path, struct io_member *m,
          struct array_err *err)
{
  uint64_t need = a->geom.data_offset + a->geom.member_data;
  bool direct = a->members[a->out == 0 ? 1 : 0].direct;
  int r = io_member_open (m, path, direct);

  if (r < 0) {
    array_set_err (err, "%s: cannot open: %s", path, strerror (-r));
    return r;
  }
  for (unsigned s = 0; s < a->geom.members; s++)
    if (a->members[s].fd >= 0 && io_member_same (&a->members[s], m) &&
        (int) s != a->out) {
      array_set_err (err, "%s is member %u already", path, s);
      return -EINVAL;
    }
  if (m->size < need) {
    array_set_err (err, "%s is too small: %" PRIu64 " bytes, the array "
                   "needs %" PRIu64 " on each member", path, m->size, need);
    return -ENOSPC;
  }
  if ((r = io_member_lock (m)) < 0)
    array_set_err (err, "%s: in use: another process holds its lock", path);
  return r;
}

/* Does path name the same file as member_path? */
static bool
names_member (const char *member_path, const char *path)
{
  struct stat a, b;

  return stat (member_path, &a) == 0 && stat (path, &b) == 0 &&
    a.st_dev == b.st_dev && a.st_ino == b.st_ino &&
    (S_ISREG (a.st_mode) || a.st_rdev == b.st_rdev);
}

/* Which member goes into slot: path, else the spare, else the member
 * that was there (a re-add).  Fills *m (moved out of the spare).
 */
static int
pick_member (struct array *a, unsigned slot, const char *path,
             struct io_member *m, bool *fresh, struct array_err *err)
{
  *fresh = true;
  if (path != NULL && a->members[slot].fd >= 0 &&
      names_member (a->members[slot].path, path)) {
    *fresh = false;           /* the slot's own member: a re-add */
    return 0;
  }
  if (path != NULL)
    return open_new (a, path, m, err);
  if (a->spare.fd >= 0) {
    *m = a->spare;
    io_member_init (&a->spare);
    return 0;
  }
  if (a->members[slot].fd >= 0) {
    *fresh = false;
    return 0;
  }
  array_set_err (err, "slot %u has no member to rebuild onto: give a path "
                 "(or start the plugin with spare=PATH)", slot);
  return -ENOENT;
}

static int
check_slot (struct array *a, unsigned slot, struct array_err *err)
{
  if (slot >= a->geom.members) {
    array_set_err (err, "slot %u: the array has slots 0 to %u", slot,
                   a->geom.members - 1);
    return -EINVAL;
  }
  if (a->failed) {
    array_set_err (err, "the array has failed: nothing to rebuild from");
    return -EIO;
  }
  if (a->out != (int) slot) {
    array_set_err (err, a->out < 0
                   ? "slot %u is in service: fail it first (raid5ctl fail)"
                   : "slot %u is in service; slot %d is the one to rebuild",
                   slot, a->out);
    return -EINVAL;
  }
  if (a->job.kind == ARRAY_JOB_REBUILD) {
    array_set_err (err, "slot %u is being rebuilt already", slot);
    return -EBUSY;
  }
  return 0;
}

int
array_rebuild_start (struct array *a, unsigned slot, const char *path,
                     struct array_err *err)
{
  struct io_member m;
  bool fresh;
  int r;

  io_member_init (&m);
  pthread_mutex_lock (&a->job.lock);
  if ((r = check_slot (a, slot, err)) < 0 ||
      (r = pick_member (a, slot, path, &m, &fresh, err)) < 0)
    goto out;
  job_preempt (a);            /* md: recovery comes first */
  /* Requests planned before the slot went out of service may still be
   * reading or writing its old member: wait for them to finish before
   * that member (its descriptor, its path) is replaced.
   */
  epoch_quiesce (&a->epochs);
  if (fresh) {
    io_member_close (&a->members[slot]);
    a->members[slot] = m;
    io_member_init (&m);
  }
  /* Cursor 0 before the member counts as rebuilding (see job_begin). */
  job_begin (a, ARRAY_JOB_NONE, (int) slot);
  a->state[slot] = MEMBER_REBUILDING;
  if ((r = meta_add_member (a, slot, fresh, err)) < 0) {
    a->state[slot] = MEMBER_FAULTY;
    goto out;
  }
  a->job.kind = ARRAY_JOB_REBUILD;
  array_log (a, ARRAY_LOG_DEBUG, "rebuilding slot %u onto %s", slot,
             a->members[slot].path);
 out:
  pthread_mutex_unlock (&a->job.lock);
  io_member_close (&m);
  return r;
}

/* The cursor reached the end: the member is in service; job.lock held. */
int
rebuild_done (struct array *a, struct array_err *err)
{
  int slot = a->job.slot;

  a->state[slot] = MEMBER_ACTIVE;
  a->out = -1;
  array_log (a, ARRAY_LOG_DEBUG, "slot %d (%s) rebuilt: the array is whole "
             "again", slot, a->members[slot].path);
  return meta_checkpoint (a, err);
}

void
job_abort_rebuild (struct array *a)
{
  a->job.abort = true;
}
