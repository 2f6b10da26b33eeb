/* tests/unit/test-array-assembly.c -- assembly decisions through the
 * array layer without nbdkit (arrayfx.h), as md makes them.  Asserts: a
 * member put back from an old copy (behind by more than md's one event)
 * is left out -- refused without run=, assembled degraded with it; a
 * member of another array is refused by name; disk=missing assembles
 * degraded with that slot missing; the same members in another order
 * assemble with each in its own slot.
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "tests/unit/arrayfx.h"

#define ARGS "--chunk 64K --bitmap none --assume-clean"

static void
copy_file (const char *from, const char *to)
{
  char cmd[2 * PATH_MAX + 16];

  snprintf (cmd, sizeof cmd, "cp '%s' '%s'", from, to);
  cr_assert_eq (system (cmd), 0, "%s", cmd);
}

Test (array_assembly, stale_member_left_out, .timeout = 120)
{
  struct afx f;
  struct array_err err;
  char old[PATH_MAX + 16];

  afx_make (&f, 3, 8 << 20, ARGS);
  snprintf (old, sizeof old, "%s/old.img", f.dir);
  copy_file (f.path[1], old);
  for (unsigned round = 0; round < 2; round++) {   /* events move on */
    afx_open_ok (&f);
    afx_write (&f, round << 20, 65536, 11 + round);
    afx_close (&f);
  }
  copy_file (old, f.path[1]);
  unlink (old);
  cr_assert_lt (afx_open (&f, &err), 0, "a stale member was taken");
  cr_assert (strstr (err.msg, "usable"), "%s", err.msg);
  f.cfg.run = true;
  afx_open_ok (&f);
  cr_assert_neq (array_member_state (f.a, 1), MEMBER_ACTIVE,
                 "the stale member is in service");
  cr_assert_eq (array_member_state (f.a, 0), MEMBER_ACTIVE);
  afx_cleanup (&f);
}

Test (array_assembly, member_of_another_array_refused, .timeout = 120)
{
  struct afx f, g;
  struct array_err err;

  afx_make (&f, 3, 8 << 20, ARGS);
  afx_make (&g, 3, 8 << 20, ARGS);
  f.cfg.paths[2] = g.path[2];
  cr_assert_lt (afx_open (&f, &err), 0, "another array's member was taken");
  cr_assert (strstr (err.msg, "another array"), "%s", err.msg);
  afx_cleanup (&f);
  afx_cleanup (&g);
}

Test (array_assembly, missing_and_reordered, .timeout = 120)
{
  struct afx f;

  afx_make (&f, 3, 8 << 20, ARGS);
  f.cfg.paths[2] = NULL;
  afx_open_ok (&f);
  cr_assert_eq (array_member_state (f.a, 2), MEMBER_MISSING);
  cr_assert_eq (array_member_state (f.a, 0), MEMBER_ACTIVE);
  afx_close (&f);
  f.cfg.paths[0] = f.path[2];
  f.cfg.paths[1] = f.path[0];
  f.cfg.paths[2] = f.path[1];
  afx_open_ok (&f);
  for (unsigned i = 0; i < 3; i++) {
    cr_assert_eq (array_member_state (f.a, i), MEMBER_ACTIVE);
    cr_assert_str_eq (array_member_path (f.a, i), f.path[i],
                      "slot %u is %s", i, array_member_path (f.a, i));
  }
  afx_cleanup (&f);
}
