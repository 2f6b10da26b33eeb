/* tests/unit/test-array-member-fail.c -- a member failing while a job
 * runs, through the array layer without nbdkit (arrayfx.h).  Asserts: a
 * check whose member fails stops with an error, the member is faulty,
 * the array serves every byte as written (degraded reads); a rebuild
 * whose new member fails stops too, and that member stays out while the
 * array still reads right.
 */
#include <config.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "tests/unit/arrayfx.h"

Test (array_fail, member_fails_mid_check, .timeout = 120)
{
  struct afx f;
  struct array_err err;
  int r;

  afx_make (&f, 3, 4 << 20, NULL);
  afx_open_ok (&f);
  afx_write (&f, 0, f.cap, 2);
  array_inject_failure (f.a, 2, 20);
  r = array_job_run (f.a, R5_JOB_CHECK, NULL, &err);
  cr_assert_lt (r, 0, "the check went on past a failed member");
  cr_assert_eq (array_member_state (f.a, 2), MEMBER_FAULTY);
  cr_assert_eq (array_member_state (f.a, 0), MEMBER_ACTIVE);
  afx_verify (&f);
  afx_cleanup (&f);
}

Test (array_fail, new_member_fails_mid_rebuild, .timeout = 120)
{
  struct afx f;
  struct array_err err;
  char fresh[PATH_MAX + 16];
  FILE *fp;
  int r;

  afx_make (&f, 3, 8 << 20, "--chunk 64K --bitmap none --assume-clean");
  afx_open_ok (&f);
  afx_write (&f, 0, f.cap, 3);
  cr_assert_eq (array_fail (f.a, 1, &err), 0, "%s", err.msg);
  snprintf (fresh, sizeof fresh, "%s/new.img", f.dir);
  cr_assert_not_null (fp = fopen (fresh, "w"));
  cr_assert_eq (ftruncate (fileno (fp), 8 << 20), 0);
  fclose (fp);
  cr_assert_eq (array_rebuild_start (f.a, 1, fresh, false, &err), 0, "%s",
                err.msg);
  cr_assert_eq (array_member_state (f.a, 1), MEMBER_REBUILDING);
  array_inject_failure (f.a, 1, 10);
  r = array_job_run (f.a, R5_JOB_REBUILD, NULL, &err);
  cr_assert_lt (r, 0, "the rebuild went on onto a failed member");
  cr_assert_eq (array_member_state (f.a, 1), MEMBER_FAULTY, "state %d",
                array_member_state (f.a, 1));
  afx_verify (&f);
  unlink (fresh);
  afx_cleanup (&f);
}
