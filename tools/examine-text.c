/* tools/examine-text.c -- raid5ctl examine as text: mdadm --examine's
 * lines and formats (mdadm 4.2 examine_super1), so that the two can be
 * compared line by line, then raid5ctl's own lines (bitmap, verdict).
 *
 * One departure: a faulty member's role reads "faulty" where mdadm says
 * "spare".
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tools/examine.h"

const char *
examine_level_name (int32_t level)
{
  switch (level) {
  case -5: return "faulty";
  case -4: return "multipath";
  case -1: return "linear";
  case 0: return "raid0";
  case 1: return "raid1";
  case 4: return "raid4";
  case 5: return "raid5";
  case 6: return "raid6";
  case 10: return "raid10";
  default: return "-unknown-";
  }
}

/* mdadm's r5layout and r6layout maps (RAID-6 adds 16..20). */
const char *
examine_layout_name (int32_t level, uint32_t layout)
{
  static const char *names[] = {
    "left-asymmetric", "right-asymmetric", "left-symmetric",
    "right-symmetric", "parity-first", "parity-last",
    [8] = "ddf-zero-restart", "ddf-N-restart", "ddf-N-continue",
    [16] = "left-asymmetric-6", "right-asymmetric-6", "left-symmetric-6",
    "right-symmetric-6", "parity-first-6",
  };

  if (layout >= sizeof names / sizeof names[0] || names[layout] == NULL ||
      (level == 5 && layout > 10))
    return "-unknown-";
  return names[layout];
}

const char *
examine_role_word (const struct md_sb *sb)
{
  unsigned role = md_sb_role (sb);

  if (role == MD_ROLE_SPARE)
    return "spare";
  if (role == MD_ROLE_FAULTY)
    return "faulty";
  if (role == MD_ROLE_JOURNAL)
    return "journal";
  if (sb->feature_map & MD_FEATURE_REPLACEMENT)
    return "replacement";
  return "active";
}

/* One character per slot: how many members claim it (mdadm). */
void
examine_array_state (const struct md_sb *sb, char *out, size_t len)
{
  size_t at = 0;

  for (uint32_t d = 0; d < sb->raid_disks && at + 1 < len; d++) {
    unsigned cnt = 0;

    for (uint32_t i = 0; i < sb->max_dev && i < MD_SB_MAX_DEV; i++)
      cnt += sb->dev_roles[i] == d;
    out[at++] = cnt == 2 && sb->level > 0 ? 'R' : cnt == 1 ? 'A'
      : cnt == 0 ? '.' : '?';
  }
  out[at] = '\0';
}

/* mdadm's getinfo_super1, for a superblock before the data (1.1, 1.2). */
bool
examine_unused_space (const struct exam *e, uint64_t *before, int64_t *after)
{
  const struct md_sb *sb = &e->sb;
  uint64_t earliest = sb->super_offset + 72, used, a;

  /* mdadm prints none while a reshape moves the data (NEW_OFFSET). */
  if (sb->data_offset < sb->super_offset ||
      (sb->feature_map & MD_FEATURE_NEW_OFFSET))
    return false;
  if (e->has_bitmap && e->bm_err == 0 && sb->bitmap_offset > 0 &&
      (uint64_t) sb->bitmap_offset + md_bitmap_area_bytes (&e->bm) / 512
      > earliest)             /* mdadm compares the relative offset */
    earliest = (uint64_t) sb->bitmap_offset
      + md_bitmap_area_bytes (&e->bm) / 512;
  else if ((sb->feature_map & MD_FEATURE_ANY_PPL) &&
           sb->ppl_offset > 0 &&
           (uint64_t) sb->ppl_offset + sb->ppl_size > earliest)
    earliest = (uint64_t) sb->ppl_offset + sb->ppl_size;  /* relative too */
  if (sb->bblog_offset != 0 && sb->bblog_size != 0 &&
      sb->super_offset + (uint64_t) (int64_t) sb->bblog_offset
      + sb->bblog_size > earliest)
    earliest = sb->super_offset + (uint64_t) (int64_t) sb->bblog_offset
      + sb->bblog_size;
  *before = earliest < sb->data_offset ? sb->data_offset - earliest : 0;
  used = sb->level <= 0 ? sb->data_size : sb->size;
  a = e->size / 512 - used - sb->data_offset;
  *after = (int64_t) a;
  return !(*before == 0 && a == 0) && a != 1;
}

/* mdadm's human_size(): " (x.yy MiB x.yy MB)" from 5000 KiB on. */
static const char *
human (uint64_t bytes, char *buf, size_t len)
{
  long long b = (long long) bytes, ci, cd;
  const char *bi = "TiB", *de = "TB";

  if (b < 5000 * 1024LL) {
    buf[0] = '\0';
    return buf;
  }
  if (b < 2LL << 30)
    ci = (b * 200 / (1LL << 20) + 1) / 2, cd = (b / 5000 + 1) / 2,
      bi = "MiB", de = "MB";
  else if (b < 2LL << 40)
    ci = (b * 200 / (1LL << 30) + 1) / 2, cd = (b / 5000000 + 1) / 2,
      bi = "GiB", de = "GB";
  else
    ci = (b * 200 / (1LL << 40) + 1) / 2, cd = (b / 5000000000LL + 1) / 2;
  snprintf (buf, len, " (%lld.%02lld %s %lld.%02lld %s)", ci / 100,
            ci % 100, bi, cd / 100, cd % 100, de);
  return buf;
}

static void
print_time (const char *key, uint64_t t)
{
  time_t secs = (time_t) (t & 0xffffffffffULL);
  char buf[64];

  printf ("%15s : %.24s\n", key, ctime_r (&secs, buf) ? buf : "?");
}

static void
print_name (const struct md_sb *sb)
{
  char host[256] = "";
  size_t l;

  printf ("           Name : %.32s", sb->set_name);
  if (gethostname (host, sizeof host - 1) == 0 && (l = strlen (host)) > 0 &&
      l < 32 && sb->set_name[l] == ':' && strncmp (sb->set_name, host, l) == 0)
    printf ("  (local to host %s)", host);
  printf ("\n");
}

/* Data disks per member for the array size: N-1 for RAID-5. */
static void
print_sizes (const struct exam *e)
{
  const struct md_sb *sb = &e->sb;
  uint64_t ddsks = 0, denom = 1;
  char h[64];

  printf (" Avail Dev Size : %" PRIu64 " sectors%s\n", sb->data_size,
          human (sb->data_size << 9, h, sizeof h));
  if (sb->level <= 0)
    return;
  if (sb->level == 1)
    ddsks = 1;
  else if (sb->level == 4 || sb->level == 5 || sb->level == 6)
    ddsks = sb->raid_disks - (sb->level == 6 ? 2 : 1);
  else if (sb->level == 10)
    ddsks = sb->raid_disks,
      denom = (sb->layout & 255) * ((sb->layout >> 8) & 255);
  if (ddsks && denom) {
    uint64_t asize = (sb->size << 9) * ddsks / denom;

    printf ("     Array Size : %" PRIu64 " KiB%s\n", asize >> 10,
            human (asize, h, sizeof h));
  }
  if (sb->size != sb->data_size)
    printf ("  Used Dev Size : %" PRIu64 " sectors%s\n", sb->size,
            human (sb->size << 9, h, sizeof h));
}

static void
print_offsets (const struct exam *e)
{
  const struct md_sb *sb = &e->sb;
  uint64_t before;
  int64_t after;

  if (sb->data_offset)
    printf ("    Data Offset : %" PRIu64 " sectors\n", sb->data_offset);
  if (sb->feature_map & MD_FEATURE_NEW_OFFSET)
    printf ("     New Offset : %" PRIu64 " sectors\n",
            sb->data_offset + (uint64_t) (int64_t) sb->new_offset);
  printf ("   Super Offset : %" PRIu64 " sectors\n", sb->super_offset);
  if (sb->feature_map & MD_FEATURE_RECOVERY_OFFSET)
    printf ("Recovery Offset : %" PRIu64 " sectors\n", sb->recovery_offset);
  if (!examine_unused_space (e, &before, &after))
    return;
  printf ("   Unused Space : before=%" PRIu64 " sectors, ", before);
  if (after >= 0)
    printf ("after=%" PRId64 " sectors\n", after);
  else
    printf ("after=-%" PRIu64 " sectors DEVICE TOO SMALL\n",
            UINT64_MAX - (uint64_t) after);
}

static void
print_uuid (const char *key, const uint8_t uuid[16])
{
  char buf[36];

  md_uuid_format (uuid, buf);
  printf ("%15s : %s\n", key, buf);
}

/* A reshape under way, as mdadm's examine_super1 says it: where it is
 * (array sectors already in the new shape, in KiB) and what changes.
 */
static void
print_reshape (const struct md_sb *sb)
{
  char h[64];

  if (!(sb->feature_map & MD_FEATURE_RESHAPE_ACTIVE))
    return;
  printf ("  Reshape pos'n : %" PRIu64 "%s\n", sb->reshape_position / 2,
          human (sb->reshape_position << 9, h, sizeof h));
  if (sb->delta_disks)
    printf ("  Delta Devices : %d (%d->%d)\n", (int) sb->delta_disks,
            (int) sb->raid_disks - (int) sb->delta_disks,
            (int) sb->raid_disks);
  if ((int32_t) sb->new_level != sb->level)
    printf ("      New Level : %s\n",
            examine_level_name ((int32_t) sb->new_level));
  if (sb->new_layout != sb->layout && (sb->level == 5 || sb->level == 6))
    printf ("     New Layout : %s\n",
            examine_layout_name (sb->level, sb->new_layout));
  if (sb->new_chunk != sb->chunksize)
    printf ("  New Chunksize : %" PRIu32 "K\n", sb->new_chunk / 2);
  printf ("\n");
}

static void
print_state (const struct exam *e)
{
  const struct md_sb *sb = &e->sb;
  uint64_t before;
  int64_t after = 0;

  examine_unused_space (e, &before, &after);
  printf ("          State : %s%s\n",
          sb->resync_offset == MD_MAX_SECTOR ? "clean" : "active",
          after < 0 ? " TRUNCATED DEVICE" : "");
  print_uuid ("Device UUID", sb->device_uuid);
  printf ("\n");
  if (sb->feature_map & MD_FEATURE_BITMAP_OFFSET)
    printf ("Internal Bitmap : %ld sectors from superblock\n",
            (long) sb->bitmap_offset);
  else if (sb->feature_map & MD_FEATURE_ANY_PPL)
    printf ("            PPL : %u sectors at offset %d sectors from "
            "superblock\n", sb->ppl_size, sb->ppl_offset);
  print_reshape (sb);
  print_time ("Update Time", sb->utime);
  if (sb->bblog_size && sb->bblog_offset)
    printf ("  Bad Block Log : %d entries available at offset %ld sectors%s"
            "\n", sb->bblog_size * 512 / 8, (long) sb->bblog_offset,
            sb->feature_map & MD_FEATURE_BAD_BLOCKS
            ? " - bad blocks present." : "");
}

static void
print_checksum (const struct exam *e)
{
  if (e->csum == e->csum_expected)
    printf ("       Checksum : %x - correct\n", e->csum);
  else
    printf ("       Checksum : %x - expected %x\n", e->csum,
            e->csum_expected);
  printf ("         Events : %" PRIu64 "\n\n", e->sb.events);
}

static void
print_geometry (const struct md_sb *sb)
{
  if (sb->level == 5 || sb->level == 6)
    printf ("         Layout : %s\n",
            examine_layout_name (sb->level, sb->layout));
  if (sb->level == 0 || sb->level == 4 || sb->level == 5 || sb->level == 6 ||
      sb->level == 10)
    printf ("     Chunk Size : %" PRIu32 "K\n", sb->chunksize / 2);
  else if (sb->level == -1)
    printf ("       Rounding : %" PRIu32 "K\n", sb->chunksize / 2);
  printf ("\n");
}

static void
print_role (const struct md_sb *sb)
{
  const char *word = examine_role_word (sb);
  char state[EXAMINE_STATE_MAX];

  printf ("   Device Role : ");
  if (strcmp (word, "active") == 0)
    printf ("Active device %u\n", md_sb_role (sb));
  else if (strcmp (word, "replacement") == 0)
    printf ("Replacement device %u\n", md_sb_role (sb));
  else
    printf ("%s\n", strcmp (word, "journal") == 0 ? "Journal" : word);
  examine_array_state (sb, state, sizeof state);
  printf ("   Array State : %s ('A' == active, '.' == missing, 'R' == "
          "replacing)\n", state);
}

/* raid5ctl's line on the bad-block log, when it lists bad blocks or
 * cannot be used.
 */
static void
print_bad_blocks (const struct exam *e)
{
  if (e->bb_err < 0)
    printf ("     Bad Blocks : unusable: %s\n", e->bb_why);
  else if (e->bb_ranges > 0)
    printf ("     Bad Blocks : %" PRIu64 " range%s, %" PRIu64 " sectors "
            "(raid5ctl examine --badblocks lists them)\n", e->bb_ranges,
            e->bb_ranges == 1 ? "" : "s", e->bb_sectors);
}

/* raid5ctl's own lines: the bitmap's contents, the bad blocks and the
 * verdict.
 */
static void
print_ours (const struct exam *e)
{
  if (e->has_bitmap && e->bm_err < 0)
    printf ("         Bitmap : unusable: %s\n", e->bm_why);
  else if (e->has_bitmap)
    printf ("         Bitmap : %" PRIu64 " bits of %" PRIu32 "K, %" PRIu64
            " set (%.1f%%), events %" PRIu64 "\n", e->bm_bits,
            e->bm.chunksize / 1024, e->bm_set,
            e->bm_bits ? 100.0 * (double) e->bm_set / (double) e->bm_bits
                       : 0.0, e->bm.events);
  print_bad_blocks (e);
  printf ("   raid5 plugin : %s\n", e->verdict);
}

void
examine_print_text (const struct exam *e)
{
  const struct md_sb *sb = &e->sb;

  printf ("%s:\n", e->path);
  if (e->err < 0)
    return;
  if (!e->has_sb && e->other) {
    printf ("   No md v1.2 superblock, but an md v%s superblock at byte %"
            PRIu64 "\n   raid5 plugin : no: it reads md v1.2 superblocks "
            "only\n\n", e->other, e->other_offset);
    return;
  }
  if (!e->has_sb) {
    printf ("   No md superblock (the 4 bytes at byte 4096 are %08x)\n\n",
            e->magic);
    return;
  }
  printf ("          Magic : %08x\n", e->magic);
  printf ("        Version : 1.%s\n", sb->super_offset <= 4 ? "1"
                                      : sb->super_offset <= 8 ? "2" : "0");
  printf ("    Feature Map : 0x%x\n", sb->feature_map);
  print_uuid ("Array UUID", sb->set_uuid);
  print_name (sb);
  print_time ("Creation Time", sb->ctime);
  printf ("     Raid Level : %s\n", examine_level_name (sb->level));
  printf ("   Raid Devices : %" PRIu32 "\n\n", sb->raid_disks);
  print_sizes (e);
  print_offsets (e);
  print_state (e);
  print_checksum (e);
  print_geometry (sb);
  print_role (sb);
  print_ours (e);
  printf ("\n");
}
