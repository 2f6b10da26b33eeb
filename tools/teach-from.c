/* tools/teach-from.c -- the geometry of the teaching commands taken from
 * members' md v1.2 superblocks (--from DISK...).
 *
 * Read-only and lenient where serving would be strict (no lock, a dirty
 * array is fine): the question is only "what is this array's shape, and
 * which member is out of service".  Slots follow md's assembly rules as
 * array/assemble.c applies them: the freshest superblock (highest events)
 * names each device's role; a stale, faulty, spare or half-rebuilt member
 * holds no slot; a slot nobody holds is the missing member.
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "raid/layout.h"
#include "raid/mdsb.h"
#include "tools/disk.h"
#include "tools/raid5ctl.h"
#include "tools/teach.h"

struct member_sb {
  const char *path;
  struct md_sb sb;
};

static int
read_one (const char *path, struct member_sb *m, void *block)
{
  struct disk d;
  char why[200];
  int r;

  m->path = path;
  if ((r = disk_open_ro (&d, path)) < 0)
    return tool_error ("%s: %s", path, disk_strerror (r));
  r = disk_read_sb (d.fd, d.size, block);
  if (r < 0) {
    disk_close (&d);
    return tool_error ("%s: cannot read its superblock: %s", path,
                       disk_strerror (r));
  }
  if (r == 0) {
    disk_close (&d);
    return tool_error ("%s: no md v1.2 superblock (make one with raid5ctl "
                       "create, or give the geometry with --disks, "
                       "--chunk, ...)", path);
  }
  r = md_sb_decode (block, d.size / R5_SECTOR, &m->sb, why, sizeof why);
  disk_close (&d);
  if (r < 0)
    return tool_error ("%s: md superblock: %s", path, why);
  return 0;
}

/* Every superblock must describe the same array. */
static int
check_same (const struct member_sb *m, unsigned n)
{
  const struct md_sb *a = &m[0].sb;

  for (unsigned i = 1; i < n; i++) {
    const struct md_sb *b = &m[i].sb;

    if (memcmp (a->set_uuid, b->set_uuid, 16) != 0)
      return tool_error ("%s and %s belong to different arrays", m[0].path,
                         m[i].path);
    if (a->layout != b->layout || a->chunksize != b->chunksize ||
        a->raid_disks != b->raid_disks || a->size != b->size ||
        a->data_offset != b->data_offset)
      return tool_error ("%s and %s disagree on layout, chunk, disks, size "
                         "or data offset", m[0].path, m[i].path);
  }
  return 0;
}

static const struct md_sb *
freshest (const struct member_sb *m, unsigned n)
{
  const struct md_sb *best = &m[0].sb;

  for (unsigned i = 1; i < n; i++)
    if (m[i].sb.events > best->events)
      best = &m[i].sb;
  return best;
}

/* The slot a member holds, or -1 with the reason in why. */
static int
slot_of (const struct member_sb *m, const struct md_sb *fresh, char *why,
         size_t len)
{
  const struct md_sb *sb = &m->sb;
  unsigned role = sb->dev_number < fresh->max_dev
    ? fresh->dev_roles[sb->dev_number] : MD_ROLE_SPARE;
  const char *what = NULL;

  if (sb->events + 1 < fresh->events)
    what = "is stale (events behind the array's)";
  else if (role == MD_ROLE_FAULTY)
    what = "is marked faulty in the superblocks";
  else if (role >= fresh->raid_disks)
    what = "is a spare";
  else if (sb->feature_map & MD_FEATURE_RECOVERY_OFFSET)
    what = "is only partly rebuilt";
  if (what == NULL)
    return (int) role;
  snprintf (why, len, "%s %s", m->path, what);
  return -1;
}

/* Fill t->slot_path and t->missing; more than one empty slot is fatal. */
static int
assign_slots (struct teach *t, const struct member_sb *m, unsigned n,
              const struct md_sb *fresh)
{
  char why[200] = "";
  int out = -1;

  for (unsigned i = 0; i < n; i++) {
    int s = slot_of (&m[i], fresh, why, sizeof why);

    if (s >= 0 && t->slot_path[s] != NULL)
      return tool_error ("%s and %s both claim slot %d", t->slot_path[s],
                         m[i].path, s);
    if (s >= 0)
      t->slot_path[s] = m[i].path;
  }
  for (unsigned s = 0; s < fresh->raid_disks; s++) {
    if (t->slot_path[s] != NULL)
      continue;
    if (out >= 0)
      return tool_error ("slots %d and %u have no member: RAID-5 survives "
                         "the loss of one only", out, s);
    out = (int) s;
  }
  if (out >= 0 && t->missing >= 0 && t->missing != out)
    return tool_error ("--missing %d: slot %d is already out of service",
                       t->missing, out);
  if (out >= 0) {
    t->missing = out;
    snprintf (t->missing_why, sizeof t->missing_why, "%s",
              *why ? why : "no disk given holds it");
  }
  return 0;
}

static int
set_geometry (struct teach *t, const struct md_sb *sb)
{
  uint64_t doff = sb->data_offset * R5_SECTOR;
  uint64_t chunk = (uint64_t) sb->chunksize * R5_SECTOR;
  uint64_t member = doff + sb->size * R5_SECTOR;
  char why[160];

  if (r5_geom_init (&t->g, sb->raid_disks, chunk, (enum r5_layout) sb->layout,
                    doff, member) < 0)
    return tool_error ("the superblocks' geometry is not usable: %s",
                       r5_geom_explain (why, sizeof why, sb->raid_disks,
                                        chunk, (enum r5_layout) sb->layout,
                                        doff, member));
  t->sized = true;
  return 0;
}

static int
read_all (struct teach *t, struct member_sb *m, unsigned *n)
{
  void *block = malloc (MD_SB_BLOCK);
  int r = 0;

  if (block == NULL)
    return tool_error ("out of memory");
  *n = 0;
  for (unsigned i = 0; i < t->nfrom && r == 0; i++)
    if (strcmp (t->from[i], "missing") != 0)
      r = read_one (t->from[i], &m[(*n)++], block);
  free (block);
  if (r == 0 && *n == 0)
    r = tool_error ("--from: every disk is 'missing'");
  return r;
}

int
teach_from_members (struct teach *t)
{
  struct member_sb *m;
  unsigned n;
  int r;

  if (t->nfrom > R5_MAX_MEMBERS)
    return tool_error ("--from: %u disks, at most %u", t->nfrom,
                       R5_MAX_MEMBERS);
  if ((m = calloc (t->nfrom, sizeof *m)) == NULL)
    return tool_error ("out of memory");
  r = read_all (t, m, &n);
  if (r == 0)
    r = check_same (m, n);
  if (r == 0)
    r = set_geometry (t, freshest (m, n));
  if (r == 0)
    r = assign_slots (t, m, n, freshest (m, n));
  free (m);
  return r;
}
