/* array/object.c -- the array object's small services, used by every
 * part of array/ (object.h): an error line, the log hook, the write
 * permission of a read-only array, and the tests' crash points.
 */
#include <config.h>

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array/object.h"

void
array_set_err (struct array_err *err, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (err->msg, sizeof err->msg, fmt, ap);
  va_end (ap);
}

int
array_writable (const struct array *a, const char *what,
                struct array_err *err)
{
  if (!a->read_only)
    return 0;
  array_set_err (err, "%s: the array is read-only: nothing is written to "
                 "its members", what);
  return -EROFS;
}

void
array_test_crash (const char *point)
{
  static _Atomic unsigned passed;
  const char *want = getenv ("RAID5_TEST_CRASH"), *at;
  size_t n = strlen (point);
  unsigned k = 1;

  if (want == NULL || strncmp (want, point, n) != 0 ||
      (want[n] != '\0' && want[n] != '@'))
    return;
  if (want[n] == '@' && (at = want + n + 1) && sscanf (at, "%u", &k) != 1)
    k = 1;
  if (++passed == k)
    raise (SIGKILL);
}

void
array_log (const struct array *a, enum array_log_level level,
           const char *fmt, ...)
{
  char msg[ARRAY_ERR_LEN];
  va_list ap;

  if (a->log == NULL)
    return;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  a->log (level, msg);
}
