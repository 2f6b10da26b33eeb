/* array/status.c -- the array's state for people (md's /proc/mdstat
 * style) and for programs (JSON, status-json.c; status-int.h between
 * them).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "array/jobs.h"
#include "array/object.h"
#include "array/state.h"
#include "array/status-int.h"
#include "raid/layout.h"

const char *
status_member_state_name (const struct array *a, unsigned slot)
{
  static const char *const names[] = {
    [MEMBER_ACTIVE] = "active", [MEMBER_MISSING] = "missing",
    [MEMBER_FAULTY] = "faulty", [MEMBER_REBUILDING] = "rebuilding",
  };
  enum member_state st = health_state (&a->health, slot);

  if (st == MEMBER_REBUILDING && a->health.bitmap_rebuild)
    return "re-adding";
  return names[st];
}

const char *
status_array_state (const struct array *a)
{
  if (health_failed (&a->health))
    return "failed";
  if (health_out (&a->health) >= 0)
    return "degraded";
  return "healthy";
}

/* What the superblocks say: writes may be in flight (md's "active"), a
 * resync is due (after a crash, until it is done), or clean.
 */
const char *
status_metadata_state (const struct array *a)
{
  if (!a->meta.enabled)
    return "raw";
  if (a->meta.dirty)
    return "active";
  return meta_resync_due (a) ? "needs-resync" : "clean";
}

/* Sectors of slot's read errors corrected: md's count in its superblock
 * (cnt_corrected_read, kept across starts), or since open on raw
 * members.
 */
uint64_t
status_corrected (const struct array *a, unsigned slot)
{
  return a->meta.enabled ? a->meta.live.slot[slot].corrected_read
                         : a->count.corrected[slot];
}

/* md's [UU_] line: U in service, _ out (a rebuilding member is out). */
void
status_health (const struct array *a, char *buf)
{
  health_ud (&a->health, a->geom.members, buf);
}

unsigned
status_in_service (const struct array *a)
{
  return health_in_service (&a->health, a->geom.members);
}

/* ms until the next try of c (0: due). */
uint64_t
status_next_try_ms (const struct comeback *c)
{
  uint64_t now = array_now_ns ();

  return c->next_ns > now ? (c->next_ns - now) / 1000000 : 0;
}

/* Does a faulty member of this kind come back by itself? */
bool
status_returns_by_itself (const struct array *a, unsigned slot,
                          enum fault_kind k)
{
  return k == FAULT_LINK_LOST && comeback_applies (a, slot) &&
    array_readd_possible (a);
}

/* Why the faulty member is out and whether it comes back by itself
 * (fail.c, comeback.c), on a line under its slot.  Refused when it
 * answered, print_comeback says why instead.
 */
static void
print_fault (struct array *a, const struct comeback *c, unsigned slot,
             FILE *out)
{
  char why[ARRAY_ERR_LEN];
  enum fault_kind k = fault_of (a, slot, why);
  bool readd = array_readd_possible (a);
  const char *fate = !status_returns_by_itself (a, slot, k)
    ? readd ? "; stays out until re-added or rebuilt" : "; stays out until "
      "rebuilt"
    : c->state == COMEBACK_REFUSED && c->slot == (int) slot ? ""
    : "; re-added by itself when it answers";

  if (k == FAULT_IO_ERROR)
    fprintf (out, "              I/O error: %s%s\n", why, fate);
  else if (k == FAULT_LINK_LOST)
    fprintf (out, "              link lost: %s%s\n", why, fate);
  else if (k == FAULT_BY_HAND)
    fprintf (out, "              failed by hand: not tried again until "
             "%s\n", readd ? "re-added or rebuilt" : "rebuilt");
}

/* The faulty member's way back (comeback.c), on a line under its slot;
 * failed by hand, print_fault says it.
 */
static void
print_comeback (const struct comeback *c, unsigned slot, FILE *out)
{
  if (c->state == COMEBACK_NONE || c->state == COMEBACK_READDED ||
      c->state == COMEBACK_HELD || c->slot != (int) slot)
    return;                   /* re-added: the slot's state says it */
  if (c->state == COMEBACK_REFUSED)
    fprintf (out, "              answers again, not re-added (needs "
             "rebuild): %s\n", c->why);
  else if (c->tries == 0)
    fprintf (out, "              gone: trying to reach it again in %" PRIu64
             " ms\n", status_next_try_ms (c));
  else
    fprintf (out, "              gone: %u tries, the next in %" PRIu64
             " ms; last: %s\n", c->tries, status_next_try_ms (c), c->why);
}

/* Members assembly left out of the out slot, and how to bring one back. */
static void
print_left_out (struct array *a, FILE *out)
{
  for (unsigned s = 0; s < a->geom.members; s++)
    if (a->left_out[s])
      fprintf (out, "      left out of slot %u: %s (missed writes; %s)\n",
               s, a->left_out[s], a->left_re_addable[s]
               ? "re-add it: the bitmap covers what it missed"
               : "rebuild it");
}

/* md's progress line (status_resync): done/total in KiB of each member. */
static void
progress_line (const struct array_job_status *j, FILE *out)
{
  uint64_t done_k = j->done * j->stripe_bytes / 1024;
  uint64_t total_k = j->total * j->stripe_bytes / 1024;
  uint64_t permille = (done_k >> 10) * 1000 / ((total_k >> 10) + 1);
  unsigned x = (unsigned) (permille / 50);
  char bar[32];
  unsigned i = 0;

  bar[i++] = '[';
  for (unsigned k = 0; k < x && k < 20; k++)
    bar[i++] = '=';
  bar[i++] = '>';
  for (unsigned k = x; k < 20; k++)
    bar[i++] = '.';
  bar[i++] = ']';
  bar[i] = '\0';
  fprintf (out, "      %s  %s = %3u.%u%% (%" PRIu64 "/%" PRIu64 ")",
           bar, r5_job_name (j->kind), (unsigned) (permille / 10),
           (unsigned) (permille % 10), done_k, total_k);
  if (j->speed_kib > 0)
    fprintf (out, " finish=%.1fmin speed=%" PRIu64 "K/sec",
             (double) (total_k - done_k) / (double) j->speed_kib / 60.0,
             j->speed_kib);
  fprintf (out, "%s\n", j->paused ? " (paused)" : "");
}

/* mdadm's name for what makes parity right after a crash; NULL for raw
 * members (nothing is recorded, nothing is resynced).
 */
const char *
status_policy_name (const struct array *a)
{
  if (a->ppl.on)
    return "ppl";
  if (!a->meta.enabled)
    return NULL;
  return a->meta.has_bitmap ? "bitmap" : "resync";
}

static void
print_policy (const struct array *a, FILE *out)
{
  const char *p = status_policy_name (a);

  fprintf (out, "      consistency policy: %s", p ? p : "none (raw members)");
  if (a->ppl.on)
    fprintf (out, " (partial parity log: %" PRIu64 " log writes, %" PRIu64
             " entries; at start %u entries recovered, %u not usable)",
             a->ppl.units, a->ppl.entries, a->ppl.recovered,
             a->ppl.refused);
  fputc ('\n', out);
  if (a->integrity.on)
    fprintf (out, "      integrity record: %s (%" PRIu64 " units verified, %"
             PRIu64 " failed their checksum, %" PRIu64 " healed, %" PRIu64
             " not healable)\n", a->integrity.path, a->integrity.verified,
             a->integrity.failures, a->integrity.healed,
             a->integrity.unhealable);
  if (a->integrity.on && a->integrity.stale_units)
    fprintf (out, "      at start: %" PRIu64 " units of a member taken one "
             "event behind failed the record: stale (see the log)\n",
             a->integrity.stale_units);
  if (a->integrity.on &&
      a->integrity.unread_regions + a->integrity.unread_units)
    fprintf (out, "      at start: read errors left %" PRIu64 " regions of "
             "4 MiB unverified and %" PRIu64 " units of a member one event "
             "behind unchecked (see the log)\n", a->integrity.unread_regions,
             a->integrity.unread_units);
}

/* A grow under way: the shapes, the line, the sizes (md serves the old
 * one until the reshape ends; NBD clients read the size when they
 * connect).
 */
static void
print_grow (const struct array *a, FILE *out)
{
  const struct grow *g = &a->grow;

  if (!g->active)
    return;
  fprintf (out, "      growing from %u to %u members: new shape below array "
           "byte %" PRIu64 " (%" PRIu64 " recorded); %" PRIu64 " KiB when "
           "the reshape ends (clients see it when they connect again)\n",
           g->r.from.members, g->r.to.members, grow_line (a),
           (uint64_t) g->safe, g->r.to.capacity / 1024);
  if (g->lost_pages)
    fprintf (out, "      the reshape moved %" PRIu64 " pages of 4 KiB as "
             "lost (their old rows had two members out; the log names "
             "them): they read as lost, listed bad on two members\n",
             g->lost_pages);
}

/* Slot's md bad-block log, if it lists anything (badblocks.h). */
static void
print_bad_blocks (struct array *a, unsigned s, FILE *out)
{
  unsigned ranges;
  uint64_t sectors;

  array_bb_count (a, s, &ranges, &sectors);
  if (ranges == 0)
    return;
  fprintf (out, "              bad blocks: %" PRIu64 " sectors in %u "
           "range%s of its md bad-block log (served from the other "
           "members; raid5ctl examine --badblocks lists them)%s\n", sectors,
           ranges, ranges == 1 ? "" : "s",
           a->bb.write_error[s] ? "; it failed a write since the start" : "");
}

/* One slot's lines: its member, how it fares, what is done to it. */
static void
print_member (struct array *a, const struct comeback *c, unsigned s,
              FILE *out)
{
  struct io_member_figures f;
  const char *p = a->members[s].path;

  io_member_get_stats (&a->members[s], &f);
  fprintf (out, "      slot %u: %s (%s)\n", s, p ? p : "missing",
           status_member_state_name (a, s));
  if (f.transport)
    fprintf (out, "              %s, %" PRIu64 " us a batch, %" PRIu64
             " errors, %" PRIu64 " reconnects\n", f.transport,
             f.latency_us, f.errors, f.reconnects);
  if (status_corrected (a, s) > 0)
    fprintf (out, "              read errors corrected: %" PRIu64
             " sectors (rewritten from the other members)\n",
             status_corrected (a, s));
  print_bad_blocks (a, s, out);
  if (a->replace.slot == (int) s &&
      (p = a->members[ARRAY_REPLACEMENT].path) != NULL)
    fprintf (out, "              being replaced by %s (R): it takes the "
             "slot when the copy is done\n", p);
  print_fault (a, c, s, out);
  print_comeback (c, s, out);
  if (a->one_behind[s])
    fprintf (out, "              one event behind the others at start: "
             "taken as current (md's rule; see the log)\n");
}

const char *
job_result_text (enum r5_job kind, int result)
{
  if (result == 0)
    return "done";
  if (result == -ECANCELED)
    return kind == R5_JOB_REBUILD ? "stopped: the member being rebuilt "
      "failed, or another job took over"
      : kind == R5_JOB_REPLACE ? "stopped: the replacement failed, or the "
      "replace was stopped" : "stopped: another job took over";
  if (result == -ENODEV)
    return kind == R5_JOB_REPLACE ? "the slot's own member left service: "
      "the replacement is rebuilt into the slot (from the copy's point if "
      "it can go on from there; the log says)"
      : "stopped: a member left service (the array is degraded)";
  return strerror (-result);
}

/* What the last job to end did. */
static void
print_last_job (const struct array_job_status *j, FILE *out)
{
  const char *last = r5_job_name (j->last_kind);

  if (j->last_kind == R5_JOB_NONE)
    return;
  /* Why it stopped, when the job said (which member, where), over the
   * words for its error alone -- but for a replace whose slot's member
   * left: its words say what became of the replacement.
   */
  if (j->last_result < 0 && j->last_why[0] &&
      !(j->last_kind == R5_JOB_REPLACE && j->last_result == -ENODEV))
    fprintf (out, "      last %s: %s%s, mismatch_cnt %" PRIu64 " (%" PRIu64
             " stripes)\n", last, strncmp (j->last_why, "stopped", 7) == 0
             ? "" : "stopped: ", j->last_why, j->last_mismatches,
             j->last_stripes_bad);
  else
    fprintf (out, "      last %s: %s, mismatch_cnt %" PRIu64 " (%" PRIu64
             " stripes)\n", last,
             job_result_text (j->last_kind, (int) j->last_result),
             j->last_mismatches, j->last_stripes_bad);
  if (j->last_bb_stripes)
    fprintf (out, "      last %s: %" PRIu64 " stripes %s for bad blocks in "
             "their rows (the log says which)\n", last, j->last_bb_stripes,
             j->last_kind == R5_JOB_REBUILD ? "not wholly rebuilt"
             : "skipped in part");
  if (j->last_bb_rewritten)
    fprintf (out, "      last %s: %" PRIu64 " sectors listed bad rewritten "
             "from the other members and cleared\n", last,
             j->last_bb_rewritten);
  if (j->last_unread_stripes)
    fprintf (out, "      last %s: %" PRIu64 " stripes skipped for read "
             "errors, not corrected (read-only; the log says where)\n",
             last, j->last_unread_stripes);
}

static void
print_text (struct array *a, const struct array_job_status *j,
            const struct array_stats *st, FILE *out)
{
  char h[R5_MAX_MEMBERS + 1];

  status_health (a, h);
  /* /proc/mdstat says "active (read-only)" of a read-only array. */
  fprintf (out, "raid5 : %s, %s%s [%u/%u] [%s]\n", status_array_state (a),
           status_metadata_state (a), a->read_only ? " (read-only)" : "",
           a->geom.members, status_in_service (a), h);
  fprintf (out, "      %u members, %" PRIu64 "K chunk, %s, %" PRIu64
           " KiB\n", a->geom.members, a->geom.chunk / 1024,
           r5_layout_name (a->geom.layout), array_capacity (a) / 1024);
  print_grow (a, out);
  for (unsigned s = 0; s < a->geom.members; s++)
    print_member (a, &a->comeback, s, out);
  print_left_out (a, out);
  print_policy (a, out);
  if (a->spare.path)
    fprintf (out, "      spare: %s\n", a->spare.path);
  if (j->kind != R5_JOB_NONE)
    progress_line (j, out);
  fprintf (out, "      sync speed: min %" PRIu64 "K/sec, max %" PRIu64
           "K/sec per member\n", j->speed_min, j->speed_max);
  if (j->latency_max_us)
    fprintf (out, "      sync latency target: clients' p99 under %" PRIu64
             "us; paced at %" PRIu64 "K/sec while busy (last p99 %" PRIu64
             "us, %" PRIu64 " cuts)\n", (uint64_t) j->latency_max_us,
             (uint64_t) j->paced_kib, (uint64_t) j->client_p99_us,
             (uint64_t) j->pace_cuts);
  print_last_job (j, out);
  fprintf (out, "      requests: %" PRIu64 " reads, %" PRIu64 " writes, %"
           PRIu64 " zeroes, %" PRIu64 " trims, %" PRIu64 " flushes\n",
           st->reads, st->writes, st->zeroes, st->trims, st->flushes);
  fprintf (out, "      stripe segments:");
  for (unsigned k = 0; k < R5_SEG_KINDS; k++)
    fprintf (out, "%s %s %" PRIu64, k ? "," : "", r5_seg_kind_name (k),
             st->segs[k]);
  fprintf (out, "\n      checked %" PRIu64 " MiB, rebuilt %" PRIu64
           " MiB, member failures %" PRIu64 "\n",
           a->job.checked * a->geom.chunk * a->geom.members >> 20,
           a->job.rebuilt * a->geom.chunk >> 20, st->member_failures);
}

/* The job's figures; job.lock held. */
static void
job_status_locked (struct array *a, struct array_job_status *st)
{
  struct job *j = &a->job;

  *st = (struct array_job_status) {
    .kind = j->kind, .paused = j->paused,
    .slot = j->kind == R5_JOB_REPLACE ? a->replace.slot : job_slot (a),
    .done = j->cursor, .total = a->geom.stripes,
    .stripe_bytes = a->geom.chunk, .speed_kib = j->rate.kib,
    .speed_min = j->rate.min, .speed_max = j->rate.max,
    .latency_max_us = j->pacer.target_us, .paced_kib = j->pacer.paced_kib,
    .client_p99_us = j->pacer.p99_us, .pace_cuts = j->pacer.cuts,
    .throttled_ms = j->rate.throttled_ns / 1000000,
    .resync_due = meta_resync_due (a), .ppl = a->ppl.on,
    .mismatches = j->tally.mismatches, .stripes_bad = j->tally.stripes_bad,
    .nfound = j->tally.nfound, .last_kind = j->last.kind,
    .last_result = j->last.result, .last_mismatches = j->last.mismatches,
    .jobs_ended = j->last.ended,
    .last_stripes_bad = j->last.stripes_bad,
    .bb_stripes = j->tally.bb_stripes, .last_bb_stripes = j->last.bb_stripes,
    .bb_rewritten = j->tally.bb_rewritten,
    .last_bb_rewritten = j->last.bb_rewritten,
    .unread_stripes = j->tally.unread_stripes,
    .last_unread_stripes = j->last.unread_stripes,
  };
  memcpy (st->found, j->tally.found, j->tally.nfound * sizeof j->tally.found[0]);
  snprintf (st->last_why, sizeof st->last_why, "%s", j->last.why);
}

void
array_job_status (struct array *a, struct array_job_status *st)
{
  pthread_mutex_lock (&a->job.lock);
  job_status_locked (a, st);
  pthread_mutex_unlock (&a->job.lock);
}

/* One look, taken whole under job.lock: a job begins and ends under it
 * -- a rebuild's member put into its slot, its state, the job's kind and
 * count of ended jobs -- so no look shows a slot from before a change
 * beside the job from after it (raid5ctl monitor tells a hot spare that
 * took a failed member's slot from a replace only by the two together).
 * A member failing is not under it: a look may show it faulty and the
 * job not stopped yet, as it is.
 */
void
array_status_print (struct array *a, bool json, FILE *out)
{
  struct array_job_status j;
  struct array_stats st;

  pthread_mutex_lock (&a->job.lock);
  job_status_locked (a, &j);
  array_get_stats (a, &st);
  if (json)
    status_print_json (a, &j, &st, out);
  else
    print_text (a, &j, &st, out);
  pthread_mutex_unlock (&a->job.lock);
}
