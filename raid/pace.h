/* raid/pace.h -- the latency-target mode of a background job
 * (sync-latency-max=): the job takes what the clients leave.
 *
 * md paces resync by KiB/s: speed_max while the array is idle, speed_min
 * as soon as anything else runs (md.c md_do_sync, is_mddev_idle).  Those
 * are numbers for hard disks; on anything faster a loaded array's job
 * crawls at speed_min, or, raised, takes the clients' latency.  Here the
 * job is paced by what clients see instead: their requests' service
 * time is counted in windows (struct r5_lat: 8 buckets per power of
 * two of microseconds, so a percentile is known within 12.5%); at the end of each window the job's rate is cut by half
 * if the window's 99th percentile was over the target and raised by a
 * step if it was under -- additive increase, multiplicative decrease, as
 * TCP's congestion control and the kernel's blk-iolatency do -- never
 * below speed_min (md's guarantee that a job moves) nor above
 * speed_max.  A window with too few requests to tell says the clients
 * are nearly idle: the rate rises.
 *
 * Pure arithmetic: the caller counts (r5_lat_add from request threads,
 * with its own atomics or locks) and calls r5_pace_window once per
 * window from the job's thread.  Rates are KiB/s per member; latencies
 * microseconds.
 */
#ifndef RAID_PACE_H
#define RAID_PACE_H

#include <stdint.h>

/* Buckets 0-7 hold 0-7 us exactly; then each power of two [2^m,
 * 2^(m+1)) is cut into 8 equal buckets, up to 2^28 us (268 s) and more
 * in the last.
 */
#define R5_LAT_BUCKETS 208
#define R5_PACE_MIN_SAMPLES 8  /* fewer in a window: nearly idle */
#define R5_PACE_STEPS 32       /* from min to max in this many windows */

/* A window's request latencies. */
struct r5_lat {
  uint64_t bucket[R5_LAT_BUCKETS];
};

/* The bucket of a latency of us microseconds, and the largest latency
 * that bucket b holds.
 */
unsigned r5_lat_bucket (uint64_t us);
uint64_t r5_lat_upper (unsigned b);

/* The pth percentile (1..100) of the window, as the upper bound of its
 * bucket (us); 0 for an empty window.  Upper bounds: a percentile is
 * never said to be under the target when it may not be.
 */
uint64_t r5_lat_percentile (const struct r5_lat *l, unsigned p)
  __attribute__((nonnull));

uint64_t r5_lat_count (const struct r5_lat *l) __attribute__((nonnull));

struct r5_pace {
  uint64_t target_us;         /* the clients' p99 to keep under; 0: off */
  uint64_t min_kib, max_kib;  /* the bounds (md's speed_min, speed_max) */
  uint64_t rate_kib;          /* the job's rate now */
  uint64_t last_p99_us;       /* of the last window that could tell */
  uint64_t cuts, raises;      /* windows over and under the target */
};

/* Start at min (the clients first), off if target_us is 0. */
void r5_pace_init (struct r5_pace *p, uint64_t target_us, uint64_t min_kib,
                   uint64_t max_kib) __attribute__((nonnull));

/* New bounds (raid5ctl speed); the rate is kept within them. */
void r5_pace_bounds (struct r5_pace *p, uint64_t min_kib, uint64_t max_kib)
  __attribute__((nonnull));

/* One window ended with latencies w: the next rate, KiB/s. */
uint64_t r5_pace_window (struct r5_pace *p, const struct r5_lat *w)
  __attribute__((nonnull));

#endif /* RAID_PACE_H */
