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

    if (!f[i].present || !f[i].has_sb || !has_data_role (sb) ||
        (sb->feature_map & MD_FEATURE_REPLACEMENT))
      continue;
    if (best < 0 || sb->events > f[best].sb.events ||
        (sb->events == f[best].sb.events &&
         md_sb_role (sb) < md_sb_role (&f[best].sb)))
      best = (int) i;
  }
  return best;
}

bool
md_sb_same_array (const struct md_sb *a, const struct md_sb *b)
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
      (int64_t) sb->data_offset + md_sb_new_offset (sb) ==
      (int64_t) fresh->data_offset;
  return false;
}

bool
md_sb_records_working (const struct md_sb *sb, unsigned slot)
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
  if (!md_sb_records_working (sb, md_sb_role (fresh)))
    return MD_FATE_SPLIT;
  if (sb->events < fresh->events)     /* one behind: the freshest decides */
    role = role_in (fresh, sb->dev_number);
  if (role == MD_ROLE_FAULTY)
    return MD_FATE_FAULTY;
  if (role >= fresh->raid_disks)
    return role == MD_ROLE_SPARE ? MD_FATE_REMOVED : MD_FATE_SPARE;
  *slot = (int) role;
  if (sb->feature_map & MD_FEATURE_REPLACEMENT)
    return MD_FATE_REPLACEMENT;
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
      (!md_sb_same_array (sb, fresh) &&
       !grow_step_behind (sb, fresh))) {
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
  if (v->fate == MD_FATE_REPLACEMENT)
    v->recovery_offset = sb->feature_map & MD_FEATURE_RECOVERY_OFFSET
      ? sb->recovery_offset : MD_MAX_SECTOR;
}

static bool
holds_slot (enum md_fate fate)
{
  return fate == MD_FATE_IN_SYNC || fate == MD_FATE_RECOVERING;
}

/* Each slot's freshest replacement (mdadm's best[2 * role + 1]); the
 * others are duplicates.
 */
static void
assign_replacements (const struct md_found *f, unsigned n,
                     struct md_assembly *as)
{
  for (unsigned i = 0; i < n; i++) {
    struct md_verdict *v = &as->dev[i];
    int *r;

    if (v->fate != MD_FATE_REPLACEMENT)
      continue;
    r = &as->repl[v->slot];
    if (*r >= 0 && f[*r].sb.events >= f[i].sb.events)
      v->fate = MD_FATE_DUPLICATE;
    else {
      if (*r >= 0)
        as->dev[*r].fate = MD_FATE_DUPLICATE;
      *r = (int) i;
    }
  }
}

/* A slot without its own device is held by its replacement, rebuilt from
 * where the copy got (raid5_run).
 */
static void
promote_replacements (struct md_assembly *as)
{
  for (unsigned s = 0; s < R5_MAX_MEMBERS; s++) {
    struct md_verdict *v;

    if (as->repl[s] < 0 || as->owner[s] >= 0)
      continue;
    v = &as->dev[as->repl[s]];
    v->fate = v->recovery_offset == MD_MAX_SECTOR ? MD_FATE_IN_SYNC
                                                  : MD_FATE_RECOVERING;
    as->owner[s] = as->repl[s];
    as->repl[s] = -1;
  }
}

/* Give each slot to the freshest device claiming it; the other becomes a
 * duplicate.  Returns false (and the device) on a tie.
 */
static bool
assign_owners (const struct md_found *f, unsigned n, struct md_assembly *as)
{
  for (unsigned s = 0; s < R5_MAX_MEMBERS; s++)
    as->owner[s] = as->repl[s] = -1;
  assign_replacements (f, n, as);
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
  promote_replacements (as);
  return true;
}

/* Left out, with its slot another device's in the freshest superblock
 * (a replace, or a rebuild onto a new disk): not a member that can
 * catch up, whether that device was given or not.
 */
unsigned
md_asm_slot_holder (const struct md_assembly *as, const struct md_found *f,
                    unsigned dev)
{
  const struct md_verdict *v = &as->dev[dev];
  const struct md_sb *sb = &f[dev].sb, *fresh;
  unsigned holder = MD_SB_MAX_DEV;

  if ((v->fate != MD_FATE_STALE && v->fate != MD_FATE_REMOVED &&
       v->fate != MD_FATE_FAULTY) || v->slot < 0 || as->freshest < 0)
    return MD_SB_MAX_DEV;
  fresh = &f[as->freshest].sb;
  for (unsigned k = 0; k < fresh->max_dev && k < MD_SB_MAX_DEV; k++)
    if (k != sb->dev_number && fresh->dev_roles[k] == (unsigned) v->slot)
      holder = k;
  return holder;
}

bool
md_asm_replaced (const struct md_assembly *as, const struct md_found *f,
                 unsigned dev)
{
  return md_asm_slot_holder (as, f, dev) != MD_SB_MAX_DEV;
}

/* Slots without a device in sync. */
static unsigned
slots_not_in_sync (const struct md_assembly *as)
{
  unsigned n = 0;

  for (unsigned s = 0; s < as->raid_disks; s++)
    n += as->owner[s] < 0 || as->dev[as->owner[s]].fate != MD_FATE_IN_SYNC;
  return n;
}

/* Could dev, left out, be forced in: its own superblock gives it a slot
 * nobody holds, it was not being rebuilt (mdadm: recovery_start ==
 * MaxSector) nor a replacement, it has the array's shape, and no other
 * device took its slot in the freshest superblock?
 */
static bool
forcible (const struct md_found *f, const struct md_assembly *as,
          unsigned dev)
{
  const struct md_sb *sb = &f[dev].sb;
  enum md_fate fate = as->dev[dev].fate;
  unsigned s = md_sb_role (sb);

  return (fate == MD_FATE_STALE || fate == MD_FATE_REMOVED ||
          fate == MD_FATE_FAULTY) && has_data_role (sb) &&
    s < as->raid_disks && as->owner[s] < 0 &&
    !(sb->feature_map & (MD_FEATURE_RECOVERY_OFFSET |
                         MD_FEATURE_REPLACEMENT)) &&
    !md_sb_grown_since (sb, &f[as->freshest].sb) &&
    md_asm_slot_holder (as, f, dev) == MD_SB_MAX_DEV;
}

/* Slot s's candidate for force_in, or -1: mdadm looks only at the newest
 * device given that claims a slot (best[]), so an older one is never
 * forced past it, and none if that newest is not forcible -- or if two
 * claim it with the same events (a copy: which is the member is not ours
 * to guess, as assign_owners refuses the same tie).
 */
static int
slot_candidate (const struct md_found *f, unsigned n,
                const struct md_assembly *as, unsigned s)
{
  int best = -1;
  bool tie = false;

  for (unsigned i = 0; i < n; i++) {
    if (!f[i].present || !f[i].has_sb || md_sb_role (&f[i].sb) != s ||
        as->dev[i].fate == MD_FATE_FOREIGN)
      continue;
    if (best >= 0 && f[i].sb.events == f[best].sb.events)
      tie = true;
    else if (best < 0 || f[i].sb.events > f[best].sb.events) {
      best = (int) i;
      tie = false;
    }
  }
  return best >= 0 && !tie && forcible (f, as, (unsigned) best) ? best : -1;
}

/* mdadm --assemble --force (Assemble.c): while too few devices are in
 * sync to start, the newest candidate left out is taken as in sync
 * ("forcing event count in DEV from E upto F"; its role restored in the
 * others' superblocks: "clearing FAULTY flag") -- and with it every
 * other candidate of the same events (its add_another: members dropped
 * together hold the same writes).  What they missed is lost: the user
 * asked for this, after members dropped by a link or cable while they
 * still hold their bytes.  Returns how many were forced in.
 */
static unsigned
force_in (const struct md_found *f, unsigned n, struct md_assembly *as)
{
  unsigned forced = 0;

  while (slots_not_in_sync (as) > 1) {
    int cand[R5_MAX_MEMBERS], pick = -1;

    for (unsigned s = 0; s < as->raid_disks; s++)
      if ((cand[s] = slot_candidate (f, n, as, s)) >= 0 &&
          (pick < 0 || f[cand[s]].sb.events > f[pick].sb.events))
        pick = cand[s];
    if (pick < 0)
      break;
    for (unsigned s = 0; s < as->raid_disks; s++) {
      int d = cand[s];

      if (d < 0 || f[d].sb.events != f[pick].sb.events)
        continue;
      as->dev[d].fate = MD_FATE_IN_SYNC;
      as->dev[d].slot = (int) s;
      as->dev[d].forced_in = true;
      as->owner[s] = d;
      forced++;
    }
  }
  return forced;
}

/* Working members the freshest superblock records (mdadm's req_cnt). */
static unsigned
count_working (const struct md_sb *fresh)
{
  unsigned n = 0;

  for (unsigned s = 0; s < fresh->raid_disks; s++)
    n += md_sb_records_working (fresh, s);
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

bool
md_sb_grown_since (const struct md_sb *dev, const struct md_sb *fresh)
{
  return ((dev->feature_map | fresh->feature_map) &
          MD_FEATURE_RESHAPE_ACTIVE) ||
    dev->raid_disks != fresh->raid_disks ||
    dev->data_offset != fresh->data_offset;
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
      !md_sb_grown_since (&f[i].sb, &f[as->freshest].sb) &&
      !(f[i].sb.feature_map & MD_FEATURE_BAD_BLOCKS) &&
      !md_readd_whole (&f[i].sb) && !md_asm_replaced (as, f, i);
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
  for (unsigned i = 0; i < R5_MAX_MEMBERS; i++) {
    as->dev[i] = (struct md_verdict) { .fate = MD_FATE_ABSENT, .slot = -1 };
    as->owner[i] = as->repl[i] = -1;
  }
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
  if (o->take_stale)
    as->forced_in = force_in (f, n, as);
  else if (slots_not_in_sync (as) > 1) {
    struct md_assembly tried = *as;

    as->force_helps = force_in (f, n, &tried) > 0 &&
      slots_not_in_sync (&tried) <= 1;
  }
  return judge_start (f, o, as);
}
