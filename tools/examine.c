/* tools/examine.c -- raid5ctl examine: the md superblock of each disk, in
 * mdadm --examine's words (examine-text.c) or as JSON (examine-json.c),
 * plus whether the raid5 plugin can serve the disk and, if not, why.
 *
 * Read-only: disks are opened O_RDONLY and never locked, so a member in
 * service can be examined.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array/guard.h"
#include "raid/mdstate.h"
#include "tools/disk.h"
#include "tools/examine.h"
#include "tools/raid5ctl.h"

#define MAX_BITMAP_AREA (64u << 20)     /* md's own limit is far smaller */

static void
usage (FILE *fp)
{
  fprintf (fp,
"usage: raid5ctl examine [--json | --badblocks] DISK...\n"
"\n"
"Show the md v1.2 superblock of each disk (file or block device) in the\n"
"words of mdadm --examine, then whether the raid5 plugin can serve it and,\n"
"if not, why.  Nothing is written, so members in service can be examined.\n"
"\n"
"  --json       print a JSON array, one object per disk (stable keys,\n"
"               md's units in the key names, numbers as numbers; the\n"
"               bad-block list under \"bad_blocks\")\n"
"  --badblocks  list each disk's md bad-block log as mdadm\n"
"               --examine-badblocks does (sectors of the disk)\n"
"  -h, --help   this text\n"
"\n"
"Exit status: 0 if at least one disk holds an md superblock and every disk\n"
"could be read; 1 otherwise.\n");
}

enum shown { SHOW_TEXT, SHOW_JSON, SHOW_BADBLOCKS };

/* Returns 0 to go on, -1 when done (help printed: exit 0), or TOOL_FAIL. */
static int
parse_args (int argc, char **argv, enum shown *how)
{
  static const struct option longopts[] = {
    { "json", no_argument, NULL, 'j' },
    { "badblocks", no_argument, NULL, 'b' },
    { "examine-badblocks", no_argument, NULL, 'b' },   /* mdadm's name */
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  int c;

  *how = SHOW_TEXT;
  while ((c = tool_getopt (argc, argv, "h", longopts)) != -1) {
    if (c == 'h') {
      usage (stdout);
      tool_tls_help ();
      return -1;
    }
    if (c == '?')
      return TOOL_FAIL;
    if (*how != SHOW_TEXT)
      return tool_error ("--json and --badblocks go alone (see raid5ctl "
                         "examine --help)");
    *how = c == 'j' ? SHOW_JSON : SHOW_BADBLOCKS;
  }
  if (optind >= argc)
    return tool_error ("no disk given (see raid5ctl examine --help)");
  return 0;
}

/* Every field of the superblock, even one md_sb_decode() refuses, and
 * its frame (version, checksum) for mdadm's lines.
 */
static void
decode_for_display (struct exam *e, const uint8_t *block)
{
  struct md_sb_frame f;

  md_sb_peek (block, &e->sb, &f);
  e->major = f.major_version;
  e->csum = f.csum_stored;
  e->csum_expected = f.csum_computed;
}

static void
count_bits (struct exam *e, const uint8_t *area)
{
  e->bm_bits = md_bitmap_bits (&e->bm);
  e->bm_set = 0;
  for (uint64_t k = 0; k < e->bm_bits; k++)
    e->bm_set += (uint64_t) md_bitmap_test (area + MD_BITMAP_HEADER, k);
}

static int
bitmap_fail (struct exam *e, int err, const char *fmt, ...)
  __attribute__((format (printf, 3, 4)));

static int
bitmap_fail (struct exam *e, int err, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (e->bm_why, sizeof e->bm_why, fmt, ap);
  va_end (ap);
  return err;
}

/* The bitmap header at byte off, and the size of its area, checked as the
 * plugin checks it.  Returns 0 or -errno (e->bm_why says why).
 */
static int
load_header (struct exam *e, const struct io_member *d, uint64_t off,
             uint64_t *bytes)
{
  uint8_t *hdr = malloc (4096);
  int r;

  if (hdr == NULL)
    return bitmap_fail (e, -ENOMEM, "out of memory");
  r = io_member_pread (d, hdr, 4096, off);
  if (r < 0)
    bitmap_fail (e, r, "cannot read it at byte %" PRIu64 ": %s", off,
                 strerror (-r));
  else
    r = md_bitmap_decode (hdr, e->sb.set_uuid, &e->bm, e->bm_why,
                          sizeof e->bm_why);
  free (hdr);
  if (r < 0)
    return r;
  *bytes = md_bitmap_area_bytes (&e->bm);
  if (off + *bytes > e->sb.data_offset * 512 || *bytes > MAX_BITMAP_AREA)
    return bitmap_fail (e, -EBADMSG, "its %" PRIu64 " bytes at byte %"
                        PRIu64 " overlap the data", *bytes, off);
  if (e->bm.sync_size < e->sb.size)
    return bitmap_fail (e, -EBADMSG, "it covers %" PRIu64 " sectors of "
                        "each member, the array uses %" PRIu64,
                        e->bm.sync_size, e->sb.size);
  return 0;
}

/* Read the bitmap and count its set bits. */
static void
read_bitmap (struct exam *e, const struct io_member *d)
{
  int64_t sector = (int64_t) e->sb.super_offset + e->sb.bitmap_offset;
  uint64_t off = (uint64_t) sector * 512, bytes = 0;
  uint8_t *area;

  e->has_bitmap = true;
  if (sector <= 0) {
    e->bm_err = bitmap_fail (e, -EBADMSG, "bitmap offset %" PRId32
                             " points before the disk", e->sb.bitmap_offset);
    return;
  }
  if ((e->bm_err = load_header (e, d, off, &bytes)) < 0)
    return;
  if ((area = malloc (bytes)) == NULL)
    e->bm_err = bitmap_fail (e, -ENOMEM, "out of memory");
  else if ((e->bm_err = io_member_pread (d, area, bytes, off)) < 0)
    bitmap_fail (e, e->bm_err, "cannot read it at byte %" PRIu64 ": %s",
                 off, strerror (-e->bm_err));
  else
    count_bits (e, area);
  free (area);
}

static void
verdict (struct exam *e, bool ok, const char *fmt, ...)
  __attribute__((format (printf, 3, 4)));

static void
verdict (struct exam *e, bool ok, const char *fmt, ...)
{
  va_list ap;

  e->servable = ok;
  va_start (ap, fmt);
  vsnprintf (e->verdict, sizeof e->verdict, fmt, ap);
  va_end (ap);
}

/* A superblock the plugin cannot use at all: why, in e->verdict. */
static void
judge_alone (struct exam *e, const uint8_t *block)
{
  char why[200];

  e->valid = false;
  if (md_sb_decode (block, e->size / 512, &e->sb, why, sizeof why) < 0)
    return verdict (e, false, "no: %s", why);
  if (e->has_bitmap && e->bm_err < 0)
    return verdict (e, false, "no: md bitmap: %s", e->bm_why);
  if (e->bb_err < 0)
    return verdict (e, false, "no: %s", e->bb_why);
  e->valid = true;
}

/* The verdict on a replacement (device i): the plugin takes one, that
 * of the lowest slot being replaced (array/assemble.c), and starts its
 * copy over after an unclean stop.
 */
static void
judge_replacement (struct exam *e, const struct md_assembly *as, unsigned i)
{
  const struct md_verdict *v = &as->dev[i];
  char at[64];

  for (int s = 0; s < v->slot; s++)
    if (as->repl[s] >= 0)
      return verdict (e, false, "not now: the replacement of slot %d, "
                      "while slot %d's replace goes on (one at a time)",
                      v->slot, s);
  if (as->dirty)
    snprintf (at, sizeof at, "the array was not stopped cleanly: the copy "
              "starts over");
  else if (v->recovery_offset == MD_MAX_SECTOR)
    snprintf (at, sizeof at, "copied whole: it takes the slot");
  else
    snprintf (at, sizeof at, "copied below sector %" PRIu64 ": the copy "
              "goes on", v->recovery_offset);
  verdict (e, true, "yes, as the replacement of slot %d of %u (%s)",
           v->slot, as->raid_disks, at);
}

/* The verdict on one member of an assembly of the disks of its array. */
static void
judge_in (struct exam *e, const struct md_assembly *as,
          const struct md_found *f, unsigned i)
{
  const struct md_verdict *v = &as->dev[i];
  char why[300];

  md_fate_explain (as, f, i, why, sizeof why);
  if (v->fate == MD_FATE_RECOVERING)
    return verdict (e, true, "yes, as slot %d of %u, partly rebuilt "
                    "(recovery offset %" PRIu64 "): the rebuild resumes",
                    v->slot, as->raid_disks, v->recovery_offset);
  if (v->fate == MD_FATE_REPLACEMENT)
    return judge_replacement (e, as, i);
  if (v->fate != MD_FATE_IN_SYNC)
    return verdict (e, false, "not this member: it %s", why);
  if (e->sb.resync_offset != MD_MAX_SECTOR &&
      (e->sb.feature_map & MD_FEATURE_ANY_PPL))
    return verdict (e, true, "yes, as slot %d of %u (not stopped cleanly: "
                    "the partial parity logs are replayed at start, no "
                    "resync)", v->slot, as->raid_disks);
  if (e->sb.resync_offset != MD_MAX_SECTOR)
    return verdict (e, true, "yes, as slot %d of %u (parity needs a resync "
                    "from sector %" PRIu64 ", which the plugin runs in the "
                    "background)", v->slot, as->raid_disks,
                    e->sb.resync_offset);
  verdict (e, true, "yes, as slot %d of %u (clean)", v->slot,
           as->raid_disks);
}

static void judge_array (struct exam *ex, unsigned n, unsigned first);

/* The assembly of ex[idx[0..k)] refused the device it names as foreign
 * (a geometry of its own: an older copy, from before a grow, say): its
 * verdict, then the others judged again without it.
 */
static void
foreign (struct exam *ex, unsigned n, unsigned first, const unsigned *idx,
         unsigned k, const struct md_assembly *as)
{
  struct exam *e = &ex[idx[as->refusal_dev]];
  uint64_t fresh = as->freshest >= 0 ? ex[idx[as->freshest]].sb.events : 0;

  if (e->sb.events < fresh)
    verdict (e, false, "no: it disagrees with the other members' "
             "superblocks on the array's geometry, and is older (events %"
             PRIu64 ", the others' %" PRIu64 "): a copy from before the "
             "array changed (a grow?)", e->sb.events, fresh);
  else
    verdict (e, false, "no: it disagrees with the other members' "
             "superblocks on the array's geometry");
  for (unsigned j = 0; j < k; j++)
    if (idx[j] != idx[as->refusal_dev])
      ex[idx[j]].judged = false;
  for (unsigned i = first; i < n; i++)
    if (ex[i].valid && !ex[i].judged &&
        memcmp (ex[i].sb.set_uuid, ex[first].sb.set_uuid, 16) == 0) {
      judge_array (ex, n, i);
      return;
    }
}

/* The disks given that belong to the array of ex[first] and decode,
 * judged together by md's rules (raid/mdstate.h) as the plugin's
 * assembly would judge them; a member examined alone is judged alone.
 */
static void
judge_array (struct exam *ex, unsigned n, unsigned first)
{
  struct md_found *f = calloc (R5_MAX_MEMBERS, sizeof *f);
  struct md_asm_opts o = { .run = true };
  unsigned idx[R5_MAX_MEMBERS], k = 0;
  struct md_assembly as;

  if (f == NULL)
    return;
  for (unsigned i = first; i < n && k < R5_MAX_MEMBERS; i++)
    if (ex[i].valid && !ex[i].judged &&
        memcmp (ex[i].sb.set_uuid, ex[first].sb.set_uuid, 16) == 0) {
      f[k] = (struct md_found) { true, true, ex[i].sb };
      idx[k++] = i;
      ex[i].judged = true;
    }
  if (md_assemble (f, k, &o, &as) < 0 && as.refusal == MD_START_FOREIGN) {
    foreign (ex, n, first, idx, k, &as);
    free (f);
    return;
  }
  if (as.freshest < 0)     /* only replacements (or spares) given */
    for (unsigned j = 0; j < k; j++)
      verdict (&ex[idx[j]], false, "not alone: %s",
               ex[idx[j]].sb.feature_map & MD_FEATURE_REPLACEMENT
               ? "it is a replacement, which the "
               "plugin takes only with the members of its array (give "
               "them too)" : "no member of its array in service is among "
               "the disks given");
  else {
    if (ex[idx[as.freshest]].has_bitmap)
      md_asm_bitmap (&as, f, k, ex[idx[as.freshest]].bm.events_cleared);
    for (unsigned j = 0; j < k; j++)
      judge_in (&ex[idx[j]], &as, f, j);
  }
  free (f);
}

/* No v1.2 superblock: is there one of a version we do not read? */
static void
find_other_version (struct exam *e, const struct io_member *d)
{
  struct io_sig_list l;
  int r = io_member_signatures (d, &l);

  if (r < 0 && r != -E2BIG) {
    e->err = r, e->err_what = "cannot read it";
    return;
  }
  for (unsigned k = 0; k < l.n && e->other == NULL; k++)
    if (array_sig_is_md (&l.sig[k])) {
      snprintf (e->other_version, sizeof e->other_version, "%s",
                l.sig[k].version);
      e->other = e->other_version;
      e->other_offset = l.sig[k].offset;
    }
}

static void
examine_one (struct exam *e, const char *path, uint8_t *block)
{
  struct md_sb_frame fr;
  struct io_member d;
  int r;

  memset (e, 0, sizeof *e);
  e->path = path;
  if ((r = disk_open_ro (&d, path)) < 0) {
    e->err = r, e->err_what = "cannot open";
    snprintf (e->err_why, sizeof e->err_why, "%s", disk_strerror (r));
    return;
  }
  e->size = d.size;
  if ((r = disk_read_sb (&d, block)) < 0) {
    e->err = r, e->err_what = "cannot read its superblock";
    snprintf (e->err_why, sizeof e->err_why, "%s", disk_strerror (r));
  }
  e->has_sb = r == 1;
  md_sb_peek (block, &e->sb, &fr);
  e->magic = fr.magic;
  if (r == 0)
    find_other_version (e, &d);
  if (e->has_sb) {
    decode_for_display (e, block);
    if (e->sb.feature_map & MD_FEATURE_BITMAP_OFFSET)
      read_bitmap (e, &d);
    examine_read_bblog (e, &d);
    judge_alone (e, block);
  }
  io_member_close (&d);
}

/* A log mdadm would list but that could not be read: say why. */
static bool
unread_bblog (const struct exam *e)
{
  if (!e->has_bblog || !(e->sb.feature_map & MD_FEATURE_BAD_BLOCKS) ||
      e->bb_list != NULL)
    return false;
  tool_error ("%s: bad-block log: %s", e->path, e->bb_why);
  return true;
}

int
examine_main (int argc, char **argv)
{
  struct exam *ex;
  uint8_t *block;
  unsigned n, found = 0, failed = 0;
  enum shown how;
  int r;

  if ((r = parse_args (argc, argv, &how)) != 0)
    return r < 0 ? TOOL_OK : r;
  n = (unsigned) (argc - optind);
  ex = calloc (n, sizeof *ex);
  block = malloc (MD_SB_BLOCK);
  if (ex == NULL || block == NULL) {
    free (ex);
    free (block);
    return tool_error ("out of memory");
  }
  for (unsigned i = 0; i < n; i++) {
    examine_one (&ex[i], argv[optind + i], block);
    found += ex[i].has_sb;
    failed += ex[i].err < 0;
  }
  for (unsigned i = 0; i < n; i++)
    if (ex[i].valid && !ex[i].judged)
      judge_array (ex, n, i);
  if (how == SHOW_JSON)
    examine_print_json (ex, n);
  else
    for (unsigned i = 0; i < n; i++)
      if (how == SHOW_TEXT)
        examine_print_text (&ex[i]);
      else if (ex[i].has_sb)
        examine_print_badblocks (&ex[i]);
  for (unsigned i = 0; i < n; i++)
    if (ex[i].err < 0)
      tool_error ("%s: %s: %s", ex[i].path, ex[i].err_what,
                  ex[i].err_why);
  if (found == 0 && failed == 0 && n == 1 && ex[0].other)
    tool_error ("no md v1.2 superblock on %s (it has an md v%s superblock, "
                "which raid5ctl does not read)", argv[optind], ex[0].other);
  else if (found == 0 && failed == 0)
    tool_error ("no md v1.2 superblock on %s", n == 1 ? argv[optind]
                                                    : "any of the disks");
  for (unsigned i = 0; i < n; i++) {
    if (how == SHOW_BADBLOCKS && unread_bblog (&ex[i]))
      failed++;
    free (ex[i].bb_list);
  }
  free (ex);
  free (block);
  return found > 0 && failed == 0 ? TOOL_OK : TOOL_FAIL;
}
