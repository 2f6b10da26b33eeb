/* tests/unit/test-number.c -- the strict number parser (raid/number.h).
 *
 * What strtoul() and strtod() would take and a user does not mean must
 * be refused: a sign, white space, hex, an exponent, inf and nan,
 * trailing junk; numbers past 64 bits or past the caller's range are
 * -ERANGE, never wrapped; on failure the output is untouched.
 */
#include <config.h>

#undef NDEBUG
#include <errno.h>
#include <stdint.h>

#include <criterion/criterion.h>

#include "raid/number.h"

#define POISON UINT64_C (0xa5a5a5a5a5a5a5a5)
#define KiB UINT64_C (1024)

static int
uint_of (const char *s, uint64_t min, uint64_t max, uint64_t *v)
{
  int r;

  *v = POISON;
  r = r5_parse_uint (s, min, max, v);
  if (r != 0)
    cr_assert_eq (*v, POISON, "'%s' failed (%d) but set the output", s, r);
  return r;
}

static int
size_of (const char *s, uint64_t unit, uint64_t *v)
{
  int r;

  *v = POISON;
  r = r5_parse_size (s, unit, 0, UINT64_MAX, v);
  if (r != 0)
    cr_assert_eq (*v, POISON, "'%s' failed (%d) but set the output", s, r);
  return r;
}

Test (uint, valid)
{
  uint64_t v;

  cr_assert_eq (uint_of ("0", 0, 10, &v), 0);
  cr_assert_eq (v, 0);
  cr_assert_eq (uint_of ("42", 0, 100, &v), 0);
  cr_assert_eq (v, 42);
  cr_assert_eq (uint_of ("010", 0, 100, &v), 0);      /* decimal, not octal */
  cr_assert_eq (v, 10);
  cr_assert_eq (uint_of ("18446744073709551615", 0, UINT64_MAX, &v), 0);
  cr_assert_eq (v, UINT64_MAX);
}

Test (uint, range_ends)
{
  uint64_t v;

  cr_assert_eq (uint_of ("1", 1, 1000000, &v), 0);
  cr_assert_eq (v, 1);
  cr_assert_eq (uint_of ("1000000", 1, 1000000, &v), 0);
  cr_assert_eq (v, 1000000);
  cr_assert_eq (uint_of ("0", 1, 1000000, &v), -ERANGE);
  cr_assert_eq (uint_of ("1000001", 1, 1000000, &v), -ERANGE);
  cr_assert_eq (uint_of ("32", 0, 31, &v), -ERANGE);
}

Test (uint, overflow)
{
  uint64_t v;

  cr_assert_eq (uint_of ("18446744073709551616", 0, UINT64_MAX, &v), -ERANGE);
  cr_assert_eq (uint_of ("99999999999999999999999", 0, UINT64_MAX, &v),
                -ERANGE);
  cr_assert_eq (uint_of ("99999999999", 0, 1000000, &v), -ERANGE);
  cr_assert_eq (uint_of ("4294967296", 0, 1000000, &v), -ERANGE);
  /* Junk after a big number: not a number, however big. */
  cr_assert_eq (uint_of ("18446744073709551616x", 0, UINT64_MAX, &v),
                -EINVAL);
}

Test (uint, not_numbers)
{
  static const char *const bad[] = {
    "", "-1", "+1", "-0", " 5", "5 ", "\t5", "5\n", "0x10", "0X10", "1e3",
    "1E3", "1.0", "1.", ".5", "5k", "inf", "nan", "one", "1_000", "1,000",
  };
  uint64_t v;

  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    cr_assert_eq (uint_of (bad[i], 0, UINT64_MAX, &v), -EINVAL,
                  "'%s' taken as a number", bad[i]);
}

Test (size, suffixes)
{
  static const struct { const char *s; uint64_t bytes; } ok[] = {
    { "0", 0 }, { "4096", 4096 }, { "100b", 100 }, { "100B", 100 },
    { "8s", 4096 }, { "8S", 4096 }, { "64k", 64 * KiB }, { "64K", 64 * KiB },
    { "64KiB", 64 * KiB }, { "64KB", 64 * KiB }, { "1m", KiB * KiB },
    { "1M", KiB * KiB }, { "1G", KiB * KiB * KiB }, { "1t", KiB * KiB * KiB * KiB },
    { "1P", UINT64_C (1) << 50 }, { "1E", UINT64_C (1) << 60 },
    { "15E", UINT64_C (15) << 60 }, { "1MiB", KiB * KiB },
  };
  uint64_t v;

  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    cr_assert_eq (size_of (ok[i].s, 1, &v), 0, "'%s' refused", ok[i].s);
    cr_assert_eq (v, ok[i].bytes, "'%s' is %lu", ok[i].s, (unsigned long) v);
  }
}

Test (size, bare_number_is_in_units)
{
  uint64_t v;

  cr_assert_eq (size_of ("64", 1024, &v), 0);
  cr_assert_eq (v, 64 * KiB);
  cr_assert_eq (size_of ("64", 1, &v), 0);
  cr_assert_eq (v, 64);
  cr_assert_eq (size_of ("64K", 1024, &v), 0);        /* a suffix wins */
  cr_assert_eq (v, 64 * KiB);
}

Test (size, range_ends)
{
  uint64_t v = POISON;

  cr_assert_eq (r5_parse_size ("4K", 1, 4096, 64 << 20, &v), 0);
  cr_assert_eq (v, 4096);
  cr_assert_eq (r5_parse_size ("64M", 1, 4096, 64 << 20, &v), 0);
  cr_assert_eq (v, 64 << 20);
  v = POISON;
  cr_assert_eq (r5_parse_size ("4095", 1, 4096, 64 << 20, &v), -ERANGE);
  cr_assert_eq (r5_parse_size ("65537K", 1, 4096, 64 << 20, &v), -ERANGE);
  cr_assert_eq (r5_parse_size ("0", 1, 1, UINT64_MAX, &v), -ERANGE);
  cr_assert_eq (v, POISON);
}

Test (size, overflow)
{
  uint64_t v;

  cr_assert_eq (size_of ("16E", 1, &v), -ERANGE);
  cr_assert_eq (size_of ("16777216T", 1, &v), -ERANGE);
  cr_assert_eq (size_of ("36028797018963968s", 1, &v), -ERANGE);
  cr_assert_eq (size_of ("18014398509481984", 1024, &v), -ERANGE);
  cr_assert_eq (size_of ("18446744073709551616", 1, &v), -ERANGE);
  cr_assert_eq (size_of ("18446744073709551615", 1, &v), 0);
  cr_assert_eq (v, UINT64_MAX);
  cr_assert_eq (size_of ("0E", 1, &v), 0);
  cr_assert_eq (v, 0);
}

Test (size, not_sizes)
{
  static const char *const bad[] = {
    "", "K", "-4K", "+4K", " 4K", "4K ", "4 K", "0x10", "0x10K", "1e3",
    "1.5M", "4KK", "4KiBs", "4Kib", "4bB", "4sB", "4q", "4kb", "inf",
  };
  uint64_t v;

  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    cr_assert_eq (size_of (bad[i], 1, &v), -EINVAL,
                  "'%s' taken as a size", bad[i]);
}

static int
decimal_of (const char *s, double min, double max, double *v)
{
  *v = -1;
  return r5_parse_decimal (s, min, max, NULL, v);
}

Test (decimal, valid_and_range)
{
  double v;

  cr_assert_eq (decimal_of ("2.5", 0.1, 3600, &v), 0);
  cr_assert_float_eq (v, 2.5, 1e-12);
  cr_assert_eq (decimal_of ("5", 0.1, 3600, &v), 0);
  cr_assert_float_eq (v, 5, 1e-12);
  cr_assert_eq (decimal_of (".5", 0.1, 3600, &v), 0);
  cr_assert_float_eq (v, 0.5, 1e-12);
  cr_assert_eq (decimal_of ("0.1", 0.1, 3600, &v), 0);
  cr_assert_eq (v, 0.1);                       /* correctly rounded */
  cr_assert_eq (decimal_of ("3600", 0.1, 3600, &v), 0);
  cr_assert_eq (decimal_of ("0.09", 0.1, 3600, &v), -ERANGE);
  cr_assert_eq (decimal_of ("3600.001", 0.1, 3600, &v), -ERANGE);
  cr_assert_eq (decimal_of ("0", 0.1, 3600, &v), -ERANGE);
  cr_assert_eq (v, -1);
}

Test (decimal, not_decimals)
{
  static const char *const bad[] = {
    "", ".", "5.", "-1", "+1", " 5", "5 ", "0x10", "0x1p4", "1e3", "1E-2",
    "inf", "infinity", "nan", "1.2.3", "1,5", "5s",
  };
  double v;

  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    cr_assert_eq (decimal_of (bad[i], 0, 1e300, &v), -EINVAL,
                  "'%s' taken as a decimal", bad[i]);
}

Test (decimal, rest_is_the_unit)
{
  const char *rest = NULL;
  double v;

  cr_assert_eq (r5_parse_decimal ("2.5ms", 0, 1e9, &rest, &v), 0);
  cr_assert_float_eq (v, 2.5, 1e-12);
  cr_assert_str_eq (rest, "ms");
  cr_assert_eq (r5_parse_decimal ("500", 0, 1e9, &rest, &v), 0);
  cr_assert_str_eq (rest, "");
  cr_assert_eq (r5_parse_decimal ("1e3", 0, 1e9, &rest, &v), 0);
  cr_assert_str_eq (rest, "e3");            /* the caller refuses that unit */
  cr_assert_eq (r5_parse_decimal ("ms", 0, 1e9, &rest, &v), -EINVAL);
  cr_assert_eq (r5_parse_decimal (" 2ms", 0, 1e9, &rest, &v), -EINVAL);
}

Test (decimal, huge_is_out_of_range)
{
  static char s[400];
  double v;

  for (size_t i = 0; i + 1 < sizeof s; i++)
    s[i] = '9';
  cr_assert_eq (decimal_of (s, 0, 86400, &v), -ERANGE);
  cr_assert_eq (decimal_of ("0.000000000000000000000000001", 0.1, 10, &v),
                -ERANGE);
}
