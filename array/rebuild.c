/* array/rebuild.c -- replacing a member: a new file or device, the old
 * one, or the hot spare takes the slot of the member out of service and
 * is rebuilt from the others (scrub.c does the stripes).  A re-add (md's
 * --re-add) brings the old member back and rebuilds only the regions the
 * write-intent bitmap marks, when md's rule says the bitmap covers
 * everything it missed (raid/mdstate.h, md_readd_check).
 *
 * While it is rebuilt the member is MEMBER_REBUILDING: in service below
 * the rebuilt mark (health.h: reads use it, writes go to it too) and
 * absent from the mark on (reads rebuild its bytes, writes skip it: the
 * rebuild will compute them).  When the mark reaches the end the member
 * becomes active and the superblocks say so (events+1).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "array/guard.h"
#include "array/object.h"
#include "array/jobs.h"
#include "array/requests.h"
#include "array/state.h"
#include "raid/mdsb.h"

/* A member about to join a slot. */
struct joining {
  unsigned slot;
  struct io_member *m;        /* the new member (taken from here), or ... */
  bool in_place;              /* ... the member already in the slot */
  enum meta_join how;
  const struct md_sb *sb;     /* its own superblock, as read (OLD, RE_ADD) */
  bool force;                 /* overwrite what a new member holds */
  const char *override;       /* how to say so: "--force" (NULL) */
  struct io_sig_list sigs;    /* ... and that is what it held (guard.h) */
};

/* Nothing on the new member but this array's own superblock, unless
 * jn->force (guard.h): the refusal raid5ctl create gives.
 */
static int
guard_new (struct array *a, const struct join_new *jn,
           struct io_sig_list *sigs, struct array_err *err)
{
  char uuid[36] = "";
  struct array_guard g = { .own_uuid = uuid, .force = jn->force,
                           .override = jn->override ? jn->override
                                                    : "--force",
                           .tls = &a->tls };

  if (array_md_uuid (a, uuid) < 0)
    uuid[0] = '\0';             /* raw members: nothing is ours */
  return array_guard_path (jn->path, jn->path, &g, sigs, err);
}

int
join_open_new (struct array *a, const struct join_new *jn,
               struct io_member *m, struct io_sig_list *sigs,
               struct array_err *err)
{
  const char *path = jn->path;
  bool direct = false;
  int r;

  /* As the members in service are opened (a missing one says nothing). */
  for (unsigned k = 0; k < a->geom.members; k++)
    if ((int) k != jn->except && io_member_is_open (&a->members[k])) {
      direct = a->members[k].direct;
      break;
    }
  if ((r = guard_new (a, jn, sigs, err)) < 0)   /* read-only, first */
    return r;
  if ((r = io_member_open_opts (m, path, &(struct io_open_opts) {
                                   .direct = direct,
                                   .timeout_ms = a->member_timeout_ms,
                                   .tls = &a->tls })) < 0) {
    array_set_err (err, "%s: cannot open: %s", path, io_strerror (r));
    return r;
  }
  for (unsigned s = 0; s < a->geom.members; s++)
    if (io_member_is_open (&a->members[s]) &&
        io_member_same (&a->members[s], m) && (int) s != jn->except) {
      array_set_err (err, "%s is member %u already", path, s);
      return -EINVAL;
    }
  if (m->size < jn->need) {
    array_set_err (err, "%s is too small: %" PRIu64 " bytes, the array "
                   "needs %" PRIu64 " on each member", path, m->size,
                   jn->need);
    return -ENOSPC;
  }
  if ((r = io_member_lock (m)) < 0) {
    array_set_err (err, "%s: in use: another process holds its lock", path);
    return r;
  }
  return 0;
}

/* Open a new member for the out slot: big enough, not one of ours, ours
 * alone, holding nothing else (join_open_new).
 */
static int
open_new (struct array *a, const char *path, struct joining *j,
          struct array_err *err)
{
  struct join_new jn = {
    .path = path, .need = a->geom.data_offset + a->geom.member_data,
    .except = health_out (&a->health), .force = j->force,
    .override = j->override,
  };

  return join_open_new (a, &jn, j->m, &j->sigs, err);
}

/* The hot spare takes the slot, probed again first: it may have been
 * written since the start (a file system made on it).  Refused, it is
 * no longer the spare: it is closed (the caller says why), so that it is
 * not tried again.
 */
static int
take_spare (struct array *a, struct joining *j, struct array_err *err)
{
  int r = spare_guard (a, err);

  if (r < 0) {
    char why[ARRAY_ERR_LEN];

    snprintf (why, sizeof why, "%s", err->msg);
    array_set_err (err, "%s: not used as the spare any more", why);
    io_member_close (&a->spare);
    return r;
  }
  *j->m = a->spare;
  j->sigs = a->spare_sigs;
  io_member_init (&a->spare);
  return 0;
}

/* The member that joins slot: path (a new one, or the slot's own member
 * still open), else the spare, else the slot's own member.  *m is filled
 * unless it is the one already in the slot (j->in_place).
 */
static int
pick_member (struct array *a, const char *path, struct joining *j,
             struct array_err *err)
{
  unsigned slot = j->slot;
  bool own = io_member_is_open (&a->members[slot]);

  j->in_place = false;
  if (path != NULL && own && io_member_named (&a->members[slot], path)) {
    j->in_place = true;
    return 0;
  }
  if (path != NULL)
    return open_new (a, path, j, err);
  if (io_member_is_open (&a->spare))
    return take_spare (a, j, err);
  if (own) {
    j->in_place = true;
    return 0;
  }
  array_set_err (err, "slot %u has no member to rebuild onto: give a path "
                 "(or start the plugin with spare=PATH)", slot);
  return -ENOENT;
}

static int
check_slot (struct array *a, unsigned slot, struct array_err *err)
{
  int out = health_out (&a->health);

  if (slot >= a->geom.members) {
    array_set_err (err, "slot %u: the array has slots 0 to %u", slot,
                   a->geom.members - 1);
    return -EINVAL;
  }
  if (health_failed (&a->health)) {
    array_set_err (err, "the array has failed: nothing to rebuild from");
    return -EIO;
  }
  if (out != (int) slot) {
    array_set_err (err, out < 0
                   ? "slot %u is in service: fail it first (raid5ctl fail)"
                   : "slot %u is in service; slot %d is the one to rebuild",
                   slot, out);
    return -EINVAL;
  }
  if (a->job.kind == R5_JOB_REBUILD) {
    /* Its member failed and the job ends at its next step (job.abort). */
    array_set_err (err, atomic_load (&a->job.abort)
                   ? "slot %u's rebuild is stopping: try again in a moment"
                   : "slot %u is being rebuilt already", slot);
    return -EBUSY;
  }
  if (a->grow.active) {
    /* md rebuilds a degraded reshape only after it (md_check_recovery
     * goes on with the reshape first); here it waits for the grow's end.
     */
    array_set_err (err, "the array is being grown: slot %u can be rebuilt "
                   "when the reshape is over", slot);
    return -EBUSY;
  }
  return 0;
}

/* How m joins the slot, and its own superblock (OLD, RE_ADD): a member
 * of this array in this slot keeps its identity (unless its number went
 * to another member meanwhile), anything else is new.
 */
static enum meta_join
join_of (struct array *a, unsigned slot, const struct io_member *m,
         struct md_sb *sb)
{
  struct array_err ignored;

  if (!a->meta.enabled || meta_read_sb (m, "new member", sb, &ignored) != 1 ||
      memcmp (sb->set_uuid, a->meta.live.common.set_uuid, 16) != 0 ||
      md_sb_role (sb) != slot ||
      meta_dev_number_taken (a, slot, sb->dev_number))
    return META_JOIN_NEW;
  return META_JOIN_OLD;
}

/* Forced onto a member that held something: zero its signatures, but
 * not inside the superblock and bitmap just written (md: from 4 KiB to
 * the data).  Left there, blkid and udev would still call the member an
 * ext4, or another array's; in the data area the rebuild overwrites
 * them only when it gets there.  A failure is the new member's: the
 * slot is out of service again.  (Asked again onto the same path, the
 * rebuild takes the member in place, unprobed, so what the wipe did not
 * reach stays until the rebuild overwrites it; another path is probed.)
 */
static int
wipe_old (struct array *a, const struct joining *j, struct array_err *err)
{
  uint64_t from = a->meta.enabled ? MD_SB_OFFSET : 0;
  uint64_t to = a->meta.enabled ? a->geom.data_offset : 0;
  int r;

  if (j->sigs.n == 0)
    return 0;
  if ((r = array_guard_wipe (&a->members[j->slot], &j->sigs, from, to,
                             err)) < 0)
    return r;
  array_log (a, ARRAY_LOG_NOTICE, "slot %u: %s held %u signature%s (the "
             "first: %s); forced: wiped", j->slot, a->members[j->slot].path,
             j->sigs.n, j->sigs.n > 1 ? "s" : "", j->sigs.sig[0].type);
  return 0;
}

void
rebuild_slot_taken (struct array *a, unsigned slot)
{
  free (a->left_out[slot]);
  a->left_out[slot] = NULL;
  a->one_behind[slot] = false;
}

void
rebuild_join_failed (struct array *a, unsigned slot)
{
  struct array_err ignored;

  health_rebuild_failed (&a->health);
  if (meta_member_failed (a, slot, health_gen (&a->health, slot),
                          &ignored) < 0)        /* live agrees */
    array_log (a, ARRAY_LOG_ERROR, "recording slot %u out: %s", slot,
               ignored.msg);
}

/* Put j->m (or, in_place, the member already there) into the slot and
 * start rebuilding it as j->how says; job.lock held.
 */
static int
begin (struct array *a, const struct joining *j, struct array_err *err)
{
  unsigned slot = j->slot;
  int r;

  job_preempt (a);            /* md: recovery comes first */
  /* Requests planned before the slot went out of service may still be
   * reading or writing its old member: wait for them to finish before
   * that member (its descriptor, its path) is replaced.
   */
  epoch_quiesce (&a->epochs);
  if (!j->in_place) {
    io_member_close (&a->members[slot]);
    a->members[slot] = *j->m;
    io_member_init (j->m);
  }
  /* Cursor 0 before the member counts as rebuilding (see job_begin). */
  job_begin (a, R5_JOB_NONE);
  health_rebuild_begin (&a->health, slot, j->how == META_JOIN_RE_ADD, 0);
  if ((r = meta_add_member (a, slot, j->how, j->sb, err)) < 0) {
    rebuild_join_failed (a, slot);
    return r;
  }
  array_bb_new_member (a, slot);
  rebuild_slot_taken (a, slot);
  if ((r = wipe_old (a, j, err)) < 0) {
    rebuild_join_failed (a, slot);  /* a write of the new member failed */
    return r;
  }
  a->job.kind = R5_JOB_REBUILD;
  array_log (a, ARRAY_LOG_DEBUG, "%s slot %u onto %s",
             j->how == META_JOIN_RE_ADD ? "re-adding (bitmap-guided) into"
                                     : "rebuilding", slot,
             a->members[slot].path);
  return 0;
}

int
array_rebuild_start (struct array *a, unsigned slot, const char *path,
                     bool force, struct array_err *err)
{
  struct io_member m;
  struct md_sb sb;
  struct joining j = { .slot = slot, .m = &m, .sb = &sb, .force = force };
  int r;

  if ((r = array_writable (a, "rebuild", err)) < 0)
    return r;
  io_member_init (&m);
  pthread_mutex_lock (&a->job.lock);
  if ((r = check_slot (a, slot, err)) == 0 &&
      (r = pick_member (a, path, &j, err)) == 0) {
    if (j.in_place)           /* failed, and rejoins: afresh */
      io_member_refresh (&a->members[slot]);
    j.how = join_of (a, slot, j.in_place ? &a->members[slot] : &m, &sb);
    r = begin (a, &j, err);
  }
  pthread_mutex_unlock (&a->job.lock);
  io_member_close (&m);
  return r;
}

int
rebuild_onto (struct array *a, unsigned slot, struct io_member *m,
              struct array_err *err)
{
  struct joining j = { .slot = slot, .m = m, .how = META_JOIN_NEW };
  int r;

  if ((r = check_slot (a, slot, err)) < 0)
    return r;
  return begin (a, &j, err);
}

/* The member to re-add into slot: path, else the one left out there at
 * assembly, else the one still in the slot (failed while serving).
 */
static int
pick_readd (struct array *a, const char *path, struct joining *j,
            struct array_err *err)
{
  unsigned slot = j->slot;
  const char *p = path ? path : a->left_out[slot];

  j->in_place = false;
  if (p == NULL && io_member_is_open (&a->members[slot])) {
    j->in_place = true;
    return 0;
  }
  if (p == NULL) {
    array_set_err (err, "slot %u: no member to re-add (none was left out "
                   "of it): give its path", slot);
    return -ENOENT;
  }
  if (io_member_is_open (&a->members[slot]) &&
      io_member_named (&a->members[slot], p)) {
    j->in_place = true;
    return 0;
  }
  return open_new (a, p, j, err);
}

int
array_readd_start (struct array *a, unsigned slot, const char *path,
                   struct array_err *err)
{
  struct io_member m;
  struct md_sb sb;
  struct joining j = { .slot = slot, .m = &m, .how = META_JOIN_RE_ADD,
                       .sb = &sb, .override = "a rebuild with --force" };
  bool whole = false;
  int r;

  if ((r = array_writable (a, "re-add", err)) < 0)
    return r;
  if (!a->meta.enabled) {
    array_set_err (err, "raw members (metadata=none) keep no record of what "
                   "a member missed: rebuild it instead");
    return -EINVAL;
  }
  io_member_init (&m);
  pthread_mutex_lock (&a->job.lock);
  if ((r = check_slot (a, slot, err)) == 0 &&
      (r = pick_readd (a, path, &j, err)) == 0) {
    const struct io_member *dev = j.in_place ? &a->members[slot] : &m;

    if (j.in_place)           /* failed, and rejoins: afresh */
      io_member_refresh (&a->members[slot]);
    r = meta_read_sb (dev, "re-add", &sb, err);
    if (r == 0) {
      array_set_err (err, "%s has no md superblock: rebuild onto it "
                     "instead", dev->path);
      r = -EINVAL;
    }
    if (r == 1 && (r = meta_readd_check (a, slot, &sb, err)) < 0) {
      char why[ARRAY_ERR_LEN];

      snprintf (why, sizeof why, "%s", err->msg);
      array_set_err (err, "cannot re-add %s into slot %u: %s", dev->path,
                     slot, why);
    }
    if (r >= 0) {
      whole = md_readd_whole (&sb);
      j.how = whole ? META_JOIN_OLD : META_JOIN_RE_ADD;
      r = begin (a, &j, err);
    }
  }
  pthread_mutex_unlock (&a->job.lock);
  io_member_close (&m);
  return r < 0 ? r : whole;
}

/* The cursor reached the end: the member is in service; job.lock held. */
int
rebuild_done (struct array *a, struct array_err *err)
{
  int slot = job_slot (a), r;
  bool whole = !a->health.bitmap_rebuild;

  /* The superblocks first: until they say the member is in sync, health
   * keeps it rebuilding (in service everywhere, its mark at the end).
   */
  if ((r = meta_rebuild_done (a, (unsigned) slot, err)) < 0)
    return r;
  health_rebuild_done (&a->health);
  rebuild_slot_taken (a, (unsigned) slot);  /* whole again: nothing left out */
  a->meta.bits_stale = a->meta.has_bitmap;
  /* A bitmap re-add wrote only what the bitmap marks: the record's
   * regions of the slot that were unknown stay so (unverified, and still
   * marked: the next start computes them from the member).
   */
  if (whole)
    integrity_member_rebuilt (a, (unsigned) slot);
  array_log (a, ARRAY_LOG_DEBUG, "slot %d (%s) rebuilt: the array is whole "
             "again", slot, a->members[slot].path);
  return 0;
}

void
job_abort_rebuild (struct array *a)
{
  a->job.abort = true;
}
