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

/* The slot member i takes, or -1 (with a log line saying why not). */
static int
slot_of (struct array *a, const struct io_member *m, unsigned i,
         const struct md_sb *sb, const struct md_sb *fresh)
{
  unsigned role = sb->dev_number < fresh->max_dev
    ? fresh->dev_roles[sb->dev_number] : MD_ROLE_SPARE;
  const char *why = NULL;

  if (sb->events + 1 < fresh->events)
    why = "is stale (its events counter is behind the array's)";
  else if (role == MD_ROLE_FAULTY)
    why = "is marked faulty in the array's superblocks";
  else if (role >= fresh->raid_disks)
    why = "is a spare or has no data role";
  else if (sb->feature_map & MD_FEATURE_RECOVERY_OFFSET)
    why = "is only partly rebuilt";
  if (why == NULL)
    return (int) role;
  array_log (a, ARRAY_LOG_ERROR, "member %u (%s) %s (events %" PRIu64
             ", array %" PRIu64 "): left out", i, m->path, why, sb->events,
             fresh->events);
  return -1;
}

/* Move each usable member into its slot; close the rest. */
static int
place_members (struct array *a, struct io_member *opened,
               const struct found *f, unsigned n, const struct md_sb *fresh,
               struct array_err *err)
{
  int owner[R5_MAX_MEMBERS];
  unsigned have = 0;

  for (unsigned s = 0; s < R5_MAX_MEMBERS; s++)
    owner[s] = -1;
  for (unsigned i = 0; i < n; i++) {
    int s = opened[i].fd < 0 ? -1 : slot_of (a, &opened[i], i, &f[i].sb,
                                               fresh);

    if (s >= 0 && owner[s] >= 0) {
      array_set_err (err, "members %d (%s) and %u (%s) both claim slot %d",
                     owner[s], opened[owner[s]].path, i, opened[i].path, s);
      return -EINVAL;
    }
    if (s >= 0)
      owner[s] = (int) i;
  }
  a->out = -1;
  for (unsigned s = 0; s < fresh->raid_disks; s++) {
    if (owner[s] < 0) {
      if (a->out >= 0) {
        array_set_err (err, "cannot start: slots %d and %u have no usable "
                       "member (RAID-5 survives the loss of one)", a->out, s);
        return -EINVAL;
      }
      a->out = (int) s;
      a->state[s] = MEMBER_MISSING;
      continue;
    }
    a->members[s] = opened[owner[s]];
    io_member_init (&opened[owner[s]]);
    a->meta.dev_number[s] = f[owner[s]].sb.dev_number;
    memcpy (a->meta.device_uuid[s], f[owner[s]].sb.device_uuid, 16);
    a->meta.data_size[s] = f[owner[s]].sb.data_size;
    a->state[s] = MEMBER_ACTIVE;
    have++;
  }
  return have > 0 ? 0 : -EINVAL;
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
                 const struct md_sb *fresh, struct array_err *err)
{
  bool dirty = fresh->resync_offset != MD_MAX_SECTOR;

  if (!dirty || a->out < 0)
    return 0;
  if (!cfg->force) {
    array_set_err (err, "cannot start a dirty and degraded array (slot %d "
                   "is missing and parity may be stale where writes were in "
                   "flight when it stopped): force=true starts it anyway",
                   a->out);
    return -EINVAL;
  }
  array_log (a, ARRAY_LOG_ERROR, "starting a dirty and degraded array "
             "(force=true): data in stripes written at the crash may be "
             "wrong");
  a->meta.common.resync_offset = MD_MAX_SECTOR;
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
      (r = place_members (a, opened, f, cfg->members, &f[best].sb,
                          err)) < 0 ||
      (r = check_startable (a, cfg, &f[best].sb, err)) < 0)
    return r;
  return set_geometry (a, &f[best].sb, err);
}
