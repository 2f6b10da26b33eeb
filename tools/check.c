/* tools/check.c -- raid5ctl check / repair: offline scrub of an array's
 * members (nothing may be serving them: the members' locks say so).
 *
 * check counts parity mismatches exactly as md does (mismatch_cnt, in
 * 512-byte sectors, 8 per wrong 4 KiB unit) and, unlike md, says where:
 * stripe, array bytes, the parity member and its offset.  repair rewrites
 * the parity where it is wrong; data is never changed (parity cannot
 * tell which member is wrong, so md and this tool trust the data).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array/array.h"
#include "raid/number.h"
#include "tools/check.h"
#include "tools/disk.h"
#include "tools/json.h"
#include "tools/progress.h"
#include "tools/raid5ctl.h"

#define DEFAULT_LIST 20

struct check_opts {
  bool repair, json;
  bool files;                 /* --files */
  enum disk_cache_mode cache; /* --direct, --buffered, or by the members */
  uint64_t fs_off;            /* --fs-offset, or CHECK_FS_AUTO */
  const char *integrity;      /* --integrity FILE, or NULL */
  unsigned max_list;
  unsigned n;
  const char *disks[R5_MAX_MEMBERS];
};

/* Mismatches found, kept for the report (at most max_list of them). */
struct findings {
  const struct check_opts *o;
  struct progress prog;
  struct array_mismatch *list;
  unsigned n;
};

static void
usage (bool repair)
{
  const char *name = repair ? "repair" : "check";

  const char *files = repair ? "" : " [--files [--fs-offset SIZE]]";

  printf ("usage: raid5ctl %s [--json] [--list N] [--integrity FILE] "
          "[--direct|--buffered]%s\n"
          "                      DISK...\n"
          "       raid5ctl %s --control SOCKET [--wait [--json] [--list N]%s]"
          "\n\n", name, files, name, files);
  printf ("%s every stripe of an array whose members carry md superblocks "
          "(in any\norder; 'missing' is not allowed: a degraded array has "
          "no parity to check).\n", repair ? "Repair" : "Check");
  printf ("%s\n", repair
          ? "Wrong parity is rewritten from the data; data is never changed."
          : "Nothing is written.  The count is md's mismatch_cnt (512-byte\n"
            "sectors, 8 per wrong 4 KiB unit); each stripe found is listed.");
  printf ("\n  --json       the report as JSON\n"
          "  --list N     list at most N stripes (0 to %u; default %d)\n"
          "  --integrity FILE  the array's integrity record (integrity=FILE\n"
          "               of the plugin): every unit read is verified, the\n"
          "               member whose units fail is named%s\n%s%s"
          "  --direct     member I/O with O_DIRECT, past the page cache (as the\n"
          "               plugin's direct=true): what the disks give; the\n"
          "               default when every DISK is a block device\n"
          "  --buffered   member I/O through the page cache (the default for\n"
          "               image files)\n"
          "  -h, --help   this text\n"
          "The members must not be served while this runs.\n", CHECK_LIST_MAX,
          DEFAULT_LIST,
          repair ? ", and they are\n               rewritten from the other "
          "members before parity" : "",
          repair ? "" : "               (with --files, a unit the file "
          "system read fails is\n               rewritten from the others, as "
          "a served read would)\n",
          repair ? "" :
          "  --files      under each stripe listed, what the file system on the\n"
          "               array keeps in its wrong rows: files (path, inode,\n"
          "               bytes in the file), its own metadata, or free space\n"
          "               (ext2/3/4, read through the array)\n"
          "  --fs-offset SIZE  where the file system starts in the array\n"
          "               (default: where each partition of its partition\n"
          "               table starts, or 0 without one)\n");
  printf ("\nWith --control SOCKET, the server of the array (nbdkit raid5 "
          "...\ncontrol=SOCKET) runs the %s in the background while it "
          "serves; --wait\nfollows its progress and prints the same "
          "report (at most %d stripes)%s.\n", name, ARRAY_FOUND_MAX,
          repair ? "" : ";\n--files reads the file system through the "
          "server");
  printf ("\nExit status: 0%s; 1 on an error or a stopped job.\n",
          repair ? "" : "; 2 when wrong parity was found");
}

int
check_parse_fs_offset (const char *arg, uint64_t *fs_off)
{
  /* NBD sizes are signed 64-bit; above them is CHECK_FS_AUTO too. */
  if (r5_parse_size (arg, 1, 0, INT64_MAX, fs_off) < 0)
    return tool_error ("--fs-offset %s: not a size (bytes, or a number with "
                       "a suffix s, K, M, G, T, P or E)", arg);
  return TOOL_OK;
}

int
check_parse_list (const char *arg, unsigned *list)
{
  uint64_t n;

  if (tool_parse_uint ("--list", arg, 0, CHECK_LIST_MAX, &n) != TOOL_OK)
    return TOOL_FAIL;
  *list = (unsigned) n;
  return TOOL_OK;
}

static int
parse (int argc, char **argv, struct check_opts *o)
{
  static const struct option longopts[] = {
    { "help", no_argument, NULL, 'h' },
    { "json", no_argument, NULL, 'j' },
    { "list", required_argument, NULL, 'l' },
    { "files", no_argument, NULL, 'f' },
    { "fs-offset", required_argument, NULL, 'o' },
    { "integrity", required_argument, NULL, 'i' },
    { "direct", no_argument, NULL, 'd' },
    { "buffered", no_argument, NULL, 'B' },
    { NULL, 0, NULL, 0 },
  };
  int c;

  while ((c = tool_getopt (argc, argv, "h", longopts)) != -1) {
    switch (c) {
    case 'h': usage (o->repair); tool_tls_help (); exit (TOOL_OK);
    case 'j': o->json = true; break;
    case 'f': o->files = true; break;
    case 'd':
    case 'B':
      if (disk_cache_option (&o->cache, c) != TOOL_OK)
        return TOOL_FAIL;
      break;
    case 'i': o->integrity = optarg; break;
    case 'o':
      if (check_parse_fs_offset (optarg, &o->fs_off) != TOOL_OK)
        return TOOL_FAIL;
      break;
    case 'l':
      if (check_parse_list (optarg, &o->max_list) != TOOL_OK)
        return TOOL_FAIL;
      break;
    default: return TOOL_FAIL;
    }
  }
  if (o->files && o->repair)
    return tool_error ("--files: only with check (repair rewrites the "
                       "parity it would explain)");
  if (argc - optind < 3 || argc - optind > R5_MAX_MEMBERS)
    return tool_error ("%d disks given: an array has 3 to %u members",
                       argc - optind, R5_MAX_MEMBERS);
  for (o->n = 0; optind < argc; o->n++)
    o->disks[o->n] = argv[optind++];
  if (o->integrity && access (o->integrity, R_OK | W_OK) != 0)
    return tool_error ("--integrity %s: %m (a record is made by serving the "
                       "array with integrity=FILE)", o->integrity);
  return TOOL_OK;
}

static void
on_log (enum array_log_level level, const char *msg)
{
  if (level != ARRAY_LOG_DEBUG)
    fprintf (stderr, "raid5ctl %s: %s\n", tool_sub (), msg);
}

static void
on_mismatch (void *opaque, const struct array_mismatch *mm)
{
  struct findings *f = opaque;

  if (f->n < f->o->max_list)
    f->list[f->n++] = *mm;
}

/* Did the repair rewrite units from the others (an integrity record)? */
static bool
healed_any (const struct check_result *r)
{
  for (unsigned i = 0; i < r->n; i++)
    if (r->list[i].csum_healed > 0)
      return true;
  return false;
}

/* Did the checksums name the member of every stripe listed? */
static bool
named_all (const struct check_result *r)
{
  for (unsigned i = 0; i < r->n; i++)
    if (r->list[i].csum_member < 0)
      return false;
  return r->n > 0;
}

/* Stripes skipped or rows rewritten, and a dirty array: what follows. */
static void
report_skipped (const struct check_result *r)
{
  if (r->unread)
    printf ("%" PRIu64 " stripes not checked: a member could not read them "
            "(the log names each member and offset; raid5ctl repair "
            "rewrites them from the other members)\n", r->unread);
  if (r->rewritten)
    printf ("%" PRIu64 " sectors a member listed bad rewritten from the "
            "other members and cleared from its bad-block log\n",
            r->rewritten);
  if (r->listed)
    printf ("%" PRIu64 " stripes not wholly checked: bad blocks in their "
            "rows that could not be rewritten (raid5ctl examine --badblocks "
            "lists them)\n", r->listed);
  if (r->dirty && !r->repair && r->ppl)
    printf ("the array is dirty: it was not stopped cleanly; its partial "
            "parity log makes the stripes that were being written whole "
            "when it is served or repaired (no resync)\n");
  else if (r->dirty && !r->repair)
    printf ("the array is dirty: it was not stopped cleanly, so parity may "
            "be stale where writes were in flight; raid5ctl repair (or "
            "serving it) resyncs it\n");
  else if (r->dirty)
    printf ("the array was dirty (not stopped cleanly): this repair was its "
            "resync, and it is clean now\n");
}

static void
report_text (const struct check_result *r)
{
  printf ("%s: %" PRIu64 " stripes checked, %" PRIu64 " with wrong parity, "
          "mismatch_cnt %" PRIu64 "%s\n", r->repair ? "repair" : "check",
          check_stripes_checked (r), r->stripes_bad, r->mismatches,
          !r->repair || !r->stripes_bad ? ""
          : healed_any (r) ? " (the units that failed their checksum "
            "rewritten, parity elsewhere)" : " (parity rewritten)");
  if (r->files && r->n > 0) {
    check_files_text_head (r->files);
    printf ("%s", named_all (r)
            ? "  under each stripe, what its wrong rows hold (in the chunk "
              "of the member\n  its checksums name):\n"
            : "  under each stripe, what its wrong rows hold (in each data "
              "chunk:\n  parity cannot say which chunk of a row is "
              "wrong):\n");
  }
  for (unsigned i = 0; i < r->n; i++) {
    const struct array_mismatch *m = &r->list[i];

    printf ("  stripe %" PRIu64 ": array bytes [%" PRIu64 ", %" PRIu64 "), "
            "parity on member %u from offset %" PRIu64 ", %u x 4 KiB "
            "wrong\n", m->stripe, m->array_off, m->array_off + m->array_len,
            m->parity, m->member_off, m->units);
    if (m->csum_member >= 0)
      printf ("    member %d fails its checksum: %u x 4 KiB from member "
              "offset %" PRIu64 "%s\n", m->csum_member, m->csum_units,
              m->csum_off, m->csum_healed == m->csum_units
              ? ", rewritten from the other members"
              : m->csum_healed ? ", some rewritten from the other members"
              : r->repair ? ", not healable" : "");
    if (r->files)
      check_files_text (r->files, i);
  }
  if (r->stripes_bad > r->n)
    printf ("  ... and %" PRIu64 " more stripes%s\n", r->stripes_bad - r->n,
            r->more_listable ? " (--list N shows more)" : "");
  report_skipped (r);
}

/* What the integrity record says of a stripe: the member whose units
 * fail their checksum (null: none, or no record).
 */
static void
json_checksum (struct json *j, const struct array_mismatch *m)
{
  if (m->csum_member < 0) {
    tool_json_null (j, "checksum_member");
    return;
  }
  tool_json_u64 (j, "checksum_member", (uint64_t) m->csum_member);
  tool_json_u64 (j, "checksum_units", m->csum_units);
  tool_json_u64 (j, "checksum_offset", m->csum_off);
  tool_json_u64 (j, "checksum_healed", m->csum_healed);
}

static void
report_json (const struct check_result *r)
{
  struct json j;

  tool_json_init (&j, stdout);
  tool_json_open (&j, NULL, '{');
  tool_json_str (&j, "action", r->repair ? "repair" : "check");
  tool_json_u64 (&j, "stripes_checked", check_stripes_checked (r));
  tool_json_u64 (&j, "stripes_bad", r->stripes_bad);
  tool_json_u64 (&j, "mismatch_sectors", r->mismatches);
  tool_json_u64 (&j, "read_error_stripes", r->unread);
  tool_json_u64 (&j, "bad_block_stripes", r->listed);
  tool_json_u64 (&j, "bad_block_sectors_rewritten", r->rewritten);
  tool_json_bool (&j, "repaired", r->repair && r->stripes_bad > 0);
  tool_json_bool (&j, "dirty", r->dirty);
  if (r->files)
    check_files_json_head (r->files, &j);
  tool_json_open (&j, "mismatches", '[');
  for (unsigned i = 0; i < r->n; i++) {
    tool_json_open (&j, NULL, '{');
    tool_json_u64 (&j, "stripe", r->list[i].stripe);
    tool_json_u64 (&j, "array_offset", r->list[i].array_off);
    tool_json_u64 (&j, "array_length", r->list[i].array_len);
    tool_json_u64 (&j, "parity_member", r->list[i].parity);
    tool_json_u64 (&j, "member_offset", r->list[i].member_off);
    tool_json_u64 (&j, "last_member_offset", r->list[i].last_off);
    tool_json_u64 (&j, "units_4k", r->list[i].units);
    json_checksum (&j, &r->list[i]);
    if (r->files)
      check_files_json (r->files, i, &j);
    tool_json_close (&j, '}');
  }
  tool_json_close (&j, ']');
  tool_json_close (&j, '}');
  fputc ('\n', stdout);
}

void
check_report (const struct check_result *r, bool json)
{
  if (json)
    report_json (r);
  else
    report_text (r);
}

uint64_t
check_stripes_checked (const struct check_result *r)
{
  uint64_t skipped = r->unread + r->listed;

  return r->stripes > skipped ? r->stripes - skipped : 0;
}

int
check_status (const struct check_result *r)
{
  return !r->repair && r->stripes_bad ? 2 : r->unread ? TOOL_FAIL : TOOL_OK;
}

/* fsmap_src's read of an open array. */
static int
read_array (void *opaque, void *buf, uint64_t len, uint64_t off)
{
  struct array_err err;

  return array_read (opaque, buf, len, off, &err);
}

/* The disks into cfg: 'missing' refused (a degraded array has no
 * parity to check); O_DIRECT where they are block devices; TLS.
 */
static int
members_of (const struct check_opts *o, struct array_config *cfg)
{
  for (unsigned i = 0; i < o->n; i++) {
    if (strcmp (o->disks[i], "missing") == 0)
      return tool_error ("'missing' is not taken here: a degraded array "
                         "has no parity to %s", o->repair ? "repair"
                         : "check");
    cfg->paths[i] = o->disks[i];
  }
  cfg->direct = disk_use_direct (o->cache, cfg->paths, o->n);
  cfg->tls = *tool_tls ();
  return TOOL_OK;
}

static int
run (const struct check_opts *o)
{
  struct array_config cfg = { .members = o->n, .metadata = ARRAY_META_AUTO,
                              .integrity = o->integrity,
                              .read_only = !o->repair && !o->integrity };
  struct findings f = { .o = o };
  struct array_job_status res;
  struct check_result result = { .dirty = false };
  struct check_files files = { .n = 0 };
  struct array_err err;
  struct array *a;
  int r;

  if (members_of (o, &cfg) != TOOL_OK)
    return TOOL_FAIL;
  if (array_open (&cfg, on_log, &a, &err) < 0)
    return tool_error ("%s", err.msg);
  if (cfg.direct && o->cache == DISK_CACHE_AUTO)
    disk_say_direct ();
  f.list = calloc (o->max_list ? o->max_list : 1, sizeof *f.list);
  if (f.list == NULL) {
    array_close (a);
    return tool_error ("out of memory");
  }
  progress_init (&f.prog, tool_sub (), array_geom (a)->chunk);
  array_job_status (a, &res);
  result.dirty = res.resync_due;
  result.ppl = res.ppl;
  r = array_job_run (a, o->repair ? R5_JOB_REPAIR : R5_JOB_CHECK,
                     &(struct array_job_watch) {
                       .progress = progress_update, .found = on_mismatch,
                       .opaque = &f }, &err);
  array_job_status (a, &res);
  if (r == 0)
    progress_finish (&f.prog, "");
  if (r == 0 && o->files &&
      (r = check_files (array_geom (a), &(struct fsmap_src) {
                          read_array, a, array_geom (a)->capacity },
                        o->fs_off, f.list, f.n, &files)) < 0)
    snprintf (err.msg, sizeof err.msg, "--files: cannot read the array's "
              "partition table: %s", strerror (-r));
  array_close (a);
  result = (struct check_result) {
    .repair = o->repair, .stripes = res.total,
    .stripes_bad = res.last_stripes_bad, .mismatches = res.last_mismatches,
    .unread = res.last_unread_stripes, .listed = res.last_bb_stripes,
    .rewritten = res.last_bb_rewritten,
    .list = f.list, .n = f.n, .more_listable = true, .dirty = result.dirty,
    .ppl = result.ppl,
    .files = r == 0 && o->files ? &files : NULL,
  };
  if (r == 0)
    check_report (&result, o->json);
  check_files_free (&files);
  free (f.list);
  if (r < 0)
    return tool_error ("%s", err.msg);
  return check_status (&result);
}

static int
scrub_main (int argc, char **argv, bool repair)
{
  struct check_opts o = { .repair = repair, .max_list = DEFAULT_LIST,
                          .fs_off = CHECK_FS_AUTO };

  if (parse (argc, argv, &o) != TOOL_OK)
    return TOOL_FAIL;
  return run (&o);
}

int
check_main (int argc, char **argv)
{
  return scrub_main (argc, argv, false);
}

int
repair_main (int argc, char **argv)
{
  return scrub_main (argc, argv, true);
}
