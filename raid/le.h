/* raid/le.h -- helpers of the on-disk decoders: little-endian integers
 * (md's metadata is little-endian on every host) and error reasons.
 * Internal to raid/.
 */
#ifndef RAID_LE_H
#define RAID_LE_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The size-byte little-endian integer at p (size <= 8). */
static inline uint64_t
le_get (const uint8_t *p, unsigned size)
{
  uint64_t v = 0;

  for (unsigned i = size; i-- > 0;)
    v = v << 8 | p[i];
  return v;
}

/* Store the low size bytes of v at p, little-endian. */
static inline void
le_put (uint8_t *p, unsigned size, uint64_t v)
{
  for (unsigned i = 0; i < size; i++, v >>= 8)
    p[i] = (uint8_t) v;
}

/* Fill why (if not NULL) with a printf-style reason; return err.  For
 * the decoders, which answer -errno plus one line of explanation.
 */
static inline int
le_bad (char *why, size_t len, int err, const char *fmt, ...)
  __attribute__((format (printf, 4, 5)));

static inline int
le_bad (char *why, size_t len, int err, const char *fmt, ...)
{
  va_list ap;

  if (why != NULL && len > 0) {
    va_start (ap, fmt);
    vsnprintf (why, len, fmt, ap);
    va_end (ap);
  }
  return err;
}

#endif /* RAID_LE_H */
