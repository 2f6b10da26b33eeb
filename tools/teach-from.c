/* tools/teach-from.c -- the geometry of the teaching commands taken from
 * members' md v1.2 superblocks (--from DISK...).
 *
 * Read-only and lenient where serving would be strict (no lock, a dirty
 * or degraded array is fine): the question is only "what is this array's
 * shape, and which member is out of service".  Who holds which slot is
 * md's assembly as raid/mdstate.h decides it for the plugin too: a stale,
 * faulty, spare or half-rebuilt member holds no slot here; a slot nobody
 * holds in sync is the missing member.
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "raid/layout.h"
#include "raid/mdsb.h"
#include "raid/mdstate.h"
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
  struct io_member d;
  char why[200];
  int r;

  m->path = path;
  if ((r = disk_open_ro (&d, path)) < 0) {
    io_member_close (&d);
    return tool_error ("%s: %s", path, disk_strerror (r));
  }
  r = disk_read_sb (&d, block);
  if (r < 0) {
    io_member_close (&d);
    return tool_error ("%s: cannot read its superblock: %s", path,
                       disk_strerror (r));
  }
  if (r == 0) {
    io_member_close (&d);
    return tool_error ("%s: no md v1.2 superblock (make one with raid5ctl "
                       "create, or give the geometry with --disks, "
                       "--chunk, ...)", path);
  }
  r = md_sb_decode (block, d.size / R5_SECTOR, &m->sb, why, sizeof why);
  io_member_close (&d);
  if (r < 0)
    return tool_error ("%s: md superblock: %s", path, why);
  return 0;
}

/* Slots as md assembles them; more than one out of sync is fatal. */
static int
assign_slots (struct teach *t, const struct member_sb *m, unsigned n,
              const struct md_assembly *as)
{
  struct md_found *f = calloc (R5_MAX_MEMBERS, sizeof *f);
  int out = as->out;

  if (f == NULL)
    return tool_error ("out of memory");
  for (unsigned i = 0; i < n; i++)
    f[i] = (struct md_found) { true, true, m[i].sb };
  for (unsigned s = 0; s < as->raid_disks; s++)
    if (as->owner[s] >= 0 && as->dev[as->owner[s]].fate == MD_FATE_IN_SYNC)
      t->slot_path[s] = m[as->owner[s]].path;
  if (out >= 0 && t->missing >= 0 && t->missing != out) {
    free (f);
    return tool_error ("--missing %d: slot %d is already out of service",
                       t->missing, out);
  }
  if (out >= 0) {
    t->missing = out;
    snprintf (t->missing_why, sizeof t->missing_why, "no disk given holds "
              "it");
    for (unsigned i = 0; i < n; i++)
      if (as->dev[i].slot == out && as->dev[i].fate == MD_FATE_RECOVERING)
        snprintf (t->missing_why, sizeof t->missing_why, "%s is only partly "
                  "rebuilt", m[i].path);
      else if (as->dev[i].slot == out && as->dev[i].fate != MD_FATE_IN_SYNC) {
        char why[160];

        md_fate_explain (as, f, i, why, sizeof why);
        snprintf (t->missing_why, sizeof t->missing_why, "%s %s", m[i].path,
                  why);
      }
  }
  free (f);
  return 0;
}

/* "slots 1 and 2 have no member": the slots not in sync. */
static int
too_few (const struct md_assembly *as)
{
  char list[160] = "";
  size_t at = 0;
  unsigned k = 0;

  for (unsigned s = 0; s < as->raid_disks && at + 16 < sizeof list; s++)
    if (as->owner[s] < 0 || as->dev[as->owner[s]].fate != MD_FATE_IN_SYNC)
      at += (size_t) snprintf (list + at, sizeof list - at, "%s%u",
                               k++ ? " and " : "", s);
  return tool_error ("slots %s have no member: RAID-5 survives the loss of "
                     "one only", list);
}

/* md's assembly of the disks given, or one error line why not. */
static int
assemble (const struct member_sb *m, unsigned n, struct md_assembly *as)
{
  struct md_found *f = calloc (R5_MAX_MEMBERS, sizeof *f);
  struct md_asm_opts o = { .force = true, .run = true };
  int r = 0;

  if (f == NULL)
    return tool_error ("out of memory");
  for (unsigned i = 0; i < n; i++)
    f[i] = (struct md_found) { true, true, m[i].sb };
  if (md_assemble (f, n, &o, as) == 0)
    ;
  else if (as->refusal == MD_START_FOREIGN)
    r = tool_error ("%s does not belong with the others: it disagrees on "
                    "the array, layout, chunk, disks, size or data offset",
                    m[as->refusal_dev].path);
  else if (as->refusal == MD_START_SAME_SLOT)
    r = tool_error ("%s and another disk both claim slot %d",
                    m[as->refusal_dev].path, as->dev[as->refusal_dev].slot);
  else if (as->refusal == MD_START_NO_SLOT)
    r = tool_error ("none of the disks holds a data slot");
  else
    r = too_few (as);
  free (f);
  return r;
}

static int
set_geometry (struct teach *t, const struct md_sb *sb)
{
  uint64_t doff = sb->data_offset * R5_SECTOR;
  uint64_t chunk = (uint64_t) sb->chunksize * R5_SECTOR;
  const struct r5_geom_params gp = {
    .members = sb->raid_disks, .chunk = chunk,
    .layout = (enum r5_layout) sb->layout, .data_offset = doff,
    .member_bytes = doff + sb->size * R5_SECTOR,
  };
  char why[160];

  if (r5_geom_init (&t->g, &gp) < 0)
    return tool_error ("the superblocks' geometry is not usable: %s",
                       r5_geom_explain (why, sizeof why, &gp));
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
  struct md_assembly as;
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
    r = assemble (m, n, &as);
  if (r == 0)
    r = set_geometry (t, &m[as.freshest].sb);
  if (r == 0)
    r = assign_slots (t, m, n, &as);
  free (m);
  return r;
}
