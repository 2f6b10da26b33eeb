/* tools/create-md.c -- raid5ctl create: the md v1.2 superblocks (with
 * the bad-block log's place) and bitmap of a new array, as mdadm's
 * init_super1/write_init_super1 and add_internal_bitmap1/write_bitmap1
 * make them (see create.h; departures from mdadm are listed in create.c).
 * The log's area is left as it was, as mdadm leaves it: md reads it only
 * once a member's superblock says it holds entries.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "raid/badblocks.h"
#include "raid/layout.h"
#include "raid/mdstate.h"
#include "raid/ppl.h"
#include "tools/create.h"
#include "tools/raid5ctl.h"

struct create_plan *
create_plan_new (const struct create_opts *o)
{
  struct create_plan *p = calloc (1, sizeof *p);

  if (p == NULL)
    return NULL;
  p->opts = o;
  for (unsigned i = 0; i < R5_MAX_MEMBERS; i++)
    io_member_init (&p->m[i]);
  if (posix_memalign (&p->block, 4096, MD_SB_BLOCK) != 0) {
    free (p);
    return NULL;
  }
  return p;
}

void
create_plan_free (struct create_plan *p)
{
  if (p == NULL)
    return;
  free (p->block);
  free (p);
}

static int
random_bytes (void *buf, size_t len)
{
  size_t done = 0;

  while (done < len) {
    ssize_t n = getrandom ((char *) buf + done, len - done, 0);

    if (n == -1 && errno == EINTR)
      continue;
    if (n == -1)
      return -errno;
    done += (size_t) n;
  }
  return 0;
}

/* The first disk's file name without its extension ("disk0" for
 * /srv/disk0.img, "sdb" for /dev/sdb), at most 31 bytes.
 */
static void
default_name (const char *path, char *out, size_t len)
{
  char *copy = strdup (path), *base, *dot;

  base = copy ? basename (copy) : NULL;
  if (base == NULL || *base == '\0' || strcmp (base, "/") == 0)
    base = (char *) "0";
  if ((dot = strrchr (base, '.')) != NULL && dot != base)
    *dot = '\0';
  snprintf (out, len, "%.31s", base);
  free (copy);
}

/* "HOSTNAME:NAME" when it fits md's 32 bytes and NAME has no ':', else
 * NAME alone (mdadm's init_super1).
 */
static void
set_name (const struct create_opts *o, char out[33])
{
  char host[256] = "", name[32], full[300];

  if (o->name)
    snprintf (name, sizeof name, "%s", o->name);
  else
    default_name (o->disks[o->missing == 0], name, sizeof name);
  if (gethostname (host, sizeof host - 1) != 0)
    host[0] = '\0';
  if (host[0] != '\0' && strchr (name, ':') == NULL &&
      strlen (host) + 1 + strlen (name) < 32)
    snprintf (full, sizeof full, "%s:%s", host, name);
  else
    snprintf (full, sizeof full, "%s", name);
  snprintf (out, 33, "%.32s", full);
}

/* mdadm: a superblock of 256 + 2 * devices bytes rounded up to 512, so
 * 128 roles for up to 128 devices.
 */
static uint32_t
max_dev (unsigned devices)
{
  uint32_t bytes = (256 + 2 * devices + 511) / 512 * 512;

  return (bytes - 256) / 2;
}

/* The bad-block log where mdadm's write_init_super1 puts it: after the
 * bitmap's area, the PPL's, or else the room choose_bm_space keeps for a
 * bitmap (of the component size), if 8 sectors fit there before the data.
 * mdadm sizes a bitmap's area from its bits rounded down (calc_bitmap_size)
 * where md and this file round up (md_bitmap_area_bytes); the two differ
 * only where mdadm's log would overlap the bitmap's last sector, so the
 * log follows the area as written here.
 */
static void
place_bblog (struct create_plan *p)
{
  uint64_t room = p->bitmap ? p->bm_bytes / 512
    : p->ppl ? PPL_AREA_SECTORS : md_bitmap_room (p->size);
  int64_t at = p->ppl ? PPL_OFFSET_V12 : CREATE_BITMAP_SECTORS;

  md_bblog_place (&p->sb, at, room);
  /* mdadm's second place, the 8 sectors before the data, is on the
   * bitmap's or the log's area when they fill the room before the data:
   * no bad-block log then (where mdadm would write one over the other).
   */
  if ((p->bitmap || p->ppl) && p->sb.bblog_size > 0 &&
      p->sb.bblog_offset < at + (int64_t) room)
    p->sb.bblog_offset = 0, p->sb.bblog_size = 0;
}

int
create_fill_sb (struct create_plan *p)
{
  const struct create_opts *o = p->opts;
  struct md_sb *sb = &p->sb;
  int r;

  memset (sb, 0, sizeof *sb);
  if ((r = random_bytes (sb->set_uuid, 16)) < 0 ||
      (r = random_bytes (p->dev_uuid, 16 * (size_t) o->n)) < 0)
    return tool_error ("cannot make UUIDs: getrandom: %s", strerror (-r));
  set_name (o, sb->set_name);
  sb->ctime = sb->utime = (uint64_t) time (NULL);
  sb->level = 5;
  sb->layout = o->layout;
  sb->size = p->size;
  sb->chunksize = (uint32_t) (o->chunk / 512);
  sb->raid_disks = o->n;
  sb->data_offset = p->doff;
  sb->super_offset = MD_SB_SECTOR;
  sb->events = 0;                 /* mdadm's write_init_super1 */
  /* Degraded, there is nothing to resync, and md would not start a
   * dirty degraded array: mdadm makes it clean.
   */
  sb->resync_offset = o->assume_clean || o->missing >= 0 ? MD_MAX_SECTOR
                                                          : 0;
  sb->max_dev = max_dev (o->n);
  for (unsigned i = 0; i < MD_SB_MAX_DEV; i++)
    sb->dev_roles[i] = i < o->n ? (uint16_t) i : MD_ROLE_SPARE;
  if (p->bitmap) {
    sb->feature_map |= MD_FEATURE_BITMAP_OFFSET;
    sb->bitmap_offset = CREATE_BITMAP_SECTORS;
    memcpy (p->bm.uuid, sb->set_uuid, 16);
    p->bm.events = sb->events;
  }
  if (p->ppl) {               /* mdadm: the single-log flag; md switches */
    sb->feature_map |= MD_FEATURE_PPL;
    sb->ppl_offset = PPL_OFFSET_V12;
    sb->ppl_size = PPL_AREA_SECTORS;
  }
  place_bblog (p);
  return 0;
}

/* Header, then every bit set (all of the array needs a resync until the
 * first one) -- none when degraded, as mdadm writes it (md could not
 * clear them while degraded) -- then zeros to the 4 KiB boundary.
 */
static uint8_t *
bitmap_area (const struct create_plan *p)
{
  uint64_t bits = md_bitmap_bits (&p->bm);
  uint8_t *area;

  if (posix_memalign ((void **) &area, 4096, p->bm_bytes) != 0)
    return NULL;
  memset (area, 0, p->bm_bytes);
  md_bitmap_encode (&p->bm, area);
  for (uint64_t k = 0; p->opts->missing < 0 && k < bits; k++)
    md_bitmap_set (area + MD_BITMAP_HEADER, k);
  return area;
}

static int
write_at (const struct create_plan *p, unsigned i, const void *buf,
          size_t len, uint64_t off)
{
  const struct io_member *m = &p->m[i];
  int r = io_member_pwrite (m, buf, len, off);

  if (r == 0)
    r = io_member_sync (m);
  if (r < 0)
    return tool_error ("%s: write at %" PRIu64 ": %s (the disks may now "
                       "hold part of an array: create it again)",
                       p->opts->disks[i], off, strerror (-r));
  return 0;
}

/* Member i's superblock as the state model writes one for a new array
 * whose every slot is in sync but the missing one (raid/mdstate.h): slot
 * i, device number i (mdadm numbers them in slot order, "missing" too),
 * roles filled as md's super_1_sync fills them.
 */
static int
encode_member (struct create_plan *p, unsigned i)
{
  struct md_live *live = calloc (1, sizeof *live);
  struct md_sb *sb = malloc (sizeof *sb);

  if (live == NULL || sb == NULL) {
    free (live);
    free (sb);
    return tool_error ("out of memory");
  }
  live->common = p->sb;
  live->dirty = false;
  live->resync_cp = p->sb.resync_offset;
  for (unsigned k = 0; k < p->opts->n; k++) {
    if (!create_has_disk (p->opts, k)) {
      live->slot[k] = (struct md_live_slot) { .state = MD_SLOT_ABSENT };
      continue;
    }
    live->slot[k] = (struct md_live_slot) {
      .state = MD_SLOT_IN_SYNC, .dev_number = k,
      .data_size = p->m[k].size / 512 - p->doff,
    };
    memcpy (live->slot[k].device_uuid, p->dev_uuid[k], 16);
  }
  md_live_sb (live, i, sb);
  md_sb_encode (sb, p->block);
  free (sb);
  free (live);
  return 0;
}

_Static_assert (IO_SIG_MAGIC_MAX <= MD_SB_BLOCK, "a magic fits p->block");

/* Zero the magic of every old signature planned (with --force). */
static int
wipe_old (struct create_plan *p)
{
  int r = 0;

  memset (p->block, 0, MD_SB_BLOCK);
  for (unsigned i = 0; i < p->opts->n && r == 0; i++)
    for (unsigned k = 0; k < p->nwipe[i] && r == 0; k++)
      r = write_at (p, i, p->block, p->wipe[i][k].len, p->wipe[i][k].offset);
  return r;
}

/* The log area as mdadm's write_init_ppl1 leaves it: zeroes, and at its
 * start an empty header (generation 0, no entries).
 */
static uint8_t *
ppl_area (const struct create_plan *p)
{
  uint8_t *area;

  if (posix_memalign ((void **) &area, 4096, PPL_AREA_SECTORS * 512) != 0)
    return NULL;
  memset (area, 0, PPL_AREA_SECTORS * 512);
  ppl_header_encode (&(struct ppl_header) {
      .signature = ppl_signature (p->sb.set_uuid) }, area);
  return area;
}

int
create_write (struct create_plan *p)
{
  uint8_t *area = NULL;
  uint64_t len = p->bitmap ? p->bm_bytes : PPL_AREA_SECTORS * 512;
  int r;

  if ((r = wipe_old (p)) != 0)
    return r;
  if (p->bitmap && (area = bitmap_area (p)) == NULL)
    return tool_error ("out of memory for the bitmap");
  if (p->ppl && (area = ppl_area (p)) == NULL)
    return tool_error ("out of memory for the partial parity log");
  for (unsigned i = 0; area && i < p->opts->n && r == 0; i++)
    if (create_has_disk (p->opts, i))
      r = write_at (p, i, area, len, p->bitmap ? CREATE_BITMAP_OFFSET
                                                : CREATE_PPL_OFFSET);
  free (area);
  for (unsigned i = 0; i < p->opts->n && r == 0; i++) {
    if (!create_has_disk (p->opts, i))
      continue;
    if ((r = encode_member (p, i)) == 0)
      r = write_at (p, i, p->block, MD_SB_BLOCK, MD_SB_OFFSET);
  }
  return r;
}

static void
print_members (const struct create_plan *p)
{
  for (unsigned i = 0; i < p->opts->n; i++)
    printf ("%s slot %u  %s\n", i == 0 ? "        Members :"
                                       : "                 ", i,
            p->opts->disks[i]);
}

static void
print_bitmap (const struct create_plan *p)
{
  char chunk[32];

  if (p->ppl) {
    printf ("         Bitmap : none (consistency policy ppl: a partial "
            "parity log of %u sectors at sector %u)\n", PPL_AREA_SECTORS,
            MD_SB_SECTOR + PPL_OFFSET_V12);
    return;
  }
  if (!p->bitmap) {
    printf ("         Bitmap : none\n");
    return;
  }
  printf ("         Bitmap : internal, %s per bit, %" PRIu64 " bits\n",
          tool_human (p->bm.chunksize, chunk, sizeof chunk),
          md_bitmap_bits (&p->bm));
}

static void
print_how_to_use (const struct create_plan *p)
{
  uint64_t stride = p->opts->chunk / 4096;

  printf ("\nServe it:\n  nbdkit raid5");
  for (unsigned i = 0; i < p->opts->n; i++) {
    printf (" disk=");
    tool_print_shell_word (p->opts->disks[i]);
  }
  printf ("\next4 on it (4 KiB blocks; stride = one chunk, stripe_width = "
          "the data chunks of a stripe):\n"
          "  mkfs.ext4 -b 4096 -E stride=%" PRIu64 ",stripe_width=%" PRIu64
          " DEVICE\n", stride, stride * (p->opts->n - 1));
}

void
create_summary (const struct create_plan *p, uint64_t mismatches)
{
  const struct create_opts *o = p->opts;
  uint64_t array = p->size * 512 * (o->n - 1);
  char uuid[36], a[32], b[32];

  md_uuid_format (p->sb.set_uuid, uuid);
  printf ("     Array UUID : %s\n", uuid);
  printf ("           Name : %s\n", p->sb.set_name);
  printf ("     Raid Level : raid5\n   Raid Devices : %u\n", o->n);
  printf ("         Layout : %s\n", r5_layout_name (o->layout));
  printf ("     Chunk Size : %" PRIu64 "K\n", o->chunk / 1024);
  printf ("    Data Offset : %" PRIu64 " sectors (%s)\n", p->doff,
          tool_human (p->doff * 512, a, sizeof a));
  printf ("  Used Dev Size : %" PRIu64 " sectors (%s) of each member\n",
          p->size, tool_human (p->size * 512, b, sizeof b));
  printf ("     Array Size : %" PRIu64 " KiB (%s, %" PRIu64 " bytes)\n",
          array / 1024, tool_human (array, a, sizeof a), array);
  print_bitmap (p);
  if (o->missing >= 0)
    printf ("         Parity : nothing to sync (degraded: slot %d is "
            "missing; raid5ctl rebuild --slot %d --new DISK adds a member)"
            "\n", o->missing, o->missing);
  else if (o->assume_clean)
    printf ("         Parity : not synced (--assume-clean)\n");
  else
    printf ("         Parity : in sync (resynced, %" PRIu64 " mismatched "
            "sectors rewritten)\n", mismatches);
  print_members (p);
  print_how_to_use (p);
}
