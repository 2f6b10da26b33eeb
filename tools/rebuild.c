/* tools/rebuild.c -- raid5ctl rebuild (offline): put a new member into
 * the slot that is out of service and compute its chunks from the
 * others, or continue such a rebuild after an interruption.
 *
 * The array is opened from its members' md superblocks (any order; the
 * old member of the slot left out or "missing").  Everything is checked
 * before anything is written: the slot must be the one out of service,
 * the new disk big enough, not one of the members, not served (its lock),
 * and free of other arrays' superblocks (unless --force).  Then
 * array_rebuild_start() writes the new member's superblock, naming it in
 * the slot and recovering (md's recovery_offset), and the job runs here.
 * Progress reaches the superblock every few seconds, so a killed rebuild
 * resumes where it was: rerun without --new.
 *
 * --control SOCKET hands the command to a server instead (ctl.c).
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "array/array.h"
#include "tools/offline.h"
#include "tools/raid5ctl.h"

struct rebuild_opts {
  struct offline_opts job;    /* its slot: -1 until given */
  const char *new_path;       /* NULL: continue a rebuild */
  bool re_add;                /* raid5ctl re-add: bring back the member
                               * left out of the slot (md's --re-add) */
};

static void
usage (void)
{
  printf (
"usage: raid5ctl rebuild --slot K [--new PATH] [--force] [--max-speed SIZE]\n"
"                        [--direct|--buffered] DISK...\n"
"       raid5ctl rebuild --control SOCKET [--wait] [--force] SLOT [PATH]\n"
"\n"
"Rebuild slot K of an array whose members carry md superblocks, offline\n"
"(nothing may serve the members).  DISK... are its members in any order;\n"
"the slot's old member may be left out or given as 'missing'.\n"
"\n"
"  --slot K          the slot to rebuild; it must be the one out of service\n"
"  --new PATH        the file or block device that takes the slot: it gets\n"
"                    a superblock at once, then each stripe's chunk of the\n"
"                    slot is computed from the others.  Without --new, a\n"
"                    rebuild that was interrupted continues where its\n"
"                    member's superblock says (md's recovery_offset); give\n"
"                    that member among DISK...\n"
"  --force           use a PATH holding a file system, another array's md\n"
"                    superblock or any signature libblkid knows (refused\n"
"                    without it); they are wiped\n"
"  --max-speed SIZE  at most SIZE per second of each member (bare: KiB)\n"
"  --direct          member I/O with O_DIRECT, past the page cache: the\n"
"                    default when every DISK (and PATH) is a block device\n"
"  --buffered        member I/O through the page cache (image files' default)\n"
"  -h, --help        this text\n"
"\n"
"Progress is kept in the new member's superblock every few seconds, so an\n"
"interrupted rebuild resumes.  Afterwards the slot is active (mdadm\n"
"--examine agrees) and raid5ctl check reports mismatch_cnt 0.\n"
"\n"
"With --control SOCKET, the server of the array (nbdkit raid5 ...\n"
"control=SOCKET) rebuilds SLOT while it serves: onto PATH, or without it\n"
"onto its hot spare (spare=PATH) or the member that was in the slot (a\n"
"re-add).  The slot must be out of service (raid5ctl fail).  PATH may be\n"
"an NBD URI (nbd://HOST/EXPORT, nbd+unix:///?socket=SOCK); the server\n"
"refuses a PATH holding data as above unless --force.  --slot and --new\n"
"work there too; --wait follows the rebuild to its end.\n"
"\n"
"Exit status: 0 when the slot is in service again; 1 otherwise.\n");
}

static void
usage_readd (void)
{
  printf (
"usage: raid5ctl re-add [--slot K] [--max-speed SIZE] [--direct|--buffered] DISK...\n"
"       raid5ctl re-add --control SOCKET [--wait] SLOT [PATH]\n"
"\n"
"Bring back a member that missed writes -- it was missing or failed while\n"
"the others were written -- rebuilding only the regions the write-intent\n"
"bitmap marks as written since it left (md's --re-add).  Offline, DISK...\n"
"are the array's members in any order, the returning one among them;\n"
"nothing may serve them.  md's rule decides whether it can come back this\n"
"way: its own superblock must name this array and that slot, and the\n"
"bitmap must not have been cleared since it left (its events counter at\n"
"least the bitmap's events_cleared).  Otherwise rebuild it (raid5ctl\n"
"rebuild) instead.  A member that left part-way through a rebuild onto\n"
"it holds old bytes no bitmap marks: as md does, it is re-added but\n"
"rebuilt whole.\n"
"\n"
"  --slot K          the slot to re-add into (default: the one out of\n"
"                    service)\n"
"  --max-speed SIZE  at most SIZE per second of each member (bare: KiB)\n"
"  --direct          member I/O with O_DIRECT, past the page cache: the\n"
"                    default when every DISK (and PATH) is a block device\n"
"  --buffered        member I/O through the page cache (image files' default)\n"
"  -h, --help        this text\n"
"\n"
"With --control SOCKET, the server of the array re-adds SLOT while it\n"
"serves: PATH, or without it the member it left out of that slot at start\n"
"(or the one that failed there); --wait follows it to its end.\n"
"\n"
"Exit status: 0 when the slot is in service again; 1 otherwise.\n");
}

static int
take_option (struct rebuild_opts *o, int c, const char *arg)
{
  switch (c) {
  case 'h':
    if (o->re_add)
      usage_readd ();
    else
      usage ();
    tool_tls_help ();
    exit (TOOL_OK);
  case 'n': o->new_path = arg; return TOOL_OK;
  default: return offline_option (&o->job, c, arg);
  }
}

static int
parse (int argc, char **argv, struct rebuild_opts *o)
{
  static const struct option longopts[] = {
    { "help", no_argument, NULL, 'h' },
    { "slot", required_argument, NULL, 's' },
    { "new", required_argument, NULL, 'n' },
    OFFLINE_LONGOPTS,
    { NULL, 0, NULL, 0 },
  };
  int c;

  while ((c = tool_getopt (argc, argv, "h", longopts)) != -1)
    if ((o->re_add && (c == 'n' || c == 'f')) ||
        take_option (o, c, optarg) != TOOL_OK)
      return c == 'n' || c == 'f'
        ? tool_error ("%s is not an option of re-add (see raid5ctl re-add "
                      "--help)", c == 'n' ? "--new" : "--force")
        : TOOL_FAIL;
  if (o->job.slot < 0 && !o->re_add)
    return tool_error ("which slot? --slot K is needed (see raid5ctl "
                       "rebuild --help)");
  if (argc - optind < 2 || argc - optind > R5_MAX_MEMBERS)
    return tool_error ("%d disk%s given: give the array's members (all "
                       "but the slot's old one, at least)", argc - optind,
                       argc - optind == 1 ? "" : "s");
  for (o->job.n = 0; optind < argc; o->job.n++)
    o->job.disks[o->job.n] = argv[optind++];
  return TOOL_OK;
}

static int
open_array (const struct rebuild_opts *o, struct array **a)
{
  /* A rebuild is asked for a degraded array: start it without the slot's
   * member even where md would want --run (the others still count it).
   */
  struct array_config cfg = { .metadata = ARRAY_META_AUTO, .run = true };

  cfg.members = o->job.n < R5_MIN_MEMBERS ? R5_MIN_MEMBERS : o->job.n;
  /* The new member counts too. */
  return offline_open (&o->job, &cfg, &o->new_path, 1, a);
}

/* The slot out of service, or -1. */
static int
slot_out (struct array *a)
{
  for (unsigned s = 0; s < array_geom (a)->members; s++)
    if (array_member_state (a, s) != MEMBER_ACTIVE)
      return (int) s;
  return -1;
}

/* Is slot K the one to rebuild, and is --new right for its state? */
static int
check_slot (struct array *a, const struct rebuild_opts *o)
{
  unsigned k = (unsigned) o->job.slot, n = array_geom (a)->members;
  int out = slot_out (a);

  if (k >= n)
    return tool_error ("--slot %u: the array has slots 0 to %u", k, n - 1);
  if (out < 0)
    return tool_error ("slot %u (%s) is in service, as every slot is: "
                       "nothing to %s", k, array_member_path (a, k),
                       o->re_add ? "re-add" : "rebuild");
  if (out != (int) k)
    return tool_error ("slot %u (%s) is in service; slot %d is the one out "
                       "of service", k, array_member_path (a, k), out);
  if (array_member_state (a, k) == MEMBER_REBUILDING && o->new_path)
    return tool_error ("slot %u is partly rebuilt onto %s: leave out --new "
                       "to continue that rebuild", k,
                       array_member_path (a, k));
  if (array_member_state (a, k) != MEMBER_REBUILDING && !o->new_path &&
      !o->re_add)
    return tool_error ("slot %u has no member to rebuild onto: give --new "
                       "PATH (or, to continue an interrupted rebuild, its "
                       "member among the disks)", k);
  return TOOL_OK;
}

/* Start (or find) the rebuild of slot K; nothing is written on error. */
static int
start (struct array *a, const struct rebuild_opts *o)
{
  struct array_err err;
  int r;

  if (check_slot (a, o) != TOOL_OK)
    return TOOL_FAIL;
  if (o->new_path && array_rebuild_start (a, (unsigned) o->job.slot, o->new_path,
                                          o->job.force, &err) < 0)
    return tool_error ("%s", err.msg);
  if (o->re_add &&
      array_member_state (a, (unsigned) o->job.slot) != MEMBER_REBUILDING) {
    if ((r = array_readd_start (a, (unsigned) o->job.slot, NULL, &err)) < 0)
      return tool_error ("%s", err.msg);
    if (r == 1)
      printf ("re-add: slot %d (%s) left part-way through a rebuild onto "
              "it: it is rebuilt whole (as md does)\n", o->job.slot,
              array_member_path (a, (unsigned) o->job.slot));
  }
  offline_log_release ();
  return TOOL_OK;
}

static int
rebuild_or_readd (int argc, char **argv, bool re_add)
{
  struct rebuild_opts o = { .job.slot = -1, .re_add = re_add };
  struct array_job_status st = { .last_bb_stripes = 0 };
  struct array *a = NULL;
  char path[4096] = "";
  int r;

  offline_log_reset ();
  if (parse (argc, argv, &o) != TOOL_OK || open_array (&o, &a) != TOOL_OK)
    return TOOL_FAIL;
  if (o.job.slot < 0)             /* re-add: the slot out of service */
    o.job.slot = slot_out (a);
  if (o.job.slot < 0)
    r = tool_error ("every slot is in service: nothing to re-add");
  else if ((r = start (a, &o)) == TOOL_OK)
    r = offline_run (a, R5_JOB_REBUILD, o.job.max_kib);
  if (r == TOOL_OK) {
    snprintf (path, sizeof path, "%s", array_member_path (a, (unsigned) o.job.slot));
    array_job_status (a, &st);
  }
  array_close (a);
  if (r == TOOL_OK)
    printf ("%s: slot %d (%s) is active: the array has all its members\n",
            re_add ? "re-add" : "rebuild", o.job.slot, path);
  /* The job succeeded, so the exit status cannot say what was lost. */
  if (r == TOOL_OK && st.last_bb_stripes > 0)
    printf ("%s: %" PRIu64 " stripes not wholly rebuilt: rows another "
            "member lists bad could not be computed, so those bytes are "
            "lost (listed bad on the new member; the lines above name the "
            "array bytes)\n", re_add ? "re-add" : "rebuild",
            st.last_bb_stripes);
  return r;
}

int
rebuild_main (int argc, char **argv)
{
  return rebuild_or_readd (argc, argv, false);
}

int
readd_main (int argc, char **argv)
{
  return rebuild_or_readd (argc, argv, true);
}
