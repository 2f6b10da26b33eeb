/* raid/reshape.c -- two geometries and the window between them
 * (reshape.h).
 */
#include <config.h>

#include <errno.h>

#include "raid/layout.h"
#include "raid/reshape.h"

static uint64_t
gcd (uint64_t a, uint64_t b)
{
  while (b) {
    uint64_t t = a % b;

    a = b;
    b = t;
  }
  return a;
}

/* mdadm's compute_backup_blocks: whole stripes of both geometries. */
static uint64_t
window_of (uint64_t chunk, unsigned from_data, unsigned to_data)
{
  uint64_t a = chunk * from_data, b = chunk * to_data;

  return a / gcd (a, b) * b;
}

uint64_t
r5_reshape_min_shift (const struct r5_geom *g, unsigned add)
{
  return window_of (g->chunk, g->data_members, g->data_members + add) /
    g->data_members;
}

/* The two shapes, the data offset moved down by shift (checked). */
static int
init_shapes (struct r5_reshape *r, const struct r5_geom *from, unsigned add,
             uint64_t shift)
{
  struct r5_geom to;
  struct r5_geom_params p = {
    .members = from->members + add, .chunk = from->chunk,
    .layout = from->layout,
  };

  p.data_offset = from->data_offset - shift;
  /* The same whole stripes per member: md keeps the component size. */
  p.member_bytes = p.data_offset + from->member_data;
  if (r5_geom_init (&to, &p) < 0 || to.stripes != from->stripes)
    return -EINVAL;
  r->from = *from;
  r->to = to;
  r->window = window_of (from->chunk, from->data_members, to.data_members);
  r->end = to.capacity;
  return 0;
}

int
r5_reshape_init (struct r5_reshape *r, const struct r5_geom *from,
                 unsigned add, uint64_t shift)
{
  if (add == 0 || from->members + add > R5_MAX_MEMBERS || shift % 512)
    return -EINVAL;
  if (shift > from->data_offset || shift < r5_reshape_min_shift (from, add))
    return -ENOSPC;
  return init_shapes (r, from, add, shift);
}

int
r5_reshape_init_kept (struct r5_reshape *r, const struct r5_geom *from,
                      unsigned add)
{
  if (add == 0 || from->members + add > R5_MAX_MEMBERS)
    return -EINVAL;
  return init_shapes (r, from, add, 0);
}

bool
r5_reshape_critical (const struct r5_reshape *r, uint64_t line)
{
  return line < r->end && r5_reshape_must_record (r, line, line);
}

uint64_t
r5_reshape_window_len (const struct r5_reshape *r, uint64_t line)
{
  uint64_t next = (line / r->window + 1) * r->window;

  if (line >= r->end)
    return 0;
  return (next < r->end ? next : r->end) - line;
}

uint64_t
r5_reshape_to_member_end (const struct r5_reshape *r, uint64_t addr)
{
  return r->to.data_offset + addr / r->to.stripe_data * r->to.chunk;
}

uint64_t
r5_reshape_from_member_start (const struct r5_reshape *r, uint64_t addr)
{
  return r->from.data_offset + addr / r->from.stripe_data * r->from.chunk;
}

bool
r5_reshape_must_record (const struct r5_reshape *r, uint64_t safe,
                        uint64_t line)
{
  uint64_t reach = r5_reshape_to_member_end (r, line +
                                             r5_reshape_window_len (r, line));

  return reach > r5_reshape_from_member_start (r, safe);
}

/* Planning one window: where its data and parity sit in scratch. */
struct window {
  struct r5_plan *p;
  const struct r5_reshape *r;
  uint64_t line, len;
  uint64_t base;              /* array address of the first `from` stripe
                               * read, scratch offset 0 (at or below line) */
  int missing;
  const struct r5_around *around;   /* or NULL */
  uint64_t to_parity;         /* scratch offset of the `to` parities */
  uint64_t from_parity;       /* ... of the `from` parities (degraded) */
};

/* The buffer of the window's data chunk at array address addr: its place
 * in scratch, or zeroes where the old array ended.
 */
static struct r5_buf
data_buf (const struct window *w, uint64_t addr)
{
  if (addr >= w->r->from.capacity)
    return (struct r5_buf) { .kind = R5_BUF_ZERO };
  return (struct r5_buf) { .kind = R5_BUF_SCRATCH, .off = addr - w->base };
}

static int
add_chunk_io (struct r5_plan *p, enum r5_io_kind kind, unsigned member,
              uint64_t member_off, uint64_t len, struct r5_buf buf)
{
  return r5_plan_add_io (p, &(struct r5_io) {
      .kind = kind, .member = member, .member_off = member_off, .len = len,
      .buf = buf,
    });
}

/* b, off bytes further in (zeroes stay zeroes). */
static struct r5_buf
buf_at (struct r5_buf b, uint64_t off)
{
  if (b.kind == R5_BUF_SCRATCH)
    b.off += off;
  return b;
}

/* Read bytes [off, off + len) of each chunk of `from` stripe s into
 * scratch; skip's data there (a member missing or read around) is the
 * XOR of the others and the stripe's parity (read to its own place).
 */
static int
read_part (struct window *w, uint64_t s, unsigned i, uint64_t off,
           uint64_t len, int skip)
{
  const struct r5_geom *g = &w->r->from;
  uint64_t base = r5_stripe_array_off (g, s);
  uint64_t moff = r5_stripe_member_off (g, s) + off;
  struct r5_xor x = { .len = len };
  struct r5_buf par = { R5_BUF_SCRATCH, w->from_parity + i * g->chunk + off };
  int lost = -1, r = 0;

  for (unsigned d = 0; d < g->data_members && r == 0; d++) {
    unsigned m = r5_data_member (g, s, d);
    struct r5_buf b = buf_at (data_buf (w, base + d * g->chunk), off);

    if ((int) m == skip)
      lost = (int) d;
    else
      r = add_chunk_io (w->p, R5_IO_READ, m, moff, len, b);
  }
  if (r < 0 || lost < 0)
    return r;
  if ((r = add_chunk_io (w->p, R5_IO_READ, r5_parity_member (g, s), moff, len,
                         par)) < 0)
    return r;
  x.dst = buf_at (data_buf (w, base + (unsigned) lost * g->chunk), off);
  for (unsigned d = 0; d < g->data_members; d++)
    if ((int) d != lost)
      x.src[x.nsrc++] = buf_at (data_buf (w, base + d * g->chunk), off);
  x.src[x.nsrc++] = par;
  return r5_plan_add_xor (w->p, &x);
}

/* Bytes [off, off + len) of `from` stripe s's row with the members of out
 * (a mask) out there: the others' data read, the out members' data made
 * zeroes (the row's parity, one data short, cannot compute them).
 */
static int
read_lost (struct window *w, uint64_t s, uint64_t off, uint64_t len,
           uint64_t out)
{
  const struct r5_geom *g = &w->r->from;
  uint64_t base = r5_stripe_array_off (g, s);
  uint64_t moff = r5_stripe_member_off (g, s) + off;
  const struct r5_buf zero = { .kind = R5_BUF_ZERO };
  int r = 0;

  for (unsigned d = 0; d < g->data_members && r == 0; d++) {
    unsigned m = r5_data_member (g, s, d);
    struct r5_buf b = buf_at (data_buf (w, base + d * g->chunk), off);

    if (b.kind == R5_BUF_ZERO)
      continue;               /* past the old end: zeroes already */
    if (out >> m & 1)
      r = r5_plan_add_xor (w->p, &(struct r5_xor) {
          .len = len, .nsrc = 2, .dst = b, .src = { zero, zero } });
    else
      r = add_chunk_io (w->p, R5_IO_READ, m, moff, len, b);
  }
  return r;
}

/* A page of `from` stripe s's row that skip_in found two members out of:
 * moved with their data as zeroes if around->lost takes it (read_lost),
 * else -ENODATA.
 */
static int
read_page_lost (struct window *w, uint64_t s, uint64_t off)
{
  uint64_t out = 0;

  if (w->around && w->around->lost)
    out = w->around->lost (w->around->ctx, s, off, R5_AROUND_PAGE);
  if (w->missing >= 0 && w->missing < (int) w->r->from.members && out)
    out |= UINT64_C (1) << w->missing;
  return out ? read_lost (w, s, off, R5_AROUND_PAGE, out) : -ENODATA;
}

/* The member to compute in [off, off + len) of `from` stripe s's row (one
 * listed there, else the one missing), or -ENODATA when two are out.
 */
static int
skip_in (const struct window *w, uint64_t s, uint64_t off, uint64_t len)
{
  int old_missing = w->missing < (int) w->r->from.members ? w->missing : -1;
  int a = w->around ? w->around->fn (w->around->ctx, s, off, len) : -1;

  if (a == R5_AROUND_TWO || (a >= 0 && old_missing >= 0 && a != old_missing))
    return -ENODATA;
  return a >= 0 ? a : old_missing;
}

/* Read `from` stripe s into scratch: whole chunks, each page on its own
 * where a member lists bytes in the stripe's row (md's stripe_head is a
 * page: a device is out of sync only in the pages it lists).
 */
static int
read_from_stripe (struct window *w, uint64_t s, unsigned i)
{
  const struct r5_geom *g = &w->r->from;
  int skip = skip_in (w, s, 0, g->chunk), r = 0;

  if (skip == -ENODATA || (skip >= 0 && skip != w->missing)) {
    for (uint64_t off = 0; off < g->chunk && r == 0; off += R5_AROUND_PAGE)
      if ((r = skip_in (w, s, off, R5_AROUND_PAGE)) >= -1)
        r = read_part (w, s, i, off, R5_AROUND_PAGE, r);
      else if (r == -ENODATA)
        r = read_page_lost (w, s, off);
    return r;
  }
  return read_part (w, s, i, 0, g->chunk, skip);
}

/* Parity of `to` stripe s, then every chunk of it written. */
static int
write_to_stripe (struct window *w, uint64_t s, unsigned i)
{
  const struct r5_geom *g = &w->r->to;
  uint64_t base = r5_stripe_array_off (g, s), moff = r5_stripe_member_off (g, s);
  struct r5_buf par = { R5_BUF_SCRATCH, w->to_parity + i * g->chunk };
  struct r5_xor x = { .len = g->chunk, .dst = par };
  unsigned pm = r5_parity_member (g, s);
  int r = 0;

  for (unsigned d = 0; d < g->data_members; d++)
    x.src[x.nsrc++] = data_buf (w, base + d * g->chunk);
  if ((int) pm != w->missing && (r = r5_plan_add_xor (w->p, &x)) < 0)
    return r;
  for (unsigned d = 0; d < g->data_members && r == 0; d++) {
    unsigned m = r5_data_member (g, s, d);

    if ((int) m != w->missing)
      r = add_chunk_io (w->p, R5_IO_WRITE, m, moff, g->chunk, x.src[d]);
  }
  if (r == 0 && (int) pm != w->missing)
    r = add_chunk_io (w->p, R5_IO_WRITE, pm, moff, g->chunk, par);
  return r;
}

int
r5_plan_reshape (struct r5_plan *p, const struct r5_reshape *r,
                 uint64_t line, int missing, const struct r5_around *around)
{
  struct window w = {
    .p = p, .r = r, .line = line, .len = r5_reshape_window_len (r, line),
    .missing = missing, .around = around,
  };
  uint64_t from_first = line / r->from.stripe_data;
  uint64_t from_last = line + w.len < r->from.capacity ?
    (line + w.len) / r->from.stripe_data : r->from.stripes;
  uint64_t to_first = line / r->to.stripe_data;
  uint64_t to_n = w.len / r->to.stripe_data;
  uint64_t from_n = from_last > from_first ? from_last - from_first : 0;
  int err = 0;

  if (line % r->to.stripe_data || w.len == 0 || missing < -1 ||
      missing >= (int) r->to.members ||
      (around != NULL && r->from.chunk % R5_AROUND_PAGE))
    return -EINVAL;
  /* A line inside a window (md's, recorded between two): the `from`
   * stripe it falls in is read whole -- it was not written yet, the
   * record rule saw to that -- and only what lies past the line moves.
   */
  w.base = from_first * r->from.stripe_data;
  w.to_parity = line + w.len - w.base;
  w.from_parity = w.to_parity + to_n * r->to.chunk;
  for (uint64_t i = 0; i < from_n && err == 0; i++)
    err = read_from_stripe (&w, from_first + i, (unsigned) i);
  for (uint64_t i = 0; i < to_n && err == 0; i++)
    err = write_to_stripe (&w, to_first + i, (unsigned) i);
  if (err == 0 && p->scratch < w.from_parity + from_n * r->from.chunk)
    p->scratch = w.from_parity + from_n * r->from.chunk;
  return err;
}
