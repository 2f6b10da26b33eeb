/* raid/number.h -- the one strict parser of numbers that raid5ctl's
 * options, the plugin's parameters and the control commands share.
 *
 * strtoul() and friends take far more than a user means: a sign ("-1"
 * is ULONG_MAX), leading white space, "0x" (base 0), exponents (strtod),
 * "inf" and "nan", and they wrap or saturate silently when the result is
 * cast to a narrower type.  Here a number is decimal digits and nothing
 * else (leading zeros are decimal too, never octal), always within a
 * range the caller names, in 64 bits.
 *
 * Pure: no I/O, no allocation, no locale.  Each function returns 0 with
 * *out set, -EINVAL if s is not a number of its form (empty, a sign, a
 * space, hex, an exponent, trailing junk), or -ERANGE if it is one but
 * outside [min, max] (64-bit overflow included); on failure *out is
 * untouched.  The caller writes the one error line, naming its option
 * and the range.
 */
#ifndef RAID_NUMBER_H
#define RAID_NUMBER_H

#include <stdint.h>

/* A whole number: [0-9]+, from min to max. */
int r5_parse_uint (const char *s, uint64_t min, uint64_t max, uint64_t *out)
  __attribute__((nonnull, warn_unused_result));

/* A size in bytes as nbdkit writes sizes: digits and at most one suffix,
 * either case, b k m g t p e (powers of 1024) or s (512-byte sectors); an
 * "iB" or "B" after k..e is taken too (64KiB, 1MB: still powers of 1024).
 * A bare number counts units of `unit` bytes (raid5ctl takes KiB there,
 * as mdadm does; the plugin bytes).  min and max are in bytes.
 */
int r5_parse_size (const char *s, uint64_t unit, uint64_t min, uint64_t max,
                   uint64_t *out)
  __attribute__((nonnull, warn_unused_result));

/* A decimal with an optional fraction: DIGITS, DIGITS.DIGITS or .DIGITS
 * (no sign, space, exponent, hex, inf, nan), from min to max.  With rest
 * NULL nothing may follow the number; otherwise anything may, and *rest
 * points at it (a unit, for the caller to judge), set on success only.
 */
int r5_parse_decimal (const char *s, double min, double max,
                      const char **rest, double *out)
  __attribute__((nonnull (1, 5), warn_unused_result));

#endif /* RAID_NUMBER_H */
