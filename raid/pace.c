/* raid/pace.c -- the latency-target pacing of a job (see pace.h). */
#include <config.h>

#include "raid/pace.h"

#define SUB 8u                  /* buckets per power of two */
#define SUB_BITS 3u

unsigned
r5_lat_bucket (uint64_t us)
{
  unsigned m;

  if (us < SUB)
    return (unsigned) us;
  m = 63u - (unsigned) __builtin_clzll (us);      /* us in [2^m, 2^(m+1)) */
  if ((m - 2) * SUB >= R5_LAT_BUCKETS)
    return R5_LAT_BUCKETS - 1;
  return (m - 2) * SUB + (unsigned) ((us >> (m - SUB_BITS)) & (SUB - 1));
}

uint64_t
r5_lat_upper (unsigned b)
{
  unsigned m = b / SUB + 2, s = b % SUB;   /* as r5_lat_bucket cut it */

  if (b < SUB)
    return b;
  if (b >= R5_LAT_BUCKETS - 1)
    return UINT64_MAX;
  return ((uint64_t) (SUB + 1 + s) << (m - SUB_BITS)) - 1;
}

uint64_t
r5_lat_count (const struct r5_lat *l)
{
  uint64_t n = 0;

  for (unsigned b = 0; b < R5_LAT_BUCKETS; b++)
    n += l->bucket[b];
  return n;
}

uint64_t
r5_lat_percentile (const struct r5_lat *l, unsigned p)
{
  uint64_t n = r5_lat_count (l), want, seen = 0;

  if (n == 0)
    return 0;
  want = (n * p + 99) / 100;  /* the rank of the percentile, 1-based */
  for (unsigned b = 0; b < R5_LAT_BUCKETS; b++) {
    seen += l->bucket[b];
    if (seen >= want)
      return r5_lat_upper (b);
  }
  return UINT64_MAX;
}

static uint64_t
clamp (const struct r5_pace *p, uint64_t kib)
{
  if (kib < p->min_kib)
    return p->min_kib;
  return kib > p->max_kib ? p->max_kib : kib;
}

void
r5_pace_init (struct r5_pace *p, uint64_t target_us, uint64_t min_kib,
              uint64_t max_kib)
{
  *p = (struct r5_pace) { .target_us = target_us };
  r5_pace_bounds (p, min_kib, max_kib);
  p->rate_kib = p->min_kib;
}

void
r5_pace_bounds (struct r5_pace *p, uint64_t min_kib, uint64_t max_kib)
{
  p->min_kib = min_kib ? min_kib : 1;
  p->max_kib = max_kib < p->min_kib ? p->min_kib : max_kib;
  p->rate_kib = clamp (p, p->rate_kib);
}

uint64_t
r5_pace_window (struct r5_pace *p, const struct r5_lat *w)
{
  uint64_t step = (p->max_kib - p->min_kib) / R5_PACE_STEPS;

  if (step == 0)
    step = 1;
  if (r5_lat_count (w) >= R5_PACE_MIN_SAMPLES) {
    p->last_p99_us = r5_lat_percentile (w, 99);
    if (p->last_p99_us > p->target_us) {
      p->cuts++;
      p->rate_kib = clamp (p, p->rate_kib / 2);
      return p->rate_kib;
    }
  }
  p->raises++;
  p->rate_kib = clamp (p, p->rate_kib + step);
  return p->rate_kib;
}
