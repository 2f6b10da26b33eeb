/* tests/integration/workload.c -- see workload.h. */

#include <config.h>

#include <stdbool.h>
#include <string.h>

#include "workload.h"

uint64_t
rng_next (struct rng *r)
{
  r->s ^= r->s >> 12;
  r->s ^= r->s << 25;
  r->s ^= r->s >> 27;
  return r->s * UINT64_C(0x2545F4914F6CDD1D);
}

uint64_t
rng_below (struct rng *r, uint64_t n)
{
  return rng_next (r) % n;
}

static uint64_t
min64 (uint64_t a, uint64_t b)
{
  return a < b ? a : b;
}

/* A length of one of the kinds listed for shape_pick.  *boundary is set
 * to the alignment the offset should straddle or sit on (0 = anywhere),
 * *aligned to whether it should sit on it.
 */
static uint64_t
pick_len (struct rng *r, const struct shape *sh, uint64_t *boundary,
          bool *aligned)
{
  uint64_t stripe = sh->chunk * (sh->disks - 1);
  unsigned k = rng_below (r, 100);

  *boundary = 0;
  *aligned = false;
  if (k < 10)
    return 1;
  if (k < 28)
    return 2 + rng_below (r, 4094);
  if (k < 42) {
    *aligned = rng_below (r, 2) == 0;
    return *aligned ? 4096 : 3584 + rng_below (r, 1025);
  }
  if (k < 62) {
    *boundary = sh->chunk;
    return 2 + rng_below (r, 2 * sh->chunk);
  }
  if (k < 77) {
    *boundary = stripe;
    return stripe / 2 + rng_below (r, stripe * 2 + sh->chunk);
  }
  if (k < 88) {
    *aligned = true;
    *boundary = stripe;
    return stripe * (1 + rng_below (r, 3));
  }
  return 1 + rng_below (r, sh->max_len);
}

void
shape_pick (struct rng *r, const struct shape *sh, uint64_t *offp,
            uint64_t *lenp)
{
  uint64_t boundary, len, off, rlen = sh->region_len;
  bool aligned;

  len = pick_len (r, sh, &boundary, &aligned);
  len = min64 (min64 (len, sh->max_len), rlen);
  if (boundary) {
    off = rng_below (r, rlen / boundary + 1) * boundary;
    if (!aligned)
      off -= min64 (off, rng_below (r, len));
  }
  else {
    off = rng_below (r, rlen);
    if (rng_below (r, 4) == 0)
      off &= ~(uint64_t) (rng_below (r, 2) ? 511 : 4095);
  }
  if (rng_below (r, 50) == 0 || off + len > rlen)
    off = rlen - len;
  *offp = sh->region_off + off;
  *lenp = len;
}

void
shape_pick_huge (struct rng *r, const struct shape *sh, uint64_t *off,
                 uint64_t *len)
{
  *len = 1 + rng_below (r, sh->region_len);
  *off = sh->region_off + rng_below (r, sh->region_len - *len + 1);
}

/* The tag byte for array offset a, written by request id. */
static unsigned char
tag_byte (uint64_t a, unsigned id)
{
  static const char hex[] = "0123456789abcdef";
  unsigned pos = a & 15, shift;

  if (pos == 0)
    return 'W';
  if (pos <= 6) {
    for (shift = 6 - pos; shift > 0; shift--)
      id /= 10;
    return '0' + id % 10;
  }
  if (pos == 7)
    return '@';
  return hex[((a & ~UINT64_C(15)) >> (4 * (15 - pos))) & 15];
}

void
fill_pattern (struct rng *r, unsigned char *buf, uint64_t off, uint64_t len,
              unsigned id)
{
  unsigned k = rng_below (r, 20);
  uint64_t i;

  if (k == 0)
    memset (buf, 0, len);
  else if (k < 6)
    for (i = 0; i < len; i++)
      buf[i] = rng_next (r) >> 56;
  else
    for (i = 0; i < len; i++)
      buf[i] = tag_byte (off + i, id);
}
