/* raid/mdlive.c -- md's state rules of the running array: what every
 * member's superblock must say after each event (see mdstate.h for the
 * rules and their sources).
 */
#include <config.h>

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "raid/mdbitmap.h"
#include "raid/mdstate.h"

void
md_live_init (struct md_live *s, const struct md_found *f,
              const struct md_assembly *as)
{
  const struct md_sb *fresh = &f[as->freshest].sb;

  memset (s, 0, sizeof *s);
  s->common = *fresh;
  s->dirty = fresh->resync_offset != MD_MAX_SECTOR;
  s->resync_cp = fresh->resync_offset;
  for (unsigned k = 0; k < as->raid_disks; k++) {
    struct md_live_slot *sl = &s->slot[k];
    int o = as->owner[k];

    sl->state = MD_SLOT_ABSENT;
    if (o < 0)
      continue;
    sl->state = as->dev[o].fate == MD_FATE_IN_SYNC ? MD_SLOT_IN_SYNC
                                                   : MD_SLOT_RECOVERING;
    sl->dev_number = f[o].sb.dev_number;
    memcpy (sl->device_uuid, f[o].sb.device_uuid, 16);
    sl->data_size = f[o].sb.data_size;
    sl->recovery_offset = as->dev[o].recovery_offset;
    sl->bitmap_recovery = as->dev[o].bitmap_recovery;
    sl->corrected_read = f[o].sb.cnt_corrected_read;
    sl->bad_blocks = (f[o].sb.feature_map & MD_FEATURE_BAD_BLOCKS) != 0;
    if ((o = as->repl[k]) >= 0 && sl->state == MD_SLOT_IN_SYNC)
      sl->repl = (struct md_live_repl) {
        .attached = true, .dev_number = f[o].sb.dev_number,
        .data_size = f[o].sb.data_size,
        .recovery_offset = as->dev[o].recovery_offset,
      };
    if (sl->repl.attached)
      memcpy (sl->repl.device_uuid, f[o].sb.device_uuid, 16);
  }
}

static bool
attached (const struct md_live_slot *sl)
{
  return sl->state != MD_SLOT_ABSENT;
}

/* Does slot k's device (or replacement) have number dev? */
static bool
numbered (const struct md_live_slot *sl, uint32_t dev)
{
  return (attached (sl) && sl->dev_number == dev) ||
    (sl->repl.attached && sl->repl.dev_number == dev);
}

bool
md_live_dev_number_taken (const struct md_live *s, uint32_t dev,
                          unsigned except)
{
  for (unsigned k = 0; k < s->common.raid_disks; k++)
    if (k != except && numbered (&s->slot[k], dev))
      return true;
  return false;
}

uint32_t
md_live_new_dev_number (const struct md_live *s)
{
  uint32_t choice = s->common.raid_disks;

  for (bool taken = true; taken; choice += taken) {
    taken = false;
    for (unsigned k = 0; k < s->common.raid_disks; k++)
      taken |= numbered (&s->slot[k], choice);
  }
  return choice;
}

static void
start_recovery (struct md_live_slot *sl, uint32_t dev_number,
                uint64_t data_size, bool bitmap)
{
  sl->state = MD_SLOT_RECOVERING;
  sl->dev_number = dev_number;
  sl->data_size = data_size;
  sl->recovery_offset = 0;
  sl->bitmap_recovery = bitmap;
  sl->bad_blocks = false;     /* md_readd_check refuses a device with any */
}

/* GROW: ev->add devices take the slots after the last, in sync. */
static void
grow (struct md_live *s, const struct md_event *ev)
{
  struct md_sb *c = &s->common;
  unsigned first = c->raid_disks;

  assert (ev->add > 0 && first + ev->add <= R5_MAX_MEMBERS &&
          ev->new_offset <= 0 && !(c->feature_map & MD_FEATURE_RESHAPE_ACTIVE));
  for (unsigned i = 0; i < ev->add; i++) {
    struct md_live_slot *sl = &s->slot[first + i];

    c->raid_disks = first + i;      /* the slots attached so far */
    sl->dev_number = md_live_new_dev_number (s);
    sl->state = MD_SLOT_IN_SYNC;
    memcpy (sl->device_uuid, ev->device_uuid + 16 * i, 16);
    sl->data_size = ev->data_size;
    sl->recovery_offset = 0;
    sl->bitmap_recovery = false;
    sl->corrected_read = 0;
    sl->bad_blocks = false;
  }
  c->raid_disks = first + ev->add;
  /* A kept data offset (new_offset 0) has no NEW_OFFSET: mdadm's backup
   * file kind of grow.
   */
  c->feature_map |= MD_FEATURE_RESHAPE_ACTIVE |
    (ev->new_offset < 0 ? MD_FEATURE_NEW_OFFSET : 0);
  c->new_level = (uint32_t) c->level;
  c->new_layout = c->layout;
  c->new_chunk = c->chunksize;
  c->delta_disks = (int32_t) ev->add;
  c->new_offset = ev->new_offset;
  c->reshape_position = 0;
}

/* RESHAPE_DONE: the data where new_offset said, the reshape over. */
static void
reshape_done (struct md_live *s)
{
  struct md_sb *c = &s->common;
  uint64_t shift = (uint64_t) -(int64_t) md_sb_new_offset (c);

  assert (c->feature_map & MD_FEATURE_RESHAPE_ACTIVE);
  c->data_offset -= shift;
  for (unsigned k = 0; k < c->raid_disks; k++)
    if (attached (&s->slot[k]))
      s->slot[k].data_size += shift;
  c->feature_map &= ~(uint32_t) (MD_FEATURE_RESHAPE_ACTIVE |
                                 MD_FEATURE_NEW_OFFSET);
  c->delta_disks = 0;
  c->new_offset = 0;
  c->reshape_position = 0;
}

/* A rebuild's events (ADD, RE_ADD, RECOVERY_CP, RECOVERY_DONE). */
static void
change_recovery (struct md_live *s, const struct md_event *ev)
{
  struct md_live_slot *sl = &s->slot[ev->slot];

  switch (ev->kind) {
  case MD_EV_ADD:
    assert (sl->state == MD_SLOT_ABSENT || sl->state == MD_SLOT_FAULTY);
    sl->state = MD_SLOT_ABSENT;       /* the failed device is let go */
    start_recovery (sl, md_live_new_dev_number (s), ev->data_size, false);
    memcpy (sl->device_uuid, ev->device_uuid, 16);
    sl->corrected_read = 0;       /* a new device's own count */
    return;
  case MD_EV_RE_ADD:
    assert (sl->state == MD_SLOT_ABSENT || sl->state == MD_SLOT_FAULTY);
    assert (!md_live_dev_number_taken (s, ev->dev_number, ev->slot));
    start_recovery (sl, ev->dev_number, ev->data_size, ev->bitmap &&
                    (s->common.feature_map & MD_FEATURE_BITMAP_OFFSET));
    if (ev->device_uuid)
      memcpy (sl->device_uuid, ev->device_uuid, 16);
    return;
  case MD_EV_RECOVERY_CP:
    assert (sl->state == MD_SLOT_RECOVERING);
    sl->recovery_offset = ev->sectors;
    return;
  default:                    /* MD_EV_RECOVERY_DONE */
    assert (ev->kind == MD_EV_RECOVERY_DONE &&
            sl->state == MD_SLOT_RECOVERING);
    sl->state = MD_SLOT_IN_SYNC;
    sl->recovery_offset = 0;
    sl->bitmap_recovery = false;
    return;
  }
}

/* A replace's events (MD_EV_REPLACE_*): to the slot's replacement. */
static void
change_replacement (struct md_live *s, const struct md_event *ev)
{
  struct md_live_slot *sl = &s->slot[ev->slot];

  switch (ev->kind) {
  case MD_EV_REPLACE_ADD:
    assert (sl->state == MD_SLOT_IN_SYNC && !sl->repl.attached);
    sl->repl = (struct md_live_repl) {
      .attached = true, .dev_number = md_live_new_dev_number (s),
      .data_size = ev->data_size,
    };
    memcpy (sl->repl.device_uuid, ev->device_uuid, 16);
    return;
  case MD_EV_REPLACE_CP:
    assert (sl->repl.attached);
    sl->repl.recovery_offset = ev->sectors;
    return;
  case MD_EV_REPLACE_DONE:
    assert (sl->state == MD_SLOT_IN_SYNC && sl->repl.attached);
    sl->dev_number = sl->repl.dev_number;
    memcpy (sl->device_uuid, sl->repl.device_uuid, 16);
    sl->data_size = sl->repl.data_size;
    sl->corrected_read = 0;
    sl->bad_blocks = false;
    sl->repl.attached = false;
    return;
  case MD_EV_REPLACE_PROMOTE:
    assert (sl->state == MD_SLOT_FAULTY && sl->repl.attached &&
            ev->sectors != MD_MAX_SECTOR);
    start_recovery (sl, sl->repl.dev_number, sl->repl.data_size, false);
    sl->recovery_offset = ev->sectors;
    memcpy (sl->device_uuid, sl->repl.device_uuid, 16);
    sl->corrected_read = 0;
    sl->repl.attached = false;
    return;
  default:                    /* MD_EV_REPLACE_DROP */
    assert (ev->kind == MD_EV_REPLACE_DROP && sl->repl.attached);
    sl->repl.attached = false;
    return;
  }
}

/* MD_EV_RESIZE (raid5_resize): the new space is resynced from the old
 * end unless a resync is due from before it already.
 */
static void
resize (struct md_live *s, const struct md_event *ev)
{
  assert (ev->sectors > s->common.size && ev->data_sizes != NULL);
  if (!ev->clean && s->resync_cp > s->common.size)
    s->resync_cp = s->common.size;
  s->common.size = ev->sectors;
  for (unsigned k = 0; k < s->common.raid_disks; k++)
    if (attached (&s->slot[k])) {
      assert (ev->data_sizes[k] >= ev->sectors);
      s->slot[k].data_size = ev->data_sizes[k];
    }
}

/* The changes of ev to s; false if they wait for the next write. */
static bool
change (struct md_live *s, const struct md_event *ev)
{
  struct md_live_slot *sl = &s->slot[ev->slot];

  switch (ev->kind) {
  case MD_EV_DIRTY: s->dirty = true; return true;
  case MD_EV_CLEAN:
    /* super_1_sync writes resync_offset 0 dirty, and the checkpoint
     * clean: with a resync due from sector 0 both read the same, and
     * the mark waits for the next write (a refused command leaves the
     * members as they were).
     */
    s->dirty = false;
    return s->resync_cp != 0;
  case MD_EV_FORCE_CLEAN:
    s->dirty = false;
    s->resync_cp = MD_MAX_SECTOR;
    return true;
  case MD_EV_FAIL:
    assert (sl->state == MD_SLOT_IN_SYNC || sl->state == MD_SLOT_RECOVERING);
    sl->state = MD_SLOT_FAULTY;
    return true;
  case MD_EV_ADD: case MD_EV_RE_ADD: case MD_EV_RECOVERY_CP:
  case MD_EV_RECOVERY_DONE:
    change_recovery (s, ev);
    return true;
  case MD_EV_RESYNC_CP: s->resync_cp = ev->sectors; return false;
  case MD_EV_CORRECTED_READ:
    sl->corrected_read += (uint32_t) ev->sectors;
    return false;
  case MD_EV_REPLACE_ADD: case MD_EV_REPLACE_CP: case MD_EV_REPLACE_DONE:
  case MD_EV_REPLACE_DROP: case MD_EV_REPLACE_PROMOTE:
    change_replacement (s, ev);
    return true;
  case MD_EV_RESYNC_DONE: s->resync_cp = MD_MAX_SECTOR; return true;
  case MD_EV_BAD_BLOCKS:
    assert (sl->state != MD_SLOT_ABSENT);
    sl->bad_blocks = ev->sectors != 0;
    return true;
  case MD_EV_GROW: grow (s, ev); return true;
  case MD_EV_RESHAPE_CP:
    assert (s->common.feature_map & MD_FEATURE_RESHAPE_ACTIVE);
    s->common.reshape_position = ev->sectors;
    return true;
  case MD_EV_RESHAPE_DONE: reshape_done (s); return true;
  case MD_EV_RESIZE: resize (s, ev); return true;
  case MD_EV_BITMAP:
    if (ev->sectors) {
      s->common.feature_map |= MD_FEATURE_BITMAP_OFFSET;
      s->common.bitmap_offset = MD_BITMAP_SB_OFFSET;
    }
    else                      /* the offset stays, as md's super_1_sync */
      s->common.feature_map &= ~(uint32_t) MD_FEATURE_BITMAP_OFFSET;
    return true;
  }
  assert (!"unknown md event");
  return false;
}

bool
md_live_apply (struct md_live *s, const struct md_event *ev)
{
  if (!change (s, ev))
    return false;
  s->common.events++;
  return true;
}

bool
md_live_writes (const struct md_live *s, unsigned slot)
{
  enum md_slot_state st = s->slot[slot].state;

  return st == MD_SLOT_IN_SYNC || st == MD_SLOT_RECOVERING;
}

/* super_1_sync's dev_roles: every entry spare, then each attached device;
 * max_dev grows to cover every dev_number in use.
 */
static void
fill_roles (const struct md_live *s, struct md_sb *sb)
{
  for (unsigned k = 0; k < s->common.raid_disks; k++) {
    const struct md_live_slot *sl = &s->slot[k];

    if (attached (sl) && sl->dev_number + 1 > sb->max_dev)
      sb->max_dev = sl->dev_number + 1;
    if (sl->repl.attached && sl->repl.dev_number + 1 > sb->max_dev)
      sb->max_dev = sl->repl.dev_number + 1;
  }
  assert (sb->max_dev <= MD_SB_MAX_DEV);
  for (uint32_t i = 0; i < sb->max_dev; i++)
    sb->dev_roles[i] = MD_ROLE_SPARE;
  for (unsigned k = 0; k < s->common.raid_disks; k++) {
    const struct md_live_slot *sl = &s->slot[k];

    if (attached (sl))
      sb->dev_roles[sl->dev_number] =
        (uint16_t) (sl->state == MD_SLOT_FAULTY ? MD_ROLE_FAULTY : k);
    if (sl->repl.attached)        /* not In_sync: its raid_disk */
      sb->dev_roles[sl->repl.dev_number] = (uint16_t) k;
  }
}

void
md_live_sb (const struct md_live *s, unsigned slot, struct md_sb *sb)
{
  const struct md_live_slot *sl = &s->slot[slot];

  *sb = s->common;
  sb->dev_number = sl->dev_number;
  memcpy (sb->device_uuid, sl->device_uuid, 16);
  sb->data_size = sl->data_size;
  sb->cnt_corrected_read = sl->corrected_read;
  sb->resync_offset = s->dirty ? 0 : s->resync_cp;
  sb->feature_map &= ~(uint32_t) (MD_FEATURE_RECOVERY_OFFSET |
                                  MD_FEATURE_RECOVERY_BITMAP |
                                  MD_FEATURE_REPLACEMENT |
                                  MD_FEATURE_BAD_BLOCKS);
  if (sl->bad_blocks)
    sb->feature_map |= MD_FEATURE_BAD_BLOCKS;
  sb->recovery_offset = 0;
  if (sl->state == MD_SLOT_RECOVERING) {
    sb->feature_map |= MD_FEATURE_RECOVERY_OFFSET;
    sb->recovery_offset = sl->recovery_offset;
    if (sl->bitmap_recovery &&
        (sb->feature_map & MD_FEATURE_BITMAP_OFFSET))
      sb->feature_map |= MD_FEATURE_RECOVERY_BITMAP;
  }
  fill_roles (s, sb);
}

void
md_live_sb_repl (const struct md_live *s, unsigned slot, struct md_sb *sb)
{
  const struct md_live_repl *r = &s->slot[slot].repl;

  assert (r->attached);
  md_live_sb (s, slot, sb);
  sb->dev_number = r->dev_number;
  memcpy (sb->device_uuid, r->device_uuid, 16);
  sb->data_size = r->data_size;
  sb->cnt_corrected_read = 0;
  sb->feature_map |= MD_FEATURE_REPLACEMENT;
  sb->feature_map &= ~(uint32_t) (MD_FEATURE_RECOVERY_BITMAP |
                                  MD_FEATURE_BAD_BLOCKS);
  if (r->recovery_offset != MD_MAX_SECTOR) {
    sb->feature_map |= MD_FEATURE_RECOVERY_OFFSET;
    sb->recovery_offset = r->recovery_offset;
  }
}

/* Does dev record a slot that is in sync here as not working? */
static bool
written_apart (const struct md_live *s, const struct md_sb *dev,
               unsigned slot)
{
  for (unsigned k = 0; k < s->common.raid_disks; k++)
    if (k != slot && s->slot[k].state == MD_SLOT_IN_SYNC &&
        !md_sb_records_working (dev, k))
      return true;
  return false;
}

int
md_readd_check (const struct md_live *s, const struct md_readd *q,
                char *why, size_t len)
{
  const struct md_sb *c = &s->common, *dev = q->dev;
  unsigned slot = q->slot;

  if (memcmp (dev->set_uuid, c->set_uuid, 16) == 0 &&
      md_sb_grown_since (dev, c))
    snprintf (why, len, "a grow was under way when it left, or is now, or "
              "has changed the array's shape since: the bitmap does not "
              "mark what a grow moves: rebuild it instead");
  else if (memcmp (dev->set_uuid, c->set_uuid, 16) != 0 ||
           !md_sb_same_array (dev, c))
    snprintf (why, len, "it is not a member of this array");
  else if (md_sb_role (dev) != slot)
    snprintf (why, len, "its superblock gives it %s, not slot %u",
              md_sb_role (dev) < MD_ROLE_MAX ? "another slot" : "no slot",
              slot);
  else if (dev->events > c->events)
    snprintf (why, len, "it is newer than the array (events %" PRIu64
              " > %" PRIu64 ")", dev->events, c->events);
  else if (written_apart (s, dev, slot))
    snprintf (why, len, "it records a member of the array as failed: it "
              "was written apart from the others, and no bitmap here says "
              "where");
  else if (md_live_dev_number_taken (s, dev->dev_number, slot))
    snprintf (why, len, "its device number %" PRIu32 " belongs to another "
              "member now: rebuild it instead", dev->dev_number);
  else if (dev->feature_map & MD_FEATURE_BAD_BLOCKS)
    snprintf (why, len, "its md bad-block log lists bad blocks, which a "
              "re-add here would not read around: rebuild it instead");
  else if (!q->has_bitmap)
    snprintf (why, len, "the array has no write-intent bitmap to say what "
              "it missed: rebuild it instead");
  else if (dev->events < q->events_cleared)
    snprintf (why, len, "the bitmap was cleared after it left (its events "
              "%" PRIu64 " < %" PRIu64 "): rebuild it instead", dev->events,
              q->events_cleared);
  else
    return 0;
  return -EINVAL;
}

bool
md_readd_whole (const struct md_sb *dev)
{
  return (dev->feature_map & MD_FEATURE_RECOVERY_OFFSET) &&
    !(dev->feature_map & MD_FEATURE_RECOVERY_BITMAP);
}
