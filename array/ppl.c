/* array/ppl.c -- the partial parity log writer (ppl.h): units, group
 * commit, the write order md keeps.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "array/internal.h"
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
      !(sb->feature_map & (MD_FEATURE_PPL | MD_FEATURE_MULTIPLE_PPLS)))
    return 0;
  usable = ppl_area_check (sb->ppl_offset, sb->ppl_size, MD_SB_SECTOR,
                           MD_SB_BLOCK / 512, sb->data_offset,
                           sb->data_size, why, sizeof why);
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
  u->round++;
  u->hdr.entries_count = 0;
  u->pp_bytes = 0;
  u->joiners = u->pending = 0;
  u->dirty = 0;
  u->result = 0;
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
  pthread_mutex_init (&p->unaligned, NULL);
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
  if (p->made)
    pthread_mutex_destroy (&p->unaligned);
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
join (struct array *a, const struct plan_run *x, const struct group *gr,
      const uint32_t *sums, struct ppl_unit *u)
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
  u->joiners++;
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
  if ((r = io_run (a->members, &u->failed, 1,
                   a->members[m].in_memory ? 0 : IO_FUA)) < 0)
    return r;
  a->ppl.units++;
  a->ppl.entries += u->hdr.entries_count;
  return 0;
}

/* With l->lock held: the gathering unit u goes out (the other is idle);
 * the lock is let go while it is written.
 */
static void
lead (struct array *a, unsigned m, struct ppl_log *l)
{
  struct ppl_unit *u = &l->unit[l->gather];
  uint64_t flush = l->flush, seq = ++a->ppl.seq;
  int r;

  u->state = PPL_UNIT_WRITING;
  u->pending = u->joiners;
  l->gather ^= 1;
  unit_reset (&l->unit[l->gather], PPL_UNIT_GATHERING);
  l->flush = 0;
  if (l->room_waiters > 0)
    pthread_cond_broadcast (&l->room);
  pthread_mutex_unlock (&l->lock);
  r = write_unit (a, m, u, flush, seq);
  pthread_mutex_lock (&l->lock);
  u->result = r;
  u->state = r == 0 ? PPL_UNIT_WRITTEN : PPL_UNIT_FAILED;
  pthread_cond_broadcast (&u->wake);
}

/* Log the plan's entries of group gr; return once they are durable (0),
 * or the unit failed (-errno, *failed to blame).  *t says where they
 * went, for group_done.
 */
static int
log_group (struct array *a, const struct plan_run *x, const struct group *gr,
           struct ppl_ticket *t, struct io_op *failed)
{
  struct ppl_log *l = &a->ppl.logs[gr->member];
  const struct r5_plan *plan = x->plan;
  uint32_t sums[PPL_HDR_MAX_ENTRIES];
  struct ppl_unit *u;
  unsigned k = 0;
  int r;

  if (gr->n > PPL_HDR_MAX_ENTRIES || gr->pp > a->ppl.unit_room)
    return -E2BIG;              /* the batch limits prevent it */
  for (size_t i = 0; i < plan->nppl; i++)
    if (plan->ppl_entries[i].parity == gr->member)
      sums[k++] = plan->ppl_entries[i].pp_len == 0 ? 0 :
        ppl_checksum (plan_run_ptr (x, plan->ppl_entries[i].pp),
                      plan->ppl_entries[i].pp_len);
  pthread_mutex_lock (&l->lock);
  while (!fits (&a->ppl, &l->unit[l->gather], gr)) {
    l->room_waiters++;
    pthread_cond_wait (&l->room, &l->lock);
    l->room_waiters--;
  }
  *t = (struct ppl_ticket) { l->gather, l->unit[l->gather].round };
  u = &l->unit[t->unit];
  join (a, x, gr, sums, u);
  while (u->state == PPL_UNIT_GATHERING || u->state == PPL_UNIT_WRITING) {
    if (u->state == PPL_UNIT_GATHERING &&
        l->unit[t->unit ^ 1].state == PPL_UNIT_IDLE)
      lead (a, gr->member, l);
    else
      pthread_cond_wait (&u->wake, &l->lock);
  }
  r = u->result;
  if (r < 0)
    *failed = u->failed;
  pthread_mutex_unlock (&l->lock);
  return r;
}

/* The request of ticket t is done with its stripes of group m, having
 * written the members in dirty (without FUA).
 */
static void
group_done (struct array *a, unsigned m, const struct ppl_ticket *t,
            uint64_t dirty)
{
  struct ppl_log *l = &a->ppl.logs[m];
  struct ppl_unit *u = &l->unit[t->unit];

  pthread_mutex_lock (&l->lock);
  if (u->round == t->round) {
    u->dirty |= dirty;
    if (--u->pending == 0) {
      if (u->state == PPL_UNIT_WRITTEN)
        l->flush |= u->dirty;
      u->state = PPL_UNIT_IDLE;
      /* The gathering unit may go out now: this thread writes it at once
       * rather than wake one of its requests to do so (a wakeup less
       * between one unit and the next).
       */
      if (l->unit[t->unit ^ 1].joiners > 0)
        lead (a, m, l);
    }
  }
  pthread_mutex_unlock (&l->lock);
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
    if (!a->members[x->ops[i].member].in_memory)
      mask |= UINT64_C (1) << x->ops[i].member;
  return mask;
}

int
ppl_run (struct array *a, struct plan_run *x)
{
  int r = plan_run_prepare (a, x);

  for (unsigned m = 0; r == 0 && m < a->geom.members; m++) {
    struct group gr = group_of (x->plan, m);
    struct ppl_ticket t;
    struct io_op failed;

    if (!plan_run_has_writes (a, x, m))
      continue;
    if (gr.n > 0 && (r = log_group (a, x, &gr, &t, &failed)) < 0) {
      x->nops = 0;              /* nothing to blame for -E2BIG */
      if (r != -E2BIG) {
        group_done (a, m, &t, 0);
        x->ops[0] = failed;
        x->nops = 1;
      }
      break;
    }
    r = plan_run_writes (a, x, (int) m);
    if (gr.n > 0)
      group_done (a, m, &t, written (a, x));
  }
  return r;
}

int
ppl_init_member (struct array *a, unsigned slot, struct array_err *err)
{
  const struct io_member *m = &a->members[slot];
  size_t len = a->ppl.area_len;
  uint64_t at = a->ppl.area_off;
  void *area;
  int r;

  if (!a->ppl.on)
    return 0;
  if (posix_memalign (&area, 4096, len) != 0) {
    array_set_err (err, "slot %u (%s): no memory for its partial parity "
                   "log area", slot, m->path);
    return -ENOMEM;
  }
  memset (area, 0, len);
  ppl_header_encode (&(struct ppl_header) {
      .signature = a->ppl.signature }, area);
  if ((r = io_member_pwrite (m, area, len, at)) < 0 ||
      (r = io_member_sync (m)) < 0)
    array_set_err (err, "slot %u (%s): write of its partial parity log "
                   "area at %" PRIu64 ": %s", slot, m->path, at,
                   strerror (-r));
  free (area);
  return r;
}
