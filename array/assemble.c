/* array/assemble.c -- build the array from md v1.2 superblocks.  Who is
 * current, stale, faulty or rebuilding, and whether the array may start,
 * is decided by raid/mdstate.h (md's rules, cited there); this file reads
 * the superblocks and bad-block logs, says what was decided in words, and
 * puts the members (and their bad-block tables) in their slots.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array/object.h"
#include "array/state.h"
#include "raid/layout.h"

/* What assembly found: the members given (in the order given), their
 * superblocks, and what raid/mdstate.h made of them.
 */
struct gathered {
  struct io_member *opened;   /* cfg->members of them; not open: missing */
  unsigned n;
  struct md_found f[R5_MAX_MEMBERS];
  struct md_assembly as;
  struct md_bb_table *bb[R5_MAX_MEMBERS];   /* owned until attached */
};

/* Every member's superblock and bad-block table (a corrupt log refuses
 * the array, naming the member: md would not take it either).
 */
static int
read_all (const struct array_config *cfg, struct gathered *g,
          struct array_err *err)
{
  struct md_found *f = g->f;
  char what[32];
  int any = 0;

  for (unsigned i = 0; i < cfg->members; i++) {
    int r;

    memset (&f[i], 0, sizeof f[i]);
    f[i].present = io_member_is_open (&g->opened[i]);
    if (!f[i].present)
      continue;
    snprintf (what, sizeof what, "member %u", i);
    if ((r = meta_read_sb (&g->opened[i], what, &f[i].sb, err)) < 0)
      return r;
    f[i].has_sb = r == 1;
    any |= r;
    if (r == 1 && (r = array_bb_read (&g->opened[i], &f[i].sb, what,
                                      &g->bb[i], err)) < 0)
      return r;
  }
  return any;
}

/* "member 2 (/x/c.img) is stale: ..." */
static void
say_fate (const struct gathered *g, unsigned i, char *buf, size_t len)
{
  char why[240];

  md_fate_explain (&g->as, g->f, i, why, sizeof why);
  snprintf (buf, len, "member %u (%s) %s", i, g->opened[i].path, why);
}

/* Why each slot has no member in sync, as one clause per slot. */
static void
slots_out (const struct gathered *g, char *buf, size_t len)
{
  const struct md_assembly *as = &g->as;
  size_t at = 0;

  buf[0] = '\0';
  for (unsigned s = 0; s < as->raid_disks && at + 4 < len; s++) {
    int o = as->owner[s], claim = -1;

    if (o >= 0 && as->dev[o].fate == MD_FATE_IN_SYNC)
      continue;
    for (unsigned i = 0; i < g->n && claim < 0; i++)
      if (as->dev[i].slot == (int) s && i != (unsigned) o &&
          as->dev[i].fate != MD_FATE_ABSENT)
        claim = (int) i;
    at += (size_t) snprintf (buf + at, len - at, "%sslot %u: ", at ? "; " : "",
                             s);
    if (o >= 0)
      snprintf (buf + at, len - at, "member %d (%s) is only partly rebuilt",
                o, g->opened[o].path);
    else if (claim >= 0)
      say_fate (g, (unsigned) claim, buf + at, len - at);
    else
      snprintf (buf + at, len - at, "no member given holds it");
    at = strlen (buf);
  }
}

static int
refused (const struct gathered *g, struct array_err *err)
{
  const struct md_assembly *as = &g->as;
  char why[ARRAY_ERR_LEN];

  switch (as->refusal) {
  case MD_START_OK:
    return 0;
  case MD_START_FOREIGN:
    say_fate (g, (unsigned) as->refusal_dev, why, sizeof why);
    array_set_err (err, "%s", why);
    break;
  case MD_START_NO_SLOT:
    array_set_err (err, "no member has a data slot in the array (all are "
                   "spares or faulty)");
    break;
  case MD_START_SAME_SLOT: {
    int d = as->refusal_dev, slot = as->dev[d].slot, other = as->owner[slot];

    array_set_err (err, "members %d (%s) and %d (%s) both hold slot %d with "
                   "the same events counter: give only one of them", other,
                   g->opened[other].path, d, g->opened[d].path, slot);
    break;
  }
  case MD_START_TOO_FEW:
    slots_out (g, why, sizeof why);
    array_set_err (err, "cannot start: RAID-5 survives the loss of one "
                   "member, and %s%s", why, as->force_helps
                   ? "; force=true takes the newest member left out back "
                   "in sync, as mdadm --force does (writes it missed are "
                   "lost)" : "");
    break;
  case MD_START_DIRTY_DEGRADED:
    slots_out (g, why, sizeof why);
    /* A member partly rebuilt stays and its rebuild goes on (md keeps a
     * recovering device: super_1_validate's recovery_offset).
     */
    array_set_err (err, "cannot start a dirty and degraded array (%s), and "
                   "parity may be stale where writes were in flight when it "
                   "stopped; force=true starts it %s", why,
                   as->out >= 0 && as->owner[as->out] >= 0
                   ? "and goes on rebuilding that member" :
                   "without that member, which can then be re-added or "
                   "rebuilt while it serves (raid5ctl re-add or rebuild "
                   "--control)");
    break;
  case MD_START_NOT_ALL:
    slots_out (g, why, sizeof why);
    array_set_err (err, "the superblocks record %u working members, %u are "
                   "usable (%s): give 'missing' for that slot to start "
                   "degraded (mdadm --run), or rebuild it", as->working,
                   as->in_sync + as->recovering, why);
    break;
  }
  return -EINVAL;
}

/* Parameters given by the user must agree with the superblocks. */
static int
check_given (const struct array_config *cfg, const struct md_sb *sb,
             struct array_err *err)
{
  const char *what = NULL;
  char got[64] = "";

  if ((cfg->given & ARRAY_GIVEN_CHUNK) && cfg->chunk != sb->chunksize * 512ULL)
    what = "chunk", snprintf (got, sizeof got, "%" PRIu32 "K",
                              sb->chunksize / 2);
  else if ((cfg->given & ARRAY_GIVEN_LAYOUT) && cfg->layout != sb->layout)
    what = "layout", snprintf (got, sizeof got, "%s",
                               r5_layout_name (sb->layout));
  else if ((cfg->given & ARRAY_GIVEN_DATA_OFFSET) &&
           cfg->data_offset != sb->data_offset * 512)
    what = "data-offset", snprintf (got, sizeof got, "%" PRIu64,
                                    sb->data_offset * 512);
  if (what == NULL)
    return 0;
  array_set_err (err, "%s= conflicts with the md superblocks, which say %s "
                 "(leave it out to serve the array as it is)",
                 what, got);
  return -EINVAL;
}

/* An array mid-grow is served across its line (grow.h), and the grow
 * goes on -- with a bitmap too (its bits are member regions, marked in
 * the shape each write runs in: grow_write_stripes), but not with a
 * partial parity log (md refuses to reshape one: raid5.c check_reshape;
 * array_grow_start refuses to begin such grows).
 */
static int
check_reshape (const struct md_sb *sb, struct array_err *err)
{
  if (!(sb->feature_map & MD_FEATURE_RESHAPE_ACTIVE) ||
      !(sb->feature_map & MD_FEATURE_ANY_PPL))
    return 0;
  array_set_err (err, "the array is being grown from %" PRIu32 " to %" PRIu32
                 " members (the md superblocks say %" PRIu64 " of %" PRIu64
                 " sectors done) and keeps a partial parity log: carrying "
                 "such a grow on is not supported here",
                 sb->raid_disks - (uint32_t) sb->delta_disks, sb->raid_disks,
                 sb->reshape_position, md_sb_reshape_end (sb));
  return -ENOTSUP;
}

static int
set_geometry (struct array *a, const struct md_sb *sb, struct array_err *err)
{
  uint64_t doff = sb->data_offset * 512;
  int r = r5_geom_init (&a->geom, &(struct r5_geom_params) {
      .members = sb->raid_disks, .chunk = sb->chunksize * 512ULL,
      .layout = (enum r5_layout) sb->layout, .data_offset = doff,
      .member_bytes = doff + sb->size * 512 });

  if (r < 0)
    array_set_err (err, "md superblock geometry is not usable here: %s",
                   strerror (-r));
  return r;
}

/* The geometry, or mid-grow both (grow.h: a->geom is then the new). */
static int
set_shape (struct array *a, const struct md_sb *sb, struct array_err *err)
{
  if (!(sb->feature_map & MD_FEATURE_RESHAPE_ACTIVE))
    return set_geometry (a, sb, err);
  return grow_resume (a, sb, err);
}

/* The device to read the bitmap from: one in sync, as md's read_sb_page
 * takes an In_sync device only (md-bitmap.c) -- never one being rebuilt,
 * whose bitmap area a power cut may have left as the disk had it (its
 * superblock and its bitmap are written at once) -- the one with the
 * most events (one taken in sync one event behind has an older bitmap),
 * the lowest slot of those; the freshest if none is in sync.
 */
static int
bitmap_source (const struct gathered *g)
{
  const struct md_assembly *as = &g->as;
  int best = -1;

  for (unsigned s = 0; s < as->raid_disks; s++) {
    int o = as->owner[s];

    if (o >= 0 && as->dev[o].fate == MD_FATE_IN_SYNC &&
        (best < 0 || g->f[o].sb.events > g->f[best].sb.events))
      best = o;
  }
  return best >= 0 ? best : as->freshest;
}

/* The bitmap says which left-out members a re-add can bring back. */
static int
load_bitmap (struct array *a, struct gathered *g, struct array_err *err)
{
  struct md_assembly *as = &g->as;
  const struct md_sb *fresh = &g->f[as->freshest].sb;
  int r;

  if (as->refusal == MD_START_FOREIGN ||
      !(fresh->feature_map & MD_FEATURE_BITMAP_OFFSET))
    return 0;
  a->meta.live.common = *fresh;
  if ((r = meta_load_bitmap (a, &g->opened[bitmap_source (g)], err)) < 0)
    return r;
  /* Older than the superblocks, it cannot say what a member that left
   * has missed (md_bitmap_read_sb: "bitmap file is out of date ...
   * forcing full recovery", events_cleared = mddev->events): such a
   * member comes back rebuilt whole.
   */
  if (meta_bitmap_stale (&a->meta))
    a->meta.bm.events_cleared = fresh->events;
  md_asm_bitmap (as, g->f, g->n, a->meta.bm.events_cleared);
  return 0;
}

/* Move each member in service into its slot (the rest stay in opened, to
 * be closed by the caller) and tell health which slot is out.
 */
static void
place_members (struct array *a, const struct md_assembly *as,
               struct io_member *opened)
{
  for (unsigned s = 0; s < as->raid_disks; s++) {
    int o = as->owner[s];

    if (o < 0)
      continue;
    a->members[s] = opened[o];
    io_member_init (&opened[o]);
  }
  /* A replacement being copied (one at a time here: others stay out).
   * After an unclean stop its copy starts over: a write reaches the
   * slot's member before its replacement (wp_run_writes), so one in
   * flight at the crash may be on the member only, below the recorded
   * point -- which the array serves until the replacement takes the slot
   * (meta_start records the new point).
   */
  for (unsigned s = 0; s < as->raid_disks; s++) {
    int o = as->repl[s];

    if (o < 0 || a->replace.slot >= 0)
      continue;
    a->members[ARRAY_REPLACEMENT] = opened[o];
    io_member_init (&opened[o]);
    replace_attach (a, s, as->dirty ? 0 : as->dev[o].recovery_offset);
    if (as->dirty && as->dev[o].recovery_offset != 0)
      array_log (a, ARRAY_LOG_ERROR, "slot %u's replacement (%s): the "
                 "array was not stopped cleanly, so its copy starts over",
                 s, a->members[ARRAY_REPLACEMENT].path);
  }
  if (as->out < 0)
    return;
  if (as->owner[as->out] >= 0)
    health_set_out (&a->health, (unsigned) as->out, MEMBER_REBUILDING,
                    as->due_from * 512 / a->geom.chunk,
                    as->dev[as->owner[as->out]].bitmap_recovery &&
                    a->meta.has_bitmap);
  else
    health_set_out (&a->health, (unsigned) as->out, MEMBER_MISSING, 0,
                    false);
}

/* Each slot in service takes its member's bad-block table, and the state
 * model learns which of them list bad blocks (feature 0x8 is per member).
 */
static void
attach_tables (struct array *a, struct gathered *g)
{
  for (unsigned s = 0; s < g->as.raid_disks; s++) {
    int o = g->as.owner[s];

    if (o < 0)
      continue;
    a->meta.live.slot[s].bad_blocks = g->bb[o] != NULL && g->bb[o]->count;
    array_bb_attach (a, s, g->bb[o]);
    g->bb[o] = NULL;
  }
}

/* One line per member left out (why, and what to do); a member that
 * could come back into the out slot is remembered for a re-add.
 */
static void
log_left_out (struct array *a, const struct gathered *g)
{
  const struct md_assembly *as = &g->as;
  char line[ARRAY_ERR_LEN];

  for (unsigned i = 0; i < g->n; i++) {
    const struct md_verdict *v = &as->dev[i];

    /* A replacement taken (moved to its place: place_members) is not
     * left out; one not taken (another's copy runs) is.
     */
    if (v->fate == MD_FATE_IN_SYNC || v->fate == MD_FATE_RECOVERING ||
        v->fate == MD_FATE_ABSENT ||
        (v->fate == MD_FATE_REPLACEMENT && !io_member_is_open (&g->opened[i])))
      continue;
    say_fate (g, i, line, sizeof line);
    array_log (a, ARRAY_LOG_ERROR, "%s: left out", line);
    if ((v->fate == MD_FATE_STALE || v->fate == MD_FATE_REMOVED ||
         v->fate == MD_FATE_FAULTY) && !md_asm_replaced (as, g->f, i) &&
        v->slot >= 0 && v->slot == as->out && a->left_out[v->slot] == NULL) {
      a->left_out[v->slot] = strdup (g->opened[i].path);
      a->left_re_addable[v->slot] = v->re_addable;
    }
  }
}

/* md's one-event margin, said aloud.  A member exactly one event behind
 * the freshest is taken as current when the freshest still records it
 * working (super_1_validate: "ev1 < mddev->events" only kicks a device
 * more than one behind; mdadm's Assemble.c accepts events + 1 ==
 * most_recent the same way), because a superblock write reaches the
 * members one at a time and a crash between two leaves one a write
 * behind.  The same margin takes back an old copy of the member put in
 * its place, whose data is stale: nothing in the superblocks tells the
 * two apart, so the log and status name the member and the rule.
 */
static void
log_one_behind (struct array *a, const struct gathered *g)
{
  const struct md_assembly *as = &g->as;
  uint64_t fresh = g->f[as->freshest].sb.events;

  for (unsigned s = 0; s < as->raid_disks; s++) {
    int o = as->owner[s];

    if (o < 0 || g->f[o].sb.events + 1 != fresh || as->dev[o].forced_in)
      continue;
    a->one_behind[s] = true;
    array_log (a, ARRAY_LOG_ERROR, "slot %u (%s) is one event behind the "
               "others (events %" PRIu64 ", theirs %" PRIu64 "): taken as "
               "current, as md does (a crash between two superblock "
               "writes leaves a member one behind); if it is an older copy "
               "put back, its data is stale: raid5ctl check finds it", s,
               a->members[s].path, g->f[o].sb.events, fresh);
  }
}

static void
log_degraded (struct array *a, const struct array_config *cfg,
              const struct md_assembly *as)
{
  bool said_missing = false;
  int out = as->out;

  for (unsigned i = 0; i < cfg->members; i++)
    said_missing |= cfg->paths[i] == NULL;
  if (out >= 0 && as->owner[out] >= 0)
    array_log (a, ARRAY_LOG_DEBUG, "slot %d (%s) is partly rebuilt "
               "(%" PRIu64 " of %" PRIu64 " sectors of each member): the "
               "rebuild resumes", out, a->members[out].path, as->due_from,
               a->geom.member_data / 512);
  else if (out >= 0)
    array_log (a, a->left_out[out] || !said_missing ? ARRAY_LOG_ERROR
                                                    : ARRAY_LOG_DEBUG,
               "slot %d has no usable member: the array runs degraded on "
               "%u of %u members", out, a->geom.members - 1, a->geom.members);
}

static int
assemble_from (struct array *a, const struct array_config *cfg,
               struct gathered *g, struct array_err *err)
{
  struct md_asm_opts o = { .force = cfg->force, .take_stale = cfg->force,
                           .run = cfg->run };
  const struct md_assembly *as = &g->as;
  int r, verdict;

  if ((r = read_all (cfg, g, err)) <= 0)
    return r;                 /* 0: raw members */
  for (unsigned i = 0; i < cfg->members; i++)
    o.run |= cfg->paths[i] == NULL;
  verdict = md_assemble (g->f, g->n, &o, &g->as);
  if (as->freshest >= 0 && (r = load_bitmap (a, g, err)) < 0)
    return r;
  if ((as->freshest >= 0 &&
       (r = check_reshape (&g->f[as->freshest].sb, err)) < 0) ||
      (verdict < 0 && (r = refused (g, err)) < 0) ||
      (r = check_given (cfg, &g->f[as->freshest].sb, err)) < 0 ||
      (r = set_shape (a, &g->f[as->freshest].sb, err)) < 0)
    return r;
  a->meta.enabled = true;
  a->meta.forced = as->forced;
  a->meta.forced_in = as->forced_in > 0;
  md_live_init (&a->meta.live, g->f, as);
  place_members (a, as, g->opened);
  attach_tables (a, g);
  return 1;
}

/* The lines assembly owes: who was taken one behind, who was left out,
 * that the array runs degraded or was forced.
 */
static void
say_assembled (struct array *a, const struct array_config *cfg,
               const struct gathered *g)
{
  const struct md_assembly *as = &g->as;

  log_one_behind (a, g);
  for (unsigned i = 0; i < g->n; i++)
    if (as->dev[i].forced_in)
      array_log (a, ARRAY_LOG_ERROR, "member %u (%s) forced into slot %d "
                 "(force=true, as mdadm --force: its events %" PRIu64
                 ", the array's %" PRIu64 "): writes it missed are lost "
                 "there", i, a->members[as->dev[i].slot].path,
                 as->dev[i].slot,
                 g->f[i].sb.events, g->f[as->freshest].sb.events);
  log_left_out (a, g);
  log_degraded (a, cfg, as);
  if (as->forced)
    array_log (a, ARRAY_LOG_ERROR, "starting a dirty and degraded array "
               "(force=true): data in stripes written at the crash may be "
               "wrong");
}

/* metadata=none serves members as raw data from cfg->data_offset: a
 * member of an md array whose metadata (superblock, bitmap, bad-block
 * log, PPL: all before md's data offset) lies there would have it
 * overwritten by the first write over it, and its array with it.  Only
 * a superblock that reads whole counts (a raw member's data may hold
 * anything else).
 */
static int
refuse_md_members (const struct array_config *cfg,
                   const struct io_member *opened, struct array_err *err)
{
  for (unsigned i = 0; i < cfg->members; i++) {
    struct array_err ignored = { .msg = "" };
    struct md_sb sb;

    if (!io_member_is_open (&opened[i]) ||
        meta_read_sb (&opened[i], "member", &sb, &ignored) != 1 ||
        cfg->data_offset >= sb.data_offset * 512)
      continue;
    array_set_err (err, "member %u (%s) holds an md superblock (of a "
                   "%u-member array, data from byte %" PRIu64 "): "
                   "metadata=none would serve its metadata as data and "
                   "overwrite it; leave metadata= out to serve that array, "
                   "or wipe it first (wipefs -a)", i, opened[i].path,
                   sb.raid_disks, sb.data_offset * 512);
    return -EEXIST;
  }
  return 0;
}

int
meta_assemble (struct array *a, const struct array_config *cfg,
               struct io_member *opened, struct array_err *err)
{
  struct gathered *g;
  int r;

  if (cfg->metadata == ARRAY_META_NONE)
    return refuse_md_members (cfg, opened, err);
  if ((g = calloc (1, sizeof *g)) == NULL)
    return -ENOMEM;
  g->opened = opened;
  g->n = cfg->members;
  r = assemble_from (a, cfg, g, err);
  for (unsigned i = 0; i < R5_MAX_MEMBERS; i++)
    free (g->bb[i]);
  if (r == 1)
    say_assembled (a, cfg, g);
  free (g);
  return r < 0 ? r : 0;
}

