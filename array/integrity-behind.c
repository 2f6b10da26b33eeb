/* array/integrity-behind.c -- beyond md's one-event margin: a member
 * taken one event behind the others (array/assemble.c, log_one_behind)
 * may be an older copy of itself put back, whose data missed the last
 * writes.  md cannot tell; with an integrity record we can.  Before the
 * record's marked regions are computed again from the members (which
 * would take the stale bytes as right), every unit of such a member that
 * the md bitmap says may have been written since it was last cleared
 * (every unit without a bitmap) is read and checked against its
 * checksum; one that fails is stale and rebuilt from the other members
 * (integrity_heal: written only when the rebuilt bytes match the
 * checksum, so a row whose parity is itself in doubt is left alone).
 * The units are counted, and the first and last named, in one log line.
 * A unit a medium error keeps from being read is recorded bad in the
 * member's md bad-block log and counted: read from the other members
 * until written, it cannot return stale bytes even if the error passes.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "array/badblocks.h"
#include "array/integrity.h"
#include "array/object.h"

#define REGION_BYTES ((uint64_t) R5I_REGION_UNITS * R5I_UNIT)

/* What one member's pass found. */
struct behind_pass {
  unsigned slot;
  uint64_t stale, rebuilt, first, last;   /* units; member offsets */
  uint64_t unread, unread_first;          /* a medium error: left */
};

/* May any stripe of [off, off+len) of a member have been written since
 * the bitmap was last cleared?
 */
static bool
maybe_written (struct array *a, uint64_t off, uint64_t len)
{
  uint64_t first = array_member_stripe (a, off);
  uint64_t last = array_member_stripe (a, off + len - 1);

  for (uint64_t s = first; s <= last && s < a->geom.stripes; s++)
    if (meta_stripe_marked (a, s))
      return true;
  return false;
}

/* Check and heal the units of [off, off+len) in buf (read from p->slot). */
static void
check_units (struct array *a, struct behind_pass *p, uint64_t off,
             uint64_t len, const char *buf)
{
  for (uint64_t at = 0; at + R5I_UNIT <= len; at += R5I_UNIT) {
    struct integrity_bad bad;
    struct array_err ignored;

    if (integrity_verify (a, p->slot, off + at, buf + at, R5I_UNIT, &bad))
      continue;
    if (p->stale++ == 0)
      p->first = bad.off;
    p->last = bad.off;
    if (integrity_heal (a, &bad, false, &ignored) == 0)
      p->rebuilt++;
  }
}

/* A unit of p->slot at off that a medium error keeps from being checked:
 * recorded in the member's md bad-block log, so that it is read from the
 * other members until written -- a read that succeeded later (an error
 * that passes) would return it unchecked, stale perhaps, and the start
 * computes the checksums of its region from it.  0, or -errno (read-only,
 * no log, a full one: the start stops, as it must not serve it).
 */
static int
list_unread (struct array *a, struct behind_pass *p, uint64_t off, int e)
{
  struct array_err err;

  if (a->read_only || (e = array_bb_record (a, p->slot, off, R5I_UNIT,
                                            &err)) < 0) {
    if (!a->read_only)
      array_log (a, ARRAY_LOG_ERROR, "%s", err.msg);
    return e;
  }
  if (p->unread++ == 0)
    p->unread_first = off;
  return 0;
}

/* [off, off+len) of p->slot checked unit by unit, after a medium error
 * in a read of the whole (list_unread for a unit that fails).  0 or
 * -errno.
 */
static int
pass_units (struct array *a, struct behind_pass *p, uint64_t off,
            uint64_t len, char *buf)
{
  for (uint64_t at = 0; at + R5I_UNIT <= len; at += R5I_UNIT) {
    struct io_op op = { .kind = IO_READ, .member = p->slot, .buf = buf,
                        .off = off + at, .len = R5I_UNIT };
    int e = io_run (a->members, &op, 1, 0);

    if (e == 0)
      check_units (a, p, off + at, R5I_UNIT, buf);
    else if (!io_op_medium_error (&op) ||
             (e = list_unread (a, p, off + at, e)) < 0)
      return e;
  }
  return 0;
}

static int
pass_member (struct array *a, struct behind_pass *p, char *buf)
{
  const struct integrity *t = &a->integrity;
  uint64_t end = t->h.data_offset + t->h.units * R5I_UNIT;

  for (uint64_t off = t->h.data_offset; off < end; off += REGION_BYTES) {
    uint64_t len = end - off < REGION_BYTES ? end - off : REGION_BYTES;
    struct io_op op = { .kind = IO_READ, .member = p->slot, .buf = buf,
                        .off = off, .len = len };
    int e;

    if (!maybe_written (a, off, len))
      continue;
    if ((e = io_run (a->members, &op, 1, 0)) == 0)
      check_units (a, p, off, len, buf);
    else if (!io_op_medium_error (&op) ||
             (e = pass_units (a, p, off, len, buf)) < 0)
      return e;
  }
  return 0;
}

static void
say_unread (struct array *a, const struct behind_pass *p)
{
  if (p->unread)
    array_log (a, ARRAY_LOG_ERROR, "slot %u (%s), one event behind: %" PRIu64
               " units of 4 KiB could not be read to check them (the first "
               "at member offset %" PRIu64 "): recorded in its md bad-block "
               "log, read from the other members until written",
               p->slot, array_member_path (a, p->slot), p->unread,
               p->unread_first);
}

static void
say (struct array *a, const struct behind_pass *p)
{
  if (p->stale == 0) {
    array_log (a, ARRAY_LOG_NOTICE, "slot %u (%s), one event behind: every "
               "unit it may have missed%s matches the integrity record",
               p->slot, array_member_path (a, p->slot),
               p->unread ? " that could be read" : "");
    return;
  }
  array_log (a, ARRAY_LOG_ERROR, "slot %u (%s), one event behind: %" PRIu64
             " units of 4 KiB fail the integrity record (member offsets %"
             PRIu64 " to %" PRIu64 "): stale, %" PRIu64 " rebuilt from the "
             "other members%s", p->slot, array_member_path (a, p->slot),
             p->stale, p->first, p->last + R5I_UNIT - 1, p->rebuilt,
             p->rebuilt < p->stale ? " (the rest could not be: raid5ctl "
             "check --integrity names them)" : "");
}

int
integrity_verify_behind (struct array *a, struct array_err *err)
{
  struct integrity *t = &a->integrity;
  char *buf = NULL;
  int e = 0;

  for (unsigned s = 0; s < a->geom.members && e == 0; s++) {
    struct behind_pass p = { .slot = s };

    if (!a->one_behind[s] || health_state (&a->health, s) != MEMBER_ACTIVE)
      continue;
    if (buf == NULL && (buf = aligned_alloc (R5I_UNIT, REGION_BYTES)) == NULL)
      return -ENOMEM;
    t->quiet_heal = true;
    e = pass_member (a, &p, buf);
    t->quiet_heal = false;
    t->stale_units += p.stale;
    t->unread_units += p.unread;
    if (e < 0)
      array_set_err (err, "integrity record %s: member %u (%s): cannot read "
                     "it to verify it: %s", t->path, s,
                     array_member_path (a, s), strerror (-e));
    else {
      say (a, &p);
      say_unread (a, &p);
    }
  }
  free (buf);
  return e;
}
