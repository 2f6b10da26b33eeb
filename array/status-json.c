/* array/status-json.c -- the array's state for programs: one line of
 * JSON (status.c has the names and the text for people).
 */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include <json-c/json.h>

#include "array/object.h"
#include "array/state.h"
#include "array/status-int.h"
#include "raid/layout.h"

static const char *
comeback_name (enum comeback_state st)
{
  return st == COMEBACK_WAITING ? "waiting"
    : st == COMEBACK_REFUSED ? "needs-rebuild"
    : st == COMEBACK_HELD ? "failed-by-hand"
    : st == COMEBACK_READDED ? "re-added" : NULL;
}

static const char *
fault_name (enum fault_kind kind)
{
  return kind == FAULT_IO_ERROR ? "io-error"
    : kind == FAULT_LINK_LOST ? "link-lost"
    : kind == FAULT_BY_HAND ? "by-hand" : NULL;
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
    put_u64 (o, "next_try_ms", status_next_try_ms (c));
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
                            status_returns_by_itself (a, slot, k)));
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

  for (unsigned s = 0; s < a->geom.members; s++) {
    json_object *m = json_object_new_object ();

    struct io_member_figures f;
    const char *p = a->members[s].path;

    io_member_get_stats (&a->members[s], &f);
    put_u64 (m, "slot", s);
    put_str (m, "path", p ? p : "missing");
    put_str (m, "state", status_member_state_name (a, s));
    put_str (m, "transport", f.transport);
    put_u64 (m, "batches", f.batches);
    put_u64 (m, "latency_us", f.latency_us);
    put_u64 (m, "errors", f.errors);
    put_u64 (m, "reconnects", f.reconnects);
    put_u64 (m, "corrected_read_sectors", status_corrected (a, s));
    json_object_object_add (m, "bad_blocks", json_bad_blocks (a, s));
    put_str (m, "replacement", a->replace.slot == (int) s
             ? a->members[ARRAY_REPLACEMENT].path : NULL);
    json_object_object_add (m, "fault", json_fault (a, s));
    json_object_object_add (m, "comeback", json_comeback (&a->comeback, s));
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
  put_u64 (o, "lost_pages", g->lost_pages);
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
  put_u64 (o, "bad_block_sectors_rewritten", j->bb_rewritten);
  put_u64 (o, "read_error_stripes", j->unread_stripes);
  json_object_object_add (o, "found", json_found (j));
  return o;
}

static json_object *
json_last_job (const struct array_job_status *j)
{
  json_object *o = json_object_new_object ();

  put_str (o, "kind", r5_job_name (j->last_kind));
  json_object_object_add (o, "result", json_object_new_int (j->last_result));
  put_str (o, "why", j->last_why[0] ? j->last_why : NULL);
  put_u64 (o, "mismatch_sectors", j->last_mismatches);
  put_u64 (o, "number", j->jobs_ended);
  put_u64 (o, "stripes_bad", j->last_stripes_bad);
  put_u64 (o, "bad_block_stripes", j->last_bb_stripes);
  put_u64 (o, "bad_block_sectors_rewritten", j->last_bb_rewritten);
  put_u64 (o, "read_error_stripes", j->last_unread_stripes);
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
  put_u64 (o, "unreadable_regions_at_start", t->unread_regions);
  put_u64 (o, "unreadable_behind_units_at_start", t->unread_units);
  return o;
}

/* One line (the control protocol is lines): json-c's spaced form. */
void
status_print_json (struct array *a, const struct array_job_status *j,
                   const struct array_stats *st, FILE *out)
{
  json_object *o = json_object_new_object ();
  char h[R5_MAX_MEMBERS + 3];

  status_health (a, h + 1);
  h[0] = '[';
  strcat (h, "]");
  put_str (o, "state", status_array_state (a));
  put_str (o, "metadata", status_metadata_state (a));
  json_object_object_add (o, "read_only",
                          json_object_new_boolean (a->read_only));
  /* "active" says writes may be in flight; whether a resync is due too. */
  json_object_object_add (o, "resync_due", json_object_new_boolean (
                            a->meta.enabled && meta_resync_due (a)));
  put_str (o, "health", h);
  put_u64 (o, "raid_disks", a->geom.members);
  put_u64 (o, "in_service", status_in_service (a));
  put_u64 (o, "chunk_bytes", a->geom.chunk);
  put_str (o, "layout", r5_layout_name (a->geom.layout));
  put_u64 (o, "data_offset_bytes", a->geom.data_offset);
  put_u64 (o, "size_bytes", array_capacity (a));
  json_object_object_add (o, "grow", json_grow (a));
  json_object_object_add (o, "members", json_members (a));
  json_object_object_add (o, "left_out", json_left_out (a));
  put_str (o, "spare", a->spare.path);
  put_str (o, "consistency_policy", status_policy_name (a));
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
