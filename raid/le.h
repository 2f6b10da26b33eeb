/* raid/le.h -- little-endian integers in on-disk blocks (md's metadata is
 * little-endian on every host).  Internal to raid/.
 */
#ifndef RAID_LE_H
#define RAID_LE_H

#include <stdint.h>

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

#endif /* RAID_LE_H */
