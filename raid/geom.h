/* raid/geom.h -- the shape of a RAID-5 array, as Linux md lays it out.
 *
 * Units: every size and offset here is in BYTES.  md stores the same
 * quantities in 512-byte sectors; conversion happens at the superblock
 * boundary, never here.
 *
 * Pure: no I/O, no allocation, no locks.  A geometry is a value; once
 * r5_geom_init() has accepted it, every field is consistent and may be read
 * freely from any thread.
 */
#ifndef RAID_GEOM_H
#define RAID_GEOM_H

#include <stdint.h>

/* Limits.  md's own limits are wider; these keep per-stripe plans small
 * (bitmasks of data indices fit in 64 bits) and requests bounded.
 */
#define R5_MIN_MEMBERS 3
#define R5_MAX_MEMBERS 32
#define R5_MIN_CHUNK   4096u              /* md: multiple of PAGE_SIZE */
#define R5_MAX_CHUNK   (64u << 20)        /* 64 MiB */
#define R5_SECTOR      512u

/* md's RAID-5 algorithm numbers (sb.layout; md's ALGORITHM_* in raid5.h).
 * Parity-first and parity-last keep parity on one member, as RAID-4 does.
 */
enum r5_layout {
  R5_LEFT_ASYMMETRIC = 0,
  R5_RIGHT_ASYMMETRIC = 1,
  R5_LEFT_SYMMETRIC = 2,                  /* mdadm's default */
  R5_RIGHT_SYMMETRIC = 3,
  R5_PARITY_FIRST = 4,                    /* md's ALGORITHM_PARITY_0 */
  R5_PARITY_LAST = 5,                     /* md's ALGORITHM_PARITY_N */
};
#define R5_LAYOUTS 6                      /* layouts are 0..R5_LAYOUTS-1 */

struct r5_geom {
  unsigned members;           /* N, >= R5_MIN_MEMBERS, <= R5_MAX_MEMBERS */
  unsigned data_members;      /* N - 1 */
  enum r5_layout layout;
  uint64_t chunk;             /* power of two, R5_MIN_CHUNK..R5_MAX_CHUNK */
  uint64_t data_offset;       /* first data byte on every member; sector multiple */
  uint64_t stripes;           /* whole stripes that fit on the smallest member */
  uint64_t member_data;       /* bytes used per member after data_offset = stripes * chunk */
  uint64_t stripe_data;       /* array bytes per stripe = chunk * (N - 1) */
  uint64_t capacity;          /* array size = stripes * stripe_data */
};

/* What an array's geometry is made from. */
struct r5_geom_params {
  unsigned members;           /* N */
  uint64_t chunk;             /* bytes */
  enum r5_layout layout;
  uint64_t data_offset;       /* bytes */
  uint64_t member_bytes;      /* the size of the smallest member */
};

/* Fill *g from the parameters p.  Like md, the space after data_offset is
 * rounded down to whole chunks.
 * Returns 0; -EINVAL if members, chunk, layout or data_offset is out of
 * range (data_offset must be a multiple of 512); -ENOSPC if a member
 * cannot hold data_offset plus one chunk; -EFBIG if the array would hold
 * more than INT64_MAX bytes (NBD sizes are signed 64-bit).  *g is
 * untouched on error.
 */
int r5_geom_init (struct r5_geom *g, const struct r5_geom_params *p)
  __attribute__((nonnull, warn_unused_result));

/* Human-readable reason for an r5_geom_init() failure with these
 * parameters, for error messages ("chunk 3000 is not a power of two").
 * Writes at most len bytes into buf (always NUL-terminated) and returns buf.
 */
const char *r5_geom_explain (char *buf, unsigned len,
                             const struct r5_geom_params *p)
  __attribute__((nonnull));

#endif /* RAID_GEOM_H */
