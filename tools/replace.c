/* tools/replace.c -- raid5ctl replace (offline; --control hands it to the
 * server, tools/ctl.c): copy the member of a slot onto a new disk, which
 * then takes the slot, as mdadm --replace DEV --with NEW does -- the old
 * member in service until the copy is done, so that redundancy never
 * drops; or go on with a replace that was interrupted.
 *
 * The array is opened from its members' md superblocks (any order; an
 * interrupted replace's new disk among them).  Everything is checked
 * before anything is written: the slot in service and the array whole,
 * no job due, the new disk big enough, not a member, not served (its
 * lock), free of file systems and other arrays (unless --force).  Then
 * array_replace_start() writes the new disk's superblock as the slot's
 * replacement (md's MD_FEATURE_REPLACEMENT) and the copy runs here; its
 * progress reaches that superblock every few seconds (recovery_offset),
 * so a killed replace goes on when rerun without --with.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "array/array.h"
#include "tools/offline.h"
#include "tools/raid5ctl.h"

struct replace_opts {
  struct offline_opts job;    /* its slot: -1 until given */
  const char *with;           /* NULL: go on with a replace under way */
};

static void
usage (void)
{
  printf (
"usage: raid5ctl replace --slot K --with PATH [--force] [--max-speed SIZE]\n"
"                        [--direct|--buffered] DISK...\n"
"       raid5ctl replace [--max-speed SIZE] DISK...\n"
"       raid5ctl replace --control SOCKET [--wait] [--force] SLOT PATH\n"
"\n"
"Copy the member of slot K onto PATH, which then takes the slot, as\n"
"mdadm --replace DEV --with PATH does: the old member stays in service\n"
"until the copy is done, so the array keeps its redundancy throughout\n"
"(a rebuild after a fail would not).  The copy reads the old member and\n"
"computes from the other members only what it cannot read.  Offline,\n"
"DISK... are the array's members in any order and nothing may serve them.\n"
"\n"
"  --slot K          the slot to replace (in service; the array whole)\n"
"  --with PATH       the file or block device that takes the slot: it gets\n"
"                    a superblock as the slot's replacement at once (md's\n"
"                    MD_FEATURE_REPLACEMENT).  Without --with, a replace\n"
"                    that was interrupted goes on where the replacement's\n"
"                    superblock says (md's recovery_offset); give it among\n"
"                    DISK...\n"
"  --force           use a PATH holding a file system, another array's md\n"
"                    superblock or any signature libblkid knows (refused\n"
"                    without it); they are wiped\n"
"  --max-speed SIZE  at most SIZE per second of each member (bare: KiB)\n"
"  --direct          member I/O with O_DIRECT, past the page cache: the\n"
"                    default when every DISK (and PATH) is a block device\n"
"  --buffered        member I/O through the page cache (image files' default)\n"
"  -h, --help        this text\n"
"\n"
"With --control SOCKET, the server of the array (nbdkit raid5 ...\n"
"control=SOCKET) replaces SLOT while it serves: every write to the slot\n"
"goes to PATH too once the copy has passed it; status shows the copy's\n"
"progress; a server killed mid-way goes on with it when started again.\n"
"If another member fails meanwhile the copy goes on; if the slot's own\n"
"member fails, PATH is rebuilt into the slot instead.  --wait follows\n"
"the replace to its end.  PATH may be an NBD URI.\n"
"\n"
"Afterwards the old member is no longer part of the array (kernel md\n"
"agrees: its superblock is left as it was, behind the others).\n"
"\n"
"Exit status: 0 when PATH holds the slot; 1 otherwise.\n");
}

static int
take_option (struct replace_opts *o, int c, const char *arg)
{
  switch (c) {
  case 'h': usage (); tool_tls_help (); exit (TOOL_OK);
  case 'w': o->with = arg; return TOOL_OK;
  default: return offline_option (&o->job, c, arg);
  }
}

static int
parse (int argc, char **argv, struct replace_opts *o)
{
  static const struct option longopts[] = {
    { "help", no_argument, NULL, 'h' },
    { "slot", required_argument, NULL, 's' },
    { "with", required_argument, NULL, 'w' },
    OFFLINE_LONGOPTS,
    { NULL, 0, NULL, 0 },
  };
  int c;

  while ((c = tool_getopt (argc, argv, "h", longopts)) != -1)
    if (take_option (o, c, optarg) != TOOL_OK)
      return TOOL_FAIL;
  if (o->with && o->job.slot < 0)
    return tool_error ("--with %s: which slot? --slot K is needed", o->with);
  if (!o->with && o->job.slot >= 0)
    return tool_error ("--slot %d: with which disk? --with PATH is needed",
                       o->job.slot);
  if (argc - optind < R5_MIN_MEMBERS || argc - optind > R5_MAX_MEMBERS + 1)
    return tool_error ("%d disk%s given: give the array's members",
                       argc - optind, argc - optind == 1 ? "" : "s");
  for (o->job.n = 0; optind < argc; o->job.n++)
    o->job.disks[o->job.n] = argv[optind++];
  return TOOL_OK;
}

static int
open_array (const struct replace_opts *o, struct array **a)
{
  struct array_config cfg = { .metadata = ARRAY_META_AUTO,
                              .members = o->job.n };

  return offline_open (&o->job, &cfg, &o->with, o->with != NULL, a);
}

/* start()'s answer when PATH holds the slot already: nothing to do. */
#define REPLACED_ALREADY 2

/* Begin the replace, or find the one to go on with; nothing written on
 * error.  *slot: the slot.  TOOL_OK, TOOL_FAIL, or REPLACED_ALREADY.
 */
static int
start (struct array *a, const struct replace_opts *o, int *slot)
{
  struct array_job_status st;
  struct array_err err;
  int r;

  array_job_status (a, &st);
  if (st.kind == R5_JOB_REPLACE && o->with)
    return tool_error ("slot %d is being replaced already: leave out "
                       "--slot and --with to go on with it", st.slot);
  if (st.kind != R5_JOB_REPLACE && !o->with)
    return tool_error ("nothing to go on with: no replace is under way; "
                       "give --slot K --with PATH");
  *slot = o->with ? o->job.slot : st.slot;
  if (o->with && (r = array_replace_start (a, (unsigned) o->job.slot,
                                           o->with, o->job.force,
                                           &err)) == -EALREADY)
    return REPLACED_ALREADY;
  if (o->with && r < 0)
    return tool_error ("%s", err.msg);
  offline_log_release ();
  return TOOL_OK;
}

int
replace_main (int argc, char **argv)
{
  struct replace_opts o = { .job.slot = -1 };
  struct array *a = NULL;
  char path[4096] = "";
  int slot = -1, r;

  offline_log_reset ();
  if (parse (argc, argv, &o) != TOOL_OK || open_array (&o, &a) != TOOL_OK)
    return TOOL_FAIL;
  if ((r = start (a, &o, &slot)) == TOOL_OK)
    r = offline_run (a, R5_JOB_REPLACE, o.job.max_kib);
  else if (r == REPLACED_ALREADY)
    r = TOOL_OK;              /* PATH holds the slot: said below */
  if (r == TOOL_OK)
    snprintf (path, sizeof path, "%s", array_member_path (a, (unsigned) slot));
  if (r == TOOL_OK && array_member_state (a, (unsigned) slot) != MEMBER_ACTIVE)
    r = tool_error ("the replace did not end with slot %d in service", slot);
  array_close (a);
  if (r == TOOL_OK)
    printf ("replace: slot %d (%s) is active: the old member is no longer "
            "part of the array\n", slot, path);
  return r;
}
