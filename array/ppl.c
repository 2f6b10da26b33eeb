/* array/ppl.c -- the partial parity log writer (ppl.h): units, group
 * commit, the write order md keeps.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array/object.h"
#include "array/replace.h"
#include "array/runplan.h"
#include "raid/ppl.h"

/* PP bytes in one unit: what md's single-PPL mode gives a unit (the area
 * after the header), at most 1 MiB so a batch stays a batch.
 */
#define PPL_UNIT_ROOM_MAX (1u << 20)

int
ppl_setup (struct array *a, struct array_err *err)
{
  const struct md_sb *sb = &a->meta.live.common;
  struct ppl *p = &a->ppl;
  char why[ARRAY_ERR_LEN];
  int64_t usable;

  if (!a->meta.enabled ||
      !(sb->feature_map & MD_FEATURE_ANY_PPL))
    return 0;
  usable = ppl_area_check (&(struct ppl_area) {
      sb->ppl_offset, sb->ppl_size, MD_SB_SECTOR, MD_SB_BLOCK / 512,
      sb->data_offset, sb->data_size }, why, sizeof why);
  if (usable < 0) {
    array_set_err (err, "partial parity log: %s", why);
    return (int) usable;
  }
  p->on = true;
  p->area_off = (uint64_t) ((int64_t) MD_SB_SECTOR + sb->ppl_offset) * 512;
  p->area_len = (uint64_t) usable * 512;
  p->unit_room = p->area_len - PPL_HEADER_SIZE > PPL_UNIT_ROOM_MAX
    ? PPL_UNIT_ROOM_MAX : (uint32_t) (p->area_len - PPL_HEADER_SIZE);
  p->signature = ppl_signature (sb->set_uuid);
  return 0;
}

static void
unit_reset (struct ppl_unit *u, enum ppl_unit_state state)
{
  u->state = state;
  u->hdr.entries_count = 0;
  u->pp_bytes = 0;
  u->joiners = 0;
}

int
ppl_init (struct array *a, struct array_err *err)
{
  struct ppl *p = &a->ppl;

  if (!p->on)
    return 0;
  p->logs = calloc (a->geom.members, sizeof *p->logs);
  if (p->logs == NULL)
    goto nomem;
  for (unsigned m = 0; m < a->geom.members; m++) {
    struct ppl_log *l = &p->logs[m];

    pthread_mutex_init (&l->lock, NULL);
    pthread_cond_init (&l->room, NULL);
    for (unsigned i = 0; i < 2; i++) {
      pthread_cond_init (&l->unit[i].wake, NULL);
      if (posix_memalign (&l->unit[i].block, 4096,
                          PPL_HEADER_SIZE + p->unit_room) != 0)
        goto nomem;
    }
    unit_reset (&l->unit[0], PPL_UNIT_GATHERING);
    unit_reset (&l->unit[1], PPL_UNIT_IDLE);
  }
  p->made = true;
  return 0;
 nomem:
  array_set_err (err, "no memory for the partial parity logs");
  return -ENOMEM;
}

void
ppl_free (struct array *a)
{
  struct ppl *p = &a->ppl;

  if (p->logs == NULL)
    return;
  for (unsigned m = 0; m < a->geom.members; m++) {
    free (p->logs[m].unit[0].block);
    free (p->logs[m].unit[1].block);
    if (p->made) {
      pthread_mutex_destroy (&p->logs[m].lock);
      pthread_cond_destroy (&p->logs[m].room);
      pthread_cond_destroy (&p->logs[m].unit[0].wake);
      pthread_cond_destroy (&p->logs[m].unit[1].wake);
    }
  }
  free (p->logs);
  p->logs = NULL;
}

/* ---- a request's entries of one group ---- */

struct group {
  unsigned member;            /* whose log */
  unsigned n;                 /* entries */
  uint32_t pp;                /* their PP bytes */
};

static struct group
group_of (const struct r5_plan *plan, unsigned m)
{
  struct group gr = { m, 0, 0 };

  for (size_t i = 0; i < plan->nppl; i++)
    if (plan->ppl_entries[i].parity == m) {
      gr.n++;
      gr.pp += plan->ppl_entries[i].pp_len;
    }
  return gr;
}

static bool
fits (const struct ppl *p, const struct ppl_unit *u, const struct group *gr)
{
  return u->hdr.entries_count + gr->n <= PPL_HDR_MAX_ENTRIES &&
    u->pp_bytes + gr->pp <= p->unit_room;
}

/* Put the group's entries (their checksums computed already, in sums)
 * and PP writes into u.
 */
static void
join (const struct plan_run *x, const struct group *gr, const uint32_t *sums,
      struct ppl_unit *u, struct ppl_ticket *t)
{
  const struct r5_plan *plan = x->plan;
  unsigned k = 0;

  for (size_t i = 0; i < plan->nppl; i++) {
    const struct r5_ppl_entry *e = &plan->ppl_entries[i];

    if (e->parity != gr->member)
      continue;
    u->hdr.entries[u->hdr.entries_count++] = (struct ppl_entry) {
      .data_sector = e->data_sector, .pp_size = e->pp_len,
      .data_size = e->data_len, .parity_disk = e->parity,
      .checksum = sums[k++],
    };
    memcpy ((char *) u->block + PPL_HEADER_SIZE + u->pp_bytes,
            plan_run_ptr (x, e->pp), e->pp_len);
    u->pp_bytes += e->pp_len;
  }
  u->tickets[u->joiners++] = t;
}

/* Sync the members the log's last unit wrote, then write unit u: header
 * and PP, FUA.  Without the log's lock.  0, or -errno with u->failed.
 */
static int
write_unit (struct array *a, unsigned m, struct ppl_unit *u, uint64_t flush,
            uint64_t seq)
{
  struct io_op sync[R5_MAX_MEMBERS];
  size_t n = 0;
  unsigned fua;
  int r;

  for (unsigned d = 0; d < a->geom.members; d++)
    if ((flush >> d & 1) && health_takes_writes (&a->health, d))
      sync[n++] = (struct io_op) { .kind = IO_FSYNC, .member = d };
  if (n > 0 && (r = io_run (a->members, sync, n, 0)) < 0) {
    for (size_t i = 0; i < n; i++)
      if (sync[i].result != 0 && sync[i].result != -ECANCELED)
        u->failed = sync[i];
    return r;
  }
  u->hdr.signature = a->ppl.signature;
  u->hdr.generation = seq;
  ppl_header_encode (&u->hdr, u->block);
  u->failed = (struct io_op) { .kind = IO_WRITE, .member = m,
                               .buf = u->block, .off = a->ppl.area_off,
                               .len = PPL_HEADER_SIZE + u->pp_bytes };
  /* Durable at once, unless in memory: nothing makes that more so. */
  fua = io_member_caps (&a->members[m]) & IO_CAP_MEMORY ? 0 : IO_FUA;
  if ((r = io_run (a->members, &u->failed, 1, fua)) < 0)
    return r;
  a->ppl.units++;
  a->ppl.entries += u->hdr.entries_count;
  return 0;
}

/* Members the last plan_run_writes wrote (x->ops[0..nops)) that keep
 * what they were given in a cache a sync must empty: not those in memory
 * (md likewise flushes only disks with a write-back cache, wb_cache_on).
 */
static uint64_t
written (const struct array *a, const struct plan_run *x)
{
  uint64_t mask = 0;

  if (x->io_flags & IO_FUA)
    return 0;                   /* durable already */
  for (size_t i = 0; i < x->nops; i++)
    if (!(io_member_caps (&a->members[x->ops[i].member]) & IO_CAP_MEMORY))
      mask |= UINT64_C (1) << x->ops[i].member;
  return mask;
}

/* Units one request writes in a row before it hands the next to one of
 * that unit's own requests (so that its own client is not kept waiting
 * long under a steady load).
 */
#define PPL_CHAIN 3

/* With l->lock held: the gathering unit goes out (the other is idle) --
 * the log write, then every request's writes of its stripes, the lock
 * let go meanwhile; its requests are then done, and the unit idle.
 */
static void
lead_one (struct array *a, unsigned m, struct ppl_log *l)
{
  struct ppl_unit *u = &l->unit[l->gather];
  uint64_t flush = l->flush, seq = ++a->ppl.seq, dirty = 0;
  int r;

  u->state = PPL_UNIT_WRITING;
  l->gather ^= 1;
  unit_reset (&l->unit[l->gather], PPL_UNIT_GATHERING);
  l->flush = 0;
  if (l->room_waiters > 0)
    pthread_cond_broadcast (&l->room);
  pthread_mutex_unlock (&l->lock);
  r = write_unit (a, m, u, flush, seq);
  for (unsigned i = 0; r == 0 && i < u->joiners; i++) {
    struct ppl_ticket *t = u->tickets[i];

    t->result = plan_run_writes (a, t->x, (int) m);
    dirty |= written (a, t->x);
  }
  pthread_mutex_lock (&l->lock);
  for (unsigned i = 0; i < u->joiners; i++) {
    struct ppl_ticket *t = u->tickets[i];

    t->log_result = r;
    if (r < 0)
      t->failed = u->failed;
    t->done = true;
  }
  l->flush |= dirty;
  u->state = PPL_UNIT_IDLE;
  pthread_cond_broadcast (&u->wake);
}

/* lead_one, then the units gathered meanwhile, a few; after that one of
 * the gathering unit's requests is woken to write it.
 */
static void
lead (struct array *a, unsigned m, struct ppl_log *l)
{
  unsigned n = 0;

  do
    lead_one (a, m, l);
  while (l->unit[l->gather].joiners > 0 && ++n < PPL_CHAIN);
  if (l->unit[l->gather].joiners > 0)
    pthread_cond_signal (&l->unit[l->gather].wake);
}

/* Log the plan's entries of group gr and have that group's writes done:
 * return when *t is done (0), or -E2BIG if they could not fit a unit.
 */
static int
log_group (struct array *a, struct plan_run *x, const struct group *gr,
           struct ppl_ticket *t)
{
  struct ppl_log *l = &a->ppl.logs[gr->member];
  const struct r5_plan *plan = x->plan;
  uint32_t sums[PPL_HDR_MAX_ENTRIES];
  struct ppl_unit *u;
  unsigned k = 0;

  if (gr->n > PPL_HDR_MAX_ENTRIES || gr->pp > a->ppl.unit_room)
    return -E2BIG;              /* the batch limits prevent it */
  for (size_t i = 0; i < plan->nppl; i++)
    if (plan->ppl_entries[i].parity == gr->member)
      sums[k++] = plan->ppl_entries[i].pp_len == 0 ? 0 :
        ppl_checksum (plan_run_ptr (x, plan->ppl_entries[i].pp),
                      plan->ppl_entries[i].pp_len);
  *t = (struct ppl_ticket) { .x = x };
  pthread_mutex_lock (&l->lock);
  while (!fits (&a->ppl, &l->unit[l->gather], gr)) {
    l->room_waiters++;
    pthread_cond_wait (&l->room, &l->lock);
    l->room_waiters--;
  }
  u = &l->unit[l->gather];
  join (x, gr, sums, u, t);
  /* Until done, u is this request's unit (it goes idle, to be reused,
   * only after its tickets are done).
   */
  while (!t->done) {
    if (u->state == PPL_UNIT_GATHERING &&
        l->unit[(u == &l->unit[0]) ? 1 : 0].state == PPL_UNIT_IDLE)
      lead (a, gr->member, l);
    else
      pthread_cond_wait (&u->wake, &l->lock);
  }
  pthread_mutex_unlock (&l->lock);
  return 0;
}

int
ppl_run (struct array *a, struct plan_run *x)
{
  int r = plan_run_prepare (a, x);

  for (unsigned m = 0; r == 0 && m < a->geom.members; m++) {
    struct group gr = group_of (x->plan, m);
    struct ppl_ticket t;

    if (!plan_run_has_writes (a, x, m))
      continue;
    if (gr.n == 0) {
      r = plan_run_writes (a, x, (int) m);
      continue;
    }
    if ((r = log_group (a, x, &gr, &t)) < 0) {
      x->nops = 0;              /* -E2BIG: nothing to blame */
      break;
    }
    if ((r = t.log_result) < 0) {
      x->ops[0] = t.failed;
      x->nops = 1;
      break;
    }
    r = t.result;               /* x->ops, x->nops: the writer's run */
  }
  return r;
}
int
ppl_init_member (struct array *a, unsigned slot, struct array_err *err)
{
  const struct io_member *m = &a->members[slot];
  char who[48];
  size_t len = a->ppl.area_len;
  uint64_t at = a->ppl.area_off;
  void *area;
  int r;

  if (!a->ppl.on)
    return 0;
  if (slot == ARRAY_REPLACEMENT)
    snprintf (who, sizeof who, "slot %d's replacement", a->replace.slot);
  else
    snprintf (who, sizeof who, "slot %u", slot);
  if (posix_memalign (&area, 4096, len) != 0) {
    array_set_err (err, "%s (%s): no memory for its partial parity "
                   "log area", who, m->path);
    return -ENOMEM;
  }
  memset (area, 0, len);
  ppl_header_encode (&(struct ppl_header) {
      .signature = a->ppl.signature }, area);
  if ((r = io_member_pwrite (m, area, len, at)) < 0 ||
      (r = io_member_sync (m)) < 0)
    array_set_err (err, "%s (%s): write of its partial parity log "
                   "area at %" PRIu64 ": %s", who, m->path, at,
                   strerror (-r));
  free (area);
  return r;
}
