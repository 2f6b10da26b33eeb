/* tests/unit/test-jobplan.c -- raid/jobplan.c (check, repair, rebuild as
 * plans) run by the plan simulator (plan-sim.c) on in-memory members laid
 * out by md's formulas, for all six layouts, 3 to 5 members, whole chunks
 * and slices of them:
 *  - check finds exactly the 4 KiB units spoiled behind its back (in
 *    parity or in data: parity cannot tell), names the parity member, and
 *    writes nothing;
 *  - repair leaves every stripe consistent, rewrites parity only where it
 *    was wrong and never touches data;
 *  - rebuild of every slot (also of a member full of garbage) gives back
 *    exactly its bytes and nothing else changes;
 *  - the plans have the shape jobplan.h promises, and bad ranges are
 *    refused.
 */
#include <config.h>

#undef NDEBUG
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "raid/jobplan.h"
#include "tests/unit/plan-sim.h"

#define STRIPES 6

static const enum r5_layout layouts[] = {
  R5_LEFT_ASYMMETRIC, R5_RIGHT_ASYMMETRIC, R5_LEFT_SYMMETRIC,
  R5_RIGHT_SYMMETRIC, R5_PARITY_FIRST, R5_PARITY_LAST,
};

/* What one job run found, per stripe: wrong units, first, parity. */
struct found {
  unsigned units[STRIPES];
  uint64_t first[STRIPES];
  unsigned parity[STRIPES];
};

/* Plan job over all stripes in pieces of slice bytes of each chunk, run
 * each piece, add up what the compares found.
 */
static void
run_job (struct sim *s, enum r5_job job, uint64_t slice, unsigned slot,
         struct found *f)
{
  memset (f, 0, sizeof *f);
  for (uint64_t off = 0; off < s->g.chunk; off += slice) {
    struct mem mem = { 0 };

    r5_plan_reset (&s->plan);
    cr_assert_eq (r5_plan_job (&s->plan, &s->g, &(struct r5_job_span) {
      job, 0, STRIPES, off, slice, slot }), 0);
    mem.scratch = malloc (s->plan.scratch);
    mem.cmp_bad = calloc (s->plan.ncmps + 1, sizeof *mem.cmp_bad);
    mem.cmp_first = calloc (s->plan.ncmps + 1, sizeof *mem.cmp_first);
    cr_assert (mem.scratch && mem.cmp_bad && mem.cmp_first);
    sim_exec (s, &mem);
    for (size_t i = 0; i < s->plan.ncmps; i++) {
      const struct r5_cmp *c = &s->plan.cmps[i];

      if (mem.cmp_bad[i] && f->units[c->stripe] == 0)
        f->first[c->stripe] = mem.cmp_first[i];
      f->units[c->stripe] += mem.cmp_bad[i];
      f->parity[c->stripe] = c->parity;
    }
    free (mem.scratch);
    free (mem.cmp_bad);
    free (mem.cmp_first);
  }
}

static unsigned char *
at (struct sim *s, unsigned m, uint64_t stripe, uint64_t off)
{
  return s->member[m] + s->g.data_offset + stripe * s->g.chunk + off;
}

/* Spoil one byte of a random member in some units; remember which units
 * per stripe (a unit spoiled twice counts once).
 */
static void
spoil (struct sim *s, struct found *want)
{
  uint64_t units = s->g.chunk / R5_CMP_UNIT;

  memset (want, 0, sizeof *want);
  for (uint64_t st = 0; st < STRIPES; st++) {
    for (uint64_t u = 0; u < units; u++) {
      if (sim_rng_below (3) != 0)
        continue;
      *at (s, (unsigned) sim_rng_below (s->g.members), st,
           u * R5_CMP_UNIT + sim_rng_below (R5_CMP_UNIT)) ^= 0x5a;
      if (want->units[st]++ == 0)
        want->first[st] = u * R5_CMP_UNIT;
    }
    want->parity[st] = md_parity (&s->g, st);
  }
}

static void
snapshot (struct sim *s, unsigned char **copy)
{
  for (unsigned m = 0; m < s->g.members; m++) {
    copy[m] = malloc (s->member_bytes);
    cr_assert_not_null (copy[m]);
    memcpy (copy[m], s->member[m], s->member_bytes);
  }
}

static void
drop (struct sim *s, unsigned char **copy)
{
  for (unsigned m = 0; m < s->g.members; m++)
    free (copy[m]);
}

Test (jobplan, check_finds_the_spoiled_units_and_writes_nothing)
{
  sim_rng_state = 1234;
  for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++)
    for (unsigned n = 3; n <= 5; n++)
      for (uint64_t slice = 4096; slice <= 16384; slice *= 2) {
        struct sim s;
        struct found want, got;
        unsigned char *before[R5_MAX_MEMBERS];

        sim_init (&s, n, 16384, layouts[l], 8192, STRIPES, 4096, -1);
        spoil (&s, &want);
        snapshot (&s, before);
        run_job (&s, R5_JOB_CHECK, slice, 0, &got);
        for (unsigned st = 0; st < STRIPES; st++) {
          cr_expect_eq (got.units[st], want.units[st], "layout %d n %u "
                        "slice %lu stripe %u: %u units, expected %u",
                        layouts[l], n, (unsigned long) slice, st,
                        got.units[st], want.units[st]);
          if (want.units[st])
            cr_expect_eq (got.first[st], want.first[st]);
          cr_expect_eq (got.parity[st], want.parity[st]);
        }
        for (unsigned m = 0; m < n; m++)
          cr_expect (memcmp (before[m], s.member[m], s.member_bytes) == 0,
                     "check wrote member %u", m);
        drop (&s, before);
        sim_free (&s);
      }
}

Test (jobplan, repair_rewrites_wrong_parity_only_and_never_data)
{
  sim_rng_state = 99;
  for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++)
    for (unsigned n = 3; n <= 5; n++) {
      struct sim s;
      struct found want, got;
      unsigned char *before[R5_MAX_MEMBERS];
      uint64_t slice = n == 4 ? 8192 : 16384;

      sim_init (&s, n, 16384, layouts[l], 8192, STRIPES, 4096, -1);
      spoil (&s, &want);
      snapshot (&s, before);
      run_job (&s, R5_JOB_REPAIR, slice, 0, &got);
      run_job (&s, R5_JOB_CHECK, 4096, 0, &got);
      for (unsigned st = 0; st < STRIPES; st++) {
        unsigned p = md_parity (&s.g, st);

        cr_expect_eq (got.units[st], 0, "stripe %u still wrong", st);
        for (unsigned m = 0; m < n; m++) {
          /* data as it was (spoiled or not); parity changed only in the
           * slices of a stripe found wrong
           */
          bool same = memcmp (at (&s, m, st, 0),
                              before[m] + s.g.data_offset + st * s.g.chunk,
                              s.g.chunk) == 0;

          if (m != p || want.units[st] == 0)
            cr_expect (same, "layout %d n %u stripe %u member %u changed",
                       layouts[l], n, st, m);
        }
      }
      for (unsigned m = 0; m < n; m++) {      /* outside the data: as it was */
        cr_expect (memcmp (before[m], s.member[m], s.g.data_offset) == 0);
        cr_expect (memcmp (before[m] + s.g.data_offset + s.g.member_data,
                           s.member[m] + s.g.data_offset + s.g.member_data,
                           s.member_bytes - s.g.data_offset -
                           s.g.member_data) == 0);
      }
      drop (&s, before);
      sim_free (&s);
    }
}

Test (jobplan, rebuild_gives_back_every_slot)
{
  sim_rng_state = 7;
  for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++)
    for (unsigned n = 3; n <= 5; n++)
      for (unsigned slot = 0; slot < n; slot++) {
        struct sim s;
        struct found got;
        uint64_t slice = slot % 2 ? 16384 : 2048;   /* rebuilds need no unit */

        sim_init (&s, n, 16384, layouts[l], 8192, STRIPES, 4096, -1);
        sim_fill_random (s.member[slot] + s.g.data_offset, s.g.member_data);
        run_job (&s, R5_JOB_REBUILD, slice, slot, &got);
        for (unsigned m = 0; m < n; m++)
          cr_expect (memcmp (s.pristine[m], s.member[m], s.member_bytes) == 0,
                     "layout %d n %u slot %u: member %u differs", layouts[l],
                     n, slot, m);
        sim_free (&s);
      }
}

Test (jobplan, plans_have_the_promised_shape)
{
  struct sim s;

  sim_init (&s, 4, 16384, R5_LEFT_SYMMETRIC, 8192, STRIPES, 0, -1);
  cr_assert_eq (r5_plan_job (&s.plan, &s.g, &(struct r5_job_span) {
      R5_JOB_CHECK, 1, 3, 4096, 8192, 0 }), 0);
  cr_expect_eq (s.plan.nios, 3 * 4);
  cr_expect_eq (s.plan.ncmps, 3);
  cr_expect_eq (s.plan.nxors, 0);
  cr_expect_eq (s.plan.scratch, 3 * 5 * 8192);
  for (size_t i = 0; i < s.plan.nios; i++) {
    const struct r5_io *io = &s.plan.ios[i];

    cr_expect_eq (io->kind, R5_IO_READ);
    cr_expect_eq (io->buf.off, r5_job_column (&s.g, (unsigned) (i / 4),
                                              io->member, 8192));
    cr_expect_eq (io->member_off, 8192 + (1 + i / 4) * 16384 + 4096);
  }
  r5_plan_reset (&s.plan);
  cr_assert_eq (r5_plan_job (&s.plan, &s.g, &(struct r5_job_span) {
      R5_JOB_REPAIR, 0, 2, 0, 16384, 0 }), 0);
  cr_expect_eq (s.plan.ncmps, 2);
  cr_expect_eq (s.plan.nxors, 2);
  for (size_t i = 0; i < s.plan.nxors; i++) {
    cr_expect_eq (s.plan.xors[i].when, i + 1);
    cr_expect_eq (s.plan.xors[i].nsrc, 3);     /* the data, not parity */
  }
  for (size_t i = 0, w = 0; i < s.plan.nios; i++)
    if (s.plan.ios[i].kind == R5_IO_WRITE) {
      cr_expect_eq (s.plan.ios[i].when, ++w);
      cr_expect_eq (s.plan.ios[i].member, md_parity (&s.g, w - 1));
    }
  r5_plan_reset (&s.plan);
  cr_assert_eq (r5_plan_job (&s.plan, &s.g, &(struct r5_job_span) {
      R5_JOB_REBUILD, 0, 2, 0, 16384, 2 }), 0);
  cr_expect_eq (s.plan.nios, 2 * 3 + 2);
  cr_expect_eq (s.plan.ncmps, 0);
  for (size_t i = 0; i < s.plan.nios; i++)
    cr_expect ((s.plan.ios[i].kind == R5_IO_READ) ==
               (s.plan.ios[i].member != 2));
  sim_free (&s);
}

Test (jobplan, bad_ranges_are_refused)
{
  struct sim s;
  struct r5_plan *p = &s.plan;

  sim_init (&s, 3, 16384, R5_LEFT_SYMMETRIC, 8192, STRIPES, 0, -1);
  cr_expect_eq (r5_plan_job (p, &s.g, &(struct r5_job_span) {
      R5_JOB_CHECK, 0, 1, 0, 0, 0 }), -EINVAL);
  cr_expect_eq (r5_plan_job (p, &s.g, &(struct r5_job_span) {
      R5_JOB_CHECK, 0, 1, 8192, 16384, 0 }),
                -EINVAL);
  cr_expect_eq (r5_plan_job (p, &s.g, &(struct r5_job_span) {
      R5_JOB_CHECK, 0, 1, 0, 1024, 0 }),
                -EINVAL);
  cr_expect_eq (r5_plan_job (p, &s.g, &(struct r5_job_span) {
      R5_JOB_REPAIR, 0, 1, 512, 4096, 0 }),
                -EINVAL);
  cr_expect_eq (r5_plan_job (p, &s.g, &(struct r5_job_span) {
      R5_JOB_CHECK, STRIPES, 1, 0, 4096, 0 }),
                -EINVAL);
  cr_expect_eq (r5_plan_job (p, &s.g, &(struct r5_job_span) {
      R5_JOB_REBUILD, 0, 1, 0, 4096, 3 }),
                -EINVAL);
  cr_expect_eq (r5_plan_job (p, &s.g, &(struct r5_job_span) {
      R5_JOB_REBUILD, 0, 1, 512, 1024, 2 }),
                0);                   /* a rebuild has no unit */
  sim_free (&s);
}
