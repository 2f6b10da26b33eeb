/* array/heal.c -- a unit that failed its checksum, put right from the
 * other members of its row (integrity_heal, integrity.h).
 *
 * ZFS's rule: a block whose checksum fails is read again from the
 * redundancy, and if that matches the checksum, the bad copy is
 * rewritten.  Here the redundancy is the row: the other members' units
 * at the same member offset XOR to the missing one.  Nothing is written
 * unless exactly one unit of the row fails and the others rebuild it to
 * its own checksum: parity alone could not say which unit is wrong.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "array/integrity.h"
#include "array/object.h"
#include "raid/parity.h"

/* Every member's unit of the row at off into rows (members x 4 KiB);
 * which fail their checksum into *bad_mask.  0, -ENODEV when a member is
 * out of service, or an I/O error.
 */
static int
read_row (struct array *a, uint64_t off, char *rows, uint64_t *bad_mask)
{
  struct io_op ops[R5_MAX_MEMBERS];
  unsigned n = a->geom.members;
  int e;

  for (unsigned m = 0; m < n; m++) {
    if (health_state (&a->health, m) != MEMBER_ACTIVE)
      return -ENODEV;
    ops[m] = (struct io_op) { .kind = IO_READ, .member = m,
                              .buf = rows + m * R5I_UNIT, .off = off,
                              .len = R5I_UNIT };
  }
  if ((e = io_run (a->members, ops, n, 0)) < 0)
    return e;
  *bad_mask = 0;
  for (unsigned m = 0; m < n; m++)
    if (!integrity_verify (a, m, off, rows + m * R5I_UNIT, R5I_UNIT, NULL))
      *bad_mask |= UINT64_C (1) << m;
  return 0;
}

/* Member bad's unit rebuilt from the others into rows[bad]; is it what
 * its checksum says?
 */
static bool
rebuild_unit (struct array *a, unsigned bad, uint64_t off, char *rows)
{
  void *v[R5_MAX_MEMBERS + 1];
  unsigned k = 0;

  for (unsigned m = 0; m < a->geom.members; m++)
    if (m != bad)
      v[k++] = rows + m * R5I_UNIT;
  v[k++] = rows + bad * R5I_UNIT;
  r5_xor_gen (k, R5I_UNIT, v);
  return integrity_verify (a, bad, off, rows + bad * R5I_UNIT, R5I_UNIT,
                           NULL);
}

/* Under the lock, does the unit still fail?  (A read without a lock may
 * have met a write changing it: then nothing is wrong.)  1, 0, or an I/O
 * error.
 */
static int
still_fails (struct array *a, const struct integrity_bad *b, char *unit)
{
  struct io_op op = { .kind = IO_READ, .member = b->member, .buf = unit,
                      .off = b->off, .len = R5I_UNIT };
  int e = io_run (a->members, &op, 1, 0);

  if (e < 0)
    return e;
  return !integrity_verify (a, b->member, b->off, unit, R5I_UNIT, NULL);
}

static int
heal_row (struct array *a, const struct integrity_bad *b, char *rows,
          struct array_err *err)
{
  struct integrity *t = &a->integrity;
  const char *path = array_member_path (a, b->member);
  uint64_t mask = 0;
  int e = still_fails (a, b, rows);

  if (e == 0)
    return 0;
  if (e > 0)
    e = read_row (a, b->off, rows, &mask);
  if (e == 0 && mask == 0)
    return 0;                   /* a write was changing it: nothing wrong */
  t->failures++;
  if (e == 0 && __builtin_popcountll (mask) == 1) {
    unsigned m = (unsigned) __builtin_ctzll (mask);
    struct io_op op = { .kind = IO_WRITE, .member = m,
                        .buf = rows + m * R5I_UNIT, .off = b->off,
                        .len = R5I_UNIT };

    if (rebuild_unit (a, m, b->off, rows) &&
        (e = io_run (a->members, &op, 1, IO_FUA)) == 0) {
      t->healed++;
      if (!t->quiet_heal)
        array_log (a, ARRAY_LOG_NOTICE, "member %u (%s): 4 KiB at member "
                 "offset %" PRIu64 " failed its checksum; rewritten from "
                 "the other members", m, array_member_path (a, m), b->off);
      return 0;
    }
  }
  t->unhealable++;
  array_set_err (err, "member %u (%s): 4 KiB at member offset %" PRIu64
                 " fails its checksum and cannot be rebuilt from the others "
                 "(%s)", b->member, path, b->off,
                 e == -ENODEV ? "a member is out of service"
                 : e < 0 ? strerror (-e)
                 : __builtin_popcountll (mask) > 1
                 ? "more than one unit of the row fails"
                 : "the others do not rebuild it to its checksum");
  return -EIO;
}

int
integrity_heal (struct array *a, const struct integrity_bad *b, bool locked,
                struct array_err *err)
{
  uint64_t stripe = (b->off - a->geom.data_offset) / a->geom.chunk;
  struct stripe_range range = { 0, 0, false };
  char *rows = aligned_alloc (R5I_UNIT, (size_t) a->geom.members * R5I_UNIT);
  int e;

  if (rows == NULL) {
    array_set_err (err, "out of memory");
    return -ENOMEM;
  }
  if (!locked)
    stripe_lock_range (&a->locks, stripe, stripe, STRIPE_EXCLUSIVE, &range);
  e = heal_row (a, b, rows, err);
  stripe_unlock_range (&a->locks, &range);
  free (rows);
  return e;
}
