/* raid/mdstate.c -- md's state rules (see mdstate.h for the rules and
 * their sources).
 */
#include <config.h>

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "raid/mdstate.h"

/* ---- assembly ---- */

/* The role dev_number has in sb: md_sb_role for a number it knows. */
static unsigned
role_in (const struct md_sb *sb, uint32_t dev_number)
{
  return dev_number < sb->max_dev ? sb->dev_roles[dev_number]
                                  : MD_ROLE_SPARE;
}

static bool
has_data_role (const struct md_sb *sb)
{
  return md_sb_role (sb) < sb->raid_disks;
}

/* mdadm's most_recent: the most events among members with a data role
 * of their own; ties to the lowest slot.
 */
static int
pick_freshest (const struct md_found *f, unsigned n)
{
  int best = -1;

  for (unsigned i = 0; i < n; i++) {
    const struct md_sb *sb = &f[i].sb;

    if (!f[i].present || !f[i].has_sb || !has_data_role (sb))
      continue;
    if (best < 0 || sb->events > f[best].sb.events ||
        (sb->events == f[best].sb.events &&
         md_sb_role (sb) < md_sb_role (&f[best].sb)))
      best = (int) i;
  }
  return best;
}

static bool
same_array (const struct md_sb *a, const struct md_sb *b)
{
  return memcmp (a->set_uuid, b->set_uuid, 16) == 0 &&
    a->level == b->level && a->layout == b->layout &&
    a->chunksize == b->chunksize && a->raid_disks == b->raid_disks &&
    a->size == b->size && a->data_offset == b->data_offset;
}

/* Is sb one event behind fresh across the first or the last superblock
 * write of a grow -- the write reached some members and not others (a
 * crash amid it)?  At the start fresh records the grow and sb the old
 * member count (no window was moved before that write: the old shape
 * holds every byte); at the end fresh has the new data offset and sb the
 * reshape still under way (every window was moved and synced before
 * it).  Either way the freshest's shape is the array's.
 */
static bool
grow_step_behind (const struct md_sb *sb, const struct md_sb *fresh)
{
  bool sb_grows = sb->feature_map & MD_FEATURE_RESHAPE_ACTIVE;
  bool fresh_grows = fresh->feature_map & MD_FEATURE_RESHAPE_ACTIVE;

  if (sb->events + 1 != fresh->events ||
      memcmp (sb->set_uuid, fresh->set_uuid, 16) != 0 ||
      sb->level != fresh->level || sb->layout != fresh->layout ||
      sb->chunksize != fresh->chunksize || sb->size != fresh->size)
    return false;
  if (fresh_grows && !sb_grows)
    return fresh->delta_disks > 0 &&
      sb->raid_disks + (uint32_t) fresh->delta_disks == fresh->raid_disks &&
      sb->data_offset == fresh->data_offset;
  if (sb_grows && !fresh_grows)
    return sb->raid_disks == fresh->raid_disks &&
      (int64_t) sb->data_offset + sb->new_offset ==
      (int64_t) fresh->data_offset;
  return false;
}

/* Does sb record slot as held by a working device (mdadm's devmap)? */
static bool
records_working (const struct md_sb *sb, unsigned slot)
{
  for (uint32_t i = 0; i < sb->max_dev && i < MD_SB_MAX_DEV; i++)
    if (sb->dev_roles[i] == slot)
      return true;
  return false;
}

/* The fate of a member with a data role of its own (not the freshest). */
static enum md_fate
active_fate (const struct md_sb *sb, const struct md_sb *fresh, int *slot)
{
  unsigned own = md_sb_role (sb), role = own;

  *slot = (int) own;
  if (sb->events + 1 < fresh->events)
    return MD_FATE_STALE;
  if (!records_working (sb, md_sb_role (fresh)))
    return MD_FATE_SPLIT;
  if (sb->events < fresh->events)     /* one behind: the freshest decides */
    role = role_in (fresh, sb->dev_number);
  if (role == MD_ROLE_FAULTY)
    return MD_FATE_FAULTY;
  if (role >= fresh->raid_disks)
    return role == MD_ROLE_SPARE ? MD_FATE_REMOVED : MD_FATE_SPARE;
  *slot = (int) role;
  return sb->feature_map & MD_FEATURE_RECOVERY_OFFSET ? MD_FATE_RECOVERING
                                                      : MD_FATE_IN_SYNC;
}

static void
judge_one (const struct md_found *f, const struct md_sb *fresh,
           bool is_freshest, struct md_verdict *v)
{
  const struct md_sb *sb = &f->sb;

  *v = (struct md_verdict) { .fate = MD_FATE_ABSENT, .slot = -1 };
  if (!f->present)
    return;
  if (!f->has_sb ||
      (!same_array (sb, fresh) && !grow_step_behind (sb, fresh))) {
    v->fate = MD_FATE_FOREIGN;
    return;
  }
  if (md_sb_role (sb) == MD_ROLE_FAULTY)
    v->fate = MD_FATE_FAULTY;
  else if (!has_data_role (sb))
    v->fate = MD_FATE_SPARE;
  else if (is_freshest) {
    v->slot = (int) md_sb_role (sb);
    v->fate = sb->feature_map & MD_FEATURE_RECOVERY_OFFSET
      ? MD_FATE_RECOVERING : MD_FATE_IN_SYNC;
  }
  else
    v->fate = active_fate (sb, fresh, &v->slot);
  if (v->fate == MD_FATE_RECOVERING) {
    v->recovery_offset = sb->recovery_offset;
    v->bitmap_recovery = (sb->feature_map & MD_FEATURE_RECOVERY_BITMAP) != 0;
  }
}

static bool
holds_slot (enum md_fate fate)
{
  return fate == MD_FATE_IN_SYNC || fate == MD_FATE_RECOVERING;
}

/* Give each slot to the freshest device claiming it; the other becomes a
 * duplicate.  Returns false (and the device) on a tie.
 */
static bool
assign_owners (const struct md_found *f, unsigned n, struct md_assembly *as)
{
  for (unsigned s = 0; s < R5_MAX_MEMBERS; s++)
    as->owner[s] = -1;
  for (unsigned i = 0; i < n; i++) {
    struct md_verdict *v = &as->dev[i];
    int *o;

    if (!holds_slot (v->fate))
      continue;
    o = &as->owner[v->slot];
    if (*o >= 0 && f[*o].sb.events == f[i].sb.events) {
      as->refusal_dev = (int) i;
      return false;
    }
    if (*o >= 0 && f[*o].sb.events > f[i].sb.events)
      v->fate = MD_FATE_DUPLICATE;
    else {
      if (*o >= 0)
        as->dev[*o].fate = MD_FATE_DUPLICATE;
      *o = (int) i;
    }
  }
  return true;
}

/* Working members the freshest superblock records (mdadm's req_cnt). */
static unsigned
count_working (const struct md_sb *fresh)
{
  unsigned n = 0;

  for (unsigned s = 0; s < fresh->raid_disks; s++)
    n += records_working (fresh, s);
  return n;
}

/* Slots not in sync; sets as->out to the first of them. */
static unsigned
count_out (struct md_assembly *as)
{
  unsigned n = 0;

  as->out = -1;
  for (unsigned s = 0; s < as->raid_disks; s++) {
    int o = as->owner[s];

    if (o >= 0 && as->dev[o].fate == MD_FATE_IN_SYNC)
      as->in_sync++;
    else {
      as->recovering += o >= 0;
      if (as->out < 0)
        as->out = (int) s;
      n++;
    }
  }
  return n;
}

static bool
any_dirty (const struct md_found *f, const struct md_assembly *as)
{
  for (unsigned s = 0; s < as->raid_disks; s++)
    if (as->owner[s] >= 0 &&
        f[as->owner[s]].sb.resync_offset != MD_MAX_SECTOR)
      return true;
  return false;
}

void
md_asm_bitmap (struct md_assembly *as, const struct md_found *f,
               unsigned n, uint64_t events_cleared)
{
  if (as->freshest < 0)
    return;
  for (unsigned i = 0; i < n; i++) {
    enum md_fate fate = as->dev[i].fate;

    as->dev[i].re_addable =
      (fate == MD_FATE_STALE || fate == MD_FATE_REMOVED ||
       fate == MD_FATE_FAULTY) &&
      has_data_role (&f[i].sb) && f[i].sb.events >= events_cleared &&
      f[i].sb.events <= f[as->freshest].sb.events &&
      !(f[i].sb.feature_map & MD_FEATURE_BAD_BLOCKS);
  }
}

static int
refuse (struct md_assembly *as, enum md_refusal why, int dev)
{
  as->refusal = why;
  as->refusal_dev = dev;
  return -EINVAL;
}

/* What the start needs: RAID-5 rules, and what is due after it. */
static int
judge_start (const struct md_found *f, const struct md_asm_opts *o,
             struct md_assembly *as)
{
  const struct md_sb *fresh = &f[as->freshest].sb;
  unsigned out = count_out (as);
  bool ppl = (fresh->feature_map & MD_FEATURE_ANY_PPL) != 0;

  as->working = count_working (fresh);
  as->dirty = any_dirty (f, as);
  if (out > 1)
    return refuse (as, MD_START_TOO_FEW, -1);
  if (!o->run && !o->force && as->in_sync + as->recovering < as->working)
    return refuse (as, MD_START_NOT_ALL, -1);
  /* With a partial parity log the torn stripes are recovered from it:
   * mdadm assembles such an array as clean ("if
   * (content->consistency_policy == CONSISTENCY_POLICY_PPL) clean = 1;",
   * Assemble.c start_array) and md starts it ("starting dirty degraded
   * array with PPL", raid5_run).  Nothing is forced then.
   */
  if (out == 1 && as->dirty && !o->force && !ppl)
    return refuse (as, MD_START_DIRTY_DEGRADED, -1);
  as->forced = out == 1 && as->dirty && !ppl;
  if (as->recovering) {
    as->due = MD_DUE_RECOVERY;
    as->due_from = as->dev[as->owner[as->out]].recovery_offset;
  }
  else if (out == 0 && fresh->resync_offset != MD_MAX_SECTOR) {
    as->due = MD_DUE_RESYNC;
    as->due_from = fresh->resync_offset;
  }
  return 0;
}

int
md_assemble (const struct md_found *f, unsigned n,
             const struct md_asm_opts *o, struct md_assembly *as)
{
  assert (n <= R5_MAX_MEMBERS);
  *as = (struct md_assembly) { .refusal_dev = -1, .out = -1 };
  for (unsigned i = 0; i < R5_MAX_MEMBERS; i++)
    as->dev[i] = (struct md_verdict) { .fate = MD_FATE_ABSENT, .slot = -1 };
  as->freshest = pick_freshest (f, n);
  if (as->freshest < 0)
    return refuse (as, MD_START_NO_SLOT, -1);
  as->raid_disks = f[as->freshest].sb.raid_disks;
  for (unsigned i = 0; i < n; i++) {
    judge_one (&f[i], &f[as->freshest].sb, (int) i == as->freshest,
               &as->dev[i]);
    if (as->dev[i].fate == MD_FATE_FOREIGN)
      return refuse (as, MD_START_FOREIGN, (int) i);
  }
  if (!assign_owners (f, n, as))
    return refuse (as, MD_START_SAME_SLOT, as->refusal_dev);
  return judge_start (f, o, as);
}

const char *
md_fate_name (enum md_fate fate)
{
  static const char *const names[] = {
    [MD_FATE_IN_SYNC] = "in sync", [MD_FATE_RECOVERING] = "rebuilding",
    [MD_FATE_SPARE] = "spare", [MD_FATE_STALE] = "stale",
    [MD_FATE_REMOVED] = "removed", [MD_FATE_FAULTY] = "faulty",
    [MD_FATE_SPLIT] = "split", [MD_FATE_DUPLICATE] = "duplicate",
    [MD_FATE_FOREIGN] = "foreign", [MD_FATE_ABSENT] = "absent",
  };

  return (unsigned) fate < sizeof names / sizeof names[0] ? names[fate]
                                                          : "unknown";
}

static void
explain_foreign (const struct md_found *f, const struct md_sb *fresh,
                 char *buf, size_t len)
{
  char uuid[36];

  if (!f->has_sb)
    snprintf (buf, len, "has no md superblock, but the other members do");
  else if (memcmp (f->sb.set_uuid, fresh->set_uuid, 16) != 0) {
    md_uuid_format (f->sb.set_uuid, uuid);
    snprintf (buf, len, "belongs to another array (uuid %s)", uuid);
  }
  else
    snprintf (buf, len, "disagrees with the other members' superblocks on "
              "level, layout, chunk, disks, size or data offset");
}

/* What a member that missed writes can do. */
static const char *
remedy (const struct md_verdict *v)
{
  return v->re_addable
    ? "; re-add it (the bitmap covers what it missed) or rebuild it"
    : "; rebuild it";
}

void
md_fate_explain (const struct md_assembly *as, const struct md_found *f,
                 unsigned dev, char *buf, size_t len)
{
  const struct md_verdict *v = &as->dev[dev];
  const struct md_sb *sb = &f[dev].sb, *fresh = &f[as->freshest].sb;
  uint64_t ev = sb->events, fev = fresh->events;

  buf[0] = '\0';
  switch (v->fate) {
  case MD_FATE_IN_SYNC: case MD_FATE_RECOVERING: case MD_FATE_ABSENT:
    return;
  case MD_FATE_FOREIGN:
    return explain_foreign (&f[dev], fresh, buf, len);
  case MD_FATE_STALE:
    snprintf (buf, len, "is stale: its events counter (%" PRIu64 ") is %"
              PRIu64 " behind the array's (%" PRIu64 "), so it missed "
              "writes%s", ev, fev - ev, fev, remedy (v));
    return;
  case MD_FATE_REMOVED:
    snprintf (buf, len, "missed writes: the others were written without "
              "it (they record slot %d as empty at events %" PRIu64 "; it "
              "has %" PRIu64 ")%s", v->slot, fev, ev, remedy (v));
    return;
  case MD_FATE_FAULTY:
    snprintf (buf, len, "is recorded as faulty (events %" PRIu64 ", array %"
              PRIu64 ")%s", ev, fev, remedy (v));
    return;
  case MD_FATE_SPLIT:
    snprintf (buf, len, "records slot %u, which the freshest member holds, "
              "as failed: the two were written apart (events %" PRIu64
              " and %" PRIu64 ")", md_sb_role (fresh), ev, fev);
    return;
  case MD_FATE_DUPLICATE:
    snprintf (buf, len, "claims slot %d, which a member with more events "
              "holds (events %" PRIu64 ", array %" PRIu64 ")", v->slot, ev,
              fev);
    return;
  case MD_FATE_SPARE:
    snprintf (buf, len, "is a spare (it has no data slot)");
    return;
  }
}

/* ---- the running array ---- */

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
    sl->bad_blocks = (f[o].sb.feature_map & MD_FEATURE_BAD_BLOCKS) != 0;
  }
}

static bool
attached (const struct md_live_slot *sl)
{
  return sl->state != MD_SLOT_ABSENT;
}

bool
md_live_dev_number_taken (const struct md_live *s, uint32_t dev,
                          unsigned except)
{
  for (unsigned k = 0; k < s->common.raid_disks; k++)
    if (k != except && s->slot[k].state != MD_SLOT_ABSENT &&
        s->slot[k].dev_number == dev)
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
      taken |= attached (&s->slot[k]) && s->slot[k].dev_number == choice;
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
          ev->new_offset < 0 && !(c->feature_map & MD_FEATURE_RESHAPE_ACTIVE));
  for (unsigned i = 0; i < ev->add; i++) {
    struct md_live_slot *sl = &s->slot[first + i];

    c->raid_disks = first + i;      /* the slots attached so far */
    sl->dev_number = md_live_new_dev_number (s);
    sl->state = MD_SLOT_IN_SYNC;
    memcpy (sl->device_uuid, ev->device_uuid + 16 * i, 16);
    sl->data_size = ev->data_size;
    sl->recovery_offset = 0;
    sl->bitmap_recovery = false;
    sl->bad_blocks = false;
  }
  c->raid_disks = first + ev->add;
  c->feature_map |= MD_FEATURE_RESHAPE_ACTIVE | MD_FEATURE_NEW_OFFSET;
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
  uint64_t shift = (uint64_t) -(int64_t) c->new_offset;

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
  case MD_EV_ADD:
    assert (sl->state == MD_SLOT_ABSENT || sl->state == MD_SLOT_FAULTY);
    sl->state = MD_SLOT_ABSENT;       /* the failed device is let go */
    start_recovery (sl, md_live_new_dev_number (s), ev->data_size, false);
    memcpy (sl->device_uuid, ev->device_uuid, 16);
    return true;
  case MD_EV_RE_ADD:
    assert (sl->state == MD_SLOT_ABSENT || sl->state == MD_SLOT_FAULTY);
    assert (!md_live_dev_number_taken (s, ev->dev_number, ev->slot));
    start_recovery (sl, ev->dev_number, ev->data_size, ev->bitmap &&
                    (s->common.feature_map & MD_FEATURE_BITMAP_OFFSET));
    if (ev->device_uuid)
      memcpy (sl->device_uuid, ev->device_uuid, 16);
    return true;
  case MD_EV_RECOVERY_CP:
    assert (sl->state == MD_SLOT_RECOVERING);
    sl->recovery_offset = ev->sectors;
    return true;
  case MD_EV_RECOVERY_DONE:
    assert (sl->state == MD_SLOT_RECOVERING);
    sl->state = MD_SLOT_IN_SYNC;
    sl->recovery_offset = 0;
    sl->bitmap_recovery = false;
    return true;
  case MD_EV_RESYNC_CP: s->resync_cp = ev->sectors; return false;
  case MD_EV_RESYNC_DONE: s->resync_cp = MD_MAX_SECTOR; return true;
  case MD_EV_GROW: grow (s, ev); return true;
  case MD_EV_RESHAPE_CP:
    assert (s->common.feature_map & MD_FEATURE_RESHAPE_ACTIVE);
    s->common.reshape_position = ev->sectors;
    return true;
  case MD_EV_RESHAPE_DONE: reshape_done (s); return true;
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
  for (unsigned k = 0; k < s->common.raid_disks; k++)
    if (attached (&s->slot[k]) && s->slot[k].dev_number + 1 > sb->max_dev)
      sb->max_dev = s->slot[k].dev_number + 1;
  assert (sb->max_dev <= MD_SB_MAX_DEV);
  for (uint32_t i = 0; i < sb->max_dev; i++)
    sb->dev_roles[i] = MD_ROLE_SPARE;
  for (unsigned k = 0; k < s->common.raid_disks; k++) {
    const struct md_live_slot *sl = &s->slot[k];

    if (attached (sl))
      sb->dev_roles[sl->dev_number] =
        (uint16_t) (sl->state == MD_SLOT_FAULTY ? MD_ROLE_FAULTY : k);
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

/* Does dev record a slot that is in sync here as not working? */
static bool
written_apart (const struct md_live *s, const struct md_sb *dev,
               unsigned slot)
{
  for (unsigned k = 0; k < s->common.raid_disks; k++)
    if (k != slot && s->slot[k].state == MD_SLOT_IN_SYNC &&
        !records_working (dev, k))
      return true;
  return false;
}

int
md_readd_check (const struct md_live *s, const struct md_readd *q,
                char *why, size_t len)
{
  const struct md_sb *c = &s->common, *dev = q->dev;
  unsigned slot = q->slot;

  if (memcmp (dev->set_uuid, c->set_uuid, 16) != 0 || !same_array (dev, c))
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
