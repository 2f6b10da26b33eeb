/* raid/mdwords.c -- md's state rules in words: why assembly left a
 * device out, and what to do about it (mdstate.h: md_fate_name,
 * md_fate_explain).
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "raid/mdstate.h"

const char *
md_fate_name (enum md_fate fate)
{
  static const char *const names[] = {
    [MD_FATE_IN_SYNC] = "in sync", [MD_FATE_RECOVERING] = "rebuilding",
    [MD_FATE_SPARE] = "spare", [MD_FATE_STALE] = "stale",
    [MD_FATE_REMOVED] = "removed", [MD_FATE_FAULTY] = "faulty",
    [MD_FATE_SPLIT] = "split", [MD_FATE_DUPLICATE] = "duplicate",
    [MD_FATE_FOREIGN] = "foreign", [MD_FATE_ABSENT] = "absent",
    [MD_FATE_REPLACEMENT] = "replacement",
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
  else {
    size_t k = (size_t) snprintf (buf, len, "disagrees with the other "
                                  "members' superblocks on");
    const struct { const char *name; int64_t its, array; } field[] = {
      { "level", f->sb.level, fresh->level },
      { "layout", f->sb.layout, fresh->layout },
      { "chunk (sectors)", f->sb.chunksize, fresh->chunksize },
      { "disks", f->sb.raid_disks, fresh->raid_disks },
      { "size (sectors)", f->sb.size, fresh->size },
      { "data offset (sectors)", f->sb.data_offset, fresh->data_offset },
    };
    const char *sep = "";

    for (size_t i = 0; i < sizeof field / sizeof field[0] && k < len; i++)
      if (field[i].its != field[i].array) {
        k += (size_t) snprintf (buf + k, len - k, "%s %s: %" PRId64
                                " (theirs %" PRId64 ")", sep, field[i].name,
                                field[i].its, field[i].array);
        sep = ",";
      }
    /* Older, and another shape: it left before a change of shape (a
     * grow) ended, and cannot catch up (mdadm refuses it too:
     * compare_super1's "doesn't match others").
     */
    if (k < len && f->sb.events < fresh->events)
      snprintf (buf + k, len - k, "; it is older (events %" PRIu64 " < %"
                PRIu64 "): it left before the array took its shape: give "
                "disk=missing in its place and rebuild it", f->sb.events,
                fresh->events);
  }
}

/* What a member that missed writes can do. */
static const char *
remedy (const struct md_verdict *v)
{
  return v->re_addable
    ? "; re-add it (the bitmap covers what it missed) or rebuild it"
    : "; rebuild it";
}

static bool
explain_replaced (const struct md_assembly *as, const struct md_found *f,
                  unsigned dev, char *buf, size_t len)
{
  const struct md_verdict *v = &as->dev[dev];
  const struct md_sb *sb = &f[dev].sb, *fresh = &f[as->freshest].sb;
  unsigned holder = md_asm_slot_holder (as, f, dev);
  /* Its own superblock calls it the slot's replacement: it was let go
   * (it failed, or the replace was stopped), not replaced itself.
   */
  const char *was = sb->feature_map & MD_FEATURE_REPLACEMENT
    ? "was the slot's replacement, let go before its copy ended"
    : "was replaced";

  if (holder == MD_SB_MAX_DEV)
    return false;
  if (v->slot < R5_MAX_MEMBERS && as->owner[v->slot] >= 0)
    snprintf (buf, len, "%s: slot %d is member %d's now (the others no "
              "longer count this one in: events %" PRIu64 ", it has %"
              PRIu64 ")", was, v->slot, as->owner[v->slot], fresh->events,
              sb->events);
  else
    snprintf (buf, len, "%s: slot %d is another device's now (device "
              "number %u, not given), and the others no longer count this "
              "one in (events %" PRIu64 ", it has %" PRIu64 "): give that "
              "device instead of this one", was, v->slot, holder,
              fresh->events, sb->events);
  return true;
}

void
md_fate_explain (const struct md_assembly *as, const struct md_found *f,
                 unsigned dev, char *buf, size_t len)
{
  const struct md_verdict *v = &as->dev[dev];
  const struct md_sb *sb = &f[dev].sb, *fresh = &f[as->freshest].sb;
  uint64_t ev = sb->events, fev = fresh->events;

  buf[0] = '\0';
  if (explain_replaced (as, f, dev, buf, len))
    return;
  switch (v->fate) {
  case MD_FATE_IN_SYNC: case MD_FATE_RECOVERING: case MD_FATE_ABSENT:
  case MD_FATE_REPLACEMENT:
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
