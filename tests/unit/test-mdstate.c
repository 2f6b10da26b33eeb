/* tests/unit/test-mdstate.c -- raid/mdstate.c against md's rules.
 *
 * The superblocks fed to assembly are written out by hand here, as kernel
 * md 6.1 left them in the guest (tests/vm/test-md-state.sh compares the
 * two on real images): after a degraded write the survivors are one event
 * ahead with the absent slot's role 0xffff; after a failure the failed
 * device's role is 0xfffe; a partly rebuilt device carries
 * RECOVERY_OFFSET.  The expected verdicts are md's (mdstate.h has the
 * rules and their sources).  Then every event of the running array, and a
 * random walk checking the one property all of this is for: a member that
 * missed a write never comes back in sync.
 */
#include <config.h>

#undef NDEBUG
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "raid/mdstate.h"

#define E 10                  /* events of the array before each story */
#define SIZE (1000 * 128)     /* sectors per member */

/* A member of a healthy, clean array of n as mdadm makes it. */
static struct md_sb
member_sb (unsigned n, unsigned slot, uint64_t events)
{
  struct md_sb sb;

  memset (&sb, 0, sizeof sb);
  memset (sb.set_uuid, 0xa5, 16);
  strcpy (sb.set_name, "host:test");
  sb.level = 5;
  sb.layout = 2;
  sb.size = SIZE;
  sb.chunksize = 128;
  sb.raid_disks = n;
  sb.data_offset = 2048;
  sb.data_size = SIZE;
  sb.super_offset = 8;
  sb.dev_number = slot;
  memset (sb.device_uuid, (int) slot + 1, 16);
  sb.events = events;
  sb.resync_offset = MD_MAX_SECTOR;
  sb.max_dev = 128;
  for (unsigned i = 0; i < 128; i++)
    sb.dev_roles[i] = i < n ? (uint16_t) i : MD_ROLE_SPARE;
  return sb;
}

static void
healthy (struct md_found *f, unsigned n, uint64_t events)
{
  memset (f, 0, sizeof *f * R5_MAX_MEMBERS);
  for (unsigned i = 0; i < n; i++)
    f[i] = (struct md_found) { true, true, member_sb (n, i, events) };
}

/* The survivors of slot `gone` moved on by `ahead` events, dirty or
 * clean, recording its role as `role` (0xffff absent, 0xfffe failed).
 */
static void
moved_on (struct md_found *f, unsigned n, unsigned gone, unsigned ahead,
          bool dirty, uint16_t role)
{
  for (unsigned i = 0; i < n; i++) {
    if (i == gone)
      continue;
    f[i].sb.events += ahead;
    f[i].sb.resync_offset = dirty ? 0 : MD_MAX_SECTOR;
    f[i].sb.dev_roles[gone] = role;
  }
}

static int
assemble (const struct md_found *f, unsigned n, bool force, bool run,
          struct md_assembly *as)
{
  struct md_asm_opts o = { .force = force, .take_stale = force, .run = run };

  return md_assemble (f, n, &o, as);
}

static void
expect_fate (const struct md_assembly *as, unsigned dev, enum md_fate fate)
{
  cr_expect_eq (as->dev[dev].fate, fate, "device %u: %s, expected %s", dev,
                md_fate_name (as->dev[dev].fate), md_fate_name (fate));
}

Test (assemble, healthy_clean)
{
  struct md_found f[R5_MAX_MEMBERS];
  struct md_assembly as;

  for (unsigned n = 3; n <= 5; n++) {
    healthy (f, n, E);
    cr_assert_eq (assemble (f, n, false, false, &as), 0);
    for (unsigned i = 0; i < n; i++) {
      expect_fate (&as, i, MD_FATE_IN_SYNC);
      cr_expect_eq (as.owner[i], (int) i);
    }
    cr_expect_eq (as.out, -1);
    cr_expect_eq (as.in_sync, n);
    cr_expect_eq (as.working, n);
    cr_expect_eq (as.due, MD_DUE_NOTHING);
    cr_expect (!as.dirty);
  }
}

/* Disk order carries no meaning: the superblocks say the slots. */
Test (assemble, order_given_does_not_matter)
{
  struct md_found f[R5_MAX_MEMBERS], g[R5_MAX_MEMBERS];
  struct md_assembly as;

  healthy (f, 4, E);
  memset (g, 0, sizeof g);
  g[0] = f[2], g[1] = f[0], g[2] = f[3], g[3] = f[1];
  cr_assert_eq (assemble (g, 4, false, false, &as), 0);
  cr_expect_eq (as.owner[0], 1);
  cr_expect_eq (as.owner[1], 3);
  cr_expect_eq (as.owner[2], 0);
  cr_expect_eq (as.owner[3], 2);
}

Test (assemble, crash_of_a_whole_array_resyncs)
{
  struct md_found f[R5_MAX_MEMBERS];
  struct md_assembly as;

  healthy (f, 3, E);
  for (unsigned i = 0; i < 3; i++)
    f[i].sb.resync_offset = 0;
  f[1].sb.events = E - 1;     /* one behind: still up to date (margin 1) */
  f[1].sb.resync_offset = MD_MAX_SECTOR;
  cr_assert_eq (assemble (f, 3, false, false, &as), 0);
  expect_fate (&as, 1, MD_FATE_IN_SYNC);
  cr_expect (as.dirty);
  cr_expect_eq (as.due, MD_DUE_RESYNC);
  cr_expect_eq (as.due_from, 0);
}

/* The defect: written degraded, killed, the absent member comes back one
 * event behind with its own superblock still saying "active".  md: the
 * freshest superblock decides its role (0xffff: a spare), so the array
 * is dirty and degraded and does not start ("cannot start dirty degraded
 * array"); --force starts it without that member.
 */
Test (assemble, degraded_write_crash_return_every_slot)
{
  struct md_found f[R5_MAX_MEMBERS];
  struct md_assembly as;

  for (unsigned n = 3; n <= 5; n++)
    for (unsigned gone = 0; gone < n; gone++) {
      healthy (f, n, E);
      moved_on (f, n, gone, 1, true, MD_ROLE_SPARE);
      cr_expect_eq (assemble (f, n, false, false, &as), -EINVAL);
      cr_expect_eq (as.refusal, MD_START_DIRTY_DEGRADED, "n %u gone %u: %d",
                    n, gone, as.refusal);
      expect_fate (&as, gone, MD_FATE_REMOVED);
      cr_expect_eq (as.dev[gone].slot, (int) gone);
      cr_expect_eq (as.owner[gone], -1);
      cr_expect_eq (as.out, (int) gone);
      cr_assert_eq (assemble (f, n, true, false, &as), 0);
      cr_expect (as.forced);
      cr_expect_eq (as.owner[gone], -1);
      cr_expect_eq (as.due, MD_DUE_NOTHING);   /* degraded: no resync */
    }
}

/* Written degraded and stopped cleanly: two events ahead (md never rolls
 * events back while degraded), so the returning member is stale: "kicking
 * non-fresh", and the array starts degraded.
 */
Test (assemble, degraded_write_stop_return)
{
  struct md_found f[R5_MAX_MEMBERS];
  struct md_assembly as;

  for (unsigned n = 3; n <= 5; n++)
    for (unsigned gone = 0; gone < n; gone++) {
      healthy (f, n, E);
      moved_on (f, n, gone, 2, false, MD_ROLE_SPARE);
      cr_assert_eq (assemble (f, n, false, false, &as), 0);
      expect_fate (&as, gone, MD_FATE_STALE);
      cr_expect_eq (as.out, (int) gone);
      cr_expect_eq (as.in_sync, n - 1);
      cr_expect_eq (as.working, n - 1);
      cr_expect_eq (as.due, MD_DUE_NOTHING);
      cr_expect (!as.dev[gone].re_addable);
    }
}

/* Failed at run time and recorded (0xfffe), then a crash before the next
 * update: one behind, the freshest says faulty.
 */
Test (assemble, failed_then_crash)
{
  struct md_found f[R5_MAX_MEMBERS];
  struct md_assembly as;

  healthy (f, 3, E);
  moved_on (f, 3, 2, 1, false, MD_ROLE_FAULTY);
  cr_assert_eq (assemble (f, 3, false, false, &as), 0);
  expect_fate (&as, 2, MD_FATE_FAULTY);
  cr_expect_eq (as.out, 2);
  healthy (f, 3, E);
  moved_on (f, 3, 2, 1, true, MD_ROLE_FAULTY);
  cr_expect_eq (assemble (f, 3, false, false, &as), -EINVAL);
  cr_expect_eq (as.refusal, MD_START_DIRTY_DEGRADED);
}

/* Two members dropped, one after the other (links lost), the survivor
 * moving on: too few to start.  force=true takes the newer of the two
 * back in sync, as mdadm --assemble --force does ("forcing event count
 * ... upto"), and starts degraded without the other; a device that was
 * being rebuilt is not forced (mdadm: recovery_start == MaxSector).
 */
Test (assemble, force_takes_the_newest_dropped_member)
{
  struct md_found f[R5_MAX_MEMBERS];
  struct md_assembly as;

  healthy (f, 3, E);
  f[0].sb.events = E + 4;
  f[0].sb.resync_offset = 0;
  f[0].sb.dev_roles[1] = f[0].sb.dev_roles[2] = MD_ROLE_FAULTY;
  f[1].sb.events = E + 2;
  f[1].sb.dev_roles[2] = MD_ROLE_FAULTY;
  cr_assert_eq (assemble (f, 3, false, false, &as), -EINVAL);
  cr_expect_eq (as.refusal, MD_START_TOO_FEW);
  cr_assert_eq (assemble (f, 3, true, false, &as), 0, "refusal %d",
                as.refusal);
  expect_fate (&as, 1, MD_FATE_IN_SYNC);
  cr_expect (as.dev[1].forced_in && !as.dev[2].forced_in);
  cr_expect_eq (as.owner[1], 1);
  cr_expect_eq (as.out, 2);
  cr_expect_eq (as.forced_in, 1, "the superblocks are not written at once");
  /* Device 1 was being rebuilt when it dropped: device 2 is forced. */
  f[1].sb.feature_map |= MD_FEATURE_RECOVERY_OFFSET;
  f[1].sb.recovery_offset = 2048;
  cr_assert_eq (assemble (f, 3, true, false, &as), 0, "refusal %d",
                as.refusal);
  cr_expect (as.dev[2].forced_in && !as.dev[1].forced_in);
  cr_expect_eq (as.owner[2], 2);
  /* Without force nothing is forced. */
  cr_expect_eq (assemble (f, 3, false, false, &as), -EINVAL);
  cr_expect (!as.dev[2].forced_in);
}

/* force's choices, as mdadm's: members dropped together (same events)
 * all come back; only the newest device claiming a slot is a candidate
 * (an older copy is never forced past it); two claiming a slot with the
 * same events are not guessed between; force_helps only when forcing
 * would start it.
 */
Test (assemble, force_picks_as_mdadm)
{
  struct md_found f[R5_MAX_MEMBERS];
  struct md_assembly as;

  healthy (f, 3, E);                  /* 1 and 2 dropped together */
  f[0].sb.events = E + 4;
  f[0].sb.dev_roles[1] = f[0].sb.dev_roles[2] = MD_ROLE_FAULTY;
  cr_assert_eq (assemble (f, 3, true, false, &as), 0);
  cr_expect (as.dev[1].forced_in && as.dev[2].forced_in);
  cr_expect_eq (as.out, -1, "not whole: out %d", as.out);
  /* Slot 1 also claimed by a newer device that was being rebuilt: it is
   * the slot's candidate, not forcible, so the older one stays out.
   */
  f[3] = f[1];
  f[3].sb.dev_number = 3;
  f[3].sb.dev_roles[3] = 1;
  f[3].sb.events = E + 2;
  f[3].sb.feature_map |= MD_FEATURE_RECOVERY_OFFSET;
  f[3].sb.recovery_offset = 2048;
  cr_assert_eq (assemble (f, 4, true, false, &as), 0);
  cr_expect (!as.dev[1].forced_in && as.dev[2].forced_in);
  cr_expect_eq (as.out, 1);
  /* Two copies of slot 1 with the same events: neither is guessed. */
  f[3].sb.events = E;
  f[3].sb.feature_map &= ~MD_FEATURE_RECOVERY_OFFSET;
  cr_assert_eq (assemble (f, 4, true, false, &as), 0);
  cr_expect (!as.dev[1].forced_in && !as.dev[3].forced_in);
  /* Three of four out, one forcible: force would not start it. */
  healthy (f, 4, E);
  f[0].sb.events = E + 4;
  for (unsigned s = 1; s < 4; s++)
    f[0].sb.dev_roles[s] = MD_ROLE_FAULTY;
  f[2].present = f[3].present = false;
  cr_expect_eq (assemble (f, 4, false, true, &as), -EINVAL);
  cr_expect (!as.force_helps, "force_helps where force does not");
  cr_expect_eq (assemble (f, 4, true, true, &as), -EINVAL);
}

/* The same crash in an array with a partial parity log: mdadm counts it
 * clean (Assemble.c: "if (content->consistency_policy ==
 * CONSISTENCY_POLICY_PPL) clean = 1;") and md starts it, "starting dirty
 * degraded array with PPL", recovering the log: it starts without force,
 * and is not recorded clean by force either (the log decides that).
 */
Test (assemble, dirty_degraded_with_ppl)
{
  struct md_found f[R5_MAX_MEMBERS];
  struct md_assembly as;

  for (unsigned feature = 0; feature < 2; feature++) {
    healthy (f, 3, E);
    moved_on (f, 3, 2, 1, true, MD_ROLE_FAULTY);
    for (unsigned i = 0; i < 3; i++)
      f[i].sb.feature_map |= feature ? MD_FEATURE_MULTIPLE_PPLS
                                     : MD_FEATURE_PPL;
    cr_assert_eq (assemble (f, 3, false, false, &as), 0, "feature %u: %d",
                  feature, as.refusal);
    cr_expect_eq (as.out, 2);
    cr_expect (as.dirty);
    cr_expect (!as.forced);
    cr_assert_eq (assemble (f, 3, true, false, &as), 0);
    cr_expect (!as.forced, "force recorded a ppl array clean");
  }
}

/* An old copy put back: the others still record its slot as working, so
 * mdadm will not start the array degraded unless told (--run; here: the
 * user gives that slot as missing).
 */
Test (assemble, old_copy_needs_run)
{
  struct md_found f[R5_MAX_MEMBERS];
  struct md_assembly as;

  healthy (f, 3, E);
  f[1].sb.events = E - 5;
  cr_expect_eq (assemble (f, 3, false, false, &as), -EINVAL);
  cr_expect_eq (as.refusal, MD_START_NOT_ALL);
  expect_fate (&as, 1, MD_FATE_STALE);
  cr_expect_eq (as.working, 3);
  cr_assert_eq (assemble (f, 3, false, true, &as), 0);
  cr_expect_eq (as.out, 1);
  cr_assert_eq (assemble (f, 3, true, false, &as), 0);   /* --force too */
}

/* Started degraded but never written: md writes nothing, so nothing
 * changed and the member is current when it returns.
 */
Test (assemble, degraded_start_without_writes)
{
  struct md_found f[R5_MAX_MEMBERS];
  struct md_assembly as;

  healthy (f, 3, E);
  cr_assert_eq (assemble (f, 3, false, false, &as), 0);
  expect_fate (&as, 1, MD_FATE_IN_SYNC);
  cr_expect_eq (as.out, -1);
}

/* A rebuild onto a new device (dev_number 3) interrupted: its own
 * superblock says how far; the old device of that slot is removed.
 */
Test (assemble, rebuild_interrupted_resumes)
{
  struct md_found f[R5_MAX_MEMBERS];
  struct md_assembly as;

  healthy (f, 3, E);
  for (unsigned i = 0; i < 3; i++) {
    f[i].sb.dev_roles[1] = MD_ROLE_SPARE;
    f[i].sb.dev_roles[3] = 1;
  }
  f[1].sb.dev_number = 3;
  f[1].sb.feature_map |= MD_FEATURE_RECOVERY_OFFSET;
  f[1].sb.recovery_offset = 8192;
  cr_assert_eq (assemble (f, 3, false, false, &as), 0);
  expect_fate (&as, 1, MD_FATE_RECOVERING);
  cr_expect_eq (as.owner[1], 1);
  cr_expect_eq (as.out, 1);
  cr_expect_eq (as.recovering, 1);
  cr_expect_eq (as.due, MD_DUE_RECOVERY);
  cr_expect_eq (as.due_from, 8192);
  /* Dirty with a slot only partly rebuilt: md refuses as for a missing
   * one (the rebuilding device is not In_sync).
   */
  for (unsigned i = 0; i < 3; i++)
    f[i].sb.resync_offset = 0;
  cr_expect_eq (assemble (f, 3, false, false, &as), -EINVAL);
  cr_expect_eq (as.refusal, MD_START_DIRTY_DEGRADED);
}

Test (assemble, two_slots_out)
{
  struct md_found f[R5_MAX_MEMBERS];
  struct md_assembly as;

  healthy (f, 4, E);
  f[1].present = false;
  f[3].sb.events = E - 3;
  cr_expect_eq (assemble (f, 4, false, true, &as), -EINVAL);
  cr_expect_eq (as.refusal, MD_START_TOO_FEW);
  cr_expect (as.force_helps);
  /* mdadm --force takes the stale one back (Assemble.c: "forcing event
   * count"): degraded without the absent one.
   */
  cr_expect_eq (assemble (f, 4, true, true, &as), 0);
  cr_expect (as.dev[3].forced_in);
  cr_expect_eq (as.out, 1);
  /* Nothing forcible: both absent. */
  f[3].present = false;
  cr_expect_eq (assemble (f, 4, true, true, &as), -EINVAL);
  cr_expect_eq (assemble (f, 4, false, true, &as), -EINVAL);
  cr_expect (!as.force_helps);
}

/* Two halves written apart: a records b's slot as gone and b records a's.
 * The freshest is a (more events); b reports a as failed: refused.
 */
Test (assemble, split_brain)
{
  struct md_found f[R5_MAX_MEMBERS];
  struct md_assembly as;

  healthy (f, 3, E);
  f[0].sb.events = E + 2;
  f[0].sb.dev_roles[1] = MD_ROLE_SPARE;
  f[1].sb.events = E + 1;
  f[1].sb.dev_roles[0] = MD_ROLE_SPARE;
  f[2].sb.events = E + 2;
  f[2].sb.dev_roles[1] = MD_ROLE_SPARE;
  cr_assert_eq (assemble (f, 3, false, false, &as), 0);
  expect_fate (&as, 1, MD_FATE_SPLIT);
  cr_expect_eq (as.owner[1], -1);
}

Test (assemble, duplicate_slot)
{
  struct md_found f[R5_MAX_MEMBERS];
  struct md_assembly as;

  healthy (f, 3, E);
  f[3] = f[1];                /* a copy of slot 1 ... */
  f[3].sb.events = E - 1;     /* ... one event older */
  cr_assert_eq (assemble (f, 4, false, false, &as), 0);
  cr_expect_eq (as.owner[1], 1);
  expect_fate (&as, 3, MD_FATE_DUPLICATE);
  f[3].sb.events = E;         /* the same events: which one? refused */
  cr_expect_eq (assemble (f, 4, false, false, &as), -EINVAL);
  cr_expect_eq (as.refusal, MD_START_SAME_SLOT);
  cr_expect_eq (as.refusal_dev, 3);
}

Test (assemble, foreign_and_no_superblock)
{
  struct md_found f[R5_MAX_MEMBERS];
  struct md_assembly as;

  healthy (f, 3, E);
  f[2].sb.set_uuid[0] ^= 1;
  cr_expect_eq (assemble (f, 3, false, false, &as), -EINVAL);
  cr_expect_eq (as.refusal, MD_START_FOREIGN);
  cr_expect_eq (as.refusal_dev, 2);
  healthy (f, 3, E);
  f[0].has_sb = false;
  cr_expect_eq (assemble (f, 3, false, false, &as), -EINVAL);
  cr_expect_eq (as.refusal_dev, 0);
  healthy (f, 3, E);
  f[1].sb.chunksize = 256;
  cr_expect_eq (assemble (f, 3, false, false, &as), -EINVAL);
  cr_expect_eq (as.refusal, MD_START_FOREIGN);
}

Test (assemble, spare_and_nothing_with_a_slot)
{
  struct md_found f[R5_MAX_MEMBERS];
  struct md_assembly as;

  healthy (f, 3, E);
  f[3] = f[0];
  f[3].sb.dev_number = 5;
  for (unsigned i = 0; i < 4; i++)
    f[i].sb.dev_roles[5] = MD_ROLE_SPARE;
  cr_assert_eq (assemble (f, 4, false, false, &as), 0);
  expect_fate (&as, 3, MD_FATE_SPARE);
  for (unsigned i = 0; i < 3; i++)
    f[i].present = false;
  cr_expect_eq (assemble (f, 4, false, true, &as), -EINVAL);
  cr_expect_eq (as.refusal, MD_START_NO_SLOT);
}

/* Re-add: only if no bit was cleared since the member left. */
Test (assemble, re_addable_by_the_bitmap)
{
  struct md_found f[R5_MAX_MEMBERS];
  struct md_assembly as;

  healthy (f, 3, E);
  moved_on (f, 3, 1, 4, false, MD_ROLE_SPARE);
  cr_assert_eq (assemble (f, 3, false, false, &as), 0);
  md_asm_bitmap (&as, f, 3, E);
  cr_expect (as.dev[1].re_addable);
  cr_expect (!as.dev[0].re_addable);
  md_asm_bitmap (&as, f, 3, E + 1);
  cr_expect (!as.dev[1].re_addable);
}

Test (assemble, explanations_name_the_numbers)
{
  struct md_found f[R5_MAX_MEMBERS];
  struct md_assembly as;
  char why[400];

  healthy (f, 3, E);
  moved_on (f, 3, 1, 2, false, MD_ROLE_SPARE);
  cr_assert_eq (assemble (f, 3, false, false, &as), 0);
  md_fate_explain (&as, f, 1, why, sizeof why);
  cr_expect (strstr (why, "stale") && strstr (why, "(10)") &&
             strstr (why, "(12)") && strstr (why, "rebuild it"), "%s", why);
  md_asm_bitmap (&as, f, 3, 0);
  md_fate_explain (&as, f, 1, why, sizeof why);
  cr_expect (strstr (why, "re-add it"), "%s", why);
  md_fate_explain (&as, f, 0, why, sizeof why);
  cr_expect_str_eq (why, "");
}

/* f[3]: a second device claiming slot 1 (device number 3, its own
 * uuid), as a replace or a rebuild onto a new disk makes one.
 */
static void
another_device_of_slot_1 (struct md_found *f)
{
  f[3] = f[1];
  f[3].sb.dev_number = 3;
  memset (f[3].sb.device_uuid, 0x44, 16);
}

/* A member replaced (mdadm --replace, raid5ctl replace): its slot is
 * another device's, and the others list it no more.  Not "missed
 * writes ... rebuild it": it is out of the array for good.
 */
Test (assemble, replaced_member_is_named_as_replaced)
{
  struct md_found f[R5_MAX_MEMBERS];
  struct md_assembly as;
  char why[400];

  healthy (f, 3, E);
  another_device_of_slot_1 (f);
  for (unsigned i = 0; i < 4; i++) {
    if (i == 1)
      continue;
    f[i].sb.events = E + 2;
    f[i].sb.dev_roles[1] = MD_ROLE_SPARE;
    f[i].sb.dev_roles[3] = 1;
  }
  cr_assert_eq (assemble (f, 4, false, false, &as), 0);
  cr_expect_eq (as.owner[1], 3);
  md_fate_explain (&as, f, 1, why, sizeof why);
  cr_expect (strstr (why, "was replaced: slot 1 is member 3's now") &&
             !strstr (why, "rebuild"), "%s", why);
  /* The device that holds the slot not given: named by its number. */
  cr_expect_eq (assemble (f, 3, false, false, &as), -EINVAL);
  md_fate_explain (&as, f, 1, why, sizeof why);
  cr_expect (strstr (why, "was replaced: slot 1 is another device's now "
                     "(device number 3, not given)"), "%s", why);
  /* Recorded faulty rather than removed (md_error before the swap). */
  for (unsigned i = 0; i < 4; i++)
    if (i != 1)
      f[i].sb.dev_roles[1] = MD_ROLE_FAULTY;
  cr_assert_eq (assemble (f, 4, false, false, &as), 0);
  md_fate_explain (&as, f, 1, why, sizeof why);
  cr_expect (strstr (why, "was replaced: slot 1 is member 3's now"), "%s",
             why);
  md_asm_bitmap (&as, f, 4, 0);
  cr_expect (!as.dev[1].re_addable && md_asm_replaced (&as, f, 1),
             "a replaced member offered for a re-add");
}

/* A replacement let go mid-copy (it failed, or the replace was stopped),
 * given back: its own superblock calls it slot 1's replacement, and the
 * others list it no more.  Said so -- not "was replaced".
 */
Test (assemble, replacement_let_go_is_named_so)
{
  struct md_found f[R5_MAX_MEMBERS];
  struct md_assembly as;
  char why[400];

  healthy (f, 3, E);
  another_device_of_slot_1 (f);
  f[3].sb.feature_map |= MD_FEATURE_REPLACEMENT | MD_FEATURE_RECOVERY_OFFSET;
  f[3].sb.recovery_offset = 2048;
  f[3].sb.dev_roles[3] = 1;
  for (unsigned i = 0; i < 3; i++)
    f[i].sb.events = E + 2;
  cr_assert_eq (assemble (f, 4, false, false, &as), 0);
  cr_expect_eq (as.owner[1], 1);
  md_fate_explain (&as, f, 3, why, sizeof why);
  cr_expect (strstr (why, "was the slot's replacement, let go before its "
                     "copy ended: slot 1 is member 1's now"), "%s", why);
}

/* ---- the running array ---- */

static void
live_of (struct md_live *s, unsigned n, int absent)
{
  struct md_found f[R5_MAX_MEMBERS];
  struct md_assembly as;

  healthy (f, n, E);
  if (absent >= 0)
    f[absent].present = false;
  cr_assert_eq (assemble (f, n, false, absent >= 0, &as), 0);
  md_live_init (s, f, &as);
}

static bool
apply (struct md_live *s, enum md_event_kind kind, unsigned slot,
       uint64_t sectors)
{
  static const uint8_t uuid[16] = { 7, 7, 7 };
  struct md_event ev = { .kind = kind, .slot = slot, .sectors = sectors,
                         .device_uuid = uuid, .data_size = SIZE,
                         .dev_number = slot, .bitmap = true };

  return md_live_apply (s, &ev);
}

Test (live, dirty_and_clean)
{
  struct md_live s;
  struct md_sb sb;

  live_of (&s, 3, -1);
  cr_expect (apply (&s, MD_EV_DIRTY, 0, 0));
  cr_expect_eq (s.common.events, E + 1);
  md_live_sb (&s, 2, &sb);
  cr_expect_eq (sb.resync_offset, 0);
  cr_expect_eq (sb.events, E + 1);
  cr_expect_eq (sb.dev_number, 2);
  cr_expect_eq (sb.dev_roles[0], 0);
  cr_expect_eq (sb.dev_roles[2], 2);
  cr_expect (apply (&s, MD_EV_CLEAN, 0, 0));
  md_live_sb (&s, 2, &sb);
  cr_expect_eq (sb.resync_offset, MD_MAX_SECTOR);
  cr_expect_eq (sb.events, E + 2);    /* never rolled back (departure) */
  for (unsigned k = 0; k < 3; k++)
    cr_expect (md_live_writes (&s, k));
}

/* The fix: a slot absent when the array is written reads 0xffff in every
 * survivor's superblock from the first write on, and gets no write.
 */
Test (live, absent_slot_is_recorded_on_the_first_write)
{
  struct md_live s;
  struct md_sb sb;

  for (unsigned n = 3; n <= 5; n++)
    for (unsigned gone = 0; gone < n; gone++) {
      live_of (&s, n, (int) gone);
      cr_expect (!md_live_writes (&s, gone));
      apply (&s, MD_EV_DIRTY, 0, 0);
      for (unsigned k = 0; k < n; k++) {
        if (k == gone)
          continue;
        md_live_sb (&s, k, &sb);
        cr_expect_eq (sb.dev_roles[gone], MD_ROLE_SPARE);
        for (unsigned j = 0; j < n; j++)
          if (j != gone)
            cr_expect_eq (sb.dev_roles[j], j);
      }
    }
}

Test (live, failure_is_recorded_faulty_and_not_written)
{
  struct md_live s;
  struct md_sb sb;

  live_of (&s, 4, -1);
  cr_expect (apply (&s, MD_EV_FAIL, 2, 0));
  cr_expect_eq (s.common.events, E + 1);
  cr_expect (!md_live_writes (&s, 2));
  md_live_sb (&s, 0, &sb);
  cr_expect_eq (sb.dev_roles[2], MD_ROLE_FAULTY);
  cr_expect_eq (sb.dev_roles[3], 3);
}

/* A new device for a failed slot: dev_number raid_disks (md's
 * bind_rdev_to_array), RECOVERY_OFFSET in its own superblock only, the
 * old device let go; then progress, then in sync.
 */
Test (live, rebuild_onto_a_new_device)
{
  struct md_live s;
  struct md_sb sb;

  live_of (&s, 3, -1);
  apply (&s, MD_EV_FAIL, 1, 0);
  cr_expect (apply (&s, MD_EV_ADD, 1, 0));
  cr_expect (md_live_writes (&s, 1));
  md_live_sb (&s, 1, &sb);
  cr_expect_eq (sb.dev_number, 3);
  cr_expect_eq (sb.device_uuid[0], 7);
  cr_expect (sb.feature_map & MD_FEATURE_RECOVERY_OFFSET);
  cr_expect (!(sb.feature_map & MD_FEATURE_RECOVERY_BITMAP));
  cr_expect_eq (sb.recovery_offset, 0);
  cr_expect_eq (sb.dev_roles[3], 1);
  cr_expect_eq (sb.dev_roles[1], MD_ROLE_SPARE);
  md_live_sb (&s, 0, &sb);
  cr_expect (!(sb.feature_map & MD_FEATURE_RECOVERY_OFFSET));
  cr_expect (apply (&s, MD_EV_RECOVERY_CP, 1, 4096));
  md_live_sb (&s, 1, &sb);
  cr_expect_eq (sb.recovery_offset, 4096);
  cr_expect (apply (&s, MD_EV_RECOVERY_DONE, 1, 0));
  md_live_sb (&s, 1, &sb);
  cr_expect (!(sb.feature_map & MD_FEATURE_RECOVERY_OFFSET));
  cr_expect_eq (s.slot[1].state, MD_SLOT_IN_SYNC);
  cr_expect_eq (s.common.events, E + 4);
  /* A second replacement may take the number back (the failed device
   * it belonged to is gone), never one in use.
   */
  apply (&s, MD_EV_FAIL, 0, 0);
  apply (&s, MD_EV_ADD, 0, 0);
  cr_expect_eq (s.slot[0].dev_number, 4);
}

/* Hot replace of slot 1 (md's want_replacement): the replacement gets
 * the next number, the slot's role in every superblock, REPLACEMENT and
 * RECOVERY_OFFSET in its own; its copy point is recorded; at the end it
 * holds the slot and the old device is gone from dev_roles.  Mid-way the
 * superblocks assemble to the same state -- and without the old device
 * the replacement holds the slot, rebuilt from its copy point.
 */
Test (live, replace_a_member)
{
  struct md_live s;
  struct md_sb sb;
  struct md_found f[R5_MAX_MEMBERS];
  struct md_assembly as;

  live_of (&s, 3, -1);
  cr_expect (apply (&s, MD_EV_REPLACE_ADD, 1, 0));
  cr_expect (s.slot[1].repl.attached);
  cr_expect_eq (s.slot[1].repl.dev_number, 3);
  md_live_sb_repl (&s, 1, &sb);
  cr_expect_eq (sb.dev_number, 3);
  cr_expect_eq (sb.device_uuid[0], 7);
  cr_expect_eq (sb.feature_map & (MD_FEATURE_REPLACEMENT |
                                  MD_FEATURE_RECOVERY_OFFSET),
                MD_FEATURE_REPLACEMENT | MD_FEATURE_RECOVERY_OFFSET);
  cr_expect_eq (sb.recovery_offset, 0);
  cr_expect_eq (sb.dev_roles[3], 1);
  cr_expect_eq (sb.dev_roles[1], 1);
  md_live_sb (&s, 1, &sb);
  cr_expect (!(sb.feature_map & (MD_FEATURE_REPLACEMENT |
                                 MD_FEATURE_RECOVERY_OFFSET)));
  cr_expect_eq (sb.dev_roles[3], 1, "every device records the replacement");
  cr_expect (apply (&s, MD_EV_REPLACE_CP, 1, 4096));
  /* What the four devices say now assembles to the same. */
  memset (f, 0, sizeof f);
  for (unsigned k = 0; k < 3; k++) {
    f[k].present = f[k].has_sb = true;
    md_live_sb (&s, k, &f[k].sb);
  }
  f[3].present = f[3].has_sb = true;
  md_live_sb_repl (&s, 1, &f[3].sb);
  cr_assert_eq (assemble (f, 4, false, false, &as), 0);
  cr_expect_neq (as.freshest, 3, "a replacement is never the freshest");
  expect_fate (&as, 1, MD_FATE_IN_SYNC);
  expect_fate (&as, 3, MD_FATE_REPLACEMENT);
  cr_expect_eq (as.owner[1], 1);
  cr_expect_eq (as.repl[1], 3);
  cr_expect_eq (as.dev[3].recovery_offset, 4096);
  {
    struct md_live t;

    md_live_init (&t, f, &as);
    cr_expect (t.slot[1].repl.attached);
    cr_expect_eq (t.slot[1].repl.dev_number, 3);
    cr_expect_eq (t.slot[1].repl.recovery_offset, 4096);
  }
  /* Without the old device: the replacement holds the slot. */
  f[1].present = false;
  cr_assert_eq (assemble (f, 4, false, true, &as), 0);
  expect_fate (&as, 3, MD_FATE_RECOVERING);
  cr_expect_eq (as.owner[1], 3);
  cr_expect_eq (as.repl[1], -1);
  cr_expect_eq (as.due, MD_DUE_RECOVERY);
  cr_expect_eq (as.due_from, 4096);
  /* The end: the replacement in the slot, the old device gone. */
  cr_expect (apply (&s, MD_EV_REPLACE_DONE, 1, 0));
  cr_expect (!s.slot[1].repl.attached);
  md_live_sb (&s, 1, &sb);
  cr_expect_eq (sb.dev_number, 3);
  cr_expect_eq (sb.device_uuid[0], 7);
  cr_expect (!(sb.feature_map & (MD_FEATURE_REPLACEMENT |
                                 MD_FEATURE_RECOVERY_OFFSET)));
  cr_expect_eq (sb.dev_roles[3], 1);
  cr_expect_eq (sb.dev_roles[1], MD_ROLE_SPARE);
  cr_expect_eq (s.common.events, E + 3);
}

/* The slot's own device failing mid-copy: the replacement takes the slot
 * (md's raid5_remove_disk), recovering from where its copy got -- its
 * own superblock says the slot's role and RECOVERY_OFFSET, no longer
 * REPLACEMENT; the failed device is let go; and what the devices then
 * say assembles to the same: the replacement recovering from there.
 */
Test (live, replacement_takes_a_failed_slot)
{
  struct md_found f[R5_MAX_MEMBERS];
  struct md_assembly as;
  struct md_live s;
  struct md_sb sb;

  live_of (&s, 3, -1);
  apply (&s, MD_EV_REPLACE_ADD, 1, 0);
  apply (&s, MD_EV_FAIL, 1, 0);
  cr_expect (s.slot[1].repl.attached, "the replacement stays attached");
  cr_expect (apply (&s, MD_EV_REPLACE_PROMOTE, 1, 8192));
  cr_expect (!s.slot[1].repl.attached);
  cr_expect_eq (s.slot[1].state, MD_SLOT_RECOVERING);
  md_live_sb (&s, 1, &sb);
  cr_expect_eq (sb.dev_number, 3);
  cr_expect_eq (sb.device_uuid[0], 7);
  cr_expect_eq (sb.feature_map & (MD_FEATURE_REPLACEMENT |
                                  MD_FEATURE_RECOVERY_OFFSET),
                MD_FEATURE_RECOVERY_OFFSET);
  cr_expect_eq (sb.recovery_offset, 8192);
  cr_expect_eq (sb.dev_roles[3], 1);
  cr_expect_eq (sb.dev_roles[1], MD_ROLE_SPARE, "the failed one let go");
  cr_expect_eq (s.common.events, E + 3);
  memset (f, 0, sizeof f);
  for (unsigned k = 0; k < 3; k++) {
    f[k].present = f[k].has_sb = true;
    md_live_sb (&s, k, &f[k].sb);
  }
  cr_assert_eq (assemble (f, 3, false, false, &as), 0);
  cr_expect_eq (as.owner[1], 1);
  expect_fate (&as, 1, MD_FATE_RECOVERING);
  cr_expect_eq (as.due, MD_DUE_RECOVERY);
  cr_expect_eq (as.due_from, 8192);
}

/* A replacement that fails is let go; its number is free again. */
Test (live, replacement_dropped)
{
  struct md_live s;
  struct md_sb sb;

  live_of (&s, 3, -1);
  apply (&s, MD_EV_REPLACE_ADD, 2, 0);
  cr_expect (apply (&s, MD_EV_REPLACE_DROP, 2, 0));
  md_live_sb (&s, 0, &sb);
  cr_expect_eq (sb.dev_roles[3], MD_ROLE_SPARE);
  cr_expect_eq (md_live_new_dev_number (&s), 3);
}

/* Growing 3 -> 5 members: the new devices in sync in slots 3 and 4 with
 * the next device numbers, raid_disks and md's reshape fields in every
 * superblock, the position recorded as it moves, and at the end the data
 * offset moved down by the shift, data_size grown by as much, the
 * reshape gone -- and mid-way the members still assemble as one array.
 */
Test (live, grow_by_two_members)
{
  static const uint8_t uuids[32] = { 8, [16] = 9 };
  struct md_found f[R5_MAX_MEMBERS];
  struct md_assembly as;
  struct md_live s;
  struct md_sb sb;
  struct md_event ev = {
    .kind = MD_EV_GROW, .add = 2, .device_uuid = uuids,
    .data_size = SIZE + 4096, .new_offset = -768,
  };

  live_of (&s, 3, -1);
  cr_expect (md_live_apply (&s, &ev));
  cr_expect_eq (s.common.raid_disks, 5);
  for (unsigned k = 0; k < 5; k++) {
    md_live_sb (&s, k, &sb);
    cr_expect (md_live_writes (&s, k), "slot %u", k);
    cr_expect_eq (sb.feature_map & (MD_FEATURE_RESHAPE_ACTIVE |
                                    MD_FEATURE_NEW_OFFSET),
                  MD_FEATURE_RESHAPE_ACTIVE | MD_FEATURE_NEW_OFFSET);
    cr_expect (!(sb.feature_map & MD_FEATURE_RECOVERY_OFFSET),
               "md keeps new slots in sync, slot %u", k);
    cr_expect (sb.delta_disks == 2 && sb.new_offset == -768 &&
               sb.new_level == 5 && sb.new_layout == 2 &&
               sb.new_chunk == 128 && sb.reshape_position == 0 &&
               sb.data_offset == 2048 && sb.raid_disks == 5);
    for (unsigned j = 0; j < 5; j++)
      cr_expect_eq (sb.dev_roles[j], j, "role of device %u", j);
    f[k] = (struct md_found) { true, true, sb };
  }
  md_live_sb (&s, 3, &sb);
  cr_expect (sb.dev_number == 3 && sb.device_uuid[0] == 8 &&
             sb.data_size == SIZE + 4096);
  md_live_sb (&s, 4, &sb);
  cr_expect (sb.dev_number == 4 && sb.device_uuid[0] == 9);
  cr_expect_eq (assemble (f, 5, false, false, &as), 0,
                "a grow under way does not assemble: refusal %d", as.refusal);
  cr_expect_eq (as.in_sync, 5);
  cr_expect (apply (&s, MD_EV_RESHAPE_CP, 0, 128 * 4 * 6));
  md_live_sb (&s, 1, &sb);
  cr_expect_eq (sb.reshape_position, 128 * 4 * 6);
  cr_expect (apply (&s, MD_EV_RESHAPE_DONE, 0, 0));
  md_live_sb (&s, 4, &sb);
  cr_expect (!(sb.feature_map & (MD_FEATURE_RESHAPE_ACTIVE |
                                 MD_FEATURE_NEW_OFFSET)));
  cr_expect (sb.data_offset == 2048 - 768 && sb.data_size == SIZE + 4096 + 768
             && sb.delta_disks == 0 && sb.new_offset == 0 &&
             sb.raid_disks == 5);
  md_live_sb (&s, 0, &sb);
  cr_expect_eq (sb.data_size, SIZE + 768);
  cr_expect_eq (s.common.events, E + 3);
}

/* A crash amid the grow's first or last superblock write: the members
 * that missed it are one event behind in the other shape, and assemble
 * in the freshest's (the data is all in that shape then); two events
 * behind they are stale, as ever.
 */
Test (live, a_grow_write_that_reached_some_members_assembles)
{
  static const uint8_t uuids[16] = { 8 };
  struct md_found f[4];
  struct md_assembly as;
  struct md_live s;
  struct md_sb before[4], sb;

  live_of (&s, 3, -1);
  for (unsigned k = 0; k < 3; k++)
    md_live_sb (&s, k, &before[k]);
  cr_assert (md_live_apply (&s, &(struct md_event) {
      .kind = MD_EV_GROW, .add = 1, .device_uuid = uuids,
      .data_size = SIZE, .new_offset = -384 }));
  /* The start: members 1 and 2 still say 3 members. */
  for (unsigned k = 0; k < 4; k++) {
    md_live_sb (&s, k, &sb);
    f[k] = (struct md_found) { true, true, k == 1 || k == 2 ? before[k] : sb };
  }
  cr_expect_eq (assemble (f, 4, false, false, &as), 0, "refusal %d",
                as.refusal);
  cr_expect_eq (as.in_sync, 4);
  cr_expect_eq (f[as.freshest].sb.raid_disks, 4);
  /* The end: member 3 still says the reshape is under way. */
  cr_assert (apply (&s, MD_EV_RESHAPE_CP, 0, 128 * 3 * 10));
  md_live_sb (&s, 3, &before[3]);
  cr_assert (apply (&s, MD_EV_RESHAPE_DONE, 0, 0));
  for (unsigned k = 0; k < 4; k++) {
    md_live_sb (&s, k, &sb);
    f[k] = (struct md_found) { true, true, k == 3 ? before[3] : sb };
  }
  cr_expect_eq (assemble (f, 4, false, false, &as), 0, "refusal %d",
                as.refusal);
  cr_expect_eq (as.in_sync, 4);
  cr_expect_eq (f[as.freshest].sb.data_offset, 2048 - 384);
  /* Not a step of a grow: another data offset, one behind. */
  f[3].sb.new_offset = -256;
  assemble (f, 4, false, false, &as);
  cr_expect_eq (as.dev[3].fate, MD_FATE_FOREIGN);
}

Test (live, re_add_keeps_its_number_and_is_bitmap_guided)
{
  struct md_live s;
  struct md_sb sb;

  live_of (&s, 3, 1);
  s.common.feature_map |= MD_FEATURE_BITMAP_OFFSET;
  apply (&s, MD_EV_DIRTY, 0, 0);
  cr_expect (apply (&s, MD_EV_RE_ADD, 1, 0));
  md_live_sb (&s, 1, &sb);
  cr_expect_eq (sb.dev_number, 1);
  cr_expect (sb.feature_map & MD_FEATURE_RECOVERY_OFFSET);
  cr_expect (sb.feature_map & MD_FEATURE_RECOVERY_BITMAP);
  cr_expect_eq (sb.dev_roles[1], 1);
  cr_expect (s.slot[1].bitmap_recovery);
}

Test (live, resync_checkpoint_waits_and_shows_when_clean)
{
  struct md_live s;
  struct md_sb sb;

  live_of (&s, 3, -1);
  apply (&s, MD_EV_DIRTY, 0, 0);
  s.resync_cp = 0;
  cr_expect (!apply (&s, MD_EV_RESYNC_CP, 0, 2048));
  cr_expect_eq (s.common.events, E + 1);
  md_live_sb (&s, 0, &sb);
  cr_expect_eq (sb.resync_offset, 0);     /* dirty: 0 whatever the cp */
  apply (&s, MD_EV_CLEAN, 0, 0);
  md_live_sb (&s, 0, &sb);
  cr_expect_eq (sb.resync_offset, 2048);  /* clean: the checkpoint */
  cr_expect (apply (&s, MD_EV_RESYNC_DONE, 0, 0));
  md_live_sb (&s, 0, &sb);
  cr_expect_eq (sb.resync_offset, MD_MAX_SECTOR);
}

/* After a crash nothing is resynced yet: clean and dirty both write
 * resync_offset 0, so the clean mark writes nothing (the events stay)
 * until the next write; a checkpoint past 0 is written at once.
 */
Test (live, clean_with_resync_due_from_zero_waits)
{
  struct md_live s;
  struct md_sb sb;

  live_of (&s, 3, -1);
  apply (&s, MD_EV_DIRTY, 0, 0);
  s.resync_cp = 0;
  cr_expect (!apply (&s, MD_EV_CLEAN, 0, 0));
  cr_expect (!s.dirty);
  cr_expect_eq (s.common.events, E + 1);
  md_live_sb (&s, 0, &sb);
  cr_expect_eq (sb.resync_offset, 0);
  cr_expect (apply (&s, MD_EV_DIRTY, 0, 0));
  s.resync_cp = 8;
  cr_expect (apply (&s, MD_EV_CLEAN, 0, 0));
  cr_expect_eq (s.common.events, E + 3);
}

Test (live, forced_start_is_recorded_clean)
{
  struct md_live s;
  struct md_sb sb;

  live_of (&s, 3, 0);
  s.dirty = true;
  s.resync_cp = 0;
  cr_expect (apply (&s, MD_EV_FORCE_CLEAN, 0, 0));
  md_live_sb (&s, 1, &sb);
  cr_expect_eq (sb.resync_offset, MD_MAX_SECTOR);
  cr_expect_eq (sb.dev_roles[0], MD_ROLE_SPARE);
}

/* raid5_resize: the size and each device's data_size recorded, a resync
 * due from the old size (md's recovery_cp = the old dev_sectors), or
 * from before it if one was due already, or none when clean.
 */
Test (live, resize_resyncs_from_the_old_end)
{
  const uint64_t sizes[3] = { 2 * SIZE + 8, 2 * SIZE, 3 * SIZE };
  struct md_live s;
  struct md_sb sb;

  live_of (&s, 3, -1);
  cr_expect (md_live_apply (&s, &(struct md_event) {
                 .kind = MD_EV_RESIZE, .sectors = 2 * SIZE,
                 .data_sizes = sizes }));
  cr_expect_eq (s.common.events, E + 1);
  md_live_sb (&s, 2, &sb);
  cr_expect_eq (sb.size, 2 * SIZE);
  cr_expect_eq (sb.data_size, 3 * SIZE);
  cr_expect_eq (sb.resync_offset, SIZE);
  md_live_sb (&s, 0, &sb);
  cr_expect_eq (sb.data_size, 2 * SIZE + 8);

  live_of (&s, 3, -1);
  s.resync_cp = 64;                   /* due from before the old end */
  md_live_apply (&s, &(struct md_event) {
                   .kind = MD_EV_RESIZE, .sectors = 2 * SIZE,
                   .data_sizes = sizes });
  cr_expect_eq (s.resync_cp, 64);

  live_of (&s, 3, -1);
  md_live_apply (&s, &(struct md_event) {
                   .kind = MD_EV_RESIZE, .sectors = 2 * SIZE,
                   .data_sizes = sizes, .clean = true });
  cr_expect_eq (s.resync_cp, MD_MAX_SECTOR);
}

/* mdadm --grow --bitmap=internal|none: the feature bit and offset. */
Test (live, bitmap_added_and_removed)
{
  struct md_live s;
  struct md_sb sb;

  live_of (&s, 3, -1);
  cr_expect (apply (&s, MD_EV_BITMAP, 0, 1));
  md_live_sb (&s, 1, &sb);
  cr_expect (sb.feature_map & MD_FEATURE_BITMAP_OFFSET);
  cr_expect_eq (sb.bitmap_offset, 8);
  cr_expect_eq (sb.events, E + 1);
  cr_expect (apply (&s, MD_EV_BITMAP, 0, 0));
  md_live_sb (&s, 1, &sb);
  cr_expect (!(sb.feature_map & MD_FEATURE_BITMAP_OFFSET));
  cr_expect_eq (sb.bitmap_offset, 8);   /* md's super_1_sync leaves it */
}

Test (live, readd_check)
{
  struct md_live s;
  struct md_sb dev = member_sb (3, 1, E);
  char why[200];

  live_of (&s, 3, 1);
  apply (&s, MD_EV_DIRTY, 0, 0);
  apply (&s, MD_EV_CLEAN, 0, 0);
  cr_expect_eq (md_readd_check (&s, &(struct md_readd) { &dev, 1, true, E },
                                why, sizeof why), 0);
  cr_expect_eq (md_readd_check (&s, &(struct md_readd) { &dev, 1, false, E },
                                why, sizeof why),
                -EINVAL);
  cr_expect (strstr (why, "no write-intent bitmap"), "%s", why);
  cr_expect_eq (md_readd_check (&s, &(struct md_readd) { &dev, 1, true, E + 1 },
                                why, sizeof why),
                -EINVAL);
  cr_expect (strstr (why, "cleared after it left"), "%s", why);
  cr_expect_eq (md_readd_check (&s, &(struct md_readd) { &dev, 2, true, E },
                                why, sizeof why),
                -EINVAL);
  dev.set_uuid[3] ^= 1;
  cr_expect_eq (md_readd_check (&s, &(struct md_readd) { &dev, 1, true, E },
                                why, sizeof why),
                -EINVAL);
  cr_expect (strstr (why, "not a member"), "%s", why);
  dev = member_sb (3, 1, E + 9);
  cr_expect_eq (md_readd_check (&s, &(struct md_readd) { &dev, 1, true, E },
                                why, sizeof why),
                -EINVAL);
  /* Written apart: it records slot 0, in sync here, as gone. */
  dev = member_sb (3, 1, E);
  dev.dev_roles[0] = MD_ROLE_SPARE;
  cr_expect_eq (md_readd_check (&s, &(struct md_readd) { &dev, 1, true, E },
                                why, sizeof why),
                -EINVAL);
  cr_expect (strstr (why, "written apart"), "%s", why);
  /* Its device number went to another member. */
  dev = member_sb (3, 1, E);
  dev.dev_number = 2;
  dev.dev_roles[2] = 1;
  dev.dev_roles[3] = 2;       /* slot 2 was another device's then */
  cr_expect_eq (md_readd_check (&s, &(struct md_readd) { &dev, 1, true, E },
                                why, sizeof why),
                -EINVAL);
  cr_expect (strstr (why, "device number 2"), "%s", why);
  cr_expect (md_live_dev_number_taken (&s, 2, 1));
  cr_expect (!md_live_dev_number_taken (&s, 2, 2));
}

/* A device that left during a grow is not re-added by the bitmap: it
 * marks what clients wrote, not what the reshape moved since (its
 * superblock has the array's raid_disks and data offset) -- not even at
 * the same recorded position: the reshape moves windows between the
 * positions it records.  Nor is it counted re-addable at assembly.
 */
Test (live, no_readd_across_a_grow)
{
  static const uint8_t uuids[16] = { 8 };
  struct md_live s;
  struct md_sb dev;
  char why[200];

  live_of (&s, 3, -1);
  cr_assert (md_live_apply (&s, &(struct md_event) {
      .kind = MD_EV_GROW, .add = 1, .device_uuid = uuids,
      .data_size = SIZE, .new_offset = -384 }));
  cr_assert (apply (&s, MD_EV_RESHAPE_CP, 0, 128 * 3 * 10));
  md_live_sb (&s, 1, &dev);
  cr_expect_eq (md_readd_check (&s, &(struct md_readd) {
                                  &dev, 1, true, dev.events },
                                why, sizeof why), -EINVAL);
  cr_expect (strstr (why, "a grow was under way"), "%s", why);
  cr_assert (apply (&s, MD_EV_RESHAPE_CP, 0, 128 * 3 * 20));
  cr_expect_eq (md_readd_check (&s, &(struct md_readd) {
                                  &dev, 1, true, dev.events },
                                why, sizeof why), -EINVAL);
  cr_expect (md_sb_grown_since (&dev, &s.common));
  md_live_sb (&s, 0, &dev);
  cr_expect (md_sb_grown_since (&dev, &s.common));
  /* After the grow, the same shape again: the rule no longer applies. */
  cr_assert (apply (&s, MD_EV_RESHAPE_DONE, 0, 0));
  md_live_sb (&s, 1, &dev);
  cr_expect (!md_sb_grown_since (&dev, &s.common));
}

/* Feature 0x8 is each device's own (super_1_sync): only the member whose
 * table lists bad blocks says so, and a device that joins the slot
 * (rebuild, re-add) starts without; a device that lists bad blocks is
 * neither re-added nor counted re-addable by the bitmap.
 */
Test (live, bad_blocks_bit_is_per_device)
{
  struct md_found f[R5_MAX_MEMBERS];
  struct md_assembly as;
  struct md_live s;
  struct md_sb sb, dev;
  char why[200];

  healthy (f, 3, E);
  f[0].sb.feature_map |= MD_FEATURE_BAD_BLOCKS;   /* the freshest's */
  f[0].sb.events = E + 1;
  cr_assert_eq (assemble (f, 3, false, false, &as), 0);
  cr_assert_eq (as.freshest, 0);
  md_live_init (&s, f, &as);
  for (unsigned k = 0; k < 3; k++) {
    md_live_sb (&s, k, &sb);
    cr_expect_eq ((sb.feature_map & MD_FEATURE_BAD_BLOCKS) != 0, k == 0,
                  "slot %u: feature_map %#x", k, sb.feature_map);
  }
  s.slot[0].bad_blocks = false;                   /* its table emptied */
  s.slot[2].bad_blocks = true;
  md_live_sb (&s, 0, &sb);
  cr_expect_eq (sb.feature_map & MD_FEATURE_BAD_BLOCKS, 0);
  apply (&s, MD_EV_FAIL, 2, 0);
  apply (&s, MD_EV_ADD, 2, 0);
  md_live_sb (&s, 2, &sb);
  cr_expect_eq (sb.feature_map & MD_FEATURE_BAD_BLOCKS, 0, "new device");
  live_of (&s, 3, 1);
  apply (&s, MD_EV_DIRTY, 0, 0);
  apply (&s, MD_EV_CLEAN, 0, 0);
  dev = member_sb (3, 1, E);
  dev.feature_map |= MD_FEATURE_BAD_BLOCKS;
  cr_expect_eq (md_readd_check (&s, &(struct md_readd) { &dev, 1, true, E },
                                why, sizeof why), -EINVAL);
  cr_expect (strstr (why, "bad-block log"), "%s", why);
  healthy (f, 3, E);
  moved_on (f, 3, 1, 2, false, MD_ROLE_FAULTY);
  f[1].sb.feature_map |= MD_FEATURE_BAD_BLOCKS;
  cr_assert_eq (assemble (f, 3, false, true, &as), 0);
  md_asm_bitmap (&as, f, 3, E);
  cr_expect (!as.dev[1].re_addable);
  f[1].sb.feature_map &= ~MD_FEATURE_BAD_BLOCKS;
  md_asm_bitmap (&as, f, 3, E);
  cr_expect (as.dev[1].re_addable);
}

/* ---- the property: a random walk over the array's life ----
 *
 * Devices 0..n-1 start as slots 0..n-1.  Each keeps the last superblock
 * written to it and whether it missed a data write in its slot since
 * that slot was last rebuilt onto it.  Steps: a write (dirty first if
 * clean, then data to the slots in service), clean, a failure, a stop
 * with one member left out (it is given as missing at the next start),
 * a crash (stop without clean), a rebuild of the slot out of service onto
 * its old device (done at once).  At every start all devices are given to
 * assembly, forced if it asks for force, run if it asks for run, and
 * every device it finds in sync must have missed nothing.
 */
struct walk {
  unsigned n;
  struct md_sb disk[R5_MAX_MEMBERS];   /* what each device holds */
  bool missed[R5_MAX_MEMBERS];
  struct md_live s;
  int dev_of[R5_MAX_MEMBERS];          /* device in each slot, or -1 */
  bool running;
};

static void
write_sbs (struct walk *w)
{
  for (unsigned k = 0; k < w->n; k++)
    if (md_live_writes (&w->s, k) && w->dev_of[k] >= 0)
      md_live_sb (&w->s, k, &w->disk[w->dev_of[k]]);
}

static void
event (struct walk *w, enum md_event_kind kind, unsigned slot)
{
  int d = w->dev_of[slot];
  struct md_event ev = {
    .kind = kind, .slot = slot, .data_size = SIZE,
    .dev_number = d >= 0 ? w->disk[d].dev_number : 0,
  };

  if (md_live_apply (&w->s, &ev))
    write_sbs (w);
}

static void
start (struct walk *w, int leave_out)
{
  struct md_found f[R5_MAX_MEMBERS];
  struct md_assembly as;
  int r;

  memset (f, 0, sizeof f);
  for (unsigned i = 0; i < w->n; i++)
    f[i] = (struct md_found) { (int) i != leave_out, true, w->disk[i] };
  r = assemble (f, w->n, false, leave_out >= 0, &as);
  if (r < 0 && (as.refusal == MD_START_DIRTY_DEGRADED ||
                as.refusal == MD_START_NOT_ALL))
    r = assemble (f, w->n, true, true, &as);
  cr_assert_eq (r, 0, "refusal %d", as.refusal);
  for (unsigned i = 0; i < w->n; i++)
    cr_assert (!(as.dev[i].fate == MD_FATE_IN_SYNC && w->missed[i]),
               "device %u missed a write but assembles in sync", i);
  md_live_init (&w->s, f, &as);
  for (unsigned k = 0; k < w->n; k++)
    w->dev_of[k] = as.owner[k];
  if (as.forced)
    event (w, MD_EV_FORCE_CLEAN, 0);
  w->running = true;
}

static int
slot_out (const struct walk *w)
{
  for (unsigned k = 0; k < w->n; k++)
    if (w->s.slot[k].state != MD_SLOT_IN_SYNC)
      return (int) k;
  return -1;
}

static void
data_write (struct walk *w)
{
  if (!w->s.dirty)
    event (w, MD_EV_DIRTY, 0);
  for (unsigned k = 0; k < w->n; k++)    /* device k belongs to slot k */
    if (w->s.slot[k].state != MD_SLOT_IN_SYNC)
      w->missed[k] = true;
}

/* Rebuild the slot out of service onto the device that was there. */
static void
rebuild (struct walk *w, unsigned k)
{
  unsigned d = k;             /* device k always belongs to slot k */

  w->dev_of[k] = (int) d;
  if (w->s.slot[k].state == MD_SLOT_RECOVERING)
    return;
  event (w, MD_EV_RE_ADD, k);
  w->disk[d].dev_number = w->s.slot[k].dev_number;
  event (w, MD_EV_RECOVERY_DONE, k);
  w->missed[d] = false;
}

static void
step (struct walk *w, unsigned r)
{
  int out = slot_out (w);

  switch (r % 7) {
  case 0: case 1: data_write (w); break;
  case 2: if (w->s.dirty) event (w, MD_EV_CLEAN, 0); break;
  case 3: if (out < 0) event (w, MD_EV_FAIL, (r / 7) % w->n); break;
  case 4:                     /* clean stop, restart without one */
    if (w->s.dirty)
      event (w, MD_EV_CLEAN, 0);
    start (w, out < 0 ? (int) ((r / 7) % w->n) : -1);
    break;
  case 5: start (w, -1); break;          /* crash: restart as it is */
  case 6: if (out >= 0) rebuild (w, (unsigned) out); break;
  }
}

Test (walk, a_member_that_missed_writes_never_comes_back_in_sync)
{
  unsigned seed = 12345;

  for (unsigned round = 0; round < 400; round++) {
    struct walk w = { .n = 3 + round % 3 };

    for (unsigned i = 0; i < w.n; i++)
      w.disk[i] = member_sb (w.n, i, E);
    start (&w, -1);
    for (unsigned i = 0; i < 60; i++)
      step (&w, (unsigned) rand_r (&seed));
  }
}
