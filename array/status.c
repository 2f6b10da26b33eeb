/* array/status.c -- the array's state for people (md's /proc/mdstat
 * style) and for programs (JSON).
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "array/object.h"
#include "array/state.h"
#include "raid/layout.h"

static const char *
member_state_name (const struct array *a, unsigned slot)
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

static const char *
array_state (const struct array *a)
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
static const char *
metadata_state (const struct array *a)
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
static uint64_t
corrected (const struct array *a, unsigned slot)
{
  return a->meta.enabled ? a->meta.live.slot[slot].corrected_read
                         : a->count.corrected[slot];
}

/* md's [UU_] line: U in service, _ out (a rebuilding member is out). */
static void
health (const struct array *a, char *buf)
{
  health_ud (&a->health, a->geom.members, buf);
}

static unsigned
in_service (const struct array *a)
{
  return health_in_service (&a->health, a->geom.members);
}

static const char *
comeback_name (enum comeback_state st)
{
  return st == COMEBACK_WAITING ? "waiting"
    : st == COMEBACK_REFUSED ? "needs-rebuild"
    : st == COMEBACK_HELD ? "failed-by-hand"
    : st == COMEBACK_READDED ? "re-added" : NULL;
}

/* ms until the next try of c (0: due). */
static uint64_t
next_try_ms (const struct comeback *c)
{
  uint64_t now = array_now_ns ();

  return c->next_ns > now ? (c->next_ns - now) / 1000000 : 0;
}

static const char *
fault_name (enum fault_kind kind)
{
  return kind == FAULT_IO_ERROR ? "io-error"
    : kind == FAULT_LINK_LOST ? "link-lost"
    : kind == FAULT_BY_HAND ? "by-hand" : NULL;
}

/* Does a faulty member of this kind come back by itself? */
static bool
returns_by_itself (const struct array *a, unsigned slot, enum fault_kind k)
{
  return k == FAULT_LINK_LOST && comeback_applies (a, slot);
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
  const char *fate = !returns_by_itself (a, slot, k)
    ? "; stays out until re-added or rebuilt"
    : c->state == COMEBACK_REFUSED && c->slot == (int) slot ? ""
    : "; re-added by itself when it answers";

  if (k == FAULT_IO_ERROR)
    fprintf (out, "              I/O error: %s%s\n", why, fate);
  else if (k == FAULT_LINK_LOST)
    fprintf (out, "              link lost: %s%s\n", why, fate);
  else if (k == FAULT_BY_HAND)
    fprintf (out, "              failed by hand: not tried again until "
             "re-added or rebuilt\n");
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
             " ms\n", next_try_ms (c));
  else
    fprintf (out, "              gone: %u tries, the next in %" PRIu64
             " ms; last: %s\n", c->tries, next_try_ms (c), c->why);
}

/* Members assembly left out of the out slot, and how to bring one back. */
static void
print_left_out (const struct array *a, FILE *out)
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
static const char *
policy_name (const struct array *a)
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
  const char *p = policy_name (a);

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

  io_member_get_stats (&a->members[s], &f);
  fprintf (out, "      slot %u: %s (%s)\n", s, array_member_path (a, s),
           member_state_name (a, s));
  if (f.transport)
    fprintf (out, "              %s, %" PRIu64 " us a batch, %" PRIu64
             " errors, %" PRIu64 " reconnects\n", f.transport,
             f.latency_us, f.errors, f.reconnects);
  if (corrected (a, s) > 0)
    fprintf (out, "              read errors corrected: %" PRIu64
             " sectors (rewritten from the other members)\n",
             corrected (a, s));
  print_bad_blocks (a, s, out);
  if (a->replace.slot == (int) s)
    fprintf (out, "              being replaced by %s (R): it takes the "
             "slot when the copy is done\n",
             a->members[ARRAY_REPLACEMENT].path);
  print_fault (a, c, s, out);
  print_comeback (c, s, out);
  if (a->one_behind[s])
    fprintf (out, "              one event behind the others at start: "
             "taken as current (md's rule; see the log)\n");
}

static void
print_text (struct array *a, const struct array_job_status *j,
            const struct array_stats *st, FILE *out)
{
  char h[R5_MAX_MEMBERS + 1];
  struct comeback c;

  comeback_get (a, &c);
  health (a, h);
  fprintf (out, "raid5 : %s, %s [%u/%u] [%s]\n", array_state (a),
           metadata_state (a), a->geom.members, in_service (a), h);
  fprintf (out, "      %u members, %" PRIu64 "K chunk, %s, %" PRIu64
           " KiB\n", a->geom.members, a->geom.chunk / 1024,
           r5_layout_name (a->geom.layout), array_capacity (a) / 1024);
  print_grow (a, out);
  for (unsigned s = 0; s < a->geom.members; s++)
    print_member (a, &c, s, out);
  print_left_out (a, out);
  print_policy (a, out);
  if (io_member_is_open (&a->spare))
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
  if (j->last_kind != R5_JOB_NONE)
    fprintf (out, "      last %s: %s, mismatch_cnt %" PRIu64 " (%" PRIu64
             " stripes)\n", r5_job_name (j->last_kind),
             j->last_result == 0 ? "done" : strerror (-j->last_result),
             j->last_mismatches, j->last_stripes_bad);
  if (j->last_kind != R5_JOB_NONE && j->last_bb_stripes)
    fprintf (out, "      last %s: %" PRIu64 " stripes %s for bad blocks in "
             "their rows (the log says which)\n", r5_job_name (j->last_kind),
             j->last_bb_stripes, j->last_kind == R5_JOB_REBUILD
             ? "not wholly rebuilt" : "skipped");
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

/* json-c shorthands: a value under key in object o. */
static void
put_u64 (json_object *o, const char *key, uint64_t v)
{
  json_object_object_add (o, key, json_object_new_uint64 (v));
}

static void
put_str (json_object *o, const char *key, const char *v)
{
  json_object_object_add (o, key, v ? json_object_new_string (v) : NULL);
}

static json_object *
json_comeback (const struct comeback *c, unsigned slot)
{
  json_object *o;

  if (c->state == COMEBACK_NONE || c->slot != (int) slot)
    return NULL;
  o = json_object_new_object ();
  put_str (o, "state", comeback_name (c->state));
  put_u64 (o, "tries", c->tries);
  if (c->state == COMEBACK_WAITING || c->state == COMEBACK_REFUSED)
    put_u64 (o, "next_try_ms", next_try_ms (c));
  else
    json_object_object_add (o, "next_try_ms", NULL);
  put_str (o, "why", c->tries ? c->why : NULL);
  return o;
}

static json_object *
json_fault (struct array *a, unsigned slot)
{
  char why[ARRAY_ERR_LEN];
  enum fault_kind k = fault_of (a, slot, why);
  json_object *o;

  if (k == FAULT_NONE)
    return NULL;
  o = json_object_new_object ();
  put_str (o, "kind", fault_name (k));
  put_str (o, "why", why);
  json_object_object_add (o, "returns_by_itself", json_object_new_boolean (
                            returns_by_itself (a, slot, k)));
  return o;
}

/* Slot's md bad-block log: null without one. */
static json_object *
json_bad_blocks (struct array *a, unsigned s)
{
  json_object *o;
  unsigned ranges;
  uint64_t sectors;

  if (!array_bb_has_log (a, s))
    return NULL;
  array_bb_count (a, s, &ranges, &sectors);
  o = json_object_new_object ();
  put_u64 (o, "ranges", ranges);
  put_u64 (o, "sectors", sectors);
  json_object_object_add (o, "write_error_seen", json_object_new_boolean (
                            a->bb.write_error[s]));
  return o;
}

static json_object *
json_members (struct array *a)
{
  json_object *ms = json_object_new_array ();
  struct comeback c;

  comeback_get (a, &c);
  for (unsigned s = 0; s < a->geom.members; s++) {
    json_object *m = json_object_new_object ();

    struct io_member_figures f;

    io_member_get_stats (&a->members[s], &f);
    put_u64 (m, "slot", s);
    put_str (m, "path", array_member_path (a, s));
    put_str (m, "state", member_state_name (a, s));
    put_str (m, "transport", f.transport);
    put_u64 (m, "batches", f.batches);
    put_u64 (m, "latency_us", f.latency_us);
    put_u64 (m, "errors", f.errors);
    put_u64 (m, "reconnects", f.reconnects);
    put_u64 (m, "corrected_read_sectors", corrected (a, s));
    json_object_object_add (m, "bad_blocks", json_bad_blocks (a, s));
    put_str (m, "replacement", a->replace.slot == (int) s
             ? a->members[ARRAY_REPLACEMENT].path : NULL);
    json_object_object_add (m, "fault", json_fault (a, s));
    json_object_object_add (m, "comeback", json_comeback (&c, s));
    json_object_object_add (m, "one_event_behind",
                            json_object_new_boolean (a->one_behind[s]));
    json_object_array_add (ms, m);
  }
  return ms;
}

static json_object *
json_left_out (struct array *a)
{
  json_object *l = json_object_new_array ();

  for (unsigned s = 0; s < a->geom.members; s++)
    if (a->left_out[s]) {
      json_object *m = json_object_new_object ();

      put_u64 (m, "slot", s);
      put_str (m, "path", a->left_out[s]);
      json_object_object_add (m, "re_addable",
                              json_object_new_boolean (a->left_re_addable[s]));
      json_object_array_add (l, m);
    }
  return l;
}

static json_object *
json_found (const struct array_job_status *j)
{
  json_object *l = json_object_new_array ();

  for (unsigned i = 0; i < j->nfound; i++) {
    json_object *m = json_object_new_object ();

    put_u64 (m, "stripe", j->found[i].stripe);
    put_u64 (m, "array_offset", j->found[i].array_off);
    put_u64 (m, "array_length", j->found[i].array_len);
    put_u64 (m, "parity_member", j->found[i].parity);
    put_u64 (m, "member_offset", j->found[i].member_off);
    put_u64 (m, "last_member_offset", j->found[i].last_off);
    put_u64 (m, "units_4k", j->found[i].units);
    if (j->found[i].csum_member >= 0) {
      put_u64 (m, "checksum_member", (uint64_t) j->found[i].csum_member);
      put_u64 (m, "checksum_units", j->found[i].csum_units);
      put_u64 (m, "checksum_offset", j->found[i].csum_off);
      put_u64 (m, "checksum_healed", j->found[i].csum_healed);
    }
    json_object_array_add (l, m);
  }
  return l;
}

static json_object *
json_grow (const struct array *a)
{
  const struct grow *g = &a->grow;
  json_object *o;

  if (!g->active)
    return NULL;
  o = json_object_new_object ();
  put_u64 (o, "from_members", g->r.from.members);
  put_u64 (o, "to_members", g->r.to.members);
  put_u64 (o, "line_bytes", grow_line (a));
  put_u64 (o, "recorded_bytes", g->safe);
  put_u64 (o, "size_after_bytes", g->r.to.capacity);
  return o;
}

static json_object *
json_job (const struct array_job_status *j)
{
  json_object *o = json_object_new_object ();

  put_str (o, "kind", r5_job_name (j->kind));
  json_object_object_add (o, "paused", json_object_new_boolean (j->paused));
  json_object_object_add (o, "slot", json_object_new_int (j->slot));
  put_u64 (o, "done_stripes", j->done);
  put_u64 (o, "total_stripes", j->total);
  put_u64 (o, "done_kib", j->done * j->stripe_bytes / 1024);
  put_u64 (o, "total_kib", j->total * j->stripe_bytes / 1024);
  put_u64 (o, "speed_kib", j->speed_kib);
  put_u64 (o, "throttled_ms", j->throttled_ms);
  put_u64 (o, "mismatch_sectors", j->mismatches);
  put_u64 (o, "stripes_bad", j->stripes_bad);
  put_u64 (o, "bad_block_stripes", j->bb_stripes);
  json_object_object_add (o, "found", json_found (j));
  return o;
}

static json_object *
json_last_job (const struct array_job_status *j)
{
  json_object *o = json_object_new_object ();

  put_str (o, "kind", r5_job_name (j->last_kind));
  json_object_object_add (o, "result", json_object_new_int (j->last_result));
  put_u64 (o, "mismatch_sectors", j->last_mismatches);
  put_u64 (o, "number", j->jobs_ended);
  put_u64 (o, "stripes_bad", j->last_stripes_bad);
  put_u64 (o, "bad_block_stripes", j->last_bb_stripes);
  return o;
}

static json_object *
json_counters (struct array *a, const struct array_stats *st)
{
  json_object *o = json_object_new_object ();

  put_u64 (o, "reads", st->reads);
  put_u64 (o, "writes", st->writes);
  put_u64 (o, "zeroes", st->zeroes);
  put_u64 (o, "trims", st->trims);
  put_u64 (o, "flushes", st->flushes);
  put_u64 (o, "member_failures", st->member_failures);
  put_u64 (o, "lost_requests", a->count.bb_lost);
  put_u64 (o, "checked_bytes",
           a->job.checked * a->geom.chunk * a->geom.members);
  put_u64 (o, "rebuilt_bytes", a->job.rebuilt * a->geom.chunk);
  for (unsigned k = 0; k < R5_SEG_KINDS; k++)
    put_u64 (o, r5_seg_kind_name (k), st->segs[k]);
  return o;
}

static json_object *
json_ppl (const struct array *a)
{
  json_object *o;

  if (!a->ppl.on)
    return NULL;
  o = json_object_new_object ();
  put_u64 (o, "log_writes", a->ppl.units);
  put_u64 (o, "entries", a->ppl.entries);
  put_u64 (o, "recovered_at_start", a->ppl.recovered);
  put_u64 (o, "not_usable_at_start", a->ppl.refused);
  return o;
}

static json_object *
json_integrity (const struct array *a)
{
  const struct integrity *t = &a->integrity;
  json_object *o;

  if (!t->on)
    return NULL;
  o = json_object_new_object ();
  put_str (o, "path", t->path);
  put_u64 (o, "verified_units", t->verified);
  put_u64 (o, "failed_units", t->failures);
  put_u64 (o, "healed_units", t->healed);
  put_u64 (o, "unhealable_units", t->unhealable);
  put_u64 (o, "recomputed_regions_at_start", t->recomputed);
  put_u64 (o, "stale_units_at_start", t->stale_units);
  return o;
}

/* One line (the control protocol is lines): json-c's spaced form. */
static void
print_json (struct array *a, const struct array_job_status *j,
            const struct array_stats *st, FILE *out)
{
  json_object *o = json_object_new_object ();
  char h[R5_MAX_MEMBERS + 3];

  health (a, h + 1);
  h[0] = '[';
  strcat (h, "]");
  put_str (o, "state", array_state (a));
  put_str (o, "metadata", metadata_state (a));
  put_str (o, "health", h);
  put_u64 (o, "raid_disks", a->geom.members);
  put_u64 (o, "in_service", in_service (a));
  put_u64 (o, "chunk_bytes", a->geom.chunk);
  put_str (o, "layout", r5_layout_name (a->geom.layout));
  put_u64 (o, "data_offset_bytes", a->geom.data_offset);
  put_u64 (o, "size_bytes", array_capacity (a));
  json_object_object_add (o, "grow", json_grow (a));
  json_object_object_add (o, "members", json_members (a));
  json_object_object_add (o, "left_out", json_left_out (a));
  put_str (o, "spare", io_member_is_open (&a->spare) ? a->spare.path : NULL);
  put_str (o, "consistency_policy", policy_name (a));
  json_object_object_add (o, "ppl", json_ppl (a));
  json_object_object_add (o, "integrity", json_integrity (a));
  json_object_object_add (o, "job", json_job (j));
  json_object_object_add (o, "last_job", json_last_job (j));
  put_u64 (o, "speed_min_kib", j->speed_min);
  put_u64 (o, "speed_max_kib", j->speed_max);
  put_u64 (o, "sync_latency_max_us", j->latency_max_us);
  put_u64 (o, "paced_kib", j->paced_kib);
  put_u64 (o, "client_p99_us", j->client_p99_us);
  put_u64 (o, "pace_cuts", j->pace_cuts);
  json_object_object_add (o, "counters", json_counters (a, st));
  fprintf (out, "%s\n", json_object_to_json_string_ext (
             o, JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
  json_object_put (o);
}

void
array_status_print (struct array *a, bool json, FILE *out)
{
  struct array_job_status j;
  struct array_stats st;

  array_job_status (a, &j);
  array_get_stats (a, &st);
  if (json)
    print_json (a, &j, &st, out);
  else
    print_text (a, &j, &st, out);
}
