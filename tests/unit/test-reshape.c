/* tests/unit/test-reshape.c -- growing an array (raid/reshape.h), run on
 * members in memory and read back through md's layout formulas written
 * out again (plan-sim.c's md_*), not raid/layout.c.
 *
 * Asserts, for 3 to 5 members grown by 1 and 2, every layout, healthy
 * and with each slot missing (old ones and new ones):
 * - after the whole reshape every array byte of the old capacity reads
 *   back in the new geometry, the new space is zeroes, and every new
 *   stripe's parity is the XOR of its data (where its members are
 *   present);
 * - a crash at any window, with any subset of that window's writes done,
 *   leaves every byte readable in the geometry the recorded line says
 *   (new below it, old at and past it), and a reshape resumed from that
 *   line ends as the uncrashed one does;
 * - a reshape resumed from a line inside a window (md records one new
 *   stripe at a time) moves the rest of that window and ends the same;
 * - the data offset must move down by at least mdadm's min_offset_change
 *   (a smaller shift is refused), and the window is whole stripes of
 *   both geometries.
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "raid/geom.h"
#include "raid/reshape.h"
#include "plan-sim.h"

#define CHUNK 16384u                  /* four pages: listed pages within a chunk */

struct grow {
  struct r5_reshape r;
  unsigned members;           /* to.members */
  uint64_t member_bytes;
  int missing;
  struct r5_around *around;   /* or NULL */
  unsigned char *m[R5_MAX_MEMBERS];
  unsigned char *model;       /* from.capacity bytes, the old array */
  unsigned char *zero;
  unsigned char *scratch;
  struct r5_plan plan;
};

/* Member offset and member of array byte a in geometry g (md's formulas). */
static unsigned
locate (const struct r5_geom *g, uint64_t a, uint64_t *moff)
{
  uint64_t stripe = a / g->stripe_data, in = a % g->stripe_data;

  *moff = g->data_offset + stripe * g->chunk + in % g->chunk;
  return md_data_member (g, stripe, (unsigned) (in / g->chunk));
}

/* Byte a of the array as geometry g stores it; the missing member's
 * byte is the XOR of its row on the others.
 */
static unsigned char
read_byte (const struct grow *t, const struct r5_geom *g, uint64_t a)
{
  uint64_t moff;
  unsigned m = locate (g, a, &moff);
  unsigned char x = 0;

  if ((int) m != t->missing)
    return t->m[m][moff];
  for (unsigned i = 0; i < g->members; i++)
    if ((int) i != t->missing)
      x ^= t->m[i][moff];
  return x;
}

/* kept: the data offset stays (a backup carries the critical windows),
 * else it moves by mdadm's least.
 */
static void
grow_init (struct grow *t, unsigned n, unsigned add, enum r5_layout layout,
           uint64_t stripes, int missing, bool kept)
{
  struct r5_geom from;
  uint64_t shift = 0, off;

  memset (t, 0, sizeof *t);
  /* The shift is mdadm's least, the old data offset a little more. */
  cr_assert_eq (r5_geom_init (&from, &(struct r5_geom_params) {
                  n, CHUNK, layout, 0, stripes * CHUNK }), 0);
  shift = kept ? 0 : r5_reshape_min_shift (&from, add);
  off = shift + 2 * CHUNK;
  cr_assert_eq (r5_geom_init (&from, &(struct r5_geom_params) {
                  n, CHUNK, layout, off, off + stripes * CHUNK }), 0);
  cr_assert_eq (kept ? r5_reshape_init_kept (&t->r, &from, add)
                     : r5_reshape_init (&t->r, &from, add, shift), 0);
  cr_assert_eq (t->r.window % from.stripe_data, 0);
  cr_assert_eq (t->r.window % t->r.to.stripe_data, 0);
  cr_assert_eq (t->r.to.data_offset, from.data_offset - shift);
  cr_assert_eq (t->r.end, stripes * CHUNK * (n + add - 1));
  t->members = n + add;
  t->member_bytes = off + stripes * CHUNK + CHUNK;
  t->missing = missing;
  t->around = NULL;
  for (unsigned i = 0; i < t->members; i++) {
    t->m[i] = malloc (t->member_bytes);
    sim_fill_random (t->m[i], t->member_bytes);   /* old bytes, garbage */
  }
  t->model = malloc (from.capacity);
  sim_fill_random (t->model, from.capacity);
  /* The old array: its data where md puts it, its parity. */
  for (uint64_t a = 0; a < from.capacity; a++) {
    uint64_t moff;

    t->m[locate (&from, a, &moff)][moff] = t->model[a];
  }
  for (uint64_t s = 0; s < from.stripes; s++)
    for (uint64_t b = 0; b < CHUNK; b++) {
      uint64_t moff = from.data_offset + s * CHUNK + b;
      unsigned char x = 0;

      for (unsigned d = 0; d < from.data_members; d++)
        x ^= t->m[md_data_member (&from, s, d)][moff];
      t->m[md_parity (&from, s)][moff] = x;
    }
  t->zero = calloc (1, CHUNK);
  r5_plan_init (&t->plan);
}

static void
grow_free (struct grow *t)
{
  for (unsigned i = 0; i < t->members; i++)
    free (t->m[i]);
  free (t->model);
  free (t->zero);
  free (t->scratch);
  r5_plan_free (&t->plan);
}

static unsigned char *
buf_of (struct grow *t, struct r5_buf b)
{
  return b.kind == R5_BUF_ZERO ? t->zero : t->scratch + b.off;
}

/* Plan the window at line and run its reads and XORs; its writes are
 * then run by run_writes.
 */
static void
plan_and_read (struct grow *t, uint64_t line)
{
  r5_plan_reset (&t->plan);
  cr_assert_eq (r5_plan_reshape (&t->plan, &t->r, line, t->missing,
                                 t->around), 0);
  for (size_t i = 0; t->around && i < t->plan.nios; i++) {
    const struct r5_io *io = &t->plan.ios[i];
    uint64_t s, off;

    if (io->kind != R5_IO_READ || io->member_off < t->r.from.data_offset)
      continue;
    s = (io->member_off - t->r.from.data_offset) / CHUNK;
    off = (io->member_off - t->r.from.data_offset) % CHUNK;
    for (uint64_t p = off / 4096 * 4096; p < off + io->len; p += 4096)
      cr_assert_neq (t->around->fn (t->around->ctx, s, p, 4096),
                     (int) io->member, "a read of a listed page");
  }
  free (t->scratch);
  t->scratch = malloc (t->plan.scratch + 1);
  sim_fill_random (t->scratch, t->plan.scratch + 1);   /* no free zeroes */
  for (size_t i = 0; i < t->plan.nios; i++) {
    const struct r5_io *io = &t->plan.ios[i];

    cr_assert_neq ((int) io->member, t->missing, "an io on the missing member");
    cr_assert_leq (io->member_off + io->len, t->member_bytes);
    if (io->kind == R5_IO_READ)
      memcpy (buf_of (t, io->buf), t->m[io->member] + io->member_off,
              io->len);
  }
  for (size_t i = 0; i < t->plan.nxors; i++) {
    const struct r5_xor *x = &t->plan.xors[i];
    unsigned char *dst = buf_of (t, x->dst);

    cr_assert_neq (x->dst.kind, R5_BUF_ZERO, "an XOR into the zeroes");
    for (uint64_t b = 0; b < x->len; b++) {
      unsigned char v = 0;

      for (unsigned k = 0; k < x->nsrc; k++)
        v ^= buf_of (t, x->src[k])[b];
      dst[b] = v;
    }
  }
}

/* The window's writes: all of them, or (crash) those whose bit in mask
 * is set, mask taken round by the number of writes.
 */
static void
run_writes (struct grow *t, uint64_t mask, bool all)
{
  unsigned w = 0;

  for (size_t i = 0; i < t->plan.nios; i++) {
    const struct r5_io *io = &t->plan.ios[i];

    if (io->kind != R5_IO_WRITE)
      continue;
    if (all || ((mask >> (w++ % 64)) & 1))
      memcpy (t->m[io->member] + io->member_off, buf_of (t, io->buf), io->len);
  }
}

/* Run the reshape from line (the recorded safe line) to its end,
 * recording the line whenever the rule says so.  With crash_at set,
 * stop in the window at *crash_at after a random subset of its writes
 * and return the recorded line.
 */
static uint64_t
run_reshape (struct grow *t, uint64_t safe, const uint64_t *crash_at)
{
  for (uint64_t line = safe; line < t->r.end;
       line += r5_reshape_window_len (&t->r, line)) {
    if (r5_reshape_must_record (&t->r, safe, line))
      safe = line;            /* the superblocks say so, then we go on */
    cr_assert (!r5_reshape_must_record (&t->r, safe, line),
               "recording the line was not enough at %lu", (unsigned long) line);
    plan_and_read (t, line);
    if (crash_at && line == *crash_at) {
      run_writes (t, sim_rng (), false);
      return safe;
    }
    run_writes (t, 0, true);
  }
  return t->r.end;
}

/* Every byte where the recorded line says it is. */
static void
check_readable (const struct grow *t, uint64_t safe)
{
  for (uint64_t a = 0; a < t->r.from.capacity; a++) {
    const struct r5_geom *g = r5_reshape_geom_at (&t->r, safe, a);

    cr_assert_eq (read_byte (t, g, a), t->model[a],
                  "byte %lu (line %lu) reads wrong", (unsigned long) a,
                  (unsigned long) safe);
  }
}

/* The whole array in the new geometry: data, zeroes, parity. */
static void
check_done (const struct grow *t)
{
  const struct r5_geom *g = &t->r.to;

  check_readable (t, t->r.end);
  for (uint64_t a = t->r.from.capacity; a < g->capacity; a++)
    cr_assert_eq (read_byte (t, g, a), 0, "new space at %lu is not zero",
                  (unsigned long) a);
  if (t->missing >= 0)
    return;                   /* read_byte used the parity already */
  for (uint64_t s = 0; s < g->stripes; s++)
    for (uint64_t b = 0; b < CHUNK; b += 509) {
      unsigned char x = 0;

      for (unsigned i = 0; i < g->members; i++)
        x ^= t->m[i][g->data_offset + s * CHUNK + b];
      cr_assert_eq (x, 0, "stripe %lu parity wrong", (unsigned long) s);
    }
}

Test (reshape, grows_every_layout_healthy_and_degraded)
{
  for (unsigned n = 3; n <= 5; n++)
    for (unsigned add = 1; add <= 2; add++)
      for (int l = 0; l < R5_LAYOUTS; l++)
        for (int missing = -1; missing < (int) (n + add); missing++) {
          struct grow t;

          grow_init (&t, n, add, (enum r5_layout) l, 13, missing, false);
          run_reshape (&t, 0, NULL);
          check_done (&t);
          grow_free (&t);
        }
}

/* Listed pages: (member, `from` stripe, page) triples. */
struct listing {
  unsigned n;
  struct { int member; uint64_t stripe, off; } e[8];
  const struct grow *t;       /* whose reads are checked */
};

static int
listed_fn (void *ctx, uint64_t stripe, uint64_t off, uint64_t len)
{
  const struct listing *l = ctx;
  uint64_t mask = 0;

  for (unsigned i = 0; i < l->n; i++)
    if (l->e[i].stripe == stripe && l->e[i].off >= off &&
        l->e[i].off < off + len)
      mask |= UINT64_C (1) << l->e[i].member;
  if (mask == 0)
    return -1;
  return __builtin_popcountll (mask) > 1 ? R5_AROUND_TWO
    : __builtin_ctzll (mask);
}

static void
list (struct listing *l, int member, uint64_t stripe, uint64_t page)
{
  l->e[l->n].member = member;
  l->e[l->n].stripe = stripe;
  l->e[l->n++].off = page * 4096;
}

/* The bytes of each listed page spoiled on its member (a read of them
 * would show), and the parity page beside one (page + 1 of the same row,
 * when nobody lists it: a read around whole chunks would use it).
 */
static void
spoil_listed (struct grow *t, const struct listing *l)
{
  const struct r5_geom *g = &t->r.from;

  for (unsigned i = 0; i < l->n; i++) {
    uint64_t moff = g->data_offset + l->e[i].stripe * CHUNK + l->e[i].off;
    unsigned pm = md_parity (g, l->e[i].stripe);

    sim_fill_random (t->m[l->e[i].member] + moff, 4096);
    if (l->e[i].off + 4096 < CHUNK && (int) pm != l->e[i].member &&
        listed_fn ((void *) l, l->e[i].stripe, l->e[i].off + 4096, 4096) < 0)
      sim_fill_random (t->m[pm] + moff + 4096, 4096);
  }
}

/* Members read around a page at a time, healthy and with a new slot
 * missing: pages of one member in stripes 1 and 4, and of two members in
 * different pages of stripe 6.
 */
Test (reshape, listed_pages_are_computed_a_page_at_a_time)
{
  for (unsigned n = 3; n <= 5; n++)
    for (unsigned add = 1; add <= 2; add++)
      for (int l = 0; l < R5_LAYOUTS; l++)
        for (int m = 0; m < (int) n; m++)
          for (int missing = -1; missing <= (int) n; missing += (int) n + 1) {
            struct listing ls = { 0 };
            struct r5_around around = { .fn = listed_fn, .ctx = &ls };
            struct grow t;

            grow_init (&t, n, add, (enum r5_layout) l, 13, missing, false);
            list (&ls, m, 1, 0);
            list (&ls, m, 4, 2);
            list (&ls, m, 6, 0);
            list (&ls, (m + 1) % (int) n, 6, 1);
            spoil_listed (&t, &ls);
            t.around = &around;
            run_reshape (&t, 0, NULL);
            check_done (&t);
            grow_free (&t);
          }
}

Test (reshape, a_page_out_on_two_members_refused)
{
  struct listing ls = { 0 };
  struct r5_around around = { .fn = listed_fn, .ctx = &ls };
  struct grow t;

  grow_init (&t, 3, 1, R5_LEFT_SYMMETRIC, 13, -1, false);
  list (&ls, 0, 0, 1);
  list (&ls, 2, 0, 1);
  cr_assert_eq (r5_plan_reshape (&t.plan, &t.r, 0, -1, &around), -ENODATA);
  r5_plan_reset (&t.plan);
  ls.n = 1;
  cr_assert_eq (r5_plan_reshape (&t.plan, &t.r, 0, 2, &around), -ENODATA,
                "a listed page beside a missing member");
  r5_plan_reset (&t.plan);
  cr_assert_eq (r5_plan_reshape (&t.plan, &t.r, 0, 0, &around), 0,
                "the missing member's own listed page");
  r5_plan_reset (&t.plan);
  cr_assert_eq (r5_plan_reshape (&t.plan, &t.r, 0, 3, &around), 0,
                "a new slot missing, an old one read around");
  grow_free (&t);
}

/* around->lost: the members out of the page (listed_fn's, the missing
 * one added by the plan), counted.
 */
static unsigned lost_calls;

static uint64_t
lost_fn (void *ctx, uint64_t stripe, uint64_t off, uint64_t len)
{
  const struct listing *l = ctx;
  uint64_t mask = 0;

  lost_calls++;
  for (unsigned i = 0; i < l->n; i++)
    if (l->e[i].stripe == stripe && l->e[i].off >= off &&
        l->e[i].off < off + len)
      mask |= UINT64_C (1) << l->e[i].member;
  return mask;
}

/* With around->lost, a page out on two members moves anyway: its data
 * page as zeroes (stripe 0 of 3 left-symmetric: data 0 on member 0,
 * parity on member 2; page 1 listed on both, so array bytes 4096+4096
 * are lost), the new rows' parity computed over them, every other byte
 * where it was -- healthy, and with member 2 missing and only member 0
 * listing it.
 */
Test (reshape, a_page_out_on_two_members_moved_as_zeroes)
{
  for (int missing = -1; missing <= 2; missing += 3) {
    struct listing ls = { 0 };
    struct r5_around around = { .fn = listed_fn, .lost = lost_fn,
                                .ctx = &ls };
    struct grow t;

    grow_init (&t, 3, 1, R5_LEFT_SYMMETRIC, 13, missing, false);
    list (&ls, 0, 0, 1);
    if (missing < 0)
      list (&ls, 2, 0, 1);
    spoil_listed (&t, &ls);
    t.around = &around;
    lost_calls = 0;
    run_reshape (&t, 0, NULL);
    cr_assert_eq (lost_calls, 1, "around->lost asked %u times", lost_calls);
    memset (t.model + 4096, 0, 4096);
    check_done (&t);
    grow_free (&t);
  }
}

Test (reshape, a_crash_anywhere_leaves_every_byte_where_the_line_says)
{
  sim_rng_state = 0x5eed;
  for (unsigned n = 3; n <= 4; n++)
    for (int missing = -1; missing <= 0; missing++) {
      struct grow probe;
      uint64_t windows;

      grow_init (&probe, n, 1, R5_LEFT_SYMMETRIC, 17, missing, false);
      windows = (probe.r.end + probe.r.window - 1) / probe.r.window;
      grow_free (&probe);
      for (uint64_t w = 0; w < windows; w++)
        for (unsigned round = 0; round < 3; round++) {
          struct grow t;
          uint64_t crash = w * probe.r.window, safe;

          grow_init (&t, n, 1, R5_LEFT_SYMMETRIC, 17, missing, false);
          safe = run_reshape (&t, 0, &crash);
          check_readable (&t, safe);
          run_reshape (&t, safe, NULL);     /* the restart */
          check_done (&t);
          grow_free (&t);
        }
    }
}

/* md moved the array bytes [lo, hi) (whole `to` stripes) a new stripe at
 * a time: their data and parity in the new geometry, md's formulas.
 */
static void
md_moved (struct grow *t, uint64_t lo, uint64_t hi)
{
  const struct r5_geom *g = &t->r.to;

  for (uint64_t s = lo / g->stripe_data; s < hi / g->stripe_data; s++)
    for (uint64_t b = 0; b < CHUNK; b++) {
      uint64_t moff = g->data_offset + s * CHUNK + b;
      unsigned char x = 0;

      for (unsigned d = 0; d < g->data_members; d++) {
        uint64_t a = s * g->stripe_data + d * CHUNK + b;
        unsigned char v = a < t->r.from.capacity ? t->model[a] : 0;

        t->m[md_data_member (g, s, d)][moff] = v;
        x ^= v;
      }
      t->m[md_parity (g, s)][moff] = x;
    }
}

Test (reshape, a_line_inside_a_window_goes_on_with_its_rest)
{
  for (unsigned n = 3; n <= 5; n++)
    for (int missing = -1; missing <= 1; missing += 2) {
      struct grow probe;
      uint64_t steps;

      grow_init (&probe, n, 1, R5_LEFT_SYMMETRIC, 17, missing, false);
      steps = probe.r.end / probe.r.to.stripe_data;
      grow_free (&probe);
      for (uint64_t k = 1; k < steps; k++) {
        struct grow t;
        uint64_t line, start;

        grow_init (&t, n, 1, R5_LEFT_SYMMETRIC, 17, missing, false);
        line = k * t.r.to.stripe_data;
        start = line / t.r.window * t.r.window;
        for (uint64_t l = 0; l < start; l += t.r.window) {
          plan_and_read (&t, l);              /* up to the window ... */
          run_writes (&t, 0, true);
        }
        md_moved (&t, start, line);           /* ... and md's stripes in it */
        check_readable (&t, line);
        cr_assert_leq (r5_reshape_window_len (&t.r, line),
                       t.r.window - (line - start));
        run_reshape (&t, line, NULL);
        check_done (&t);
        grow_free (&t);
      }
    }
}

/* A kept data offset: the first windows are critical, then none; a crash
 * in a critical window with any subset of its writes done is put right
 * by writing its backup (the window's bytes as read, before any write)
 * in the new shape, as mdadm's Grow_restart does, and the reshape goes
 * on to the same end.  Without the backup such a crash loses bytes.
 */
static void
restore_backup (struct grow *t, uint64_t line, uint64_t len,
                const unsigned char *data)
{
  const struct r5_geom *g = &t->r.to;

  for (uint64_t a = line; a < line + len; a++) {
    uint64_t moff;
    unsigned m = locate (g, a, &moff);

    t->m[m][moff] = a < t->r.from.capacity ? data[a - line] : 0;
  }
  for (uint64_t s = line / g->stripe_data; s < (line + len) / g->stripe_data;
       s++)
    for (uint64_t b = 0; b < CHUNK; b++) {
      uint64_t moff = g->data_offset + s * CHUNK + b;
      unsigned char x = 0;

      for (unsigned d = 0; d < g->data_members; d++)
        x ^= t->m[md_data_member (g, s, d)][moff];
      t->m[md_parity (g, s)][moff] = x;
    }
}

Test (reshape, a_kept_offset_is_safe_with_its_backup)
{
  sim_rng_state = 0xbac0;
  for (unsigned n = 3; n <= 5; n++) {
    struct grow probe;
    uint64_t critical = 0, lost = 0;

    grow_init (&probe, n, 1, R5_LEFT_SYMMETRIC, 17, -1, true);
    for (uint64_t l = 0; r5_reshape_critical (&probe.r, l); l += probe.r.window)
      critical = l + probe.r.window;
    cr_assert_gt (critical, 0, "%u members: no window is critical", n);
    for (uint64_t l = critical; l < probe.r.end; l += probe.r.window)
      cr_assert (!r5_reshape_critical (&probe.r, l), "critical again at %lu",
                 (unsigned long) l);
    grow_free (&probe);
    for (uint64_t line = 0; line < critical; line += probe.r.window)
      for (unsigned round = 0; round < 4; round++) {
        struct grow t;
        uint64_t len, base;
        unsigned char *backup;

        grow_init (&t, n, 1, R5_LEFT_SYMMETRIC, 17, -1, true);
        for (uint64_t l = 0; l < line; l += t.r.window) {
          plan_and_read (&t, l);
          run_writes (&t, 0, true);
        }
        len = r5_reshape_window_len (&t.r, line);
        plan_and_read (&t, line);
        base = line / t.r.from.stripe_data * t.r.from.stripe_data;
        backup = malloc (len);
        memcpy (backup, t.scratch + (line - base), len);
        run_writes (&t, round == 0 ? UINT64_MAX : sim_rng (), round == 0);
        /* The model holds the old array's bytes only: a window may
         * reach past them (into the new geometry's space).
         */
        for (uint64_t a = line;
             a < line + len && a < t.r.from.capacity && round == 0; a++)
          lost += read_byte (&t, &t.r.from, a) != t.model[a];
        restore_backup (&t, line, len, backup);
        check_readable (&t, line + len);
        for (uint64_t l = line + len; l < t.r.end;
             l += r5_reshape_window_len (&t.r, l)) {
          plan_and_read (&t, l);
          run_writes (&t, 0, true);
        }
        check_done (&t);
        free (backup);
        grow_free (&t);
      }
    cr_assert_gt (lost, 0, "%u members: the critical windows lose nothing "
                  "without their backup", n);
  }
}

Test (reshape, the_data_offset_must_move_by_mdadms_least)
{
  struct r5_geom g;
  struct r5_reshape r;
  uint64_t min;

  cr_assert_eq (r5_geom_init (&g, &(struct r5_geom_params) {
                  3, 512u << 10, R5_LEFT_SYMMETRIC, 128u << 20,
                  (128u << 20) + (64u << 20) }), 0);
  /* mdadm: backup_blocks = LCM(1024 * 2, 1024 * 3) sectors = 3 MiB,
   * min_offset_change = that / 2 old data disks = 1.5 MiB.
   */
  min = r5_reshape_min_shift (&g, 1);
  cr_assert_eq (min, 3u << 19, "min shift %lu", (unsigned long) min);
  cr_assert_eq (r5_reshape_init (&r, &g, 1, min - 512), -ENOSPC);
  cr_assert_eq (r5_reshape_init (&r, &g, 1, (128u << 20) + 512), -ENOSPC);
  cr_assert_eq (r5_reshape_init (&r, &g, 1, min + 100), -EINVAL);
  cr_assert_eq (r5_reshape_init (&r, &g, 0, min), -EINVAL);
  cr_assert_eq (r5_reshape_init (&r, &g, 30, min * 30), -EINVAL);
  cr_assert_eq (r5_reshape_init (&r, &g, 1, min), 0);
  cr_assert_eq (r.window, 3u << 20);
  cr_assert_eq (r.to.capacity, g.capacity / 2 * 3);
  cr_assert_eq (r5_plan_reshape (&(struct r5_plan) { 0 }, &r, 4096, -1, NULL),
                -EINVAL, "a line off a new stripe boundary");
}
