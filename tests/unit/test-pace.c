/* tests/unit/test-pace.c -- the latency histogram and the AIMD pacing of
 * a job under a latency target (raid/pace.h).
 *
 * The buckets are checked against their definition over a sweep of
 * latencies; percentiles against windows whose answer is known; the
 * controller against its rules: halve over the target (never under
 * min), a step up under it or when a window is too thin to tell (never
 * over max), min to max in R5_PACE_STEPS windows.
 */
#include <config.h>

#undef NDEBUG
#include <stdint.h>

#include <criterion/criterion.h>

#include "raid/pace.h"

Test (lat, buckets_cover_every_latency_once)
{
  unsigned prev = 0;

  for (uint64_t us = 0; us < (UINT64_C (1) << 32); us += us < 64 ? 1 : us / 7) {
    unsigned b = r5_lat_bucket (us);

    cr_assert (b >= prev, "bucket of %lu went back", (unsigned long) us);
    cr_assert (b < R5_LAT_BUCKETS);
    cr_assert (us <= r5_lat_upper (b), "%lu over its bucket's upper bound",
               (unsigned long) us);
    if (b > 0)
      cr_assert (us > r5_lat_upper (b - 1), "%lu also fits bucket %u",
                 (unsigned long) us, b - 1);
    prev = b;
  }
}

Test (lat, buckets_are_within_an_eighth)
{
  for (uint64_t us = 8; us < (UINT64_C (1) << 27); us = us * 5 / 4) {
    uint64_t up = r5_lat_upper (r5_lat_bucket (us));

    cr_assert (up >= us && up - us <= us / 8, "%lu reported as %lu",
               (unsigned long) us, (unsigned long) up);
  }
  cr_assert_eq (r5_lat_bucket (5), 5);
  cr_assert_eq (r5_lat_upper (r5_lat_bucket (UINT64_C (1) << 40)), UINT64_MAX);
}

static void
fill (struct r5_lat *l, uint64_t us, uint64_t n)
{
  l->bucket[r5_lat_bucket (us)] += n;
}

Test (lat, percentiles)
{
  struct r5_lat l = { { 0 } };

  cr_assert_eq (r5_lat_percentile (&l, 99), 0);
  fill (&l, 100, 990);
  fill (&l, 5000, 10);
  cr_assert_eq (r5_lat_count (&l), 1000);
  /* rank 990 of 1000 is still 100 us; rank 991 would be 5000 */
  cr_assert_eq (r5_lat_percentile (&l, 99), r5_lat_upper (r5_lat_bucket (100)));
  cr_assert_eq (r5_lat_percentile (&l, 100), r5_lat_upper (r5_lat_bucket (5000)));
  fill (&l, 5000, 1);
  cr_assert_eq (r5_lat_percentile (&l, 99), r5_lat_upper (r5_lat_bucket (5000)));
  cr_assert_eq (r5_lat_percentile (&l, 50), r5_lat_upper (r5_lat_bucket (100)));
}

static struct r5_lat
window (uint64_t us, uint64_t n)
{
  struct r5_lat l = { { 0 } };

  fill (&l, us, n);
  return l;
}

Test (pace, starts_at_min_and_climbs_to_max_in_steps)
{
  struct r5_pace p;
  struct r5_lat fast = window (200, 100);
  unsigned n = 0;

  r5_pace_init (&p, 1000, 1000, 33000);
  cr_assert_eq (p.rate_kib, 1000);
  while (p.rate_kib < 33000 && n < 1000) {
    uint64_t before = p.rate_kib;

    cr_assert_eq (r5_pace_window (&p, &fast), before + 1000);
    n++;
  }
  cr_assert_eq (n, R5_PACE_STEPS);
  cr_assert_eq (r5_pace_window (&p, &fast), 33000, "never over max");
  cr_assert_eq (p.cuts, 0);
  cr_assert_eq (p.last_p99_us, r5_lat_upper (r5_lat_bucket (200)));
}

Test (pace, halves_over_the_target_but_never_under_min)
{
  struct r5_pace p;
  struct r5_lat slow = window (4000, 100);

  r5_pace_init (&p, 1000, 1000, 200000);
  r5_pace_bounds (&p, 1000, 200000);
  p.rate_kib = 160000;
  cr_assert_eq (r5_pace_window (&p, &slow), 80000);
  cr_assert_eq (r5_pace_window (&p, &slow), 40000);
  for (int i = 0; i < 20; i++)
    r5_pace_window (&p, &slow);
  cr_assert_eq (p.rate_kib, 1000, "md's speed_min still holds");
  cr_assert_eq (p.cuts, 22);
}

Test (pace, a_thin_window_says_idle)
{
  struct r5_pace p;
  struct r5_lat thin = window (50000, R5_PACE_MIN_SAMPLES - 1);

  r5_pace_init (&p, 1000, 1000, 200000);
  cr_assert_gt (r5_pace_window (&p, &thin), 1000);
  cr_assert_eq (p.cuts, 0);
  cr_assert_eq (p.last_p99_us, 0, "nothing learnt from it");
}

Test (pace, exactly_at_the_target_is_under_it)
{
  struct r5_pace p;
  uint64_t at = r5_lat_upper (r5_lat_bucket (1000));
  struct r5_lat w = window (1000, 100);

  r5_pace_init (&p, at, 1000, 200000);
  cr_assert_gt (r5_pace_window (&p, &w), 1000);
  r5_pace_init (&p, at - 1, 1000, 200000);
  p.rate_kib = 4000;
  cr_assert_eq (r5_pace_window (&p, &w), 2000);
}

Test (pace, new_bounds_clamp_the_rate)
{
  struct r5_pace p;

  r5_pace_init (&p, 1000, 1000, 200000);
  p.rate_kib = 150000;
  r5_pace_bounds (&p, 1000, 50000);
  cr_assert_eq (p.rate_kib, 50000);
  r5_pace_bounds (&p, 60000, 10);
  cr_assert_eq (p.min_kib, 60000);
  cr_assert_eq (p.max_kib, 60000, "max below min is raised to it");
  cr_assert_eq (p.rate_kib, 60000);
}
