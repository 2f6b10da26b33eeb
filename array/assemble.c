/* array/assemble.c -- build the array from md v1.2 superblocks, following
 * md's assembly rules (see meta.h).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array/internal.h"
#include "raid/layout.h"

/* What one opened member says about itself. */
struct found {
  bool has_sb;
  struct md_sb sb;
};

static int
read_sb (const struct io_member *m, unsigned i, struct found *f,
         struct array_err *err)
{
  char why[200];
  void *block;
  int r;

  f->has_sb = false;
  if (m->size < MD_SB_OFFSET + MD_SB_BLOCK)
    return 0;
  if (posix_memalign (&block, 4096, MD_SB_BLOCK) != 0)
    return -ENOMEM;
  r = io_member_pread (m, block, MD_SB_BLOCK, MD_SB_OFFSET);
  if (r < 0)
    array_set_err (err, "member %u (%s): read at %u: %s", i, m->path,
                   MD_SB_OFFSET, strerror (-r));
  else {
    r = md_sb_decode (block, m->size / 512, &f->sb, why, sizeof why);
    f->has_sb = r == 0;
    if (r == -EINVAL)
      r = 0;                  /* no superblock at all */
    else if (r < 0)
      array_set_err (err, "member %u (%s): md superblock: %s", i, m->path,
                     why);
  }
  free (block);
  return r;
}

/* Every member must carry a superblock of the same array and geometry. */
static int
check_same_array (const struct io_member *opened, const struct found *f,
                  unsigned n, unsigned first, struct array_err *err)
{
  const struct md_sb *a = &f[first].sb;
  char ua[36], ub[36];

  for (unsigned i = 0; i < n; i++) {
    const struct md_sb *b = &f[i].sb;

    if (opened[i].fd < 0)
      continue;
    if (!f[i].has_sb) {
      array_set_err (err, "member %u (%s) has no md superblock, but member "
                     "%u (%s) has one", i, opened[i].path, first,
                     opened[first].path);
      return -EINVAL;
    }
    if (memcmp (a->set_uuid, b->set_uuid, 16) != 0) {
      md_uuid_format (a->set_uuid, ua);
      md_uuid_format (b->set_uuid, ub);
      array_set_err (err, "member %u (%s) belongs to another array (uuid "
                     "%s, not %s)", i, opened[i].path, ub, ua);
      return -EINVAL;
    }
    if (a->layout != b->layout || a->chunksize != b->chunksize ||
        a->raid_disks != b->raid_disks || a->size != b->size ||
        a->data_offset != b->data_offset) {
      array_set_err (err, "member %u (%s): superblock disagrees with member "
                     "%u (%s) on layout, chunk, disks, size or data offset",
                     i, opened[i].path, first, opened[first].path);
      return -EINVAL;
    }
  }
  return 0;
}

/* The freshest member in an active role: the highest events. */
static int
freshest (const struct io_member *opened, const struct found *f, unsigned n)
{
  int best = -1;

  for (unsigned i = 0; i < n; i++)
    if (opened[i].fd >= 0 && md_sb_role (&f[i].sb) < MD_ROLE_MAX &&
        (best < 0 || f[i].sb.events > f[best].sb.events))
      best = (int) i;
  return best;
}

/* The slot member i takes, or -1 with the reason in why. */
static int
slot_of (const struct io_member *m, unsigned i, const struct md_sb *sb,
         const struct md_sb *fresh, char *why, size_t len)
{
  unsigned role = sb->dev_number < fresh->max_dev
    ? fresh->dev_roles[sb->dev_number] : MD_ROLE_SPARE;
  const char *what = NULL;

  if (sb->events + 1 < fresh->events)
    what = "is stale (its events counter is behind the array's)";
  else if (role == MD_ROLE_FAULTY)
    what = "is marked faulty in the array's superblocks";
  else if (role >= fresh->raid_disks)
    what = "is a spare or has no data role";
  if (what == NULL)
    return (int) role;
  snprintf (why, len, "member %u (%s) %s (events %" PRIu64 ", array %"
            PRIu64 ")", i, m->path, what, sb->events, fresh->events);
  return -1;
}

/* Members that found no slot, for the log or for the refusal. */
struct left_out {
  char why[R5_MAX_MEMBERS][160];
  unsigned n;
};

/* Say why members were left out; a missing slot is news (an error line)
 * unless the user said disk=missing.
 */
static void
log_left_out (struct array *a, const struct array_config *cfg,
              const struct left_out *lo)
{
  bool said_missing = false;

  for (unsigned i = 0; i < cfg->members; i++)
    said_missing |= cfg->paths[i] == NULL;
  for (unsigned k = 0; k < lo->n; k++)
    array_log (a, ARRAY_LOG_ERROR, "%s: left out", lo->why[k]);
  if (a->out >= 0 && a->state[a->out] == MEMBER_REBUILDING)
    array_log (a, ARRAY_LOG_DEBUG, "slot %d (%s) is partly rebuilt "
               "(%" PRIu64 " of %" PRIu64 " stripes): the rebuild resumes",
               a->out, a->members[a->out].path, a->meta.rebuild_from,
               a->geom.stripes);
  else if (a->out >= 0)
    array_log (a, lo->n || !said_missing ? ARRAY_LOG_ERROR : ARRAY_LOG_DEBUG,
               "slot %d has no usable member: the array runs degraded on %u "
               "of %u members", a->out, a->geom.members - 1,
               a->geom.members);
}

/* Assign slots; returns the owner (index into opened) of every slot. */
static int
assign_slots (const struct io_member *opened, const struct found *f,
              unsigned n, const struct md_sb *fresh, int *owner,
              struct left_out *lo, struct array_err *err)
{
  for (unsigned s = 0; s < R5_MAX_MEMBERS; s++)
    owner[s] = -1;
  lo->n = 0;
  for (unsigned i = 0; i < n; i++) {
    int s;

    if (opened[i].fd < 0)
      continue;
    s = slot_of (&opened[i], i, &f[i].sb, fresh, lo->why[lo->n],
                 sizeof lo->why[0]);
    if (s < 0)
      lo->n++;
    else if (owner[s] >= 0) {
      array_set_err (err, "members %d (%s) and %u (%s) both claim slot %d",
                     owner[s], opened[owner[s]].path, i, opened[i].path, s);
      return -EINVAL;
    }
    else
      owner[s] = (int) i;
  }
  return 0;
}

/* The one error line when too few members are usable: which slots, and
 * why the members that were given could not fill them.
 */
static int
too_few (const struct left_out *lo, int first, unsigned second,
         struct array_err *err)
{
  char why[ARRAY_ERR_LEN] = "";

  for (unsigned k = 0; k < lo->n && strlen (why) < sizeof why - 4; k++)
    snprintf (why + strlen (why), sizeof why - strlen (why), "%s%s",
              k ? "; " : " (", lo->why[k]);
  if (lo->n)
    snprintf (why + strlen (why), sizeof why - strlen (why), ")");
  array_set_err (err, "cannot start: slots %d and %u have no usable member, "
                 "and RAID-5 survives the loss of one%s", first, second, why);
  return -EINVAL;
}

/* Move each usable member into its slot; the rest stay in opened (and
 * are closed by the caller).
 */
static int
place_members (struct array *a, struct io_member *opened,
               const struct found *f, unsigned n, const struct md_sb *fresh,
               struct left_out *lo, struct array_err *err)
{
  int owner[R5_MAX_MEMBERS];
  int r;

  if ((r = assign_slots (opened, f, n, fresh, owner, lo, err)) < 0)
    return r;
  a->out = -1;
  for (unsigned s = 0; s < fresh->raid_disks; s++) {
    const struct md_sb *sb = owner[s] >= 0 ? &f[owner[s]].sb : NULL;
    bool partial = sb && (sb->feature_map & MD_FEATURE_RECOVERY_OFFSET);

    if (sb == NULL || partial) {      /* out of service, or only partly */
      if (a->out >= 0)
        return too_few (lo, a->out, s, err);
      a->out = (int) s;
      a->state[s] = MEMBER_MISSING;
    }
    if (sb == NULL)
      continue;
    a->members[s] = opened[owner[s]];
    io_member_init (&opened[owner[s]]);
    a->meta.dev_number[s] = sb->dev_number;
    memcpy (a->meta.device_uuid[s], sb->device_uuid, 16);
    a->meta.data_size[s] = sb->data_size;
    a->state[s] = partial ? MEMBER_REBUILDING : MEMBER_ACTIVE;
    if (partial)        /* md resumes the recovery where it stopped */
      a->meta.rebuild_from = sb->recovery_offset * 512 /
        (sb->chunksize * 512ULL);
  }
  return 0;
}

/* Parameters given by the user must agree with the superblocks. */
static int
check_given (const struct array_config *cfg, const struct md_sb *sb,
             struct array_err *err)
{
  const char *what = NULL;
  char got[64] = "";

  if ((cfg->given & ARRAY_GIVEN_CHUNK) && cfg->chunk != sb->chunksize * 512ULL)
    what = "chunk", snprintf (got, sizeof got, "%" PRIu32 "K",
                              sb->chunksize / 2);
  else if ((cfg->given & ARRAY_GIVEN_LAYOUT) && cfg->layout != sb->layout)
    what = "layout", snprintf (got, sizeof got, "%s",
                               r5_layout_name (sb->layout));
  else if ((cfg->given & ARRAY_GIVEN_DATA_OFFSET) &&
           cfg->data_offset != sb->data_offset * 512)
    what = "data-offset", snprintf (got, sizeof got, "%" PRIu64,
                                    sb->data_offset * 512);
  if (what == NULL)
    return 0;
  array_set_err (err, "%s= conflicts with the md superblocks, which say %s "
                 "(leave it out, or use metadata=none for raw members)",
                 what, got);
  return -EINVAL;
}

static int
check_startable (struct array *a, const struct array_config *cfg,
                 const struct md_sb *fresh, const struct left_out *lo,
                 struct array_err *err)
{
  bool dirty = fresh->resync_offset != MD_MAX_SECTOR;

  if (!dirty || a->out < 0)
    return 0;
  if (!cfg->force) {
    bool partial = a->state[a->out] == MEMBER_REBUILDING;

    array_set_err (err, "cannot start a dirty and degraded array: slot %d "
                   "%s%s%s, and parity may be stale where writes were in "
                   "flight when it stopped; force=true starts it anyway",
                   a->out, partial ? "is only partly rebuilt"
                                   : "has no usable member",
                   !partial && lo->n ? ": " : "",
                   !partial && lo->n ? lo->why[0] : "");
    return -EINVAL;
  }
  array_log (a, ARRAY_LOG_ERROR, "starting a dirty and degraded array "
             "(force=true): data in stripes written at the crash may be "
             "wrong");
  a->meta.common.resync_offset = MD_MAX_SECTOR;
  a->meta.forced = true;
  return 0;
}

static int
set_geometry (struct array *a, const struct md_sb *sb, struct array_err *err)
{
  uint64_t doff = sb->data_offset * 512;
  int r = r5_geom_init (&a->geom, sb->raid_disks, sb->chunksize * 512ULL,
                        (enum r5_layout) sb->layout, doff,
                        doff + sb->size * 512);

  if (r < 0)
    array_set_err (err, "md superblock geometry is not usable here: %s",
                   strerror (-r));
  return r;
}

int
meta_assemble (struct array *a, const struct array_config *cfg,
               struct io_member *opened, struct array_err *err)
{
  struct found f[R5_MAX_MEMBERS];
  struct left_out lo;
  int first = -1, best, r;

  if (cfg->metadata == ARRAY_META_NONE)
    return 0;
  for (unsigned i = 0; i < cfg->members; i++) {
    f[i].has_sb = false;
    if (opened[i].fd >= 0 && (r = read_sb (&opened[i], i, &f[i], err)) < 0)
      return r;
    if (f[i].has_sb && first < 0)
      first = (int) i;
  }
  if (first < 0)
    return 0;                 /* raw members */
  if ((r = check_same_array (opened, f, cfg->members, (unsigned) first,
                             err)) < 0)
    return r;
  if ((best = freshest (opened, f, cfg->members)) < 0) {
    array_set_err (err, "no member has an active role in the array");
    return -EINVAL;
  }
  a->meta.enabled = true;
  a->meta.common = f[best].sb;
  if ((r = check_given (cfg, &f[best].sb, err)) < 0 ||
      (r = place_members (a, opened, f, cfg->members, &f[best].sb, &lo,
                          err)) < 0 ||
      (r = check_startable (a, cfg, &f[best].sb, &lo, err)) < 0 ||
      (r = set_geometry (a, &f[best].sb, err)) < 0)
    return r;
  log_left_out (a, cfg, &lo);
  return 0;
}
