/* tools/explain-why.c -- raid5ctl explain: why a segment got its strategy,
 * in words and numbers (see explain.h).
 *
 * The strategy comes from the plan (explain_analyse); this only says what
 * made it right: how many chunks each write strategy would read, or which
 * member is missing and what it held.  Costs are counted in chunk pieces
 * of the segment, as the planner counts them (plan.h: RCW reads D-k
 * untouched chunks, RMW reads k old chunks and the old parity; RCW wins
 * ties).
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>

#include "raid/layout.h"
#include "tools/explain.h"

const char explain_partial_trim[] =
  "trim covers only part of this stripe: nothing is done (trim is advisory, "
  "and punching data without its parity would break the stripe)";

/* Data index the missing member holds in this stripe, or -1. */
static int
lost_dd (const struct explain_stripe *s)
{
  if (s->t->missing < 0)
    return -1;
  return r5_data_index (&s->t->g, s->index, (unsigned) s->t->missing);
}

/* What each of RCW and RMW would read for a segment, in words. */
struct reads {
  unsigned d, k;              /* data chunks; chunks the segment writes */
  int lost;                   /* lost_dd() */
  char old[EXPLAIN_WHY / 3];  /* RMW's: the written chunks' old data */
  char un[EXPLAIN_WHY / 3];   /* RCW's: the untouched chunks */
};

static void
reads_of (const struct explain_stripe *s, const struct explain_seg *seg,
          struct reads *r)
{
  r->d = s->t->g.data_members;
  r->k = (unsigned) __builtin_popcountll (seg->mask);
  r->lost = lost_dd (s);
  explain_list_chunks (s, seg->mask, true, "old ", r->old, sizeof r->old);
  explain_list_chunks (s, seg->mask, false, "", r->un, sizeof r->un);
}

static void
why_rcw (const struct explain_stripe *s, const struct explain_seg *seg,
         char *out)
{
  struct reads r;
  int m = s->t->missing;
  char c[EXPLAIN_CELL];

  reads_of (s, seg, &r);
  if (r.lost >= 0 && ((seg->mask >> r.lost) & 1))
    snprintf (out, EXPLAIN_WHY, "member %d is missing and holds %s, which "
              "changes: its old data cannot be read for RMW, so parity is "
              "computed from the new data and the untouched %s; %s's new "
              "data lives only in parity until a rebuild", m,
              explain_cell (s, (unsigned) m, c), r.un, c);
  else
    snprintf (out, EXPLAIN_WHY, "reads %u untouched chunk%s (%s) instead of "
              "RMW's %u (%s + old P)%s", r.d - r.k, r.d - r.k == 1 ? "" : "s",
              r.un, r.k + 1, r.old,
              r.d - r.k == r.k + 1 ? "; a tie goes to RCW, as in md" : "");
}

static void
why_rmw (const struct explain_stripe *s, const struct explain_seg *seg,
         char *out)
{
  struct reads r;
  int m = s->t->missing;
  char c[EXPLAIN_CELL];

  reads_of (s, seg, &r);
  if (r.lost >= 0)
    snprintf (out, EXPLAIN_WHY, "member %d is missing and holds %s, which "
              "does not change: RCW would need to read it, so parity is "
              "updated from the old data and the old parity instead", m,
              explain_cell (s, (unsigned) m, c));
  else
    snprintf (out, EXPLAIN_WHY, "reads %u (%s + old P) instead of RCW's %u "
              "untouched chunks (%s)", r.k + 1, r.old, r.d - r.k, r.un);
}

static void
why_write (const struct explain_stripe *s, const struct explain_seg *seg,
           char *out)
{
  int m = s->t->missing;

  switch (seg->kind) {
  case R5_SEG_DATA_ONLY:
    snprintf (out, EXPLAIN_WHY, "member %d, which holds this stripe's "
              "parity, is missing: the data is written and parity skipped "
              "(there is nowhere to keep it)", m);
    break;
  case R5_SEG_FULL_WRITE:
    snprintf (out, EXPLAIN_WHY, "all %u data chunks change here, so parity "
              "is the XOR of the new data: nothing to read%s",
              s->t->g.data_members, lost_dd (s) >= 0
              ? "; the missing member's new data is not stored but lives "
                "on in parity" : "");
    break;
  case R5_SEG_RCW: why_rcw (s, seg, out); break;
  case R5_SEG_RMW: why_rmw (s, seg, out); break;
  default: snprintf (out, EXPLAIN_WHY, "?");
  }
}

/* The members a degraded read XORs: every one but the missing. */
static const char *
list_others (const struct explain_stripe *s, char *out, size_t len)
{
  char c[EXPLAIN_CELL];
  size_t n = 0;

  *out = '\0';
  for (unsigned m = 0; m < s->t->g.members && n < len; m++)
    if ((int) m != s->t->missing)
      n += (size_t) snprintf (out + n, len - n, "%s%s", n ? ", " : "",
                              explain_cell (s, m, c));
  return out;
}

static void
why_read (const struct explain_stripe *s, const struct explain_seg *seg,
          char *out)
{
  int m = s->t->missing;
  char c[EXPLAIN_CELL], others[EXPLAIN_WHY / 2];

  if (seg->kind == R5_SEG_DEGRADED_READ)
    snprintf (out, EXPLAIN_WHY, "member %d is missing and holds %s: its "
              "bytes are rebuilt as the XOR of the same bytes of the other "
              "%u members (%s)", m, explain_cell (s, (unsigned) m, c),
              s->t->g.members - 1, list_others (s, others, sizeof others));
  else if (m < 0)
    snprintf (out, EXPLAIN_WHY, "straight from the members into the "
              "client's buffer; parity is not involved");
  else if (lost_dd (s) < 0)
    snprintf (out, EXPLAIN_WHY, "straight from the members; member %d is "
              "missing, but holds only this stripe's parity", m);
  else
    snprintf (out, EXPLAIN_WHY, "straight from the members; member %d is "
              "missing, but none of its %s bytes is asked for here", m,
              explain_cell (s, (unsigned) m, c));
}

const char *
explain_why (const struct explain_stripe *s, const struct explain_seg *seg,
             char *out)
{
  if (seg->kind == R5_SEG_ZERO_STRIPE)
    snprintf (out, EXPLAIN_WHY, "the whole stripe becomes zero, and the "
              "parity of zeroes is zero: every member's chunk is zeroed; no "
              "reads, no XOR");
  else if (seg->kind == R5_SEG_TRIM_STRIPE)
    snprintf (out, EXPLAIN_WHY, "the whole stripe is trimmed: every "
              "member's chunk is punched (holes read as zeroes, and the "
              "parity of zeroes is zero)");
  else if (s->op == R5_OP_READ)
    why_read (s, seg, out);
  else
    why_write (s, seg, out);
  return out;
}
