/* tests/unit/plan-sim.h -- a RAID-5 simulator for the planner's tests.
 *
 * Members are byte arrays; plans run on them exactly as raid/plan.h says
 * (all reads, then the XORs in order, then writes/zero/trim), and the
 * members are checked against a model of the array using md's layout
 * formulas written out again here (md_*), independent of raid/layout.c.
 * plan-check.c holds the checks made on every plan before it runs.
 * Failures are Criterion assertions: call these only from a test.
 */
#ifndef TESTS_UNIT_PLAN_SIM_H
#define TESTS_UNIT_PLAN_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "raid/geom.h"
#include "raid/plan.h"

/* Fixed-seed random numbers (xorshift64*). */
extern uint64_t sim_rng_state;
uint64_t sim_rng (void);
uint64_t sim_rng_below (uint64_t n);
void sim_fill_random (unsigned char *p, uint64_t len);

/* md's layouts (reference section 1.2). */
unsigned md_parity (const struct r5_geom *g, uint64_t stripe);
unsigned md_data_member (const struct r5_geom *g, uint64_t stripe,
                         unsigned dd);

/* One r5_plan_range() call: what it may do, and what it covered. */
struct call {
  enum r5_op op;
  uint64_t req_off, req_len;  /* the whole client request */
  uint64_t off, planned;      /* this call's part */
  int missing;
};

/* The header's invariants: io and XOR bounds, buffers, no races. */
void check_plan (const struct r5_plan *p, const struct r5_geom *g,
                 const struct call *c);
/* The covered part: a prefix ending on a stripe boundary, within budget
 * (overruns are counted; expect_no_overruns() reports them).
 */
void check_planned (const struct r5_plan *p, const struct r5_geom *g,
                    const struct call *c, uint64_t len, uint64_t budget);
void expect_no_overruns (void);
/* Segment kinds and member I/O volume follow the header's rules. */
void check_choices (const struct r5_plan *p, const struct r5_geom *g,
                    const struct call *c);

struct sim {
  struct r5_geom g;
  uint64_t member_bytes;
  int missing;
  unsigned char *member[R5_MAX_MEMBERS];
  unsigned char *pristine[R5_MAX_MEMBERS];  /* members as first built */
  unsigned char *model;       /* the array as the client sees it */
  unsigned char *zero;        /* R5_BUF_ZERO, one chunk */
  struct r5_plan plan;
};


/* Memory a plan runs on (R5_BUF_ZERO is sim.zero).  A plan with
 * compares needs cmp_bad: room for one count per compare, of the
 * R5_CMP_UNIT units it found wrong (counted byte by byte here, not by
 * ISA-L), and cmp_first, the chunk offset of the first.
 */
struct mem {
  unsigned char *client, *scratch;
  unsigned *cmp_bad;
  uint64_t *cmp_first;
};

/* A consistent array of stripes * chunk per member, random data, members
 * data_offset + stripes * chunk + slack bytes; missing (or -1) is poisoned
 * and must never be touched.
 */
void sim_init (struct sim *s, unsigned n, uint64_t chunk,
               enum r5_layout layout, uint64_t data_offset, uint64_t stripes,
               uint64_t slack, int missing);
void sim_free (struct sim *s);
/* Run s->plan on the members. */
void sim_exec (struct sim *s, struct mem *mem);
/* Or in parts, for tearing a write: phases 1 and 2 (reads, compares,
 * XORs), then any of the phase-3 ios (index into s->plan.ios) alone, the
 * first len bytes of it (len <= its length).
 */
void sim_exec_before_writes (struct sim *s, struct mem *mem);
void sim_exec_io_prefix (struct sim *s, struct mem *mem, size_t i,
                         uint64_t len);
/* Memory a plan buffer names. */
unsigned char *sim_buf (struct sim *s, struct mem *mem, struct r5_buf b);
/* Members against the model: data, parity, untouched bytes. */
void sim_check (struct sim *s);
/* Plan (piece by piece within budget), check, run and verify a request. */
void sim_request (struct sim *s, enum r5_op op, uint64_t off, uint64_t len,
                  uint64_t budget);

#endif /* TESTS_UNIT_PLAN_SIM_H */
