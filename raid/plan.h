/* raid/plan.h -- turn an array request into member I/O: the RAID-5 planner.
 *
 * A plan is a list of member I/Os, parity compares and XOR steps, executed
 * in three phases:
 *   1. every R5_IO_READ (independent, any order, may run in parallel);
 *   2. every compare, then every XOR step, in list order;
 *   3. every R5_IO_WRITE / R5_IO_ZERO / R5_IO_TRIM (independent, any order).
 * An XOR or a write may depend on a compare (its `when`): it is carried out
 * only if that compare found wrong parity.  Requests (below) use no
 * compares; jobs (jobplan.h: check, repair, rebuild) are planned into the
 * same kind of plan and run by the same executor.
 * Buffers are named, not pointed to (struct r5_buf): an offset into the
 * client's buffer, into the plan's scratch area, or the all-zero source.
 * The executor (array/) maps them to memory; tests run plans on in-memory
 * members.  This keeps every RAID decision here, pure and testable.
 *
 * How a stripe is cut: the request touches, in each data chunk, one
 * interval of chunk offsets.  The boundaries of those intervals cut the
 * chunk-offset axis [0, chunk) into at most three SEGMENTS; inside one
 * segment every data chunk is either wholly touched or untouched, so each
 * segment gets one strategy (enum r5_seg_kind) and its own parity update.
 * Example, N=3, 64K chunk, write of [60K, 68K) of stripe 0: segment [0,4K)
 * touches D1 only and segment [60K,64K) touches D0 only; both are RCW and
 * parity is written at [0,4K) and [60K,64K), nothing else.
 *
 * Write strategies per segment (k = touched data chunks, D = N-1):
 *   FULL_WRITE  k = D: parity = XOR of the new data, no reads.
 *   RCW         reconstruct-write: read the D-k untouched chunks, parity =
 *               XOR of new + untouched data.
 *   RMW         read-modify-write: read the k old chunks and old parity,
 *               parity ^= old ^ new.
 *   RCW is chosen when it reads no more chunks than RMW (D-k <= k+1), as md
 *   does; with one member missing the choice is forced: a missing touched
 *   chunk needs RCW, a missing untouched chunk needs RMW, a missing parity
 *   member needs DATA_ONLY (write data, skip parity).
 * Reads: READ goes straight into the client buffer; DEGRADED_READ rebuilds
 * the missing member's bytes as the XOR of the other N-1 members.
 * ZERO: stripes wholly covered become ZERO_STRIPE (zero every member's chunk:
 * zeroes have zero parity, no data moves); partial stripes are written from
 * the zero source.  TRIM: whole stripes only, punched on every member
 * (parity of holes is a hole); partial stripes are left alone (trim is
 * advisory).
 *
 * With a partial parity log (r5_plan.ppl), write segments also get the
 * XOR step of their partial parity and an entry to log (r5_ppl_entry).
 *
 * Threads: a struct r5_plan belongs to one thread.  Errors: -ENOMEM, and
 * -EINVAL for what r5_plan_range refuses.
 */
#ifndef RAID_PLAN_H
#define RAID_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "raid/geom.h"

enum r5_op { R5_OP_READ, R5_OP_WRITE, R5_OP_ZERO, R5_OP_TRIM };

enum r5_seg_kind {
  R5_SEG_READ,
  R5_SEG_DEGRADED_READ,
  R5_SEG_FULL_WRITE,
  R5_SEG_RCW,
  R5_SEG_RMW,
  R5_SEG_DATA_ONLY,
  R5_SEG_ZERO_STRIPE,
  R5_SEG_TRIM_STRIPE,
  R5_SEG_KINDS
};

enum r5_buf_kind {
  R5_BUF_CLIENT,              /* off = byte offset into the client buffer */
  R5_BUF_SCRATCH,             /* off = byte offset into the scratch area */
  R5_BUF_ZERO,                /* all zeroes, at least chunk bytes; off = 0 */
};

struct r5_buf {
  enum r5_buf_kind kind;
  uint64_t off;
};

enum r5_io_kind {
  R5_IO_READ,                 /* member bytes -> buf */
  R5_IO_WRITE,                /* buf -> member bytes */
  R5_IO_ZERO,                 /* member bytes become zero (no buffer) */
  R5_IO_TRIM,                 /* member bytes become zero, holes welcome */
};

struct r5_io {
  enum r5_io_kind kind;
  unsigned member;
  uint64_t member_off;        /* bytes, includes data_offset */
  uint64_t len;               /* bytes, > 0, never crosses a chunk */
  struct r5_buf buf;          /* READ/WRITE only */
  unsigned when;              /* writes: 0 always, k: if compare k-1 found
                               * wrong parity */
};

#define R5_XOR_MAX_SRC (2 * R5_MAX_MEMBERS)

/* dst = XOR of src[0..nsrc-1], each len bytes; nsrc >= 2 */
struct r5_xor {
  uint64_t len;
  unsigned nsrc;
  struct r5_buf dst;
  struct r5_buf src[R5_XOR_MAX_SRC];
  unsigned when;              /* 0 always, k: if compare k-1 found wrong
                               * parity */
};

/* Units parity is compared in: md's stripe_head, 4 KiB. */
#define R5_CMP_UNIT 4096u

/* What md's mismatch_cnt adds for units wrong units: their sectors
 * (raid5.c handle_parity_checks5 adds STRIPE_SECTORS, 8, for each).
 */
static inline uint64_t
r5_cmp_sectors (unsigned units)
{
  return (uint64_t) units * (R5_CMP_UNIT / 512);
}

/* Is the parity of stripe right over chunk bytes [chunk_off,
 * chunk_off+len)?  src holds every member's bytes there (data and
 * parity), which XOR to zero where it is.  The executor counts the
 * R5_CMP_UNIT units (of the chunk, len a multiple) where they do not.
 */
struct r5_cmp {
  uint64_t stripe;
  unsigned parity;            /* member holding the stripe's parity */
  uint64_t chunk_off, len;
  unsigned nsrc;
  struct r5_buf src[R5_MAX_MEMBERS];
};

/* A partial parity log entry (raid/ppl.h) of a write segment, when the
 * plan is made for an array with a PPL (r5_plan.ppl).  Before any of the
 * stripe's phase-3 writes is issued, the executor logs it on the parity
 * member: data_sector, pp_len, data_len and parity are md's ppl entry
 * fields (array sectors, bytes); pp names the partial parity after
 * phase 2 -- the XOR, as they were before the write, of the stripe's
 * data chunks that the segment leaves alone -- pp_len bytes.  A
 * full-stripe write (and a whole-stripe zero or trim) has pp_len 0: its
 * parity comes from its data alone.  A segment whose parity member is
 * missing is not logged (md: no log without the parity disk).
 */
struct r5_ppl_entry {
  unsigned parity;            /* member whose log takes it */
  uint64_t stripe;
  uint64_t data_sector;       /* array sector of the first byte written */
  uint32_t pp_len, data_len;  /* bytes */
  struct r5_buf pp;
};

struct r5_plan {
  struct r5_io *ios;          /* phases 1 and 3, see r5_io_kind */
  size_t nios, ios_cap;
  struct r5_cmp *cmps;        /* phase 2, first */
  size_t ncmps, cmps_cap;
  struct r5_xor *xors;        /* phase 2, in order */
  size_t nxors, xors_cap;
  uint64_t scratch;           /* scratch bytes the plan needs */
  uint64_t segs[R5_SEG_KINDS];  /* how many segments of each kind */
  int missing;                /* member treated as absent, or -1 */
  /* Stripes from here on may have wrong parity (a resync is pending):
   * writes there use RCW, which computes parity afresh, rather than RMW,
   * which would carry the error forward (md does the same).  Set after
   * r5_plan_init/reset (which make it UINT64_MAX) and before planning.
   */
  uint64_t rcw_from;
  /* The array keeps a PPL: log entries for every write segment.  Set
   * after init/reset (which clear it); ranges written must then be
   * sector-aligned.
   */
  bool ppl;
  struct r5_ppl_entry *ppl_entries;
  size_t nppl, ppl_cap;
};

/* Initialise an empty plan.  r5_plan_reset() empties it, keeping memory;
 * r5_plan_free() releases it (safe on an initialised or zeroed plan).
 */
void r5_plan_init (struct r5_plan *p) __attribute__((nonnull));
void r5_plan_reset (struct r5_plan *p) __attribute__((nonnull));
void r5_plan_free (struct r5_plan *p) __attribute__((nonnull));

/* What r5_plan_range() plans: op on array bytes [off, off+len), of a
 * client request whose buffer holds array bytes [req_off, ...) (client
 * buffer offsets are relative to req_off; req_off <= off), with member
 * missing (or -1) treated as absent, in at most budget bytes of scratch.
 */
struct r5_range {
  enum r5_op op;
  uint64_t off, len;
  uint64_t req_off;
  int missing;
  uint64_t budget;
  /* With ppl: at most this many entries and bytes of partial parity in
   * the plan, 0 for no limit (a log unit's room, ppl.h); like budget,
   * never less than one stripe.
   */
  uint64_t ppl_entries, ppl_bytes;
};

/* Append the plan for the part of r's range that starts at r->off and
 * fits within r->budget and the ppl limits (at least one stripe's worth
 * is always planned, whatever they are).  Requires off + len <= g->capacity and len > 0.
 * On success returns 0 and sets *planned to the bytes covered (> 0, a
 * prefix of the range ending on a stripe boundary unless it is all of it).
 * Returns -ENOMEM if the plan cannot grow (it is then partial: reset it),
 * -EINVAL for a write with ppl set that is not sector-aligned.
 */
int r5_plan_range (struct r5_plan *p, const struct r5_geom *g,
                   const struct r5_range *r, uint64_t *planned)
  __attribute__((nonnull, warn_unused_result));

/* Planners' building blocks: append one I/O, compare or XOR step as
 * given (no merging).  0, or -ENOMEM.
 */
int r5_plan_add_io (struct r5_plan *p, const struct r5_io *io)
  __attribute__((nonnull, warn_unused_result));
int r5_plan_add_cmp (struct r5_plan *p, const struct r5_cmp *c)
  __attribute__((nonnull, warn_unused_result));
int r5_plan_add_xor (struct r5_plan *p, const struct r5_xor *x)
  __attribute__((nonnull, warn_unused_result));

/* Append the recovery of one entry e of a partial parity log, as md's
 * ppl_recover_entry does it after a crash: over the entry's strip, the
 * parity made again as the PP (pp names its e->pp_size bytes; unused
 * without PP) XOR the data now on the chunks the entry wrote.  Blocks
 * with data on the missing member (rec->missing, or -1) are left as they are (md:
 * nothing to recover them from), and so is all of it if the parity
 * member is missing.  Returns 0, -EBADMSG with why if the entry is not
 * one md could have written for this geometry (ppl_entry_extent, one
 * stripe, parity where it says), or -ENOMEM.
 */
struct ppl_entry;
struct r5_ppl_recovery {
  const struct ppl_entry *e;
  struct r5_buf pp;
  int missing;
};
int r5_plan_ppl_recover (struct r5_plan *p, const struct r5_geom *g,
                         const struct r5_ppl_recovery *rec, char *why,
                         size_t why_len)
  __attribute__((nonnull (1, 2, 3), warn_unused_result));

/* Name of a segment kind ("rcw", "full-stripe", ...). */
const char *r5_seg_kind_name (enum r5_seg_kind kind);

#endif /* RAID_PLAN_H */
