/* array/fail.c -- taking a member out of service after an I/O error.
 *
 * RAID-5 survives one lost member.  The first member to fail is marked
 * faulty (atomically: a->out goes from -1 to its slot), logged with the
 * member, path, operation and offset, and recorded in the survivors'
 * superblocks; the work that failed is then redone degraded.  A second
 * member failing, or two failing in one batch, fails the array: every
 * later request gets EIO rather than wrong data.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "array/internal.h"

static const char *
op_name (enum io_kind kind)
{
  switch (kind) {
  case IO_READ: return "read";
  case IO_WRITE: return "write";
  case IO_ZERO: return "zero";
  case IO_PUNCH: return "punch";
  case IO_FSYNC: return "fdatasync";
  }
  return "io";
}

/* The first op that blames its member, or NULL (batch could not run). */
static const struct io_op *
first_member_error (const struct io_op *ops, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (ops[i].result < 0 && ops[i].result != -ECANCELED)
      return &ops[i];
  return NULL;
}

static bool
other_member_failed (const struct io_op *ops, size_t n, unsigned member)
{
  for (size_t i = 0; i < n; i++)
    if (ops[i].result < 0 && ops[i].result != -ECANCELED &&
        ops[i].member != member)
      return true;
  return false;
}

int
array_mark_failed (struct array *a, struct array_err *err, const char *why,
                   const char *what)
{
  a->failed = true;
  array_set_err (err, "array has failed: %s %s", why, what);
  return -EIO;
}

int
array_take_out (struct array *a, const struct io_op *ops, size_t n, int r,
                struct array_err *err)
{
  const struct io_op *op = first_member_error (ops, n);
  int expected = -1, m;
  char what[ARRAY_ERR_LEN];

  if (op == NULL) {
    array_set_err (err, "cannot run member I/O: %s", strerror (-r));
    return r < 0 ? r : -EIO;
  }
  m = (int) op->member;
  snprintf (what, sizeof what, "member %d (%s): %s at %" PRIu64 ": %s", m,
            a->members[m].path, op_name (op->kind), op->off,
            strerror (-op->result));
  if (other_member_failed (ops, n, op->member))
    return array_mark_failed (a, err, "several members failed at once, "
                              "first", what);
  if (atomic_compare_exchange_strong (&a->out, &expected, m)) {
    a->state[m] = MEMBER_FAULTY;
    a->count.member_failures++;
    array_log (a, ARRAY_LOG_ERROR, "%s; member marked faulty, array "
               "continues degraded on %u members", what,
               a->geom.members - 1);
    return 1;
  }
  if (expected == m)
    return 0;                 /* another request got there first */
  snprintf (what + strlen (what), sizeof what - strlen (what),
            ", and member %d (%s) is already out of service", expected,
            a->members[expected].path ? a->members[expected].path
                                      : "missing");
  return array_mark_failed (a, err, "a second member failed:", what);
}

int
array_io_failed (struct array *a, const struct io_op *ops, size_t n, int r,
                 struct array_err *err)
{
  struct array_err merr;
  int t = array_take_out (a, ops, n, r, err);

  if (t < 0)
    return t;
  if (t == 1 && meta_member_failed (a, (unsigned) a->out, &merr) < 0)
    array_log (a, ARRAY_LOG_ERROR, "recording the failure in the "
               "superblocks: %s", merr.msg);
  return 0;
}
