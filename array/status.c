/* array/status.c -- the array's state for people (md's /proc/mdstat
 * style) and for programs (JSON).
 */
#include <config.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "array/internal.h"
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
           bar, array_job_name (j->kind), (unsigned) (permille / 10),
           (unsigned) (permille % 10), done_k, total_k);
  if (j->speed_kib > 0)
    fprintf (out, " finish=%.1fmin speed=%" PRIu64 "K/sec",
             (double) (total_k - done_k) / (double) j->speed_kib / 60.0,
             j->speed_kib);
  fprintf (out, "%s\n", j->paused ? " (paused)" : "");
}

static void
print_text (struct array *a, const struct array_job_status *j,
            const struct array_stats *st, FILE *out)
{
  char h[R5_MAX_MEMBERS + 1];

  health (a, h);
  fprintf (out, "raid5 : %s, %s [%u/%u] [%s]\n", array_state (a),
           metadata_state (a), a->geom.members, in_service (a), h);
  fprintf (out, "      %u members, %" PRIu64 "K chunk, %s, %" PRIu64
           " KiB\n", a->geom.members, a->geom.chunk / 1024,
           r5_layout_name (a->geom.layout), a->geom.capacity / 1024);
  for (unsigned s = 0; s < a->geom.members; s++)
    fprintf (out, "      slot %u: %s (%s)\n", s, array_member_path (a, s),
             member_state_name (a, s));
  print_left_out (a, out);
  if (io_member_is_open (&a->spare))
    fprintf (out, "      spare: %s\n", a->spare.path);
  if (j->kind != ARRAY_JOB_NONE)
    progress_line (j, out);
  fprintf (out, "      sync speed: min %" PRIu64 "K/sec, max %" PRIu64
           "K/sec per member\n", j->speed_min, j->speed_max);
  if (j->last_kind != ARRAY_JOB_NONE)
    fprintf (out, "      last %s: %s, mismatch_cnt %" PRIu64 " (%" PRIu64
             " stripes)\n", array_job_name (j->last_kind),
             j->last_result == 0 ? "done" : strerror (-j->last_result),
             j->last_mismatches, j->last_stripes_bad);
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

static void
json_string (FILE *out, const char *s)
{
  fputc ('"', out);
  for (; *s; s++) {
    unsigned char c = (unsigned char) *s;

    if (c == '"' || c == '\\')
      fprintf (out, "\\%c", c);
    else if (c < 0x20)
      fprintf (out, "\\u%04x", c);
    else
      fputc (c, out);
  }
  fputc ('"', out);
}

static void
json_members (struct array *a, FILE *out)
{
  fprintf (out, "\"members\": [");
  for (unsigned s = 0; s < a->geom.members; s++) {
    fprintf (out, "%s{\"slot\": %u, \"path\": ", s ? ", " : "", s);
    json_string (out, array_member_path (a, s));
    fprintf (out, ", \"state\": \"%s\"}", member_state_name (a, s));
  }
  fprintf (out, "], \"left_out\": [");
  for (unsigned s = 0, n = 0; s < a->geom.members; s++)
    if (a->left_out[s]) {
      fprintf (out, "%s{\"slot\": %u, \"path\": ", n++ ? ", " : "", s);
      json_string (out, a->left_out[s]);
      fprintf (out, ", \"re_addable\": %s}",
               a->left_re_addable[s] ? "true" : "false");
    }
  fprintf (out, "], \"spare\": ");
  if (io_member_is_open (&a->spare))
    json_string (out, a->spare.path);
  else
    fputs ("null", out);
}

static void
json_job (const struct array_job_status *j, FILE *out)
{
  fprintf (out, ", \"job\": {\"kind\": \"%s\", \"paused\": %s, \"slot\": %d,"
           " \"done_stripes\": %" PRIu64 ", \"total_stripes\": %" PRIu64
           ", \"done_kib\": %" PRIu64 ", \"total_kib\": %" PRIu64
           ", \"speed_kib\": %" PRIu64 ", \"throttled_ms\": %" PRIu64
           ", \"mismatch_sectors\": %" PRIu64
           ", \"stripes_bad\": %" PRIu64 ", \"found\": [",
           array_job_name (j->kind), j->paused ? "true" : "false", j->slot,
           j->done, j->total, j->done * j->stripe_bytes / 1024,
           j->total * j->stripe_bytes / 1024, j->speed_kib, j->throttled_ms,
           j->mismatches,
           j->stripes_bad);
  for (unsigned i = 0; i < j->nfound; i++)
    fprintf (out, "%s{\"stripe\": %" PRIu64 ", \"array_offset\": %" PRIu64
             ", \"array_length\": %" PRIu64 ", \"parity_member\": %u, "
             "\"member_offset\": %" PRIu64 ", \"units_4k\": %u}",
             i ? ", " : "", j->found[i].stripe, j->found[i].array_off,
             j->found[i].array_len, j->found[i].parity,
             j->found[i].member_off, j->found[i].units);
  fprintf (out, "]}, \"last_job\": {\"kind\": \"%s\", \"result\": %d, "
           "\"mismatch_sectors\": %" PRIu64 ", \"stripes_bad\": %" PRIu64
           "}, \"speed_min_kib\": %" PRIu64 ", \"speed_max_kib\": %" PRIu64,
           array_job_name (j->last_kind), j->last_result, j->last_mismatches,
           j->last_stripes_bad, j->speed_min, j->speed_max);
}

static void
json_counters (struct array *a, const struct array_stats *st, FILE *out)
{
  fprintf (out, ", \"counters\": {\"reads\": %" PRIu64 ", \"writes\": %"
           PRIu64 ", \"zeroes\": %" PRIu64 ", \"trims\": %" PRIu64
           ", \"flushes\": %" PRIu64 ", \"member_failures\": %" PRIu64
           ", \"checked_bytes\": %" PRIu64 ", \"rebuilt_bytes\": %" PRIu64,
           st->reads, st->writes, st->zeroes, st->trims, st->flushes,
           st->member_failures,
           a->job.checked * a->geom.chunk * a->geom.members,
           a->job.rebuilt * a->geom.chunk);
  for (unsigned k = 0; k < R5_SEG_KINDS; k++)
    fprintf (out, ", \"%s\": %" PRIu64, r5_seg_kind_name (k), st->segs[k]);
  fputc ('}', out);
}

static void
print_json (struct array *a, const struct array_job_status *j,
            const struct array_stats *st, FILE *out)
{
  char h[R5_MAX_MEMBERS + 1];

  health (a, h);
  fprintf (out, "{\"state\": \"%s\", \"metadata\": \"%s\", \"health\": "
           "\"[%s]\", \"raid_disks\": %u, \"in_service\": %u, "
           "\"chunk_bytes\": %" PRIu64 ", \"layout\": \"%s\", "
           "\"size_bytes\": %" PRIu64 ", ", array_state (a),
           metadata_state (a), h, a->geom.members, in_service (a), a->geom.chunk,
           r5_layout_name (a->geom.layout), a->geom.capacity);
  json_members (a, out);
  json_job (j, out);
  json_counters (a, st, out);
  fputs ("}\n", out);
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
