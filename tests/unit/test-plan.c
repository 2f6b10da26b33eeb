/* tests/unit/test-plan.c -- the RAID-5 planner.
 *
 * Two halves.  First, small cases that pin down the planner's choices
 * (RCW, RMW, full stripe, degraded variants, zero, trim) and the member
 * I/O they cost.  Second, random requests on random geometries, healthy
 * and with a member missing, run through the simulator (plan-sim.h):
 * every plan is checked for the header's invariants and for the expected
 * segments and I/O volume, executed on in-memory members, and the members
 * are then checked against a model of the array (data where md puts it,
 * parity = XOR, or the survivors rebuild the missing member).
 */
#include <config.h>

#undef NDEBUG
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "raid/geom.h"
#include "raid/plan.h"
#include "tests/unit/plan-sim.h"

#define KiB 1024ull

/*----------------------------------------------------------------------
 * Planner choices, case by case.
 */

/* Plan a whole request in one call on a fresh simulator geometry. */
static void
plan1 (struct sim *s, enum r5_op op, uint64_t off, uint64_t len)
{
  uint64_t planned = 0;

  r5_plan_reset (&s->plan);
  cr_assert_eq (r5_plan_range (&s->plan, &s->g, &(struct r5_range) {
        op, off, len, off, s->missing, UINT64_MAX, 0, 0 }, &planned), 0);
  cr_assert_eq (planned, len);
}

static size_t
count_ios (const struct r5_plan *p, enum r5_io_kind kind, uint64_t *bytes)
{
  size_t n = 0;

  *bytes = 0;
  for (size_t i = 0; i < p->nios; i++)
    if (p->ios[i].kind == kind) {
      n++;
      *bytes += p->ios[i].len;
    }
  return n;
}

/* The one io of this kind on this member, which must exist. */
static const struct r5_io *
find_io (const struct r5_plan *p, enum r5_io_kind kind, unsigned member,
         uint64_t member_off)
{
  for (size_t i = 0; i < p->nios; i++)
    if (p->ios[i].kind == kind && p->ios[i].member == member &&
        p->ios[i].member_off == member_off)
      return &p->ios[i];
  cr_assert_fail ("no io of kind %d on member %u at %llu", (int) kind, member,
                  (unsigned long long) member_off);
  return NULL;
}

static uint64_t
segs_total (const struct r5_plan *p)
{
  uint64_t n = 0;

  for (int k = 0; k < R5_SEG_KINDS; k++)
    n += p->segs[k];
  return n;
}

/* Geometry for the case tests: 64K chunk, data_offset 1 MiB, 4 stripes,
 * left-symmetric, so stripe 0 is D0..Dk on members 0..k and P on N-1.
 */
#define DOFF (1024 * KiB)
#define C64 (64 * KiB)

static void
case_sim (struct sim *s, unsigned n, int missing)
{
  sim_rng_state = 100 + n;
  sim_init (s, n, C64, R5_LEFT_SYMMETRIC, DOFF, 4, 0, missing);
}

Test (plan, header_example)
{
  struct sim s;
  const struct r5_io *io;
  uint64_t bytes;

  case_sim (&s, 3, -1);
  plan1 (&s, R5_OP_WRITE, 60 * KiB, 8 * KiB);
  cr_assert_eq (s.plan.segs[R5_SEG_RCW], 2);
  cr_assert_eq (segs_total (&s.plan), 2);
  /* each segment reads the untouched chunk: D1 [60K,64K), D0 [0,4K) */
  cr_assert_eq (count_ios (&s.plan, R5_IO_READ, &bytes), 2);
  cr_assert_eq (bytes, 8 * KiB);
  cr_assert_eq (find_io (&s.plan, R5_IO_READ, 1, DOFF + 60 * KiB)->len,
                4 * KiB);
  cr_assert_eq (find_io (&s.plan, R5_IO_READ, 0, DOFF)->len, 4 * KiB);
  /* parity only at [0,4K) and [60K,64K) of member 2 */
  cr_assert_eq (count_ios (&s.plan, R5_IO_WRITE, &bytes), 4);
  cr_assert_eq (bytes, 16 * KiB);
  io = find_io (&s.plan, R5_IO_WRITE, 2, DOFF);
  cr_assert_eq (io->len, 4 * KiB);
  io = find_io (&s.plan, R5_IO_WRITE, 2, DOFF + 60 * KiB);
  cr_assert_eq (io->len, 4 * KiB);
  sim_request (&s, R5_OP_WRITE, 60 * KiB, 8 * KiB, UINT64_MAX);
  sim_free (&s);
}

/* N=3: one touched chunk, one untouched: RCW reads 1, RMW would read 2. */
Test (plan, small_write_3_is_rcw)
{
  struct sim s;
  uint64_t bytes;

  case_sim (&s, 3, -1);
  plan1 (&s, R5_OP_WRITE, 8 * KiB, 4 * KiB);
  cr_assert_eq (s.plan.segs[R5_SEG_RCW], 1);
  cr_assert_eq (segs_total (&s.plan), 1);
  cr_assert_eq (count_ios (&s.plan, R5_IO_READ, &bytes), 1);
  cr_assert_eq (bytes, 4 * KiB);
  find_io (&s.plan, R5_IO_READ, 1, DOFF + 8 * KiB);
  cr_assert_eq (count_ios (&s.plan, R5_IO_WRITE, &bytes), 2);
  find_io (&s.plan, R5_IO_WRITE, 0, DOFF + 8 * KiB);
  find_io (&s.plan, R5_IO_WRITE, 2, DOFF + 8 * KiB);
  sim_request (&s, R5_OP_WRITE, 8 * KiB, 4 * KiB, UINT64_MAX);
  sim_free (&s);
}

/* N=5: RMW reads old D0 and old P (2); RCW would read 3. */
Test (plan, small_write_5_is_rmw)
{
  struct sim s;
  uint64_t bytes;

  case_sim (&s, 5, -1);
  plan1 (&s, R5_OP_WRITE, 4 * KiB + 100, 1000);
  cr_assert_eq (s.plan.segs[R5_SEG_RMW], 1);
  cr_assert_eq (segs_total (&s.plan), 1);
  cr_assert_eq (count_ios (&s.plan, R5_IO_READ, &bytes), 2);
  cr_assert_eq (bytes, 2000);
  find_io (&s.plan, R5_IO_READ, 0, DOFF + 4 * KiB + 100);
  find_io (&s.plan, R5_IO_READ, 4, DOFF + 4 * KiB + 100);
  cr_assert_eq (count_ios (&s.plan, R5_IO_WRITE, &bytes), 2);
  cr_assert_eq (bytes, 2000);
  sim_request (&s, R5_OP_WRITE, 4 * KiB + 100, 1000, UINT64_MAX);
  sim_free (&s);
}

/* N=4, D0 and D1 whole: RCW reads only D2. */
Test (plan, two_of_three_chunks_is_rcw)
{
  struct sim s;
  uint64_t bytes;

  case_sim (&s, 4, -1);
  plan1 (&s, R5_OP_WRITE, 0, 2 * C64);
  cr_assert_eq (s.plan.segs[R5_SEG_RCW], 1);
  cr_assert_eq (segs_total (&s.plan), 1);
  cr_assert_eq (count_ios (&s.plan, R5_IO_READ, &bytes), 1);
  cr_assert_eq (find_io (&s.plan, R5_IO_READ, 2, DOFF)->len, C64);
  cr_assert_eq (count_ios (&s.plan, R5_IO_WRITE, &bytes), 3);
  cr_assert_eq (bytes, 3 * C64);
  sim_request (&s, R5_OP_WRITE, 0, 2 * C64, UINT64_MAX);
  sim_free (&s);
}

/* RCW when D-k <= k+1, else RMW; ties go to RCW. */
Test (plan, rcw_or_rmw_by_chunks_touched)
{
  static const struct { unsigned n, k; enum r5_seg_kind kind; } cases[] = {
    { 3, 1, R5_SEG_RCW }, { 4, 1, R5_SEG_RCW }, { 4, 2, R5_SEG_RCW },
    { 5, 1, R5_SEG_RMW }, { 5, 2, R5_SEG_RCW }, { 6, 1, R5_SEG_RMW },
    { 6, 2, R5_SEG_RCW }, { 8, 2, R5_SEG_RMW }, { 8, 3, R5_SEG_RCW },
  };

  for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    struct sim s;
    uint64_t len = cases[i].k * C64;

    case_sim (&s, cases[i].n, -1);
    plan1 (&s, R5_OP_WRITE, C64, len);   /* D1 .. Dk */
    cr_assert_eq (s.plan.segs[cases[i].kind], 1, "N=%u k=%u", cases[i].n,
                  cases[i].k);
    cr_assert_eq (segs_total (&s.plan), 1);
    sim_request (&s, R5_OP_WRITE, C64, len, UINT64_MAX);
    sim_free (&s);
  }
}

Test (plan, full_stripe_reads_nothing)
{
  struct sim s;
  uint64_t bytes;

  case_sim (&s, 4, -1);
  plan1 (&s, R5_OP_WRITE, s.g.stripe_data, 2 * s.g.stripe_data);
  cr_assert_eq (s.plan.segs[R5_SEG_FULL_WRITE], 2);
  cr_assert_eq (segs_total (&s.plan), 2);
  cr_assert_eq (count_ios (&s.plan, R5_IO_READ, &bytes), 0);
  count_ios (&s.plan, R5_IO_WRITE, &bytes);
  cr_assert_eq (bytes, 2 * 4 * C64);
  sim_request (&s, R5_OP_WRITE, s.g.stripe_data, 2 * s.g.stripe_data,
               UINT64_MAX);
  sim_free (&s);
}

/* Parity member missing: write the data, nothing else. */
Test (plan, missing_parity_is_data_only)
{
  struct sim s;
  uint64_t bytes;

  case_sim (&s, 5, 4);          /* stripe 0's parity */
  plan1 (&s, R5_OP_WRITE, C64 + 10, 3000);
  cr_assert_eq (s.plan.segs[R5_SEG_DATA_ONLY], 1);
  cr_assert_eq (segs_total (&s.plan), 1);
  cr_assert_eq (count_ios (&s.plan, R5_IO_READ, &bytes), 0);
  cr_assert_eq (count_ios (&s.plan, R5_IO_WRITE, &bytes), 1);
  cr_assert_eq (find_io (&s.plan, R5_IO_WRITE, 1, DOFF + 10)->len, 3000);
  cr_assert_eq (s.plan.nxors, 0);
  sim_request (&s, R5_OP_WRITE, C64 + 10, 3000, UINT64_MAX);
  sim_free (&s);
}

/* The touched chunk's member is missing: only RCW can compute parity. */
Test (plan, missing_touched_forces_rcw)
{
  struct sim s;
  uint64_t bytes;

  case_sim (&s, 5, 1);
  plan1 (&s, R5_OP_WRITE, C64 + 512, 512);
  cr_assert_eq (s.plan.segs[R5_SEG_RCW], 1);
  cr_assert_eq (segs_total (&s.plan), 1);
  cr_assert_eq (count_ios (&s.plan, R5_IO_READ, &bytes), 3);
  cr_assert_eq (bytes, 3 * 512);
  cr_assert_eq (count_ios (&s.plan, R5_IO_WRITE, &bytes), 1);
  find_io (&s.plan, R5_IO_WRITE, 4, DOFF + 512);
  sim_request (&s, R5_OP_WRITE, C64 + 512, 512, UINT64_MAX);
  sim_free (&s);
}

/* An untouched chunk's member is missing: only RMW avoids reading it. */
Test (plan, missing_untouched_forces_rmw)
{
  struct sim s;
  uint64_t bytes;

  case_sim (&s, 3, 1);
  plan1 (&s, R5_OP_WRITE, 4096, 4096);
  cr_assert_eq (s.plan.segs[R5_SEG_RMW], 1);
  cr_assert_eq (segs_total (&s.plan), 1);
  cr_assert_eq (count_ios (&s.plan, R5_IO_READ, &bytes), 2);
  find_io (&s.plan, R5_IO_READ, 0, DOFF + 4096);
  find_io (&s.plan, R5_IO_READ, 2, DOFF + 4096);
  cr_assert_eq (count_ios (&s.plan, R5_IO_WRITE, &bytes), 2);
  sim_request (&s, R5_OP_WRITE, 4096, 4096, UINT64_MAX);
  sim_free (&s);
}

Test (plan, healthy_read_goes_straight)
{
  struct sim s;
  uint64_t bytes;

  case_sim (&s, 4, -1);
  plan1 (&s, R5_OP_READ, C64 - 100, 200);
  cr_assert_eq (s.plan.segs[R5_SEG_DEGRADED_READ], 0);
  cr_assert_geq (s.plan.segs[R5_SEG_READ], 1);
  cr_assert_eq (count_ios (&s.plan, R5_IO_READ, &bytes), 2);
  cr_assert_eq (bytes, 200);
  cr_assert_eq (find_io (&s.plan, R5_IO_READ, 0, DOFF + C64 - 100)->buf.kind,
                R5_BUF_CLIENT);
  cr_assert_eq (find_io (&s.plan, R5_IO_READ, 1, DOFF)->buf.off, 100);
  cr_assert_eq (s.plan.nios, 2);
  cr_assert_eq (s.plan.nxors, 0);
  sim_request (&s, R5_OP_READ, C64 - 100, 200, UINT64_MAX);
  sim_free (&s);
}

Test (plan, degraded_read)
{
  struct sim s;
  uint64_t bytes;

  case_sim (&s, 4, 1);
  plan1 (&s, R5_OP_READ, C64 + 7, 333);
  cr_assert_eq (s.plan.segs[R5_SEG_DEGRADED_READ], 1);
  cr_assert_eq (segs_total (&s.plan), 1);
  cr_assert_eq (count_ios (&s.plan, R5_IO_READ, &bytes), 3);
  cr_assert_eq (bytes, 3 * 333);
  cr_assert_eq (s.plan.nxors, 1);
  cr_assert_eq (s.plan.xors[0].nsrc, 3);
  cr_assert_eq (s.plan.xors[0].dst.kind, R5_BUF_CLIENT);
  sim_request (&s, R5_OP_READ, C64 + 7, 333, UINT64_MAX);
  /* the same array, a chunk on a present member: no reconstruction */
  plan1 (&s, R5_OP_READ, 2 * C64, 4096);
  cr_assert_eq (s.plan.segs[R5_SEG_DEGRADED_READ], 0);
  cr_assert_eq (s.plan.nxors, 0);
  sim_free (&s);
}

Test (plan, zero_whole_stripes)
{
  struct sim s;
  uint64_t bytes;

  case_sim (&s, 3, -1);
  plan1 (&s, R5_OP_ZERO, 0, 3 * s.g.stripe_data);
  cr_assert_eq (s.plan.segs[R5_SEG_ZERO_STRIPE], 3);
  cr_assert_eq (segs_total (&s.plan), 3);
  cr_assert_eq (count_ios (&s.plan, R5_IO_ZERO, &bytes), 9);
  cr_assert_eq (bytes, 9 * C64);
  cr_assert_eq (count_ios (&s.plan, R5_IO_READ, &bytes), 0);
  cr_assert_eq (count_ios (&s.plan, R5_IO_WRITE, &bytes), 0);
  cr_assert_eq (s.plan.nxors, 0);
  sim_request (&s, R5_OP_ZERO, 0, 3 * s.g.stripe_data, UINT64_MAX);
  sim_free (&s);
}

Test (plan, zero_partial_writes_zeroes)
{
  struct sim s;
  uint64_t bytes;
  size_t from_zero = 0;

  case_sim (&s, 4, -1);
  plan1 (&s, R5_OP_ZERO, 4096, 8192);
  cr_assert_eq (s.plan.segs[R5_SEG_ZERO_STRIPE], 0);
  cr_assert_eq (s.plan.segs[R5_SEG_RCW] + s.plan.segs[R5_SEG_RMW], 1);
  cr_assert_eq (count_ios (&s.plan, R5_IO_ZERO, &bytes), 0);
  for (size_t i = 0; i < s.plan.nios; i++)
    if (s.plan.ios[i].kind == R5_IO_WRITE &&
        s.plan.ios[i].buf.kind == R5_BUF_ZERO)
      from_zero++;
  cr_assert_eq (from_zero, 1);
  sim_request (&s, R5_OP_ZERO, 4096, 8192, UINT64_MAX);
  sim_request (&s, R5_OP_ZERO, 100, s.g.stripe_data, UINT64_MAX);
  sim_free (&s);
}

Test (plan, trim_partial_does_nothing)
{
  struct sim s;

  case_sim (&s, 3, -1);
  plan1 (&s, R5_OP_TRIM, 4096, s.g.stripe_data);
  cr_assert_eq (s.plan.nios, 0);
  cr_assert_eq (s.plan.nxors, 0);
  cr_assert_eq (segs_total (&s.plan), 0);
  sim_request (&s, R5_OP_TRIM, 4096, s.g.stripe_data, UINT64_MAX);
  sim_free (&s);
}

Test (plan, trim_whole_stripes)
{
  struct sim s;
  uint64_t bytes;

  case_sim (&s, 5, 2);
  /* stripe 1 whole, stripe 2 partial */
  plan1 (&s, R5_OP_TRIM, s.g.stripe_data - 1, s.g.stripe_data + 2);
  cr_assert_eq (s.plan.segs[R5_SEG_TRIM_STRIPE], 1);
  cr_assert_eq (segs_total (&s.plan), 1);
  cr_assert_eq (count_ios (&s.plan, R5_IO_TRIM, &bytes), 4);
  cr_assert_eq (bytes, 4 * C64);
  cr_assert_eq (s.plan.nios, 4);
  cr_assert_eq (s.plan.nxors, 0);
  sim_request (&s, R5_OP_TRIM, s.g.stripe_data - 1, s.g.stripe_data + 2,
               UINT64_MAX);
  sim_free (&s);
}

/* A tiny budget still plans one stripe and stops at its end. */
Test (plan, budget_splits_on_stripes)
{
  struct sim s;
  uint64_t planned = 0;

  case_sim (&s, 3, -1);
  r5_plan_reset (&s.plan);
  cr_assert_eq (r5_plan_range (&s.plan, &s.g, &(struct r5_range) {
        R5_OP_WRITE, 1000, 3 * s.g.stripe_data, 1000, -1, 0, 0, 0 }, &planned), 0);
  cr_assert_eq (planned, s.g.stripe_data - 1000);
  r5_plan_reset (&s.plan);
  cr_assert_eq (r5_plan_range (&s.plan, &s.g, &(struct r5_range) {
        R5_OP_WRITE, 0, 3 * s.g.stripe_data, 0, -1, 0, 0, 0 }, &planned), 0);
  cr_assert_eq (planned, s.g.stripe_data);
  sim_free (&s);
}

/* "fits within scratch_budget": a budget one byte more than the first
 * stripe needs must not take in a second stripe that needs as much again.
 */
Test (plan, budget_is_not_exceeded)
{
  struct sim s;
  uint64_t planned = 0, one;

  case_sim (&s, 3, -1);
  plan1 (&s, R5_OP_WRITE, 0, s.g.stripe_data);
  one = s.plan.scratch;
  cr_assert_gt (one, 0);
  r5_plan_reset (&s.plan);
  cr_assert_eq (r5_plan_range (&s.plan, &s.g, &(struct r5_range) {
        R5_OP_WRITE, 0, 2 * s.g.stripe_data, 0, -1, one + 1, 0, 0 }, &planned), 0);
  cr_assert_leq (s.plan.scratch, one + 1, "scratch %llu, budget %llu",
                 (unsigned long long) s.plan.scratch,
                 (unsigned long long) one + 1);
  cr_assert_eq (planned, s.g.stripe_data);
  sim_free (&s);
}

/* r5_plan_range appends: a second call adds to the plan without touching
 * what is there, and the combined plan runs correctly.
 */
Test (plan, append)
{
  struct sim s;
  struct call c = { .op = R5_OP_WRITE, .missing = -1 };
  struct r5_io *first;
  struct mem mem = { 0 };
  uint64_t planned, nios, off2, len2;

  case_sim (&s, 4, -1);
  c.req_off = 1000;
  c.req_len = 2 * s.g.stripe_data + 5000;
  off2 = 2 * s.g.stripe_data + 10;
  len2 = c.req_off + c.req_len - off2;
  mem.client = malloc (c.req_len);
  cr_assert_not_null (mem.client);
  sim_fill_random (mem.client, c.req_len);

  r5_plan_reset (&s.plan);
  cr_assert_eq (r5_plan_range (&s.plan, &s.g, &(struct r5_range) {
        R5_OP_WRITE, c.req_off, 3000, c.req_off, -1, UINT64_MAX, 0, 0 }, &planned), 0);
  cr_assert_eq (planned, 3000);
  nios = s.plan.nios;
  first = malloc (nios * sizeof *first);
  cr_assert_not_null (first);
  memcpy (first, s.plan.ios, nios * sizeof *first);
  cr_assert_eq (r5_plan_range (&s.plan, &s.g, &(struct r5_range) {
        R5_OP_WRITE, off2, len2, c.req_off, -1, UINT64_MAX, 0, 0 }, &planned), 0);
  cr_assert_eq (planned, len2);
  cr_assert_gt (s.plan.nios, nios);
  cr_assert_arr_eq (s.plan.ios, first, nios * sizeof *first);
  check_plan (&s.plan, &s.g, &c);

  mem.scratch = malloc (s.plan.scratch + 1);
  cr_assert_not_null (mem.scratch);
  sim_fill_random (mem.scratch, s.plan.scratch);
  sim_exec (&s, &mem);
  memcpy (s.model + c.req_off, mem.client, 3000);
  memcpy (s.model + off2, mem.client + (off2 - c.req_off), len2);
  sim_check (&s);
  free (mem.scratch);
  free (first);
  free (mem.client);
  sim_free (&s);
}

Test (plan, lifecycle)
{
  struct r5_plan p, zeroed;
  struct sim s;
  uint64_t planned;
  size_t cap;

  memset (&zeroed, 0, sizeof zeroed);
  r5_plan_free (&zeroed);
  r5_plan_init (&p);
  cr_assert_eq (p.nios, 0);
  cr_assert_eq (p.nxors, 0);
  cr_assert_eq (p.scratch, 0);
  cr_assert_eq (segs_total (&p), 0);
  case_sim (&s, 4, 3);
  cr_assert_eq (r5_plan_range (&p, &s.g, &(struct r5_range) {
        R5_OP_WRITE, 0, 100, 0, 3, UINT64_MAX, 0, 0 }, &planned), 0);
  cr_assert_eq (p.missing, 3);
  cr_assert_gt (p.nios, 0);
  cap = p.ios_cap;
  r5_plan_reset (&p);
  cr_assert_eq (p.nios, 0);
  cr_assert_eq (p.nxors, 0);
  cr_assert_eq (p.scratch, 0);
  cr_assert_eq (segs_total (&p), 0);
  cr_assert_eq (p.ios_cap, cap, "reset must keep the memory");
  r5_plan_free (&p);
  sim_free (&s);
}

Test (plan, seg_kind_names)
{
  for (int i = 0; i < R5_SEG_KINDS; i++) {
    const char *a = r5_seg_kind_name ((enum r5_seg_kind) i);

    cr_assert (a != NULL && *a != '\0');
    for (int j = 0; j < i; j++)
      cr_assert_str_neq (a, r5_seg_kind_name ((enum r5_seg_kind) j));
  }
  cr_assert_str_eq (r5_seg_kind_name (R5_SEG_RCW), "rcw");
  cr_assert_str_eq (r5_seg_kind_name (R5_SEG_FULL_WRITE), "full-stripe");
}

/*----------------------------------------------------------------------
 * Random requests.
 */
static const enum r5_layout layouts[] = {
  R5_LEFT_ASYMMETRIC, R5_RIGHT_ASYMMETRIC, R5_LEFT_SYMMETRIC,
  R5_RIGHT_SYMMETRIC, R5_PARITY_FIRST, R5_PARITY_LAST,
};

/* N = 3..6 and chunks of 4K..64K; or, wide, N up to R5_MAX_MEMBERS with
 * small chunks.
 */
static void
random_sim (struct sim *s, bool degraded, bool wide)
{
  static const unsigned wide_n[] = { 7, 8, 11, 16, R5_MAX_MEMBERS };
  unsigned n = wide ? wide_n[sim_rng_below (5)]
                    : 3 + (unsigned) sim_rng_below (4);
  uint64_t chunk = 4096ull << sim_rng_below (wide ? 2 : 5);
  uint64_t doff = 512 * sim_rng_below (17);
  uint64_t stripes = 1 + sim_rng_below (4);
  uint64_t slack = sim_rng_below (2) ? 0 : sim_rng_below (chunk);
  int missing = degraded ? (int) sim_rng_below (n) : -1;
  enum r5_layout layout = layouts[sim_rng_below (sizeof layouts /
                                                 sizeof layouts[0])];

  sim_init (s, n, chunk, layout, doff, stripes, slack, missing);
}

static void
random_range (const struct r5_geom *g, uint64_t *off, uint64_t *len)
{
  const uint64_t cap = g->capacity, c = g->chunk, sd = g->stripe_data;

  switch (sim_rng_below (6)) {
  case 0:                       /* a few bytes anywhere */
    *off = sim_rng_below (cap);
    *len = 1 + sim_rng_below (16);
    break;
  case 1:                       /* inside one chunk */
    *off = sim_rng_below (cap);
    *len = 1 + sim_rng_below (c - *off % c);
    break;
  case 2:                       /* whole chunks */
    *off = sim_rng_below (cap / c) * c;
    *len = c * (1 + sim_rng_below (g->data_members + 1));
    break;
  case 3:                       /* whole stripes */
    *off = sim_rng_below (g->stripes) * sd;
    *len = sd * (1 + sim_rng_below (g->stripes));
    break;
  case 4:                       /* sectors */
    *off = sim_rng_below (cap / 512) * 512;
    *len = 512 * (1 + sim_rng_below (2 * sd / 512));
    break;
  default:                      /* anything */
    *off = sim_rng_below (cap);
    *len = 1 + sim_rng_below (cap - *off);
    break;
  }
  if (*len > cap - *off)
    *len = cap - *off;
}

static uint64_t
random_budget (const struct r5_geom *g)
{
  const uint64_t budgets[] = {
    0, 1, 512, g->chunk / 2, g->chunk, g->stripe_data, 3 * g->chunk,
    UINT64_MAX, UINT64_MAX,
  };

  return budgets[sim_rng_below (sizeof budgets / sizeof budgets[0])];
}

static void
random_session (uint64_t seed, bool degraded, bool wide, unsigned requests)
{
  static const enum r5_op ops[] = {
    R5_OP_READ, R5_OP_READ, R5_OP_READ, R5_OP_WRITE, R5_OP_WRITE,
    R5_OP_WRITE, R5_OP_WRITE, R5_OP_ZERO, R5_OP_ZERO, R5_OP_TRIM,
  };
  struct sim s;

  sim_rng_state = seed;
  random_sim (&s, degraded, wide);
  for (unsigned i = 0; i < requests; i++) {
    uint64_t off, len;

    random_range (&s.g, &off, &len);
    sim_request (&s, ops[sim_rng_below (10)], off, len, random_budget (&s.g));
  }
  sim_free (&s);
}

/* Many sessions of a few requests each: every session is a new geometry.
 * About 17000 requests in all, a few seconds.
 */
TestSuite (plan_random, .timeout = 300);

#define SESSIONS 160
#define REQUESTS 25

Test (plan_random, healthy_a)
{
  for (uint64_t seed = 1; seed <= SESSIONS; seed++)
    random_session (seed * 7919, false, false, REQUESTS);
  expect_no_overruns ();
}

Test (plan_random, healthy_b)
{
  for (uint64_t seed = 1; seed <= SESSIONS; seed++)
    random_session (seed * 104729 + 1, false, false, REQUESTS);
  expect_no_overruns ();
}

Test (plan_random, degraded_a)
{
  for (uint64_t seed = 1; seed <= SESSIONS; seed++)
    random_session (seed * 15485863, true, false, REQUESTS);
  expect_no_overruns ();
}

Test (plan_random, degraded_b)
{
  for (uint64_t seed = 1; seed <= SESSIONS; seed++)
    random_session (seed * 32452843 + 3, true, false, REQUESTS);
  expect_no_overruns ();
}

Test (plan_random, wide)
{
  for (uint64_t seed = 1; seed <= 40; seed++)
    random_session (seed * 49979687, seed % 2 == 0, true, REQUESTS);
  expect_no_overruns ();
}
