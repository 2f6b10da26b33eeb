/* tools/grow.c -- raid5ctl grow (offline; --control hands it to the
 * server, tools/ctl.c): add members to an array and
 * reshape it onto them, as mdadm --add then --grow --raid-devices=N+K;
 * or go on with a reshape that was interrupted (here or by md).
 *
 * The array is opened from its members' md superblocks (any order).
 * Everything is checked before anything is written: the array healthy
 * (or --force), no job due, each new disk big enough, not a member, not
 * served (its lock), free of file systems and other arrays (unless
 * --force), room before the data for mdadm's least move of the data
 * offset.  Then array_grow_start() records the grow in every superblock
 * (md's reshape_position, delta_disks, new_offset) and the reshape runs
 * here, window by window; the line is kept in the superblocks, so a
 * killed grow goes on where it was: rerun with the members, new ones
 * included, and without --add.
 *
 * With --size, the component size grows instead (array_resize: mdadm
 * --grow --size=max|SIZE), into room the members have after the data
 * they use -- bigger members put in one by one, or files and devices
 * grown -- and the new space is resynced here as create resyncs.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array/array.h"
#include "raid/geom.h"
#include "raid/number.h"
#include "tools/offline.h"
#include "tools/raid5ctl.h"

struct grow_opts {
  struct offline_opts job;
  unsigned nadd;
  const char *add[R5_MAX_MEMBERS];
  const char *backup;         /* --backup-file */
  bool resize;                /* --size given */
  uint64_t size;              /* --size: sectors per member; 0: max */
  bool assume_clean;          /* --assume-clean (with --size) */
  int bitmap;                 /* --bitmap: 1 internal, 0 none, -1 not given */
};

static const char usage_text[] =
"usage: raid5ctl grow --add PATH [--add PATH...] [--force] [--max-speed SIZE]\n"
"                     [--backup-file FILE] [--direct|--buffered] DISK...\n"
"       raid5ctl grow [--max-speed SIZE] [--backup-file FILE] DISK...\n"
"       raid5ctl grow --control SOCKET [--wait] [--force] [--backup-file FILE]\n"
"                     --add PATH [--add PATH...]\n"
"       raid5ctl grow --size max|SIZE [--assume-clean] [--max-speed SIZE] DISK...\n"
"       raid5ctl grow --control SOCKET [--wait] --size max|SIZE [--assume-clean]\n"
"       raid5ctl grow --bitmap internal|none DISK...\n"
"       raid5ctl grow --control SOCKET --bitmap internal|none\n"
"\n"
"Grow an array whose members carry md superblocks by one member or more,\n"
"offline (nothing may serve the members): mdadm --add, then mdadm --grow\n"
"--raid-devices=N+K.  DISK... are its members in any order.  Each PATH\n"
"joins in a new slot after the last, and the data is moved, stripe by\n"
"stripe, to N+K members: N+K-1 data chunks per stripe, so the array grows\n"
"by as many chunks per stripe as members were added.\n"
"\n"
"  --add PATH        a file or block device to add (at least as big as a\n"
"                    member); repeat for more than one\n"
"  --force           grow a degraded array, and use a PATH holding a file\n"
"                    system, another array's md superblock or any signature\n"
"                    libblkid knows (refused without it); they are wiped\n"
"  --max-speed SIZE  at most SIZE per second of each member (bare: KiB)\n"
"  --backup-file FILE  mdadm's: where members have no room before their\n"
"                    data to move it, the data offset is kept and the\n"
"                    first windows (the critical section) go through FILE\n"
"                    (else through the new member, as mdadm without one),\n"
"                    a new file (one that exists is refused, as mdadm),\n"
"                    removed at the end; give it again to go on with a\n"
"                    grow stopped in its critical section\n"
"  --size max|SIZE   grow the space used of each member instead (mdadm\n"
"                    --grow --size): to all the room the smallest has after\n"
"                    its data offset, or SIZE of each (bare: KiB), in whole\n"
"                    chunks; the new space is resynced\n"
"  --assume-clean    with --size: take the new space as consistent (only if\n"
"                    it is all zero on every member), no resync\n"
"  --bitmap internal|none  add a write-intent bitmap or remove it instead\n"
"                    (mdadm --grow --bitmap), where mdadm puts one\n"
"  --direct          member I/O with O_DIRECT, past the page cache: the\n"
"                    default when every DISK (and PATH) is a block device\n"
"  --buffered        member I/O through the page cache (image files' default)\n"
"  -h, --help        this text\n"
"\n"
"As mdadm does without a backup file, the data offset of every member\n"
"moves down (by mdadm's least: raid5ctl explain grow shows it), so the\n"
"members need that much room before their data, counted as mdadm counts\n"
"it: from 36 KiB past the superblock, the bitmap and the bad-block log\n"
"(the data never moves onto them); arrays made by raid5ctl\n"
"create and mdadm --create have it.  Members without it keep their data\n"
"offset, the critical section backed up on the new member or in\n"
"--backup-file, as under mdadm.  The reshape's place is kept in the\n"
"superblocks (md's reshape_position) as it goes: an interrupted grow goes\n"
"on when rerun without --add, with every member, the new ones included.\n"
"An array whose grow was interrupted under md goes on here the same way,\n"
"and one interrupted here is finished by mdadm --assemble.\n"
"\n"
"Afterwards a server started on the members serves the bigger array;\n"
"grow the file system on it (resize2fs, xfs_growfs: raid5ctl mkfs-hint).\n"
"\n"
"With --control SOCKET, the server of the array (nbdkit raid5 ...\n"
"control=SOCKET) grows it while it serves: clients read and write\n"
"throughout, each byte in the shape its address is in (below the reshape's\n"
"line the new one), and the old size is served until the reshape ends.\n"
"NBD clients read the size when they connect: connect again to see the\n"
"new one.  The command returns once the reshape has started (raid5ctl\n"
"status shows it, pause and resume hold it, speed paces it); --wait\n"
"follows it to its end.  A server killed mid-grow goes on with it when\n"
"started again.  Without --add, a reshape that stopped (a second failure\n"
"of the window's I/O) goes on.  PATH may be an NBD URI.\n"
"\n"
"With --size, the members keep their data offset and the array gains\n"
"whole stripes at its end: after every member was replaced by a bigger\n"
"one (raid5ctl replace, rebuild) or the image files or devices grew.\n"
"With --control the server does it while it serves (requests held the\n"
"moment it records the size; clients see it when they connect again) and\n"
"resyncs the new space in the background; --wait follows that resync.\n"
"\n"
"Exit status: 0 when the array has its new members and size (or --size\n"
"found no room to grow: said so); 1 otherwise.\n";

static void
usage (void)
{
  fputs (usage_text, stdout);
}

int
grow_parse_bitmap (const char *arg, int *on)
{
  if (strcmp (arg, "internal") == 0 || strcmp (arg, "none") == 0) {
    *on = arg[0] == 'i';
    return TOOL_OK;
  }
  return tool_error ("--bitmap %s: internal or none", arg);
}

int
grow_parse_size (const char *arg, uint64_t *sectors)
{
  *sectors = 0;
  if (strcmp (arg, "max") == 0)
    return TOOL_OK;
  if (r5_parse_size (arg, 1024, 512, INT64_MAX, sectors) < 0 ||
      *sectors % 512)
    return tool_error ("--size %s: expected max or a size in whole "
                       "sectors (bare: KiB)", arg);
  *sectors /= 512;
  return TOOL_OK;
}

static int
take_option (struct grow_opts *o, int c, const char *arg)
{
  switch (c) {
  case 'h': usage (); tool_tls_help (); exit (TOOL_OK);
  case 'a':
    if (o->nadd == R5_MAX_MEMBERS - R5_MIN_MEMBERS)
      return tool_error ("--add %s: too many (an array has at most %d "
                         "members)", arg, R5_MAX_MEMBERS);
    o->add[o->nadd++] = arg;
    return TOOL_OK;
  case 'b': o->backup = arg; return TOOL_OK;
  case 's': o->resize = true; return grow_parse_size (arg, &o->size);
  case 'c': o->assume_clean = true; return TOOL_OK;
  case 'i': return grow_parse_bitmap (arg, &o->bitmap);
  default: return offline_option (&o->job, c, arg);
  }
}

static int
parse (int argc, char **argv, struct grow_opts *o)
{
  static const struct option longopts[] = {
    { "help", no_argument, NULL, 'h' },
    { "add", required_argument, NULL, 'a' },
    { "backup-file", required_argument, NULL, 'b' },
    { "size", required_argument, NULL, 's' },
    { "assume-clean", no_argument, NULL, 'c' },
    { "bitmap", required_argument, NULL, 'i' },
    OFFLINE_LONGOPTS,
    { NULL, 0, NULL, 0 },
  };
  int c;

  while ((c = tool_getopt (argc, argv, "h", longopts)) != -1)
    if (take_option (o, c, optarg) != TOOL_OK)
      return TOOL_FAIL;
  if (o->resize + (o->bitmap >= 0) + (o->nadd || o->backup) > 1)
    return tool_error ("--add, --size and --bitmap change one thing each: "
                       "one at a time (as mdadm)");
  if (o->assume_clean && !o->resize)
    return tool_error ("--assume-clean goes with --size");
  if (argc - optind < R5_MIN_MEMBERS - 1 || argc - optind > R5_MAX_MEMBERS)
    return tool_error ("%d disk%s given: give the array's members",
                       argc - optind, argc - optind == 1 ? "" : "s");
  for (o->job.n = 0; optind < argc; o->job.n++)
    o->job.disks[o->job.n] = argv[optind++];
  return TOOL_OK;
}

static int
open_array (const struct grow_opts *o, struct array **a)
{
  struct array_config cfg = { .metadata = ARRAY_META_AUTO,
                              .grow_backup = o->backup };

  cfg.members = o->job.n < R5_MIN_MEMBERS ? R5_MIN_MEMBERS : o->job.n;
  return offline_open (&o->job, &cfg, o->add, o->nadd, a);
}

/* Begin the grow, or find the one to go on with; nothing written on error. */
static int
start (struct array *a, const struct grow_opts *o, uint64_t *from_cap)
{
  struct array_job_status st;
  struct array_err err;

  array_job_status (a, &st);
  if (st.kind == R5_JOB_RESHAPE && o->nadd > 0)
    return tool_error ("the array is being grown to %u members already (%"
                       PRIu64 " of %" PRIu64 " stripes moved): leave out "
                       "--add to go on with it", array_geom (a)->members,
                       st.done, st.total);
  if (st.kind != R5_JOB_RESHAPE && o->nadd == 0)
    return tool_error ("nothing to grow: the array has %u members and no "
                       "grow under way; give --add PATH",
                       array_geom (a)->members);
  *from_cap = array_geom (a)->capacity;
  if (o->nadd > 0 &&
      array_grow_start (a, o->add, o->nadd, o->job.force, &err) < 0)
    return tool_error ("%s", err.msg);
  offline_log_release ();
  return TOOL_OK;
}

/* --bitmap: the internal bitmap added or removed. */
static int
set_bitmap (struct array *a, const struct grow_opts *o)
{
  struct array_err err;
  int r = array_set_bitmap (a, o->bitmap, &err);

  if (r == -EALREADY) {
    printf ("grow: %s\n", err.msg);
    return TOOL_OK;
  }
  if (r < 0)
    return tool_error ("%s", err.msg);
  printf ("grow: %s\n", o->bitmap ? "internal bitmap added (every bit set: "
          "a server or md clears them once it finds the array in sync)"
          : "bitmap removed");
  return TOOL_OK;
}

/* --size: the component grown and its new space resynced. */
static int
resize (struct array *a, const struct grow_opts *o)
{
  const struct r5_geom *g = array_geom (a);
  uint64_t was = g->capacity;
  char size[32], before[32];
  struct array_job_status st;
  struct array_err err;
  int r = array_resize (a, o->size, o->assume_clean, &err);

  if (r == -EALREADY) {
    printf ("grow: %s\n", err.msg);
    return TOOL_OK;
  }
  if (r < 0)
    return tool_error ("%s", err.msg);
  offline_log_release ();
  array_job_status (a, &st);
  if (st.kind == R5_JOB_RESYNC &&
      (r = offline_run (a, R5_JOB_RESYNC, o->job.max_kib)) != TOOL_OK)
    return r;
  printf ("grow: the array has %" PRIu64 " sectors of each member, %s (%"
          PRIu64 " bytes), was %s; a server started now serves that size: "
          "grow the file system (resize2fs, xfs_growfs)\n",
          g->member_data / 512, tool_human (g->capacity, size, sizeof size),
          g->capacity, tool_human (was, before, sizeof before));
  return TOOL_OK;
}

int
grow_main (int argc, char **argv)
{
  struct grow_opts o = { .bitmap = -1 };
  struct array *a = NULL;
  uint64_t was = 0;
  char size[32], before[32];
  int r;

  offline_log_reset ();
  if (parse (argc, argv, &o) != TOOL_OK || open_array (&o, &a) != TOOL_OK)
    return TOOL_FAIL;
  if (o.resize || o.bitmap >= 0) {
    r = o.resize ? resize (a, &o) : set_bitmap (a, &o);
    array_close (a);
    return r;
  }
  if ((r = start (a, &o, &was)) == TOOL_OK)
    r = offline_run (a, R5_JOB_RESHAPE, o.job.max_kib);
  if (r == TOOL_OK) {
    const struct r5_geom *g = array_geom (a);

    printf ("grow: the array has %u members, %s (%" PRIu64 " bytes)%s%s; "
            "a server started now serves that size: grow the file system "
            "(resize2fs, xfs_growfs)\n", g->members,
            tool_human (g->capacity, size, sizeof size), g->capacity,
            o.nadd ? ", was " : "",
            o.nadd ? tool_human (was, before, sizeof before) : "");
  }
  array_close (a);
  return r;
}
