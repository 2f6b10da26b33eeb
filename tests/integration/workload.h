/* tests/integration/workload.h -- what random-io's requests look like.
 *
 * Pure functions over a caller-owned random state: no I/O, no locks.  Each
 * thread of random-io keeps its own struct rng.
 */
#ifndef INTEGRATION_WORKLOAD_H
#define INTEGRATION_WORKLOAD_H

#include <stdint.h>

/* xorshift64* state; any non-zero seed. */
struct rng {
  uint64_t s;
};

uint64_t rng_next (struct rng *r);

/* Uniform in [0, n); n > 0. */
uint64_t rng_below (struct rng *r, uint64_t n);

/* The array and the part of it requests go to.  All in bytes. */
struct shape {
  uint64_t chunk;             /* power of two */
  unsigned disks;             /* members, >= 3 */
  uint64_t max_len;           /* longest request from shape_pick */
  uint64_t region_off;        /* requests stay in [region_off, */
  uint64_t region_len;        /*   region_off + region_len), len > 0 */
};

/* A random range in the region, of one of several kinds: 1 byte, under
 * 4K, about 4K (aligned or not), straddling a chunk boundary, straddling a
 * stripe boundary, whole aligned stripes, or anything up to max_len.
 * Offsets are mostly unaligned; some requests end at the region's end.
 */
void shape_pick (struct rng *r, const struct shape *sh, uint64_t *off,
                 uint64_t *len);

/* A random range of up to the whole region (for zero and trim). */
void shape_pick_huge (struct rng *r, const struct shape *sh, uint64_t *off,
                      uint64_t *len);

/* Fill buf (len bytes, to be written at array offset off by request id)
 * with a pattern: mostly a text tag per 16-byte block of the array,
 * "W000123@0000a3f0" (request id, and the array offset the block was meant
 * for), so a misplaced block in a failure report says where it came from;
 * sometimes random bytes; sometimes zeroes (written by a plain write).
 */
void fill_pattern (struct rng *r, unsigned char *buf, uint64_t off,
                   uint64_t len, unsigned id);

#endif /* INTEGRATION_WORKLOAD_H */
