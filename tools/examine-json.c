/* tools/examine-json.c -- raid5ctl examine --json: one object per disk,
 * in an array, in the order given.
 *
 * Keys are stable; a key's name carries its unit (_sectors, _kib,
 * _bytes); times are seconds since the epoch; "none" is null (md's
 * MaxSector resync offset of a clean array is null, not 2^64-1).  A disk
 * without a v1.2 superblock has only "disk", "size_bytes", "error",
 * "superblock": false, "magic" (at byte 4096) and "other_superblock"
 * (an md superblock of another version: {"version", "offset_bytes"}).
 */
#include <config.h>

#include <stdio.h>

#include "tools/disk.h"
#include "tools/examine.h"
#include "tools/json.h"

static void
uuid (struct json *j, const char *key, const uint8_t u[16])
{
  char buf[36];

  md_uuid_format (u, buf);
  tool_json_str (j, key, buf);
}

/* mdadm's consistency policy (super1.c getinfo_super1), and the log. */
static void
json_policy (struct json *j, const struct md_sb *sb)
{
  bool ppl = sb->feature_map & MD_FEATURE_ANY_PPL;

  tool_json_str (j, "consistency_policy", ppl ? "ppl"
                 : sb->feature_map & MD_FEATURE_BITMAP_OFFSET ? "bitmap"
                 : "resync");
  if (!ppl) {
    tool_json_null (j, "ppl");
    return;
  }
  tool_json_open (j, "ppl", '{');
  tool_json_i64 (j, "offset_sectors", sb->ppl_offset);
  tool_json_u64 (j, "size_sectors", sb->ppl_size);
  tool_json_close (j, '{');
}

static void
json_bitmap (struct json *j, const struct exam *e)
{
  if (!e->has_bitmap) {
    tool_json_null (j, "bitmap");
    return;
  }
  tool_json_open (j, "bitmap", '{');
  tool_json_i64 (j, "offset_sectors", e->sb.bitmap_offset);
  tool_json_str (j, "error", e->bm_err < 0 ? e->bm_why : NULL);
  if (e->bm_err == 0) {
    tool_json_u64 (j, "chunk_bytes", e->bm.chunksize);
    tool_json_u64 (j, "events", e->bm.events);
    tool_json_u64 (j, "events_cleared", e->bm.events_cleared);
    tool_json_u64 (j, "sync_size_sectors", e->bm.sync_size);
    tool_json_u64 (j, "daemon_sleep", e->bm.daemon_sleep);
    tool_json_u64 (j, "bits", e->bm_bits);
    tool_json_u64 (j, "bits_set", e->bm_set);
  }
  tool_json_close (j, '{');
}

/* The bad-block log: where, and with feature 0x8 its words as stored
 * ("list", mdadm --examine-badblocks's order) and the table they make.
 */
static void
json_bad_blocks (struct json *j, const struct exam *e)
{
  const struct md_sb *sb = &e->sb;

  if (!e->has_bblog) {
    tool_json_null (j, "bad_blocks");
    return;
  }
  tool_json_open (j, "bad_blocks", '{');
  tool_json_i64 (j, "offset_sectors", sb->bblog_offset);
  tool_json_u64 (j, "size_sectors", sb->bblog_size);
  tool_json_u64 (j, "shift", sb->bblog_shift);
  tool_json_u64 (j, "entries_available", sb->bblog_size * 512u / 8);
  tool_json_bool (j, "present", sb->feature_map & MD_FEATURE_BAD_BLOCKS);
  tool_json_str (j, "error", e->bb_err < 0 ? e->bb_why : NULL);
  tool_json_u64 (j, "ranges", e->bb_ranges);
  tool_json_u64 (j, "sectors", e->bb_sectors);
  tool_json_open (j, "list", '[');
  for (unsigned i = 0; i < e->bb_words; i++) {
    tool_json_open (j, NULL, '{');
    tool_json_u64 (j, "sector", e->bb_list[i].sector);
    tool_json_u64 (j, "sectors", e->bb_list[i].sectors);
    tool_json_close (j, '{');
  }
  tool_json_close (j, '[');
  tool_json_close (j, '{');
}

static void
json_sizes (struct json *j, const struct exam *e)
{
  const struct md_sb *sb = &e->sb;
  uint64_t before;
  int64_t after;

  tool_json_u64 (j, "avail_dev_sectors", sb->data_size);
  tool_json_u64 (j, "used_dev_sectors", sb->size);
  if (sb->level == 5)
    tool_json_u64 (j, "array_size_kib", (sb->size << 9)
              * (sb->raid_disks > 0 ? sb->raid_disks - 1 : 0) >> 10);
  else
    tool_json_null (j, "array_size_kib");
  tool_json_u64 (j, "data_offset_sectors", sb->data_offset);
  tool_json_u64 (j, "super_offset_sectors", sb->super_offset);
  if (sb->feature_map & MD_FEATURE_RECOVERY_OFFSET)
    tool_json_u64 (j, "recovery_offset_sectors", sb->recovery_offset);
  else
    tool_json_null (j, "recovery_offset_sectors");
  if (examine_unused_space (e, &before, &after)) {
    tool_json_u64 (j, "unused_before_sectors", before);
    tool_json_i64 (j, "unused_after_sectors", after);
  }
  else {
    tool_json_null (j, "unused_before_sectors");
    tool_json_null (j, "unused_after_sectors");
  }
}

/* A reshape under way (null: none): mdadm's Reshape pos'n, Delta
 * Devices, New Offset and what else changes.
 */
static void
json_reshape (struct json *j, const struct md_sb *sb)
{
  if (!(sb->feature_map & MD_FEATURE_RESHAPE_ACTIVE)) {
    tool_json_null (j, "reshape");
    return;
  }
  tool_json_open (j, "reshape", '{');
  tool_json_u64 (j, "position_sectors", sb->reshape_position);
  tool_json_i64 (j, "delta_disks", sb->delta_disks);
  if (sb->feature_map & MD_FEATURE_NEW_OFFSET)
    tool_json_u64 (j, "new_data_offset_sectors",
                   sb->data_offset + (uint64_t) (int64_t) sb->new_offset);
  else
    tool_json_null (j, "new_data_offset_sectors");
  tool_json_i64 (j, "new_level", (int32_t) sb->new_level);
  tool_json_u64 (j, "new_layout", sb->new_layout);
  tool_json_u64 (j, "new_chunk_sectors", sb->new_chunk);
  tool_json_bool (j, "backwards",
                  sb->feature_map & MD_FEATURE_RESHAPE_BACKWARDS);
  tool_json_close (j, '{');
}

static void
json_state (struct json *j, const struct exam *e)
{
  const struct md_sb *sb = &e->sb;
  bool clean = sb->resync_offset == MD_MAX_SECTOR;

  tool_json_str (j, "state", clean ? "clean" : "active");
  if (clean)
    tool_json_null (j, "resync_offset_sectors");
  else
    tool_json_u64 (j, "resync_offset_sectors", sb->resync_offset);
  uuid (j, "device_uuid", sb->device_uuid);
  tool_json_u64 (j, "update_time", sb->utime & 0xffffffffffULL);
  json_bitmap (j, e);
  json_bad_blocks (j, e);
  json_policy (j, sb);
  tool_json_u64 (j, "checksum", e->csum);
  tool_json_u64 (j, "checksum_expected", e->csum_expected);
  tool_json_bool (j, "checksum_correct", e->csum == e->csum_expected);
  tool_json_u64 (j, "events", sb->events);
}

static void
json_role (struct json *j, const struct md_sb *sb)
{
  const char *word = examine_role_word (sb);
  bool slot = word[0] == 'a' || word[0] == 'r';     /* active, replacement */
  char state[EXAMINE_STATE_MAX];

  tool_json_str (j, "layout", sb->level == 5 || sb->level == 6
                         ? examine_layout_name (sb->level, sb->layout) : NULL);
  tool_json_u64 (j, "layout_number", sb->layout);
  tool_json_u64 (j, "chunk_kib", sb->chunksize / 2);
  tool_json_u64 (j, "dev_number", sb->dev_number);
  tool_json_str (j, "device_role", word);
  if (slot)
    tool_json_u64 (j, "slot", md_sb_role (sb));
  else
    tool_json_null (j, "slot");
  examine_array_state (sb, state, sizeof state);
  tool_json_str (j, "array_state", state);
}

static void
json_superblock (struct json *j, const struct exam *e)
{
  const struct md_sb *sb = &e->sb;

  tool_json_str (j, "version", sb->super_offset <= 4 ? "1.1"
                          : sb->super_offset <= 8 ? "1.2" : "1.0");
  tool_json_u64 (j, "major_version", e->major);
  tool_json_u64 (j, "feature_map", sb->feature_map);
  uuid (j, "array_uuid", sb->set_uuid);
  tool_json_str (j, "name", sb->set_name);
  tool_json_u64 (j, "creation_time", sb->ctime & 0xffffffffffULL);
  tool_json_i64 (j, "raid_level", sb->level);
  tool_json_str (j, "raid_level_name", examine_level_name (sb->level));
  tool_json_u64 (j, "raid_devices", sb->raid_disks);
  json_sizes (j, e);
  json_reshape (j, sb);
  json_state (j, e);
  json_role (j, sb);
  tool_json_bool (j, "servable", e->servable);
  tool_json_str (j, "verdict", e->verdict);
}

static void
json_disk (struct json *j, const struct exam *e)
{
  char magic[9], err[600];

  snprintf (err, sizeof err, "%s: %s", e->err_what ? e->err_what : "",
            e->err_why);
  tool_json_open (j, NULL, '{');
  tool_json_str (j, "disk", e->path);
  tool_json_u64 (j, "size_bytes", e->size);
  tool_json_str (j, "error", e->err < 0 ? err : NULL);
  tool_json_bool (j, "superblock", e->has_sb);
  snprintf (magic, sizeof magic, "%08x", e->magic);
  tool_json_str (j, "magic", e->err < 0 ? NULL : magic);
  if (e->other) {
    tool_json_open (j, "other_superblock", '{');
    tool_json_str (j, "version", e->other);
    tool_json_u64 (j, "offset_bytes", e->other_offset);
    tool_json_close (j, '{');
  }
  else
    tool_json_null (j, "other_superblock");
  if (e->has_sb)
    json_superblock (j, e);
  tool_json_close (j, '{');
}

void
examine_print_json (const struct exam *e, unsigned n)
{
  struct json j;

  tool_json_init (&j, stdout);
  tool_json_open (&j, NULL, '[');
  for (unsigned i = 0; i < n; i++)
    json_disk (&j, &e[i]);
  tool_json_close (&j, '[');
}
