/* tests/unit/test-ppl-plan.c -- the planner's partial parity against a
 * model of the write hole, on the simulator (plan-sim.h).
 *
 * Each round: a random consistent array, a random sector-aligned write
 * (or zero) planned with r5_plan.ppl, reads and XORs run, then the
 * write torn as a crash tears it: each member write of phase 3 lands
 * whole, as a prefix of whole sectors, or not at all.  Then:
 *   - every entry's PP is the XOR of the stripe's other data chunks as
 *     they were before (md's partial parity), and its fields are what md
 *     would log (ppl_entry_extent accepts them, they cover exactly the
 *     bytes written);
 *   - recovered by raid/'s recovery plan (r5_plan_ppl_recover), the
 *     members are byte for byte what md's ppl_recover_entry (written out
 *     here: parity = PP ^ the data now on the chunks written) makes of
 *     them, and every stripe's parity is consistent
 *     again, so any one member lost afterwards -- the parity's or a
 *     chunk nobody wrote -- is rebuilt with its old bytes;
 *   - without that recovery, over all rounds, some chunk nobody wrote is
 *     rebuilt wrong: the write hole is real in this model, which is what
 *     makes the test above mean something.
 */
#include <config.h>

#undef NDEBUG
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "raid/geom.h"
#include "raid/plan.h"
#include "raid/ppl.h"
#include "tests/unit/plan-sim.h"

static const enum r5_layout layouts[] = {
  R5_LEFT_ASYMMETRIC, R5_RIGHT_ASYMMETRIC, R5_LEFT_SYMMETRIC,
  R5_RIGHT_SYMMETRIC, R5_PARITY_FIRST, R5_PARITY_LAST,
};

/* The member holding array byte off. */
static unsigned
member_of (struct sim *s, uint64_t off)
{
  const struct r5_geom *g = &s->g;
  uint64_t st = off / g->stripe_data, in = off % g->stripe_data;

  return md_data_member (g, st, (unsigned) (in / g->chunk));
}

/* Member byte of array byte off (data), or of its stripe's parity. */
static unsigned char *
data_at (struct sim *s, uint64_t off)
{
  const struct r5_geom *g = &s->g;
  uint64_t st = off / g->stripe_data, in = off % g->stripe_data;
  unsigned m = md_data_member (g, st, (unsigned) (in / g->chunk));

  return s->member[m] + g->data_offset + st * g->chunk + in % g->chunk;
}

static unsigned char *
parity_at (struct sim *s, uint64_t off)
{
  const struct r5_geom *g = &s->g;
  uint64_t st = off / g->stripe_data;

  return s->member[md_parity (g, st)] + g->data_offset + st * g->chunk +
    off % g->chunk;
}

/* The entry's PP is the XOR of the chunks it leaves alone, as they were
 * (old, the array's bytes before the write); its fields cover exactly
 * the written bytes of its stripe's segment.
 */
static void
check_entry (struct sim *s, struct mem *mem, const struct r5_ppl_entry *e,
             const unsigned char *old, uint64_t off, uint64_t len)
{
  const struct r5_geom *g = &s->g;
  uint64_t first = e->data_sector * 512, st = first / g->stripe_data;
  uint64_t x = first % g->chunk, seg = e->pp_len ? e->pp_len
    : e->data_len / g->data_members;
  unsigned dd0 = (unsigned) (first % g->stripe_data / g->chunk);
  unsigned k = (unsigned) (e->data_len / seg);
  struct ppl_extent ext;
  char why[200];

  cr_assert_eq (e->parity, md_parity (g, st));
  cr_assert_eq (ppl_entry_extent (&(struct ppl_entry) {
                  e->data_sector, e->pp_len, e->data_len, e->parity, 0 },
                  g->members, (uint32_t) (g->chunk / 512), &ext, why,
                  sizeof why), 0, "%s", why);
  for (unsigned d = 0; d < k; d++) {
    uint64_t a = st * g->stripe_data + (dd0 + d) * g->chunk + x;

    cr_assert (a >= off && a + seg <= off + len,
               "entry covers [%llu,+%llu), not written",
               (unsigned long long) a, (unsigned long long) seg);
  }
  if (e->pp_len == 0) {
    cr_assert_eq (k, g->data_members, "no PP, yet not a full stripe");
    return;
  }
  for (uint64_t b = 0; b < seg; b++) {
    unsigned char want = 0;

    for (unsigned dd = 0; dd < g->data_members; dd++)
      if (dd < dd0 || dd >= dd0 + k)
        want ^= old[st * g->stripe_data + dd * g->chunk + x + b];
    cr_assert_eq (sim_buf (s, mem, e->pp)[b], want,
                  "PP byte %llu of stripe %llu", (unsigned long long) b,
                  (unsigned long long) st);
  }
}

/* md's ppl_recover_entry on the simulator's members: a block whose
 * written chunks include the missing member is skipped (md: "if a dirty
 * disk of a stripe is lost, no PPL recovery is performed").
 */
static void
recover_entry (struct sim *s, struct mem *mem, const struct r5_ppl_entry *e)
{
  const struct r5_geom *g = &s->g;
  uint64_t cs = g->chunk / 512;
  struct ppl_extent x;

  cr_assert_eq (ppl_entry_extent (&(struct ppl_entry) {
                  e->data_sector, e->pp_len, e->data_len, e->parity, 0 },
                  g->members, (uint32_t) cs, &x, NULL, 0), 0);
  for (uint64_t i = 0; i < x.strip; i++)
    for (unsigned b = 0; b < 512; b++) {
      unsigned char p = e->pp_len ? sim_buf (s, mem, e->pp)[i * 512 + b] : 0;
      bool lost = false;

      for (unsigned d = 0; d < x.data_disks; d++) {
        uint64_t sec = x.first + i + d * cs;

        if (sec < x.last) {
          lost |= (int) member_of (s, sec * 512) == s->missing;
          p ^= *data_at (s, sec * 512 + b);
        }
      }
      if (!lost)
        *parity_at (s, (x.first + i) * 512 + b) = p;
    }
}

/* Bytes of chunks nobody wrote that are wrong: rebuilt from the others
 * (as when their member is lost; always, for the missing member's), or
 * read from their present member.
 */
static uint64_t
hole_bytes (struct sim *s, const unsigned char *old, uint64_t off,
            uint64_t len)
{
  const struct r5_geom *g = &s->g;
  uint64_t wrong = 0;

  for (uint64_t a = 0; a < g->capacity; a++) {
    unsigned char parity = *parity_at (s, a), others = 0;
    uint64_t st = a / g->stripe_data, x = a % g->chunk;

    if (a >= off && a < off + len)
      continue;                 /* written: any of old or new will do */
    if (s->missing >= 0 && (int) member_of (s, a) != s->missing) {
      wrong += *data_at (s, a) != old[a];   /* degraded: only the missing */
      continue;                             /* member's are rebuilt */
    }
    for (unsigned dd = 0; dd < g->data_members; dd++) {
      uint64_t b = st * g->stripe_data + dd * g->chunk + x;

      if (b != a)
        others ^= *data_at (s, b);
    }
    wrong += (unsigned char) (parity ^ others) != old[a];
  }
  return wrong;
}

static bool
parity_consistent (struct sim *s)
{
  const struct r5_geom *g = &s->g;

  if (s->missing >= 0)
    return true;                /* nothing to compare the missing one with */
  for (uint64_t a = 0; a < g->stripe_data * g->stripes; a += g->stripe_data)
    for (uint64_t x = 0; x < g->chunk; x++) {
      unsigned char p = *parity_at (s, a + x);

      for (unsigned dd = 0; dd < g->data_members; dd++)
        p ^= *data_at (s, a + dd * g->chunk + x);
      if (p != 0)
        return false;
    }
  return true;
}

/* Recovery through raid/'s plan (r5_plan_ppl_recover) of every entry,
 * their PP gathered in one buffer as a log holds it, run on the members.
 */
static void
recover_by_plan (struct sim *s, struct mem *mem)
{
  struct r5_plan saved = s->plan, rp;
  unsigned char *log;
  uint64_t at = 0;
  struct mem rm = { 0 };
  char why[200];

  log = malloc (s->g.stripe_data * s->g.stripes + 1);
  cr_assert_not_null (log);
  r5_plan_init (&rp);
  for (size_t i = 0; i < saved.nppl; i++) {
    const struct r5_ppl_entry *e = &saved.ppl_entries[i];
    struct ppl_entry pe = { e->data_sector, e->pp_len, e->data_len,
                            e->parity, 0 };

    if (e->pp_len)
      memcpy (log + at, sim_buf (s, mem, e->pp), e->pp_len);
    cr_assert_eq (r5_plan_ppl_recover (&rp, &s->g, &(struct r5_ppl_recovery) {
                                         &pe, { R5_BUF_CLIENT, at },
                                         s->missing }, why, sizeof why), 0,
                  "%s", why);
    at += e->pp_len;
  }
  rm.client = log;
  rm.scratch = malloc (rp.scratch + 1);
  cr_assert_not_null (rm.scratch);
  s->plan = rp;
  sim_exec (s, &rm);
  s->plan = saved;
  r5_plan_free (&rp);
  free (rm.scratch);
  free (log);
}

/* Tear phase 3: each write whole, a sector prefix, or nothing. */
static void
tear (struct sim *s, struct mem *mem)
{
  for (size_t i = 0; i < s->plan.nios; i++) {
    const struct r5_io *io = &s->plan.ios[i];
    uint64_t sectors = io->len / 512;

    if (io->kind == R5_IO_READ)
      continue;
    switch (sim_rng_below (3)) {
    case 0: sim_exec_io_prefix (s, mem, i, io->len); break;
    case 1: sim_exec_io_prefix (s, mem, i, 512 * sim_rng_below (sectors + 1));
            break;
    default: break;
    }
  }
}

/* One round; returns the hole bytes without recovery (with recovery
 * there must be none).
 */
static uint64_t
round_trip (uint64_t seed, bool recover, bool degraded)
{
  struct sim s;
  unsigned n = 3 + (unsigned) (seed % 4);
  uint64_t chunk = 4096ull << (seed / 4 % 3), planned = 0, off, len, hole;
  unsigned char *old, *client;
  struct mem mem = { 0 };
  enum r5_op op = sim_rng_below (4) == 0 ? R5_OP_ZERO : R5_OP_WRITE;

  sim_rng_state = seed * 2654435761u + 1;
  sim_init (&s, n, chunk, layouts[seed % 6], 512 * sim_rng_below (9),
            1 + sim_rng_below (3), 0,
            degraded ? (int) sim_rng_below (n) : -1);
  off = 512 * sim_rng_below (s.g.capacity / 512);
  len = 512 * (1 + sim_rng_below ((s.g.capacity - off) / 512));
  old = malloc (s.g.capacity);
  client = malloc (len);
  cr_assert (old && client);
  memcpy (old, s.model, s.g.capacity);
  sim_fill_random (client, len);
  mem.client = client;

  r5_plan_reset (&s.plan);
  s.plan.ppl = true;
  cr_assert_eq (r5_plan_range (&s.plan, &s.g, &(struct r5_range) {
                  op, off, len, off, s.missing, UINT64_MAX, 0, 0 }, &planned), 0);
  cr_assert_eq (planned, len);
  check_plan (&s.plan, &s.g, &(struct call) { op, off, len, off, len,
                                               s.missing });
  cr_assert (s.plan.nppl > 0 || degraded, "a write with no entry to log");
  mem.scratch = malloc (s.plan.scratch + 1);
  cr_assert_not_null (mem.scratch);
  sim_exec_before_writes (&s, &mem);
  for (size_t i = 0; i < s.plan.nppl; i++)
    check_entry (&s, &mem, &s.plan.ppl_entries[i], old, off, len);

  tear (&s, &mem);
  if (recover) {
    /* raid/'s plan on the members, md's algorithm (written out here) on
     * a copy: the same bytes.
     */
    unsigned char *by_plan[R5_MAX_MEMBERS];

    recover_by_plan (&s, &mem);
    for (unsigned m = 0; m < n; m++) {
      by_plan[m] = malloc (s.member_bytes);
      cr_assert_not_null (by_plan[m]);
      memcpy (by_plan[m], s.member[m], s.member_bytes);
    }
    for (size_t i = 0; i < s.plan.nppl; i++)
      recover_entry (&s, &mem, &s.plan.ppl_entries[i]);
    for (unsigned m = 0; m < n; m++) {
      if ((int) m != s.missing)
        cr_assert_arr_eq (by_plan[m], s.member[m], s.member_bytes,
                          "seed %llu: member %u: the recovery plan and md's "
                          "ppl_recover_entry differ", (unsigned long long)
                          seed, m);
      free (by_plan[m]);
    }
    cr_assert (parity_consistent (&s), "seed %llu: parity inconsistent "
               "after recovery", (unsigned long long) seed);
  }
  hole = hole_bytes (&s, old, off, len);
  free (mem.scratch);
  free (client);
  free (old);
  sim_free (&s);
  return hole;
}

TestSuite (ppl_plan, .timeout = 300);

Test (ppl_plan, recovery_closes_the_hole)
{
  for (uint64_t seed = 1; seed <= 400; seed++)
    cr_assert_eq (round_trip (seed, true, false), 0, "seed %llu: chunks "
                  "nobody wrote come back wrong after recovery",
                  (unsigned long long) seed);
}

/* Already degraded when the write is torn: md's case for allowing a
 * dirty degraded start with PPL.
 */
Test (ppl_plan, recovery_closes_the_hole_degraded)
{
  for (uint64_t seed = 1; seed <= 400; seed++)
    cr_assert_eq (round_trip (seed, true, true), 0, "seed %llu: chunks "
                  "nobody wrote come back wrong after recovery (degraded)",
                  (unsigned long long) seed);
}

Test (ppl_plan, without_recovery_the_hole_is_real)
{
  uint64_t rounds_torn = 0;

  for (uint64_t seed = 1; seed <= 400; seed++)
    rounds_torn += round_trip (seed, false, seed % 2 == 0) > 0;
  cr_assert_gt (rounds_torn, 40, "only %llu of 400 torn writes left a "
                "hole: the model does not tear", (unsigned long long)
                rounds_torn);
  cr_log_info ("without the log, %llu of 400 torn writes left chunks "
               "nobody wrote wrong", (unsigned long long) rounds_torn);
}

Test (ppl_plan, recovery_refuses_entries_md_did_not_write)
{
  struct sim s;
  char why[200] = "";
  const struct r5_buf pp = { R5_BUF_CLIENT, 0 };

  sim_rng_state = 5;
  /* 4 members, 16K chunks (32 sectors), 2 stripes: parity of stripe 0 on
   * member 3, 48K of data a stripe (96 sectors).
   */
  sim_init (&s, 4, 16384, R5_LEFT_SYMMETRIC, 0, 2, 0, -1);
  r5_plan_reset (&s.plan);
  cr_assert_eq (r5_plan_ppl_recover (&s.plan, &s.g, &(struct r5_ppl_recovery) {
                  &(struct ppl_entry) { 0, 4096, 4096, 3, 0 }, pp, -1 }, why, sizeof why), 0, "%s",
                why);
  cr_assert_eq (s.plan.nios, 2, "one read, one parity write");
  cr_assert_eq (r5_plan_ppl_recover (&s.plan, &s.g, &(struct r5_ppl_recovery) {
                  &(struct ppl_entry) { 0, 4096, 4096, 2, 0 }, pp, -1 }, why, sizeof why), -EBADMSG,
                "parity on the wrong member");
  cr_assert (strstr (why, "not one stripe's"), "%s", why);
  cr_assert_eq (r5_plan_ppl_recover (&s.plan, &s.g, &(struct r5_ppl_recovery) {
                  &(struct ppl_entry) { 192, 4096, 4096, 3, 0 }, pp, -1 }, why, sizeof why), -EBADMSG,
                "past the array");
  cr_assert_eq (r5_plan_ppl_recover (&s.plan, &s.g, &(struct r5_ppl_recovery) {
                  &(struct ppl_entry) { 64, 4096, 8192, 3, 0 }, pp, -1 }, why, sizeof why), -EBADMSG,
                "two chunks from the last data chunk: into the next stripe");
  r5_plan_reset (&s.plan);
  cr_assert_eq (r5_plan_ppl_recover (&s.plan, &s.g, &(struct r5_ppl_recovery) {
                  &(struct ppl_entry) { 0, 4096, 4096, 3, 0 }, pp, 3 }, why, sizeof why), 0);
  cr_assert_eq (s.plan.nios, 0, "parity member missing: nothing to do");
  cr_assert_eq (r5_plan_ppl_recover (&s.plan, &s.g, &(struct r5_ppl_recovery) {
                  &(struct ppl_entry) { 0, 4096, 4096, 3, 0 }, pp, 0 }, why, sizeof why), 0);
  cr_assert_eq (s.plan.nios, 0, "its data member missing: skipped");
  sim_free (&s);
}

Test (ppl_plan, refuses_unaligned_and_skips_missing_parity)
{
  struct sim s;
  uint64_t planned;

  sim_rng_state = 99;
  sim_init (&s, 4, 16384, R5_LEFT_SYMMETRIC, 0, 2, 0, -1);
  r5_plan_reset (&s.plan);
  s.plan.ppl = true;
  cr_assert_eq (r5_plan_range (&s.plan, &s.g, &(struct r5_range) {
                  R5_OP_WRITE, 100, 512, 100, -1, UINT64_MAX, 0, 0 }, &planned),
                -EINVAL);
  sim_free (&s);

  /* Member 3 holds stripe 0's parity (left-symmetric, 4 members). */
  sim_init (&s, 4, 16384, R5_LEFT_SYMMETRIC, 0, 2, 0, 3);
  r5_plan_reset (&s.plan);
  s.plan.ppl = true;
  cr_assert_eq (r5_plan_range (&s.plan, &s.g, &(struct r5_range) {
                  R5_OP_WRITE, 0, 4096, 0, 3, UINT64_MAX, 0, 0 }, &planned), 0);
  cr_assert_eq (s.plan.nppl, 0, "logged with the parity member missing");
  sim_free (&s);
}

/* The log's limits on a batch (r5_range ppl_entries, ppl_bytes): the plan
 * stops at the stripe boundary before the stripe that would pass one,
 * never before the first stripe, and with no limit covers everything.
 */
Test (ppl_plan, batch_limits)
{
  struct sim s;
  uint64_t planned, sd;

  sim_rng_state = 7;
  sim_init (&s, 3, 16384, R5_LEFT_SYMMETRIC, 0, 8, 0, -1);
  sd = s.g.stripe_data;
  /* [24K, 7 sd + 8K) of 8 stripes of 32K: the first and last stripe get
   * an RCW entry with 8 KiB of PP, the six between a full-stripe entry.
   */
  for (unsigned limit = 1; limit <= 3; limit++) {
    r5_plan_reset (&s.plan);
    s.plan.ppl = true;
    cr_assert_eq (r5_plan_range (&s.plan, &s.g, &(struct r5_range) {
                    R5_OP_WRITE, 24576, 7 * sd - 16384, 24576, -1, UINT64_MAX,
                    limit, 0 }, &planned), 0);
    cr_expect_leq (s.plan.nppl, limit, "limit %u: %zu entries", limit,
                   s.plan.nppl);
    cr_expect_eq ((24576 + planned) % sd, 0, "limit %u: ends mid-stripe",
                  limit);
    cr_expect_eq (planned, 8192 + (limit - 1) * sd, "limit %u: %llu",
                  limit, (unsigned long long) planned);
  }
  /* PP bytes: the first stripe has 8 KiB of it; a limit of 1 byte still
   * plans that stripe, 8 KiB plans up to the last stripe (its PP would
   * pass), none plans all.
   */
  for (unsigned k = 0; k < 3; k++) {
    uint64_t bytes = k == 0 ? 1 : k == 1 ? 8192 : 0;

    r5_plan_reset (&s.plan);
    s.plan.ppl = true;
    cr_assert_eq (r5_plan_range (&s.plan, &s.g, &(struct r5_range) {
                    R5_OP_WRITE, 24576, 7 * sd - 16384, 24576, -1, UINT64_MAX,
                    0, bytes }, &planned), 0);
    cr_expect_eq (planned, k == 0 ? 8192 : k == 1 ? 8192 + 6 * sd
                                                  : 7 * sd - 16384,
                  "ppl_bytes %llu: planned %llu", (unsigned long long) bytes,
                  (unsigned long long) planned);
  }
  sim_free (&s);
}
