/* tools/create.c -- raid5ctl create: make a new array on N >= 3 disks.
 *
 * Writes md v1.2 superblocks (and an internal bitmap) as mdadm --create
 * would, so that both the raid5 plugin and kernel md assemble the array,
 * then makes parity consistent by running the array's resync (unless
 * --assume-clean).  Every disk is opened, locked and checked before the
 * first byte is written: a refused create leaves every disk as it was.
 * A disk holding anything libblkid recognises (a file system, partition
 * table, swap, LVM, LUKS, an md superblock of any version: array/guard.h)
 * is refused without --force; with it, those signatures are zeroed first,
 * as wipefs -a would.
 *
 * Where this departs from mdadm, and why:
 *  - every slot is created active and the array dirty (resync_offset 0),
 *    then resynced here, instead of mdadm's degraded array + spare whose
 *    recovery the kernel runs; without --assume-clean the array is clean
 *    and consistent when create returns.  (A slot given as "missing" is
 *    created degraded and clean, as mdadm does: nothing to resync);
 *  - the bad-block log follows the bitmap's area as md sizes it (its
 *    bits rounded up); mdadm counts the bits rounded down, and where the
 *    two differ by a 4 KiB page its log would overlap the bitmap's last
 *    sector (create-md.c place_bblog);
 *  - the default name is the first disk's file name without its
 *    extension (mdadm uses the md device number, which we do not have);
 *  - the bitmap area after the last bit is zero (mdadm fills it with 1s;
 *    md ignores bits past the end);
 *  - a disk holding something is refused, not asked about: mdadm warns
 *    of ext2/3/4, reiserfs, md superblocks and partition tables (its own
 *    probes) and asks "Continue creating array?" (--run skips it), then
 *    leaves foreign signatures where they are.  Here libblkid looks for
 *    everything it knows, and --force wipes what it found, as wipefs -a
 *    does: a member must not still look like ext4 to blkid and udev.
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array/array.h"
#include "array/guard.h"
#include "io/member.h"
#include "raid/geom.h"
#include "raid/layout.h"
#include "raid/mdbitmap.h"
#include "raid/ppl.h"
#include "raid/mdsb.h"
#include "raid/number.h"
#include "tools/create.h"
#include "tools/disk.h"
#include "tools/progress.h"
#include "tools/raid5ctl.h"

#define BITMAP_AUTO_ABOVE (UINT64_C (100) << 30)   /* mdadm 4.2: > 100 GiB */

static void
usage (FILE *fp)
{
  fprintf (fp,
"usage: raid5ctl create [OPTIONS] DISK DISK DISK [DISK...]\n"
"\n"
"Make a new RAID-5 array of the disks (files or block devices), in slot\n"
"order, with md v1.2 superblocks as mdadm --create writes them, then make\n"
"parity consistent.  Serve it with `nbdkit raid5 disk=DISK ...`; kernel md\n"
"assembles it too.  Nothing is written unless every disk passes the checks.\n"
"\n"
"  --chunk SIZE         chunk size, a power of two from 4K to 64M (512K)\n"
"  --layout NAME        left-symmetric (ls, default), left-asymmetric (la),\n"
"                       right-symmetric (rs), right-asymmetric (ra),\n"
"                       parity-first or parity-last\n"
"  --name NAME          array name, stored as HOSTNAME:NAME (default: the\n"
"                       first disk's file name without its extension)\n"
"  --assume-clean       do not sync parity now (only for disks that are all\n"
"                       zero, or if you will never rely on the parity)\n"
"  --bitmap internal|none  write-intent bitmap (default: internal when each\n"
"                       member holds more than 100 GiB, as mdadm 4.2 does)\n"
"  --consistency-policy resync|bitmap|ppl\n"
"                       mdadm's names: after a crash, resync every stripe\n"
"                       (no bitmap), those the bitmap marks, or replay the\n"
"                       partial parity log (1 MiB after the superblock),\n"
"                       which also closes the write hole\n"
"  --data-offset SIZE   where data starts on each member, a multiple of 4K\n"
"                       (default: mdadm's rule for the first disk's size)\n"
"  --force              overwrite disks that hold a file system, partition\n"
"                       table, md superblock or any other signature that\n"
"                       libblkid knows (they are wiped)\n"
"  -h, --help           this text\n"
"\n"
"One DISK may be the word missing: the array is made degraded, without\n"
"that slot, as mdadm --create does (e.g. while the third disk still holds\n"
"the data to copy in); raid5ctl rebuild --slot K --new DISK adds it later.\n"
"\n"
"A bare number is KiB (as in mdadm); suffixes s (sectors), K, M, G, T.\n"
"Interrupting the parity sync is safe: the array stays marked as needing\n"
"one, and the raid5 plugin finishes it in the background when serving.\n");
}

static int
parse_chunk (struct create_opts *o, const char *arg)
{
  uint64_t c;

  if (r5_parse_size (arg, 1024, R5_MIN_CHUNK, R5_MAX_CHUNK, &c) < 0 ||
      (c & (c - 1)) != 0)
    return tool_error ("--chunk %s: must be a power of two from 4K to 64M",
                       arg);
  o->chunk = c;
  return 0;
}

static int
parse_bitmap (struct create_opts *o, const char *arg)
{
  if (strcmp (arg, "internal") == 0)
    o->bitmap = CREATE_BITMAP_INTERNAL;
  else if (strcmp (arg, "none") == 0)
    o->bitmap = CREATE_BITMAP_NONE;
  else
    return tool_error ("--bitmap %s: expected internal or none", arg);
  return 0;
}

static int
parse_policy (struct create_opts *o, const char *arg)
{
  static const char *const names[] = {
    [CREATE_POLICY_RESYNC] = "resync", [CREATE_POLICY_BITMAP] = "bitmap",
    [CREATE_POLICY_PPL] = "ppl",
  };

  for (int k = CREATE_POLICY_RESYNC; k <= CREATE_POLICY_PPL; k++)
    if (strcmp (arg, names[k]) == 0) {
      o->policy = (enum create_policy) k;
      return 0;
    }
  return tool_error ("--consistency-policy %s: expected resync, bitmap or "
                     "ppl", arg);
}

/* --consistency-policy and --bitmap must agree; the policy decides. */
static int
reconcile_policy (struct create_opts *o)
{
  enum create_bitmap want = o->policy == CREATE_POLICY_BITMAP
    ? CREATE_BITMAP_INTERNAL : CREATE_BITMAP_NONE;

  if (o->policy == CREATE_POLICY_AUTO)
    return 0;
  if (o->bitmap != CREATE_BITMAP_AUTO && o->bitmap != want)
    return tool_error ("--consistency-policy %s and --bitmap %s disagree%s",
                       o->policy == CREATE_POLICY_PPL ? "ppl"
                       : o->policy == CREATE_POLICY_BITMAP ? "bitmap"
                       : "resync",
                       o->bitmap == CREATE_BITMAP_INTERNAL ? "internal"
                                                           : "none",
                       o->policy == CREATE_POLICY_PPL
                       ? " (md keeps no bitmap with a partial parity log)"
                       : "");
  o->bitmap = want;
  return 0;
}

static int
parse_data_offset (struct create_opts *o, const char *arg)
{
  uint64_t d;

  if (r5_parse_size (arg, 1024, MD_SB_OFFSET + MD_SB_BLOCK,
                     UINT64_C (1) << 50, &d) < 0 || d % 4096 != 0)
    return tool_error ("--data-offset %s: must be a multiple of 4K from 8K "
                       "(the superblock ends there) to 1P", arg);
  o->data_offset = d;
  return 0;
}

static int
parse_name (struct create_opts *o, const char *arg)
{
  if (*arg == '\0' || strlen (arg) > 31)
    return tool_error ("--name '%s': must be 1 to 31 bytes", arg);
  /* "--name --assume-clean a b c" took the flag as the name. */
  if (arg[0] == '-')
    return tool_error ("--name '%s': a name does not start with '-' (an "
                       "option where the name was due?)", arg);
  o->name = arg;
  return 0;
}

static int
parse_option (struct create_opts *o, int c, const char *arg)
{
  switch (c) {
  case 'c': return parse_chunk (o, arg);
  case 'l':
    if (r5_layout_parse (arg, &o->layout) < 0)
      return tool_error ("--layout %s: expected " R5_LAYOUT_NAMES, arg);
    return 0;
  case 'n': return parse_name (o, arg);
  case 'a': o->assume_clean = true; return 0;
  case 'b': return parse_bitmap (o, arg);
  case 'p': return parse_policy (o, arg);
  case 'd': return parse_data_offset (o, arg);
  case 'f': o->force = true; return 0;
  default: return TOOL_FAIL;
  }
}

/* The slot given as "missing", at most one (mdadm: "RAID5 can only
 * support one missing device").
 */
static int
find_missing (struct create_opts *o)
{
  o->missing = -1;
  for (unsigned i = 0; i < o->n; i++) {
    if (strcmp (o->disks[i], "missing") != 0)
      continue;
    if (o->missing >= 0)
      return tool_error ("missing: given for slots %d and %u: RAID-5 "
                         "survives the loss of one member only",
                         o->missing, i);
    o->missing = (int) i;
  }
  return 0;
}

/* Returns 0 to go on, -1 when done (help printed: exit 0), or TOOL_FAIL. */
static int
parse_args (int argc, char **argv, struct create_opts *o)
{
  static const struct option longopts[] = {
    { "chunk", required_argument, NULL, 'c' },
    { "layout", required_argument, NULL, 'l' },
    { "name", required_argument, NULL, 'n' },
    { "assume-clean", no_argument, NULL, 'a' },
    { "bitmap", required_argument, NULL, 'b' },
    { "consistency-policy", required_argument, NULL, 'p' },
    { "data-offset", required_argument, NULL, 'd' },
    { "force", no_argument, NULL, 'f' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  int c;

  *o = (struct create_opts) { .chunk = 512 * 1024,
                              .layout = R5_LEFT_SYMMETRIC };
  while ((c = tool_getopt (argc, argv, "h", longopts)) != -1) {
    if (c == 'h') {
      usage (stdout);
      tool_tls_help ();
      return -1;
    }
    if (c == '?' || parse_option (o, c, optarg) != 0)
      return TOOL_FAIL;
  }
  if (reconcile_policy (o) != 0)
    return TOOL_FAIL;
  o->n = (unsigned) (argc - optind);
  o->disks = argv + optind;
  if (o->n < R5_MIN_MEMBERS)
    return tool_error ("needs at least %u disks, got %u (see raid5ctl "
                       "create --help)", R5_MIN_MEMBERS, o->n);
  if (o->n > R5_MAX_MEMBERS)
    return tool_error ("%u disks: at most %u are supported", o->n,
                       R5_MAX_MEMBERS);
  return find_missing (o);
}

/* Words for a disk that cannot be a member at all. */
static int
open_error (const char *path, int r)
{
  if (r == -EBUSY)
    return tool_error ("%s: in use: another process holds its lock (is it "
                       "being served?)", path);
  return tool_error ("%s: %s", path, disk_strerror (r));
}

static int
check_not_held (const char *path, const struct io_member *m)
{
  if (io_member_held (m) == -EBUSY)
    return tool_error ("%s: in use: something holds the device exclusively "
                       "(mounted, or part of an md or device-mapper "
                       "device?)", path);
  return 0;
}

static int
open_disks (struct create_plan *p)
{
  const struct create_opts *o = p->opts;
  int r;

  for (unsigned i = 0; i < o->n; i++) {
    struct io_member *m = &p->m[i];

    if (!create_has_disk (o, i))
      continue;
    if ((r = io_member_open_opts (m, o->disks[i], &(struct io_open_opts) {
                                    .tls = tool_tls () })) < 0)
      return open_error (o->disks[i], r);
    for (unsigned j = 0; j < i; j++)
      if (create_has_disk (o, j) && io_member_same (&p->m[j], m))
        return tool_error ("%s: given twice (as disk %u and disk %u)",
                           o->disks[i], j, i);
    if (check_not_held (o->disks[i], m) != 0)
      return TOOL_FAIL;
    if ((r = io_member_lock (m)) < 0)
      return open_error (o->disks[i], r);
  }
  return 0;
}

/* With --force, a signature inside the new data area is zeroed only if
 * the resync will make parity agree again; with --assume-clean it stays
 * until the array's own data overwrites it (zeroing it would change data
 * the parity is taken to cover).  blkid -p still calls the member a
 * linux_raid_member: it stops at the first RAID superblock it finds.
 */
static bool
may_wipe (const struct create_plan *p, const struct io_sig *s)
{
  return !p->opts->assume_clean || s->offset + s->len <= p->doff * 512 ||
    s->offset >= (p->doff + p->size) * 512;
}

static void
plan_wipes (struct create_plan *p, unsigned i, const struct io_sig_list *l)
{
  for (unsigned k = 0; k < l->n; k++)
    if (l->sig[k].len > 0 && may_wipe (p, &l->sig[k]))
      p->wipe[i][p->nwipe[i]++] = (struct create_wipe) {
        .offset = l->sig[k].offset, .len = l->sig[k].len };
}

/* A disk holding any signature libblkid knows (a file system, partition
 * table, swap, LVM, LUKS, an md superblock of any version) is refused
 * without --force; with it, the signatures are planned to be zeroed.
 */
static int
check_signatures (struct create_plan *p)
{
  const struct create_opts *o = p->opts;
  struct array_guard g = { .override = "--force", .force = o->force };
  struct array_err err;
  struct io_sig_list l;

  for (unsigned i = 0; i < o->n; i++) {
    if (!create_has_disk (o, i))
      continue;
    if (array_guard_probe (&p->m[i], o->disks[i], &g, &l, &err) < 0)
      return tool_error ("%s", err.msg);
    plan_wipes (p, i, &l);
  }
  return 0;
}

/* Data offset (sectors): given, or mdadm's rule for the first disk. */
static uint64_t
data_offset (const struct create_plan *p)
{
  const struct create_opts *o = p->opts;
  unsigned first = o->missing == 0;

  if (o->data_offset != 0)
    return o->data_offset / 512;
  return md_default_data_offset (p->m[first].size / 512,
                                 (uint32_t) (o->chunk / 512),
                                 o->policy == CREATE_POLICY_PPL);
}

static int
too_small (const struct create_plan *p, unsigned i, uint64_t need)
{
  char have[32], want[32], doff[32], chunk[32];

  return tool_error ("%s is too small: %s; with a data offset of %s and "
                     "%s chunks each member needs at least %s",
                     p->opts->disks[i],
                     tool_human (p->m[i].size, have, sizeof have),
                     tool_human (p->doff * 512, doff, sizeof doff),
                     tool_human (p->opts->chunk, chunk, sizeof chunk),
                     tool_human (need, want, sizeof want));
}

/* Each member gives the array the smallest one's room; say so when the
 * largest has more than 1% over it, as mdadm --create warns ("largest
 * drive exceeds size by more than 1%"): two disks of other sizes given
 * by mistake, perhaps.
 */
static void
warn_unused_room (const struct create_plan *p)
{
  uint64_t chunk = p->opts->chunk / 512;
  unsigned big = 0;
  char have[32], used[32];

  for (unsigned i = 1; i < p->opts->n; i++)
    if (p->m[i].size > p->m[big].size)
      big = i;
  /* Its room as the array would count it: whole chunks. */
  if ((p->m[big].size / 512 - p->doff) / chunk * chunk * 100 <=
      p->size * 101)
    return;
  fprintf (stderr, "raid5ctl create: note: %s (%s) is larger than the "
           "smallest member: each member gives the array only %s after "
           "the data offset, as mdadm (which warns the same)\n",
           p->opts->disks[big], tool_human (p->m[big].size, have, sizeof have),
           tool_human (p->size * 512, used, sizeof used));
}

/* Component size: the smallest member's room after the data offset, in
 * whole chunks (sectors), as mdadm computes it.
 */
static int
choose_size (struct create_plan *p)
{
  const struct create_opts *o = p->opts;
  uint64_t chunk = o->chunk / 512;
  uint64_t room = chunk > 10 ? chunk : 10;      /* md: data_size >= 10 */
  struct r5_geom_params gp;
  struct r5_geom g;
  char why[200];

  p->doff = data_offset (p);
  p->size = UINT64_MAX;
  for (unsigned i = 0; i < o->n; i++) {
    uint64_t sectors = p->m[i].size / 512;

    if (!create_has_disk (o, i))
      continue;
    if (sectors < p->doff + room)
      return too_small (p, i, (p->doff + room) * 512);
    if ((sectors - p->doff) / chunk * chunk < p->size)
      p->size = (sectors - p->doff) / chunk * chunk;
  }
  gp = (struct r5_geom_params) {
    .members = o->n, .chunk = o->chunk, .layout = o->layout,
    .data_offset = p->doff * 512, .member_bytes = (p->doff + p->size) * 512,
  };
  if (r5_geom_init (&g, &gp) < 0)
    return tool_error ("cannot make this array: %s",
                       r5_geom_explain (why, sizeof why, &gp));
  return 0;
}

/* The internal bitmap, sized as mdadm's add_internal_bitmap1: it sits
 * 8 sectors after the superblock and must end before the data.
 */
static int
choose_bitmap (struct create_plan *p)
{
  const struct create_opts *o = p->opts;
  uint64_t end, room;
  char doff[32];

  p->bitmap = o->bitmap == CREATE_BITMAP_INTERNAL ||
    (o->bitmap == CREATE_BITMAP_AUTO && p->size * 512 > BITMAP_AUTO_ABOVE);
  if (!p->bitmap)
    return 0;
  /* mdadm sizes the bitmap for the component size, not the member's. */
  room = md_bitmap_room (p->size);
  p->bm = (struct md_bitmap_sb) {
    .version = MD_BITMAP_VERSION, .sync_size = p->size,
    .chunksize = md_bitmap_default_chunk (p->size, room),
    .daemon_sleep = MD_BITMAP_DAEMON_SLEEP,
  };
  if (room * 512 <= MD_BITMAP_HEADER ||
      md_bitmap_bits (&p->bm) > (room * 512 - MD_BITMAP_HEADER) * 8)
    return tool_error ("--bitmap internal: md has no bitmap for %" PRIu64
                       " sectors per member (use --bitmap none)", p->size);
  p->bm_bytes = md_bitmap_area_bytes (&p->bm);
  end = CREATE_BITMAP_OFFSET + p->bm_bytes;
  if (end > p->doff * 512)
    return tool_error ("a data offset of %s leaves no room for the "
                       "internal bitmap (bytes %u to %" PRIu64 "): use "
                       "--bitmap none or a larger --data-offset",
                       tool_human (p->doff * 512, doff, sizeof doff),
                       CREATE_BITMAP_OFFSET, end);
  return 0;
}

/* The partial parity log area: where md accepts it (ppl_validate_rdev),
 * before the data.
 */
static int
choose_ppl (struct create_plan *p)
{
  char why[200], doff[32];

  p->ppl = p->opts->policy == CREATE_POLICY_PPL;
  if (p->ppl &&
      ppl_area_check (&(struct ppl_area) {
          PPL_OFFSET_V12, PPL_AREA_SECTORS, MD_SB_SECTOR, 1, p->doff,
          p->size }, why, sizeof why) < 0)
    return tool_error ("--consistency-policy ppl: a data offset of %s "
                       "leaves no room for the log (%s): use a larger "
                       "--data-offset", tool_human (p->doff * 512, doff,
                                                    sizeof doff), why);
  return 0;
}

/* Check every disk and work out what to write.  Returns 0 or TOOL_FAIL. */
static int
plan_create (struct create_plan *p)
{
  if (open_disks (p) != 0 || choose_size (p) != 0 ||
      check_signatures (p) != 0 || choose_bitmap (p) != 0 ||
      choose_ppl (p) != 0 || create_fill_sb (p) != 0)
    return TOOL_FAIL;
  warn_unused_room (p);       /* once nothing refuses it */
  return 0;
}

static void
close_disks (struct create_plan *p)
{
  for (unsigned i = 0; i < R5_MAX_MEMBERS; i++)
    io_member_close (&p->m[i]);
}

static void
log_array (enum array_log_level level, const char *msg)
{
  if (level == ARRAY_LOG_ERROR)
    tool_error ("%s", msg);
}

/* Open the new array from its superblocks and resync it, as the plugin
 * would in the background; closing it marks it clean.
 */
static int
sync_parity (struct create_plan *p, uint64_t *mismatches)
{
  /* The superblocks decide; the raw geometry must only be valid. */
  struct array_config cfg = { .members = p->opts->n,
                              .metadata = ARRAY_META_AUTO,
                              .chunk = p->opts->chunk,
                              .layout = p->opts->layout,
                              .data_offset = p->doff * 512 };
  struct array_job_status st;
  struct array_err err;
  struct progress prog;
  struct array *a;
  char note[80];
  int r;

  for (unsigned i = 0; i < p->opts->n; i++)
    cfg.paths[i] = p->opts->disks[i];
  cfg.tls = *tool_tls ();
  if (array_open (&cfg, log_array, &a, &err) < 0)
    return tool_error ("superblocks written, but the new array does not "
                       "open: %s", err.msg);
  progress_init (&prog, "resync", p->opts->chunk);
  r = array_job_run (a, R5_JOB_RESYNC, &(struct array_job_watch) {
                       .progress = progress_update, .opaque = &prog }, &err);
  array_job_status (a, &st);
  *mismatches = st.last_mismatches;
  snprintf (note, sizeof note, ", %" PRIu64 " mismatched sectors rewritten",
            st.last_mismatches);
  if (r == 0)
    progress_finish (&prog, note);
  array_close (a);
  if (r < 0)
    return tool_error ("resync failed: %s (the array stays marked as "
                       "needing one)", err.msg);
  return 0;
}

int
create_main (int argc, char **argv)
{
  struct create_opts o;
  struct create_plan *p;
  uint64_t mismatches = 0;
  int r;

  if ((r = parse_args (argc, argv, &o)) != 0)
    return r < 0 ? TOOL_OK : r;
  p = create_plan_new (&o);
  if (p == NULL)
    return tool_error ("out of memory");
  r = plan_create (p);
  if (r == 0)
    r = create_write (p);
  close_disks (p);
  if (r == 0 && !o.assume_clean && o.missing < 0)
    r = sync_parity (p, &mismatches);
  if (r == 0)
    create_summary (p, mismatches);
  create_plan_free (p);
  return r;
}
