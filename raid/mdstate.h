/* raid/mdstate.h -- md's state rules for a v1.2 RAID-5 array: who is
 * current, stale, faulty, spare or being rebuilt when the array is
 * assembled (md_asm_*), and what every member's superblock must say after
 * each event of the running array (md_live_*).  Everything in this project
 * that decides these things asks this file: the plugin's assembly
 * (array/assemble.c), the live metadata (array/meta.c), raid5ctl's
 * examine, create, rebuild, re-add and teaching commands.
 *
 * The rules, and where they come from (drivers/md/md.c of Linux 6.1 as
 * Debian 12 ships it, mdadm 4.2's Assemble.c and super1.c):
 *
 *  Assembly
 *  - The freshest member is the one with the most events among members
 *    whose own superblock gives them a data slot (mdadm's most_recent;
 *    md's analyze_sbs keeps the highest events).  Ties go to the lowest
 *    slot (mdadm's chosen_drive is the first up-to-date slot).
 *  - A member more than one event behind it missed writes: stale, left
 *    out (super_1_validate returns -EINVAL: "kicking non-fresh"; mdadm's
 *    event_margin of 1 applies whether the array is clean or dirty).
 *  - A member exactly one event behind takes its role from the freshest
 *    superblock, not from its own (super_1_validate: "we cannot trust our
 *    superblock about the role"): if the others record it faulty it is
 *    faulty; if they record its slot as empty (0xffff, what md writes for
 *    a member absent while the array was written) it is only a spare.
 *    This is the rule that keeps a member that missed writes out.
 *  - A member that records the freshest member's slot as not working is
 *    refused (mdadm: "ignoring X as it reports Y as failed"): the two
 *    have been written apart.
 *  - Two members claiming one slot: the one with more events holds it
 *    (mdadm's best[]); with equal events we refuse (see departures).
 *  - A member whose own superblock has MD_FEATURE_RECOVERY_OFFSET is
 *    being rebuilt: in service below recovery_offset only (mdadm counts it
 *    as "rebuilding", md leaves it !In_sync).
 *  - A member whose own superblock has MD_FEATURE_REPLACEMENT is the
 *    replacement of the device in its slot (md's Replacement flag,
 *    super_1_validate; mdadm's best[2 * role + 1]), copied up to its
 *    recovery_offset (all of it without MD_FEATURE_RECOVERY_OFFSET).  It
 *    is never the freshest (mdadm's most_recent must be in sync).  A slot
 *    whose own device is missing is held by its replacement, rebuilt
 *    from where the copy got (raid5_run: "The replacement is all we have
 *    yet").
 *  - Starting: RAID-5 needs all but one slot in sync, and all of them
 *    when dirty (mdadm's enough(); md's raid5_run: "cannot start dirty
 *    degraded array") unless forced, which records the array clean
 *    (mdadm --force, UOPT_SPEC_FORCE_ARRAY), or it keeps a partial parity
 *    log (mdadm counts it clean, md starts it and recovers the log).  Without run (the user did
 *    not say a member is missing), the members in sync or rebuilding must
 *    number at least what the freshest superblock records as working
 *    (mdadm's req_cnt: "need all N to start it (use --run to insist)").
 *  - Due after start: recovery of a rebuilding member from its
 *    recovery_offset; otherwise a resync from the freshest resync_offset
 *    if it is not MaxSector and the array is whole (a degraded array
 *    cannot resync; raid5_sync_request skips it).
 *
 *  The running array (md_update_sb, super_1_sync)
 *  - Every superblock write bumps events by one and goes to every member
 *    in service (in sync or rebuilding), never to a faulty one.
 *  - dev_roles is rebuilt on every write: every entry 0xffff, then each
 *    attached device: its slot if in sync or rebuilding, 0xfffe if it
 *    failed.  So a slot that had no device when the array was written
 *    reads 0xffff in the survivors, and a member that returns after
 *    missing those writes is no longer current (see assembly).
 *  - resync_offset: 0 while dirty (writes may be in flight), the resync
 *    checkpoint when clean (MaxSector when nothing is due).
 *  - A rebuilding member's own superblock carries
 *    MD_FEATURE_RECOVERY_OFFSET and recovery_offset, plus
 *    MD_FEATURE_RECOVERY_BITMAP when the array has a bitmap and the
 *    member was re-added to its old slot (saved_raid_disk >= 0).
 *  - A new device gets the smallest dev_number >= raid_disks that no
 *    attached device uses (bind_rdev_to_array); a re-added one keeps its.
 *  - A replacement (md's want_replacement) gets a new dev_number too, the
 *    slot's role in dev_roles (it is not In_sync: super_1_sync writes its
 *    raid_disk), and in its own superblock MD_FEATURE_REPLACEMENT and
 *    MD_FEATURE_RECOVERY_OFFSET with how far its copy has come.  When the
 *    copy is done it takes the slot (raid5_spare_active marks the old
 *    device faulty, raid5_remove_disk puts the replacement in its place
 *    and clears the flag): the old device is no longer attached.
 *  - Re-add (md's add_new_disk with a bitmap; mdadm --re-add): allowed
 *    when the member's own superblock names this array and this slot, and
 *    its events are at least the bitmap's events_cleared (bits were never
 *    cleared since it left, so they cover everything it missed).  One
 *    that left part-way through a rebuild that was not bitmap-guided is
 *    rebuilt whole (md_readd_whole).
 *
 * Departures, and why:
 *  - events never go down: md rolls a clean<->dirty flip back (events-1)
 *    so that spares, which it does not write on those flips, stay within
 *    one event.  We write no superblock to a spare until it takes a slot,
 *    and a counter that only grows makes "missed an update" unambiguous.
 *  - two members with equal events claiming one slot are refused instead
 *    of taking the first one given: the order of disk= carries no meaning
 *    here, so there is no "first".
 *
 * Pure: no I/O, no allocation, no locks; callers serialise.  Units: md's
 * (512-byte sectors), as in struct md_sb.
 */
#ifndef RAID_MDSTATE_H
#define RAID_MDSTATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "raid/geom.h"
#include "raid/mdsb.h"

/* ---- assembly ---- */

/* One device given for the array (slot order does not matter). */
struct md_found {
  bool present;               /* false: "missing" */
  bool has_sb;                /* a v1.2 superblock decoded into sb */
  struct md_sb sb;
};

/* What assembly makes of one device. */
enum md_fate {
  MD_FATE_IN_SYNC,            /* in service in its slot */
  MD_FATE_RECOVERING,         /* in its slot, rebuilt below recovery_offset */
  MD_FATE_SPARE,              /* of this array, without a slot */
  MD_FATE_STALE,              /* more than one event behind: missed writes */
  MD_FATE_REMOVED,            /* one behind, and its slot was written
                               * without it: missed writes (md: a spare) */
  MD_FATE_FAULTY,             /* recorded faulty by the freshest */
  MD_FATE_SPLIT,              /* records the freshest member as failed */
  MD_FATE_DUPLICATE,          /* its slot is held by a fresher member */
  MD_FATE_FOREIGN,            /* another array, another geometry, or none */
  MD_FATE_ABSENT,             /* not given */
  MD_FATE_REPLACEMENT,        /* the replacement of its slot's device,
                               * copied below recovery_offset */
};

struct md_verdict {
  enum md_fate fate;
  int slot;                   /* the slot it holds, or the one its own
                               * superblock claims (-1: none) */
  uint64_t recovery_offset;   /* RECOVERING: sectors rebuilt */
  bool bitmap_recovery;       /* RECOVERING after a bitmap re-add */
  bool re_addable;            /* left out, but a bitmap re-add brings it
                               * back (set by md_asm_bitmap; not one
                               * that left mid-rebuild, md_readd_whole,
                               * nor one replaced, md_asm_replaced) */
  bool forced_in;             /* left out, but taken in sync by force=true
                               * (mdadm --force: "forcing event count") */
};

enum md_refusal {
  MD_START_OK,
  MD_START_FOREIGN,           /* a device is not of this array (dev) */
  MD_START_NO_SLOT,           /* no device holds a data slot */
  MD_START_SAME_SLOT,         /* two devices, equal events, one slot (dev) */
  MD_START_TOO_FEW,           /* two or more slots not in sync */
  MD_START_DIRTY_DEGRADED,    /* dirty with a slot not in sync, not forced */
  MD_START_NOT_ALL,           /* fewer than the array records as working,
                               * and no member was said to be missing */
};

enum md_due {
  MD_DUE_NOTHING,
  MD_DUE_RESYNC,              /* parity from data, from due_from */
  MD_DUE_RECOVERY,            /* rebuild slot out, from due_from */
};

struct md_asm_opts {
  bool force;                 /* start dirty and degraded anyway */
  bool take_stale;            /* too few in sync: take the newest left out
                               * back in sync (mdadm --force's "forcing
                               * event count") */
  bool run;                   /* a member was given as missing: start
                               * degraded without asking (mdadm --run) */
};

struct md_assembly {
  enum md_refusal refusal;
  int refusal_dev;            /* the device FOREIGN/SAME_SLOT names, or -1
                               * (SAME_SLOT: owner[] holds the other) */
  int freshest;               /* device whose superblock is the array's */
  struct md_verdict dev[R5_MAX_MEMBERS];
  int owner[R5_MAX_MEMBERS];  /* device holding each slot, or -1 */
  int repl[R5_MAX_MEMBERS];   /* each slot's replacement device, or -1 */
  unsigned raid_disks;
  unsigned in_sync, recovering, working;  /* working: what the freshest
                                           * superblock records */
  int out;                    /* the slot not in sync, or -1 */
  bool dirty;                 /* some current member says so */
  bool force_helps;           /* refused as too few, but take_stale would
                               * start it (force_in) */
  unsigned forced_in;         /* members take_stale took back in sync:
                               * record the superblocks at once */
  bool forced;                /* started dirty and degraded by force:
                               * record the array clean at once */
  enum md_due due;
  uint64_t due_from;          /* sectors from data_offset */
};

/* Decide, for n <= R5_MAX_MEMBERS devices, who is what and whether the
 * array may start.  Geometry and identity are checked against the
 * freshest superblock (MD_FATE_FOREIGN).  Always fills *as; returns 0 if
 * the array may start, -EINVAL if not (as->refusal says why).
 */
int md_assemble (const struct md_found *found, unsigned n,
                 const struct md_asm_opts *opts, struct md_assembly *as)
  __attribute__((nonnull, warn_unused_result));

/* With an internal bitmap whose bits were last cleared at events_cleared:
 * mark the left-out members whose missed writes it covers (re_addable),
 * by md_readd_check's rule.  as comes from md_assemble on the same f.
 */
void md_asm_bitmap (struct md_assembly *as, const struct md_found *f,
                    unsigned n, uint64_t events_cleared)
  __attribute__((nonnull));

/* Do a and b describe the same array (uuid, level, layout, chunk,
 * disks, size, data offset)?
 */
bool md_sb_same_array (const struct md_sb *a, const struct md_sb *b)
  __attribute__((nonnull));

/* Was dev (a device that left) or fresh (the array now) being grown, or
 * are their shapes not the same?  Then the bitmap cannot say what dev
 * missed: it marks what clients wrote, not what a reshape moved, and a
 * reshape moves windows between the positions it records.
 */
bool md_sb_grown_since (const struct md_sb *dev, const struct md_sb *fresh)
  __attribute__((nonnull));

/* Does sb record slot as held by a working device (mdadm's devmap)? */
bool md_sb_records_working (const struct md_sb *sb, unsigned slot)
  __attribute__((nonnull));

/* Short names ("in sync", "stale", ...) for status and JSON. */
const char *md_fate_name (enum md_fate fate);

/* Was dev (left out) replaced: does the freshest superblock give the
 * slot it claims to another device number (a replace, or a rebuild onto
 * a new disk)?  Such a device cannot come back by a re-add.
 */
bool md_asm_replaced (const struct md_assembly *as, const struct md_found *f,
                      unsigned dev)
  __attribute__((nonnull));
/* ... and the device number that holds dev's slot in the freshest
 * superblock instead, or MD_SB_MAX_DEV if none does (or dev is not a
 * left-out device with a slot).
 */
unsigned md_asm_slot_holder (const struct md_assembly *as,
                             const struct md_found *f, unsigned dev)
  __attribute__((nonnull));

/* One clause saying why device dev is not in service, and what to do,
 * without naming it (the caller does): "is stale: its events counter (5)
 * is 2 behind the array's (7), so it missed writes; rebuild it, or
 * re-add it: the bitmap covers what it missed".  Empty for members in
 * service.
 */
void md_fate_explain (const struct md_assembly *as,
                      const struct md_found *found, unsigned dev,
                      char *buf, size_t len)
  __attribute__((nonnull));

/* ---- the running array ---- */

enum md_slot_state {
  MD_SLOT_IN_SYNC,
  MD_SLOT_ABSENT,             /* no device attached */
  MD_SLOT_FAULTY,             /* its device failed while the array ran */
  MD_SLOT_RECOVERING,         /* a device is being rebuilt into it */
};

/* A slot's replacement while it is copied (md's Replacement rdev). */
struct md_live_repl {
  bool attached;
  uint32_t dev_number;
  uint8_t device_uuid[16];
  uint64_t data_size;         /* sectors */
  uint64_t recovery_offset;   /* sectors copied */
};

struct md_live_slot {
  enum md_slot_state state;
  uint32_t dev_number;        /* of the attached device (not ABSENT) */
  uint8_t device_uuid[16];
  uint64_t data_size;         /* sectors */
  uint64_t recovery_offset;   /* RECOVERING: sectors rebuilt */
  bool bitmap_recovery;       /* RECOVERING: re-added, bitmap-guided */
  uint32_t corrected_read;    /* sectors whose read error was corrected */
  struct md_live_repl repl;   /* IN_SYNC: its replacement, if any */
  bool bad_blocks;            /* its md bad-block table is not empty:
                               * super_1_sync sets feature 0x8 in its own
                               * superblock only (raid/badblocks.h) */
};

struct md_live {
  struct md_sb common;        /* array-wide fields, events included */
  struct md_live_slot slot[R5_MAX_MEMBERS];
  bool dirty;                 /* on disk: writes may be in flight */
  uint64_t resync_cp;         /* resync checkpoint; MaxSector: none due */
};

/* The live state assembly leaves (as must have started). */
void md_live_init (struct md_live *s, const struct md_found *found,
                   const struct md_assembly *as)
  __attribute__((nonnull));

enum md_event_kind {
  MD_EV_DIRTY,                /* the first write after clean */
  MD_EV_CLEAN,                /* idle, or stopping: nothing in flight */
  MD_EV_FAIL,                 /* slot's device failed */
  MD_EV_ADD,                  /* a new device takes slot, to be rebuilt */
  MD_EV_RE_ADD,               /* slot's own device comes back */
  MD_EV_RECOVERY_CP,          /* slot rebuilt up to sectors */
  MD_EV_RECOVERY_DONE,        /* slot is in sync */
  MD_EV_RESYNC_CP,            /* resync done up to sectors (not written) */
  MD_EV_RESYNC_DONE,          /* nothing more to resync */
  MD_EV_FORCE_CLEAN,          /* forced start: record the array clean */
  /* Growing by members (raid/reshape.h; md's raid5_start_reshape and
   * super_1_sync): GROW gives `add` new devices the slots after the last
   * one, in sync (md sets In_sync on slots past previous_raid_disks),
   * raid_disks the new count, the reshape fields (position 0, delta_disks,
   * new_offset: sectors, negative); RESHAPE_CP records the position (array
   * sectors); RESHAPE_DONE moves every data offset by new_offset (each
   * device's data_size grows by as much, md_finish_reshape) and clears
   * the reshape.
   */
  MD_EV_GROW,
  MD_EV_RESHAPE_CP,
  MD_EV_RESHAPE_DONE,
  /* A read error on slot's device corrected (rewritten from the row and
   * read again): its cnt_corrected_read grows by `sectors` (md's
   * rdev->corrected_errors, which super_1_sync writes; md writes no
   * superblock for it, so it waits for the next write).
   */
  MD_EV_CORRECTED_READ,
  /* Hot replace (md's want_replacement; mdadm --replace): REPLACE_ADD
   * attaches a new device (device_uuid, data_size) to slot, in sync, as
   * its replacement, copied from 0; REPLACE_CP records how far the copy
   * is (sectors); REPLACE_DONE puts the replacement in the slot, the old
   * device detached; REPLACE_DROP detaches the replacement (it failed,
   * or it becomes the slot's rebuilt device by an ADD); REPLACE_PROMOTE
   * puts the replacement in a slot whose own device failed, recovering
   * from sectors (where its copy got), the failed device let go (md's
   * raid5_remove_disk moving the replacement into rdev, as raid5_run
   * does at assembly).
   */
  MD_EV_REPLACE_ADD,
  MD_EV_REPLACE_CP,
  MD_EV_REPLACE_DONE,
  MD_EV_REPLACE_DROP,
  MD_EV_REPLACE_PROMOTE,
  /* Slot's bad-block table changed (an entry recorded or cleared; md's
   * rdev_set_badblocks / rdev_clear_badblocks, which set
   * MD_SB_CHANGE_PENDING so that md_update_sb writes the log and the
   * superblocks): sectors is 1 while the table lists anything, 0 when
   * it is empty (feature 0x8 in that slot's superblock).
   */
  MD_EV_BAD_BLOCKS,
  /* The component size grown (md's update_size and raid5_resize; mdadm
   * --grow --size): the array's size becomes sectors and each attached
   * device's data_size its data_sizes[slot] (rdev_size_change: all its
   * room after the data offset); a resync is then due from the old size,
   * unless one is due from before it (md: recovery_cp = the old
   * dev_sectors when it was past them) -- or none, with clean (mdadm
   * --assume-clean).
   */
  MD_EV_RESIZE,
  /* An internal bitmap added (sectors 1: at 8 sectors from the
   * superblock, mdadm's place) or removed (0): mdadm --grow
   * --bitmap=internal|none, md's bitmap/location.
   */
  MD_EV_BITMAP,
};

struct md_event {
  enum md_event_kind kind;
  unsigned slot;              /* FAIL, ADD, RE_ADD, RECOVERY_* */
  uint64_t sectors;           /* RECOVERY_CP, RESYNC_CP */
  const uint8_t *device_uuid; /* ADD: the new device's (16 bytes) */
  uint64_t data_size;         /* ADD, RE_ADD: sectors */
  uint32_t dev_number;        /* RE_ADD: the device's own */
  bool bitmap;                /* RE_ADD: rebuild only what the bitmap
                               * marks (md's Bitmap_sync); else all */
  unsigned add;               /* GROW: new devices, their uuids at
                               * device_uuid (16 bytes each), each of
                               * data_size sectors */
  int32_t new_offset;         /* GROW */
  const uint64_t *data_sizes; /* RESIZE: by slot, sectors */
  bool clean;                 /* RESIZE: no resync of the new space */
};

/* Apply ev to s.  Returns true if superblocks must be written now (events
 * has been bumped), false for changes that wait for the next write.
 * Events that do not fit the state (ADD to a slot in sync, ...) are the
 * caller's bug: asserted.
 */
bool md_live_apply (struct md_live *s, const struct md_event *ev)
  __attribute__((nonnull));

/* Does slot's device get superblock writes (in sync or rebuilding)? */
bool md_live_writes (const struct md_live *s, unsigned slot)
  __attribute__((nonnull));

/* The superblock slot's device must carry now. */
void md_live_sb (const struct md_live *s, unsigned slot, struct md_sb *sb)
  __attribute__((nonnull));

/* The superblock slot's replacement (attached) must carry now. */
void md_live_sb_repl (const struct md_live *s, unsigned slot,
                      struct md_sb *sb) __attribute__((nonnull));

/* Is dev_number in use by a device attached to a slot other than
 * except?  (md refuses a device whose number is taken: -EBUSY.)
 */
bool md_live_dev_number_taken (const struct md_live *s, uint32_t dev,
                               unsigned except)
  __attribute__((nonnull));

/* The dev_number a new device for the array gets. */
uint32_t md_live_new_dev_number (const struct md_live *s)
  __attribute__((nonnull));

/* A device asking to be re-added, and what the array's bitmap covers. */
struct md_readd {
  const struct md_sb *dev;    /* its own superblock */
  unsigned slot;              /* the slot it asks for */
  bool has_bitmap;            /* the array has a write-intent bitmap ... */
  uint64_t events_cleared;    /* ... whose superblock says this */
};

/* Can q->dev be re-added into q->slot of the live array s, bitmap-guided?
 * Not if it names another array or slot, is newer, records a member in
 * sync here as failed (written apart), its device number is taken, its
 * bad-block log lists bad blocks (feature 0x8: nothing here reads around
 * them yet), or the bitmap cannot say what it missed.  Returns 0, or -EINVAL with the
 * reason in why (len bytes).
 */
int md_readd_check (const struct md_live *s, const struct md_readd *q,
                    char *why, size_t len)
  __attribute__((nonnull));

/* Must a re-add of dev (md_readd_check said yes) rebuild it whole rather
 * than what the bitmap marks?  Yes when its own superblock records a
 * rebuild that was not bitmap-guided (MD_FEATURE_RECOVERY_OFFSET without
 * MD_FEATURE_RECOVERY_BITMAP): it left part-way through a rebuild onto
 * it, so past its recovery_offset it holds what it held before, which
 * no bitmap marks.  md: super_1_validate sets saved_raid_disk to -1 for
 * such a device, raid5_add_disk then sets conf->fullsync, and the hot
 * add starts its recovery at 0 (remove_and_add_spares).  A bitmap-guided
 * re-add cut short (both flags) stays bitmap-guided: the bits are not
 * cleared while a member is out or recovering.
 */
bool md_readd_whole (const struct md_sb *dev) __attribute__((nonnull));

#endif /* RAID_MDSTATE_H */
