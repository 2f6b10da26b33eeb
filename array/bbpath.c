/* array/bbpath.c -- requests and the members' bad-block tables
 * (badblocks.h): the write path's "bad-block log" row, the recording of
 * a write that fails on part of a member, and the rewrite of listed bytes
 * after a request met them.
 *
 * md's rules (raid5.c analyse_stripe, handle_stripe; md.c
 * rdev_set_badblocks): a device whose table lists bytes of a stripe is
 * treated as failed for that stripe alone; a stripe with more failed
 * devices than parity fails its requests (handle_failed_stripe), except
 * a read of a data chunk whose device is not bad there, which md serves
 * straight from it (raid5_read_one_chunk).  A write that fails is
 * recorded (R5_WriteError -> rdev_set_badblocks) and the device marked
 * WriteErrorSeen; md_error fails it only when the table cannot take the
 * entry.  A device that never failed a write has its listed blocks of a
 * stripe it handles treated as read errors to correct (R5_ReadError):
 * rewritten from the others, then cleared when they read back.
 *
 * Granularity: a batch whose first stripe lists bytes is cut into 4 KiB
 * rows of one chunk with the same bad members (md's stripe_head is a
 * page): a member is missing only in the rows it lists, so the only
 * bytes a write leaves stale on it are listed ones, which are read from
 * the rest of their row until rewritten.  (A whole stripe planned with
 * the member missing left its unlisted pages stale once the listed ones
 * were rewritten and cleared.)  Why it is safe to plan with the
 * tables unlocked: a batch notes their version when it is planned and is
 * planned again if they changed before its stripes were locked (holds);
 * a table changes only under the stripe locks of the bytes it names
 * (a failed write's, a rewrite's), or for bytes nobody reads (a new
 * member's).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "array/badblocks.h"
#include "array/grow.h"
#include "array/object.h"
#include "array/requests.h"
#include "array/writepath.h"
#include "raid/layout.h"
#include "raid/plan.h"

#define PAGE 4096u

/* The members (a mask) of shape g whose tables list part of member bytes
 * [off, off + len) of a row, but for skip.
 */
static uint64_t
shape_listed_in (const struct array *a, const struct r5_geom *g,
                 uint64_t off, uint64_t len, int skip)
{
  uint64_t mask = 0;

  for (unsigned m = 0; m < g->members; m++)
    if ((int) m != skip && array_member_bad (a, m, off, len, NULL))
      mask |= UINT64_C (1) << m;
  return mask;
}

static uint64_t
listed_in (const struct array *a, uint64_t off, uint64_t len, int skip)
{
  return shape_listed_in (a, &a->geom, off, len, skip);
}

static uint64_t
listed_in_stripe (const struct array *a, const struct r5_geom *g,
                  uint64_t stripe, int skip)
{
  return shape_listed_in (a, g, r5_stripe_member_off (g, stripe), g->chunk,
                          skip);
}

/* Two or more bad in the 4 KiB rows of the batch's first stripe (the
 * health's missing member counted): pages of one chunk with the same bad
 * members make one batch; a read of a chunk not bad there is read
 * straight; anything else is lost.  In the batch's shape (b->geom: the
 * old one ahead of a reshape's line).
 */
static int
shape_rows (struct array *a, struct wp_batch *b, struct array_err *err)
{
  const struct r5_geom *g = b->geom;
  struct r5_range *rg = b->range;
  struct r5_loc loc;
  uint64_t out = rg->missing >= 0 ? UINT64_C (1) << rg->missing : 0;
  uint64_t page, end, row, bad;
  char who[64];

  if (r5_map (g, rg->off, &loc) < 0)
    return -EINVAL;           /* cannot happen: the request was checked */
  page = loc.chunk_off / PAGE * PAGE;
  row = r5_stripe_member_off (g, loc.stripe);
  bad = shape_listed_in (a, g, row + page, PAGE, rg->missing) | out;
  end = page + PAGE;
  while (end < g->chunk && end - loc.chunk_off < rg->len &&
         (shape_listed_in (a, g, row + end, PAGE, rg->missing) | out) == bad)
    end += PAGE;
  if (rg->len > end - loc.chunk_off)
    rg->len = end - loc.chunk_off;
  if (__builtin_popcountll (bad) <= 1) {
    if (bad != out) {
      rg->missing = __builtin_ctzll (bad);
      b->bb_member = rg->missing;
    }
    return 0;
  }
  if (rg->op == R5_OP_READ && !(bad >> loc.member & 1)) {
    if (rg->missing < 0)
      rg->missing = __builtin_ctzll (bad);
    return 0;
  }
  a->count.bb_lost++;
  array_set_err (err, "array bytes %" PRIu64 "+%" PRIu64 " %s: their row "
                 "(member offset %" PRIu64 ") is bad on %s (md bad-block "
                 "logs%s), and RAID-5 %s", rg->off, rg->len,
                 rg->op == R5_OP_READ ? "are lost" : "cannot be written",
                 row + loc.chunk_off, bb_members_named (bad, who, sizeof who),
                 out ? ", or out of service" : "",
                 rg->op == R5_OP_READ ? "rebuilds only one"
                 : "keeps no parity with two out (md fails the write too)");
  array_log (a, ARRAY_LOG_ERROR, "%s", err->msg);
  return -EIO;
}

int
bb_shape (struct array *a, struct wp_batch *b, struct array_err *err)
{
  struct r5_range *rg = b->range;
  const uint64_t sd = b->geom->stripe_data;
  uint64_t first = rg->off / sd, last = (rg->off + rg->len - 1) / sd;
  uint64_t bad;

  if (a->bb.listed == 0)
    return 0;
  bad = listed_in_stripe (a, b->geom, first, rg->missing);
  if (bad == 0) {
    for (uint64_t s = first + 1; s <= last; s++)
      if (listed_in_stripe (a, b->geom, s, rg->missing) != 0) {
        rg->len = s * sd - rg->off;
        break;
      }
    return 0;
  }
  return shape_rows (a, b, err);
}

bool
bb_holds (const struct array *a, const struct wp_batch *b)
{
  return b->bb_version == a->bb.version;
}

/* --- a write that failed on part of a member ---------------------- */

/* The lowest member byte of array data: in either shape while a reshape
 * runs (md's rdev_set_badblocks counts from data_offset or
 * new_data_offset).
 */
static uint64_t
data_start (const struct array *a)
{
  uint64_t d = a->geom.data_offset;

  if (a->grow.active && a->grow.r.from.data_offset < d)
    d = a->grow.r.from.data_offset;
  return d;
}

/* Can op's failure be recorded rather than fail its member (a write; a
 * read when reads)?
 */
static bool
recordable (const struct array *a, const struct io_op *op, bool reads)
{
  return (op->kind == IO_WRITE || op->kind == IO_ZERO ||
          (reads && op->kind == IO_READ)) && io_op_range_error (op) &&
    op->member < a->geom.members &&
    op->off >= data_start (a) && array_bb_has_log (a, op->member);
}

/* op run again a page at a time (md's bios are pages: it knows which
 * failed); each page that fails again recorded, and a member that failed
 * a write so marked.  0, or -errno: a record could not be made (err).
 */
static int
record_pages (struct array *a, const struct io_op *op, struct array_err *err)
{
  uint64_t end = op->off + op->len;
  int e = 0;

  for (uint64_t off = op->off; e == 0 && off < end;) {
    uint64_t next = (off / PAGE + 1) * PAGE;
    struct io_op piece = *op;

    piece.off = off;
    piece.len = (next < end ? next : end) - off;
    piece.result = 0;
    if (op->buf != NULL)
      piece.buf = (char *) op->buf + (off - op->off);
    if (io_run (a->members, &piece, 1,
                op->kind == IO_READ ? 0 : IO_FUA | IO_FIXED_SIZE) < 0 &&
        (e = array_bb_record (a, op->member, piece.off, piece.len,
                              err)) == 0 && op->kind != IO_READ)
      a->bb.write_error[op->member] = true;
    off += piece.len;
  }
  return e;
}

/* Every failed op of ops[0..n) recorded (record_pages), if each can be
 * (recordable).
 */
static bool
record_failed (struct array *a, const struct io_op *ops, size_t n,
               bool reads, struct array_err *err)
{
  bool any = false;

  for (size_t i = 0; i < n; i++)
    if (ops[i].result < 0 && ops[i].result != -ECANCELED) {
      if (!recordable (a, &ops[i], reads))
        return false;
      any = true;
    }
  for (size_t i = 0; any && i < n; i++)
    if (ops[i].result < 0 && ops[i].result != -ECANCELED &&
        record_pages (a, &ops[i], err) < 0) {
      array_log (a, ARRAY_LOG_ERROR, "%s", err->msg);
      return false;
    }
  return any;
}

bool
array_bb_write_failed (struct array *a, const struct io_op *ops, size_t n,
                       struct array_err *err)
{
  return record_failed (a, ops, n, false, err);
}

bool
bb_reads_failed (struct array *a, const struct io_op *ops, size_t n,
                 unsigned slot, struct array_err *err)
{
  for (size_t i = 0; i < n; i++)
    if (ops[i].result < 0 && ops[i].result != -ECANCELED &&
        ops[i].member == slot)
      return false;
  return record_failed (a, ops, n, true, err);
}

uint64_t
bb_row_listed (const struct array *a, const struct r5_geom *g,
               uint64_t stripe, uint64_t chunk_off, uint64_t len, int skip)
{
  return a->bb.listed == 0 ? 0
    : shape_listed_in (a, g, r5_stripe_member_off (g, stripe) + chunk_off,
                       len, skip);
}

bool
bb_array_bytes (const struct r5_geom *g, uint64_t stripe, unsigned m,
                uint64_t co, uint64_t *at)
{
  int dd = r5_data_index (g, stripe, m);

  if (dd < 0)
    return false;
  *at = r5_stripe_array_off (g, stripe) + (uint64_t) dd * g->chunk + co;
  return true;
}

int
bb_rebuild_lost (struct array *a, unsigned slot, uint64_t stripe,
                 uint64_t chunk_off, uint64_t len, struct array_err *err)
{
  const struct r5_geom *g = &a->geom;
  uint64_t row = r5_stripe_member_off (g, stripe);

  for (uint64_t co = chunk_off / PAGE * PAGE; co < chunk_off + len;
       co += PAGE) {
    uint64_t bad = listed_in (a, row + co, PAGE, (int) slot), at;
    char lost[160];
    size_t k = 0;
    int e;

    if (bad == 0)
      continue;
    lost[0] = '\0';
    for (unsigned m = 0; m < g->members; m++)
      if ((m == slot || (bad >> m & 1)) &&
          bb_array_bytes (g, stripe, m, co, &at) && k < sizeof lost)
        k += (size_t) snprintf (lost + k, sizeof lost - k, "%s%" PRIu64
                                "+4096", k ? ", " : "", at);
    if ((e = array_bb_record (a, slot, row + co, PAGE, err)) < 0)
      return e;
    array_log (a, ARRAY_LOG_ERROR, "rebuild of slot %u: member bytes %"
               PRIu64 "+4096 cannot be computed (member %u lists them bad "
               "in its md bad-block log): recorded bad on slot %u; array "
               "bytes lost: %s", slot, row + co,
               (unsigned) __builtin_ctzll (bad), slot,
               k ? lost : "none (parity only)");
  }
  return 0;
}

const char *
bb_members_named (uint64_t mask, char *buf, size_t n)
{
  int left = __builtin_popcountll (mask);
  size_t k = (size_t) snprintf (buf, n, "member%s", left > 1 ? "s" : "");

  for (unsigned m = 0; m < 64 && left > 0 && k < n; m++)
    if (mask >> m & 1)
      k += (size_t) snprintf (buf + k, n - k, " %u%s", m,
                              --left > 1 ? "," : left == 1 ? " and" : "");
  return buf;
}

/* --- a reshape's window -------------------------------------------- */

int
bb_reshape_around (void *ctx, uint64_t stripe, uint64_t off, uint64_t len)
{
  struct bb_around *c = ctx;
  uint64_t listed = bb_row_listed (c->a, &c->a->grow.r.from, stripe, off, len,
                                   -1);
  uint64_t out = c->out >= 0 ? UINT64_C (1) << c->out : 0;

  if (listed == 0)
    return -1;
  if (__builtin_popcountll (listed | out) == 1) {
    c->named |= listed;
    return __builtin_ctzll (listed);
  }
  c->stripe = stripe;
  c->off = off;
  c->two = listed | out;
  return R5_AROUND_TWO;
}

/* The array bytes of the pages the members of mask hold in row co of
 * stripe (old shape g), for a log line: "A+4096, B+4096", or "none
 * (parity only)".
 */
static const char *
pages_named (const struct r5_geom *g, uint64_t stripe, uint64_t co,
             uint64_t mask, char *buf, size_t n)
{
  size_t k = 0;
  uint64_t at;

  buf[0] = '\0';
  for (unsigned m = 0; m < g->members && k < n; m++)
    if ((mask >> m & 1) && bb_array_bytes (g, stripe, m, co, &at))
      k += (size_t) snprintf (buf + k, n - k, "%s%" PRIu64 "+4096",
                              k ? ", " : "", at);
  return k ? buf : "none (parity only)";
}

int
bb_window_lost (struct array *a, uint64_t line, const struct bb_around *c,
                struct array_err *err)
{
  const struct r5_geom *g = &a->grow.r.from;
  char who[64], lost[96];

  if (c->no_memory) {
    array_set_err (err, "the reshape cannot move the window at array byte %"
                   PRIu64 ": out of memory for its lost pages", line);
    return -ENOMEM;
  }
  if (c->two == 0) {          /* not noted by bb_reshape_around */
    array_set_err (err, "the reshape cannot move the window at array byte %"
                   PRIu64 ": a row it reads has two members out", line);
    array_log (a, ARRAY_LOG_ERROR, "%s", err->msg);
    return -EIO;
  }
  array_set_err (err, "the reshape cannot move the window at array byte %"
                 PRIu64 ": a row it reads (old stripe %" PRIu64 ", member "
                 "offset %" PRIu64 ") cannot be computed: %s are out there "
                 "(md bad-block logs%s), and RAID-5 rebuilds only one; "
                 "array bytes lost: %s%s", line, c->stripe,
                 r5_stripe_member_off (g, c->stripe) + c->off,
                 bb_members_named (c->two, who, sizeof who),
                 c->out >= 0 ? ", or out of service" : "",
                 pages_named (g, c->stripe, c->off, c->two, lost, sizeof lost),
                 c->critical ? "; the window is in the grow's critical "
                 "section, whose backup cannot keep them listed as lost"
                 : c->degraded ? "; with a member out of service the "
                 "window cannot move them (that member's page of their new "
                 "rows would be lost too)" : "");
  array_log (a, ARRAY_LOG_ERROR, "%s", err->msg);
  return -EIO;
}

/* Member m's listed bytes [off, off + len), written well, cleared -- but
 * the pages a reshape keeps listed over lost ones (grow_lost_kept).
 */
static void
clear_written (struct array *a, unsigned m, uint64_t off, uint64_t len)
{
  uint64_t from = off, end = off + len;

  for (uint64_t at = off; at <= end; at += PAGE) {
    bool kept = at < end && grow_lost_kept (a, m, at);
    struct array_err err;

    if ((at == end || kept) && at > from &&
        array_bb_clear (a, m, from, at - from, &err) < 0)
      array_log (a, ARRAY_LOG_ERROR, "%s", err.msg);
    if (kept)
      from = at + PAGE;
  }
}

void
bb_window_written (struct array *a, const struct r5_plan *p)
{
  for (size_t i = 0; a->bb.listed > 0 && i < p->nios; i++) {
    const struct r5_io *io = &p->ios[i];

    if (io->kind == R5_IO_WRITE && !a->bb.write_error[io->member] &&
        array_member_bad (a, io->member, io->member_off, io->len, NULL))
      clear_written (a, io->member, io->member_off, io->len);
  }
}

void
bb_written_lost (struct array *a, const struct io_op *ops, size_t n)
{
  const struct r5_geom *g = &a->geom;
  int out = health_out (&a->health);

  for (size_t i = 0; i < n; i++) {
    const struct io_op *op = &ops[i];

    if (op->result >= 0 || op->result == -ECANCELED || op->off < g->data_offset)
      continue;
    for (uint64_t page = op->off / PAGE * PAGE; page < op->off + op->len;
         page += PAGE) {
      uint64_t stripe = (page - g->data_offset) / g->chunk;
      uint64_t co = (page - g->data_offset) % g->chunk;
      uint64_t other = listed_in (a, page, PAGE, (int) op->member) |
        (out >= 0 && out != (int) op->member ? UINT64_C (1) << out : 0);

      if (other == 0 || !array_member_bad (a, op->member, page, PAGE, NULL))
        continue;
      array_log (a, ARRAY_LOG_ERROR, "reshape: member %u could not write "
                 "member bytes %" PRIu64 "+4096 (recorded bad), and member "
                 "%u is out there too: that 4 KiB row of the array's stripe "
                 "at array byte %" PRIu64 " (chunk offset %" PRIu64 ") is "
                 "lost", op->member, page, (unsigned) __builtin_ctzll (other),
                 r5_stripe_array_off (g, stripe), co);
    }
  }
}

/* --- listed bytes rewritten ---------------------------------------- */

/* Member m's listed page at member offset page put right
 * (array_rewrite_page, its stripe locked by the caller or not: locked).
 * A failure of m's own write or read back is logged the first time and m
 * marked as having failed a write (md's WriteErrorSeen: its listed
 * blocks are not written again); another member's failed read of the
 * row, a computed page that fails m's checksum, or a full table is
 * logged and m left as it is.  array_rewrite_page's result.
 */
static int
rewrite_listed (struct array *a, unsigned m, uint64_t page, bool locked)
{
  struct io_op failed;
  int e = array_rewrite_page (a, m, page, locked, &failed);

  if (e == 0 || e == -ENODEV || e == -ENODATA || e == -ENOSPC)
    return e;
  if (e == -EILSEQ || e == -ENOMEM || failed.member != m) {
    array_log (a, ARRAY_LOG_ERROR, "member %u (%s): its listed bad block "
               "at member offset %" PRIu64 " not rewritten: %s", m,
               array_member_path (a, m), page, e == -EILSEQ
               ? "what the rest of its row computes fails its checksum"
               : e == -ENOMEM ? "out of memory"
               : "another member failed the read of its row");
    return e;
  }
  if (!a->bb.write_error[m])
    array_log (a, ARRAY_LOG_ERROR, "member %u (%s): its listed bad block "
               "at member offset %" PRIu64 " cannot be rewritten (%s): it "
               "stays listed, and no more are tried", m,
               array_member_path (a, m), page, strerror (-e));
  a->bb.write_error[m] = true;
  return e;
}

void
bb_rewrite_met (struct array *a, const struct wp_batch *b)
{
  const struct r5_geom *g = &a->geom;
  unsigned m = (unsigned) b->bb_member;
  uint64_t stripe = b->range->off / g->stripe_data;
  uint64_t row = r5_stripe_member_off (g, stripe);
  bool mirror = a->replace.slot == (int) m && b->range->op != R5_OP_READ;

  /* Read-only: listed bytes are read around, never rewritten.  Ahead
   * of a reshape's line (the old shape) the reshape rewrites them when it
   * moves them (grow.c), and array_rewrite_page computes in the new.
   */
  if (a->read_only || health_out (&a->health) >= 0 || b->geom != &a->geom ||
      (a->bb.write_error[m] && !mirror))
    return;
  for (uint64_t page = row; page < row + g->chunk; page += PAGE) {
    int e;

    if (!array_member_bad (a, m, page, PAGE, NULL) ||
        listed_in (a, page, PAGE, (int) m) != 0)
      continue;
    /* A replace's mirror has them rewritten whatever the member does. */
    e = rewrite_listed (a, m, page, false);
    if (e == -ENODEV || (e < 0 && e != -ENODATA && e != -ENOSPC &&
                         (e == -ENOMEM || !mirror)))
      return;
  }
}

const char *
bb_scrub_unrewritten (const struct array *a, uint64_t bad)
{
  if (bad & (bad - 1))
    return "s; a row two members list cannot be computed";
  if (a->read_only)
    return "; not rewritten: the array is read-only";
  if (health_out (&a->health) >= 0)
    return "; not rewritten: a member is out of service";
  if (a->bb.write_error[__builtin_ctzll (bad)])
    return "; not rewritten: the member failed a write";
  return "; not rewritten: the log above says why";
}

uint64_t
bb_scrub_rewrite (struct array *a, const char *job, uint64_t stripe,
                  uint64_t chunk_off, uint64_t len)
{
  const struct r5_geom *g = &a->geom;
  uint64_t row = r5_stripe_member_off (g, stripe), sectors = 0;

  if (a->read_only || health_out (&a->health) >= 0)
    return 0;
  for (uint64_t co = chunk_off / PAGE * PAGE; co < chunk_off + len;
       co += PAGE) {
    uint64_t bad = listed_in (a, row + co, PAGE, -1);
    unsigned m;
    int e;

    /* Two listing it: md's handle_failed_sync leaves the row alone. */
    if (bad == 0 || (bad & (bad - 1)) != 0)
      continue;
    m = (unsigned) __builtin_ctzll (bad);
    if (a->bb.write_error[m])
      continue;
    if ((e = rewrite_listed (a, m, row + co, true)) == 0) {
      sectors += PAGE / 512;
      array_log (a, ARRAY_LOG_NOTICE, "%s: member %u (%s): its listed bad "
                 "block at member offset %" PRIu64 " rewritten from the "
                 "other members, read back and cleared", job, m,
                 array_member_path (a, m),
                 row + co);
    }
    else if (e == -ENODEV)
      break;
  }
  return sectors;
}
