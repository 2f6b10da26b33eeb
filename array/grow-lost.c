/* array/grow-lost.c -- a reshape over a row two members are out of
 * (grow.h: grow_lost_note, grow_lost_list, grow_lost_kept).
 *
 * md's reshape cannot move such a row (two members listing it in their
 * bad-block logs, or one listing it while another is out of service):
 * its stripe_head never completes, and the reshape thread hangs for good
 * (seen in the guest: "md1_reshape blocked for more than 120 seconds").
 * The row's pages that cannot be computed are lost already -- no read
 * returns them, and md fails every write to the row (raid5.c
 * handle_failed_stripe) -- but the rest of the array must not stay
 * mid-grow for their sake.  So the window moves them as zeroes
 * (raid/reshape.h: r5_around.lost), and each lost data page is listed
 * in the new shape, in its new member's log and in the log of its new
 * row's parity member: two members out of that row, so that a read of
 * the page fails as before, here and under md (a read computing it from
 * the row would return the zeroes as data).
 *
 * Order: the pages are listed (durably: log, then superblocks) after the
 * window's reads and before any of its writes, and its writes clear no
 * listing of theirs (bb_window_written), so that no crash leaves the
 * zeroes readable: a window moved again reads its old rows again (still
 * listed: its writes land below the recorded line, on old bytes already
 * moved).  Not in a critical window, whose backup a start after a crash
 * writes again in the new shape without telling the listings kept here
 * from the old shape's; nor with a member out of service, whose page of
 * each new row the window cannot write (it would be lost as well): there
 * the reshape stops (grow-move.c plan_window).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "array/badblocks.h"
#include "array/grow.h"
#include "array/object.h"
#include "array/state.h"
#include "raid/layout.h"

#define PAGE 4096u

uint64_t
grow_lost_note (void *ctx, uint64_t stripe, uint64_t off, uint64_t len)
{
  struct bb_around *c = ctx;
  struct grow *g = &c->a->grow;

  (void) len;                 /* a page: R5_AROUND_PAGE */
  if (g->nlost == g->lost_cap) {
    size_t cap = g->lost_cap ? 2 * g->lost_cap : 16;
    struct grow_lost_row *n = realloc (g->lost, cap * sizeof *n);

    if (n == NULL) {
      c->no_memory = true;    /* the window stops: bb_window_lost */
      return 0;
    }
    g->lost = n;
    g->lost_cap = cap;
  }
  g->lost[g->nlost++] = (struct grow_lost_row) { stripe, off, c->two };
  return c->two;
}

/* Member m's page at off of the new shape listed, and kept so
 * (grow_lost_kept).  0 or -errno (err).
 */
static int
keep_listed (struct array *a, unsigned m, uint64_t off, struct array_err *err)
{
  struct grow *g = &a->grow;
  int e;

  if (g->nkept == g->kept_cap) {
    size_t cap = g->kept_cap ? 2 * g->kept_cap : 16;
    struct grow_kept *n = realloc (g->kept, cap * sizeof *n);

    if (n == NULL) {
      array_set_err (err, "out of memory for the reshape's lost pages");
      return -ENOMEM;
    }
    g->kept = n;
    g->kept_cap = cap;
  }
  if ((e = array_bb_record (a, m, off, PAGE, err)) < 0)
    return e;
  g->kept[g->nkept++] = (struct grow_kept) { m, off };
  return 0;
}

/* The data page at array byte at, lost in its old row (row: where, whose),
 * listed at its new place and on its new row's parity.  0 or -errno.
 */
static int
list_page (struct array *a, uint64_t at, const struct grow_lost_row *row,
           struct array_err *err)
{
  const struct r5_geom *from = &a->grow.r.from, *to = &a->grow.r.to;
  struct r5_loc loc;
  char who[64];
  uint64_t off;
  int e;

  if ((e = r5_map (to, at, &loc)) < 0)
    return e;
  off = r5_stripe_member_off (to, loc.stripe) + loc.chunk_off;
  /* Counted once: a window moved again lists the page again. */
  if (array_member_bad (a, loc.member, off, PAGE, NULL) == MD_BB_NONE)
    a->grow.lost_pages++;
  if ((e = keep_listed (a, loc.member, off, err)) < 0 ||
      (e = keep_listed (a, loc.parity, off, err)) < 0)
    return e;
  array_log (a, ARRAY_LOG_ERROR, "reshape: array bytes %" PRIu64 "+4096 "
             "lost: their old row (stripe %" PRIu64 ", member offset %"
             PRIu64 ") has %s out (md bad-block logs, or out of service), "
             "and RAID-5 rebuilds only one; moved as zeroes, listed bad on "
             "members %u and %u (its new row's parity) so that they read "
             "as lost", at, row->stripe,
             r5_stripe_member_off (from, row->stripe) + row->off,
             bb_members_named (row->out, who, sizeof who), loc.member,
             loc.parity);
  return 0;
}

int
grow_lost_list (struct array *a, uint64_t line, uint64_t len,
                 struct array_err *err)
{
  const struct grow *g = &a->grow;
  uint64_t listed = g->lost_pages;

  for (size_t i = 0; i < g->nlost; i++) {
    const struct grow_lost_row *row = &g->lost[i];
    uint64_t at;
    int e;

    for (unsigned m = 0; m < g->r.from.members; m++)
      if ((row->out >> m & 1) &&
          bb_array_bytes (&g->r.from, row->stripe, m, row->off, &at) &&
          at >= line && at < line + len &&
          (e = list_page (a, at, row, err)) < 0)
        return e;
  }
  if (g->lost_pages > listed)
    array_test_crash ("grow-lost-listed");
  return 0;
}

bool
grow_lost_kept (const struct array *a, unsigned m, uint64_t off)
{
  const struct grow *g = &a->grow;

  for (size_t i = 0; i < g->nkept; i++)
    if (g->kept[i].member == m && g->kept[i].off == off)
      return true;
  return false;
}
