/* raid/number.c -- strict numbers (see number.h). */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "raid/number.h"

/* Fraction digits past this many are read but add nothing a double
 * could hold; it keeps the divisor (10^n) exact.
 */
#define FRACTION_DIGITS 18

static bool
is_digit (char c)
{
  return c >= '0' && c <= '9';
}

/* The digits at *p as a number, *p moved past all of them.  -EINVAL if
 * there is none, -ERANGE if they do not fit 64 bits (still all skipped,
 * so that the caller can tell junk after them from a big number).
 */
static int
digits (const char **p, uint64_t *v)
{
  const char *s = *p;
  uint64_t n = 0;
  int r = 0;

  if (!is_digit (*s))
    return -EINVAL;
  for (; is_digit (*s); s++) {
    unsigned d = (unsigned) (*s - '0');

    if (n > (UINT64_MAX - d) / 10)
      r = -ERANGE;
    else
      n = n * 10 + d;
  }
  *p = s;
  *v = n;
  return r;
}

int
r5_parse_uint (const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
  uint64_t v;
  int r = digits (&s, &v);

  if (r == -EINVAL || *s != '\0')
    return -EINVAL;
  if (r < 0 || v < min || v > max)
    return -ERANGE;
  *out = v;
  return 0;
}

/* Bytes per unit of the suffix at s, 0 if s is not one. */
static uint64_t
suffix_bytes (const char *s)
{
  static const char powers[] = "bkmgtpe";
  char c = *s >= 'A' && *s <= 'Z' ? (char) (*s - 'A' + 'a') : *s;

  if (c == 's')
    return s[1] == '\0' ? 512 : 0;
  for (unsigned i = 0; c != '\0' && powers[i] != '\0'; i++)
    if (powers[i] == c) {
      if (s[1] == '\0' ||
          (i > 0 && (strcmp (s + 1, "iB") == 0 || strcmp (s + 1, "B") == 0)))
        return UINT64_C (1) << (10 * i);
      return 0;
    }
  return 0;
}

int
r5_parse_size (const char *s, uint64_t unit, uint64_t min, uint64_t max,
               uint64_t *out)
{
  uint64_t v, bytes;
  int r = digits (&s, &v);

  if (r == -EINVAL)
    return r;
  bytes = *s == '\0' ? unit : suffix_bytes (s);
  if (bytes == 0)
    return -EINVAL;
  if (r < 0 || (v != 0 && v > UINT64_MAX / bytes))
    return -ERANGE;
  v *= bytes;
  if (v < min || v > max)
    return -ERANGE;
  *out = v;
  return 0;
}

int
r5_parse_decimal (const char *s, double min, double max, const char **rest,
                  double *out)
{
  double v = 0, scale = 1;
  bool whole = is_digit (*s);

  for (; is_digit (*s); s++)
    v = v * 10 + (*s - '0');
  if (*s == '.') {
    if (!is_digit (s[1]))
      return -EINVAL;                   /* "5." and "." are not numbers */
    for (unsigned n = 0; is_digit (*++s); n++)
      if (n < FRACTION_DIGITS) {
        v = v * 10 + (*s - '0');
        scale *= 10;
      }
  }
  else if (!whole)
    return -EINVAL;
  if (rest == NULL && *s != '\0')
    return -EINVAL;
  v /= scale;
  if (!(v >= min && v <= max))
    return -ERANGE;
  if (rest != NULL)
    *rest = s;
  *out = v;
  return 0;
}
