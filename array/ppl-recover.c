/* array/ppl-recover.c -- the logs at start (ppl.h): a dirty array's torn
 * stripes made whole from the newest header of each log, as md's
 * ppl_load_distributed and ppl_recover do it; then every log emptied
 * (ppl_write_empty_header), and the verdict of md's ppl_init_log.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array/object.h"
#include "array/runplan.h"
#include "raid/ppl.h"

/* The newest valid header of a log area (area_len bytes at area), as
 * ppl_load_distributed finds it: headers one after another from the
 * start, until one is not valid or is older than the one before.
 */
struct newest {
  bool found;
  uint64_t at;                /* bytes into the area */
  struct ppl_header hdr;
};

static void
find_newest (const struct ppl *p, const char *area, struct newest *out)
{
  struct ppl_header cur;
  uint64_t at = 0;

  out->found = false;
  while (at + PPL_HEADER_SIZE < p->area_len) {
    if (ppl_header_decode (area + at, p->signature, &cur, NULL, 0) < 0 ||
        (out->found && out->hdr.generation > cur.generation))
      break;
    out->hdr = cur;
    out->at = at;
    out->found = true;
    at = ppl_next_header (&cur, at / 512) * 512;
  }
}

/* Recover one entry whose PP (e->pp_size bytes) is at pp: plan it
 * (r5_plan_ppl_recover) and run it.  0, -EBADMSG (not an entry of this
 * array: refused), or the I/O error with err.
 */
static int
recover_entry (struct array *a, unsigned m, const struct ppl_entry *e,
               const char *pp, struct array_err *err)
{
  const struct r5_geom *g = &a->geom;
  uint64_t stripe = e->data_sector < g->capacity / 512
    ? e->data_sector * 512 / g->stripe_data : 0, limit;
  struct r5_plan plan;
  struct plan_run x = { .plan = &plan, .client = (char *) pp,
                        .zero = a->zero };
  char why[ARRAY_ERR_LEN];
  int r;

  r5_plan_init (&plan);
  /* A stripe's entries live in its parity member's log and nowhere else
   * (md: BUG_ON in ppl_recover_entry): one for another slot's parity is
   * no entry of this log's (a log copied from another device).
   */
  if (e->parity_disk != m) {
    snprintf (why, sizeof why, "it is for parity on slot %" PRIu32
              ", not on the log's own", e->parity_disk);
    r = -EBADMSG;
  }
  else
    r = r5_plan_ppl_recover (&plan, g, &(struct r5_ppl_recovery) {
                               e, { R5_BUF_CLIENT, 0 },
                               health_missing_for (&a->health, stripe,
                                                   &limit) },
                             why, sizeof why);
  if (r == -EBADMSG)
    array_log (a, ARRAY_LOG_ERROR, "partial parity log of slot %u: entry "
               "not recovered: %s", m, why);
  if (r == 0 && ((x.scratch = malloc (plan.scratch + 1)) == NULL ||
                 (x.ops = calloc (plan.nios + 1, sizeof *x.ops)) == NULL))
    r = -ENOMEM;
  if (r == 0 && (r = plan_run (a, &x)) < 0)
    array_set_err (err, "recovery from the partial parity log of slot %u "
                   "(%s): member I/O failed: %s", m, a->members[m].path,
                   strerror (-r));
  else if (r == -ENOMEM)
    array_set_err (err, "out of memory");
  free (x.scratch);
  free (x.ops);
  r5_plan_free (&plan);
  return r;
}

/* The entries of the newest header (md's ppl_recover): each whose PP
 * checksum is right is recovered, the others counted as refused.
 */
static int
recover_log (struct array *a, unsigned m, const char *area,
             const struct newest *n, struct array_err *err)
{
  struct ppl *p = &a->ppl;
  uint64_t pp_at = n->at + PPL_HEADER_SIZE;
  int r;

  for (unsigned i = 0; i < n->hdr.entries_count; i++) {
    const struct ppl_entry *e = &n->hdr.entries[i];

    if (pp_at + e->pp_size > p->area_len) {
      p->refused += n->hdr.entries_count - i;   /* PP past the area */
      break;
    }
    if (ppl_checksum (area + pp_at, e->pp_size) != e->checksum)
      p->refused++;
    else if ((r = recover_entry (a, m, e, area + pp_at, err)) == -EBADMSG)
      p->refused++;
    else if (r < 0)
      return r;
    else
      p->recovered++;
    pp_at += e->pp_size;
  }
  return 0;
}

static bool
has_log (const struct array *a, unsigned m)
{
  return io_member_is_open (&a->members[m]) &&
    health_takes_writes (&a->health, m);
}

/* Read member m's log area and recover from it; then sync m, whose
 * parity it wrote (md: blkdev_issue_flush of the log's device).
 */
static int
load_log (struct array *a, unsigned m, char *area, struct array_err *err)
{
  struct newest n;
  const struct io_member *mem = &a->members[m];
  int r;

  if ((r = io_member_pread (mem, area, a->ppl.area_len,
                            a->ppl.area_off)) < 0) {
    array_set_err (err, "slot %u (%s): read of its partial parity log at "
                   "%" PRIu64 ": %s (given as 'missing' in its place, the "
                   "array starts with the other logs)", m, mem->path,
                   a->ppl.area_off, strerror (-r));
    return r;
  }
  find_newest (&a->ppl, area, &n);
  if (!n.found) {
    a->ppl.refused++;           /* md: "no valid ppl found" */
    return 0;
  }
  array_log (a, ARRAY_LOG_DEBUG, "slot %u: newest partial parity log "
             "header at byte %" PRIu64 " of the area, generation %" PRIu64
             ", %u entries", m, n.at, n.hdr.generation, n.hdr.entries_count);
  if ((r = recover_log (a, m, area, &n, err)) < 0)
    return r;
  if ((r = io_member_sync (mem)) < 0)
    array_set_err (err, "slot %u (%s): sync after log recovery: %s", m,
                   mem->path, strerror (-r));
  return r;
}

int
ppl_start (struct array *a, struct array_err *err)
{
  struct ppl *p = &a->ppl;
  bool dirty = meta_resync_due (a);
  char *area;
  int r = 0;

  if (!p->on)
    return 0;
  /* Read-only: the logs are neither replayed nor reset (that writes).  A
   * dirty array read whole is read as the crash left it, as one without
   * a log; degraded, a torn stripe's lost chunk would be computed from
   * parity the log was to make whole, so it is refused (a dirty degraded
   * array without a log is refused unless forced, at assembly).
   */
  if (a->read_only && dirty && health_out (&a->health) >= 0) {
    array_set_err (err, "slot %d is out of service and the array was not "
                   "stopped cleanly: its partial parity logs must make the "
                   "torn stripes whole before it can be read degraded, "
                   "which writes, and the array is read-only (open it "
                   "writable once first)", health_out (&a->health));
    return -EROFS;
  }
  if (a->read_only)
    return 0;
  if (dirty) {
    if (posix_memalign ((void **) &area, 4096, p->area_len) != 0) {
      array_set_err (err, "no memory to read the partial parity logs");
      return -ENOMEM;
    }
    for (unsigned m = 0; m < a->geom.members && r == 0; m++)
      if (has_log (a, m))
        r = load_log (a, m, area, err);
    free (area);
  }
  for (unsigned m = 0; m < a->geom.members && r == 0; m++)
    if (has_log (a, m))
      r = ppl_init_member (a, m, err);
  if (r < 0 || !dirty)
    return r;
  array_log (a, ARRAY_LOG_NOTICE,
             "the array was not stopped cleanly: %u entries of its partial "
             "parity logs recovered, %u not usable%s", p->recovered,
             p->refused, p->recovered > 0 && p->refused == 0 &&
             meta_resync_from (a) == 0 ? "; no resync needed" : "");
  /* ppl_init_log: "If we are starting a dirty array and the recovery
   * succeeds without any issues, set the array as clean."
   */
  if (meta_resync_from (a) == 0 && p->recovered > 0 && p->refused == 0)
    r = meta_resync_done (a, err);
  return r;
}
