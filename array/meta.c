/* array/meta.c -- keep the md superblocks (and bitmap) of a live array up
 * to date: each change is an md_live event (raid/mdstate.h), and its
 * result is written to every member in service.  See meta.h.  This file
 * writes them out and records the events; the bitmap and the clean mark
 * are in meta-bitmap.c, the bad-block log in meta-bblog.c, the start and
 * the end in meta-load.c (meta-int.h between them).
 */
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "array/meta-int.h"
#include "array/object.h"
#include "array/state.h"

/* A random UUID, as mdadm gives each device. */
void
meta_random_uuid (uint8_t uuid[16])
{
  if (getrandom (uuid, 16, 0) != 16)
    for (unsigned i = 0; i < 16; i++)
      uuid[i] = (uint8_t) rand ();
}

/* The slot the live state records as out of service, or -1. */
int
meta_live_out (const struct array *a)
{
  for (unsigned s = 0; s < a->geom.members; s++)
    if (a->meta.live.slot[s].state != MD_SLOT_IN_SYNC)
      return (int) s;
  return -1;
}

/* What the superblocks now say about the slot out; meta.lock held, right
 * after they were written (or, at start, before any write needs it).
 */
void
meta_note_recorded (struct array *a)
{
  int out = meta_live_out (a);

  a->meta.recorded_out = out;
  a->meta.recorded_lost = out >= 0 && !md_live_writes (&a->meta.live,
                                                       (unsigned) out);
}

/* The replacement's superblock (if sb) and bitmap (md writes both to
 * every device not faulty, a replacement too).
 */
static size_t
queue_replacement (struct array *a, bool sb, struct md_sb *mine,
                   struct io_op *ops)
{
  struct meta *m = &a->meta;
  int slot = a->replace.slot;
  size_t n = 0;

  if (slot < 0 || a->replace.failed || !m->live.slot[slot].repl.attached ||
      !io_member_is_open (&a->members[ARRAY_REPLACEMENT]))
    return 0;
  if (sb) {
    md_live_sb_repl (&m->live, (unsigned) slot, mine);
    md_sb_encode (mine, m->sb_buf[ARRAY_REPLACEMENT]);
    ops[n++] = (struct io_op) { .kind = IO_WRITE, .member = ARRAY_REPLACEMENT,
                                .buf = m->sb_buf[ARRAY_REPLACEMENT],
                                .off = MD_SB_OFFSET, .len = MD_SB_BLOCK };
  }
  if (m->has_bitmap)
    ops[n++] = meta_bitmap_op (m, ARRAY_REPLACEMENT);
  return n;
}

/* Queue the writes of the superblock (if sb) and the bitmap for every
 * member in service.
 */
static size_t
queue_writes (struct array *a, bool sb, struct io_op *ops)
{
  struct meta *m = &a->meta;
  struct md_sb *mine = malloc (sizeof *mine);
  size_t n = 0;

  if (mine == NULL)
    abort ();                 /* 4 KiB; nothing sensible to do without it */
  for (unsigned s = 0; s < a->geom.members; s++) {
    if (!md_live_writes (&m->live, s) || !io_member_is_open (&a->members[s]))
      continue;
    if (sb) {
      md_live_sb (&m->live, s, mine);
      md_sb_encode (mine, m->sb_buf[s]);
      ops[n++] = (struct io_op) { .kind = IO_WRITE, .member = s,
                                  .buf = m->sb_buf[s], .off = MD_SB_OFFSET,
                                  .len = MD_SB_BLOCK };
    }
    if (m->has_bitmap)
      ops[n++] = meta_bitmap_op (m, s);
  }
  n += queue_replacement (a, sb, mine, ops + n);
  free (mine);
  return n;
}

/* Slot's device failed, in the live state (MD_EV_FAIL).  One being
 * replaced: from now on writes are planned around the slot and miss the
 * replacement until it takes the slot (replace.h), so its superblock
 * stops claiming a copy -- written with the failure, before any such
 * write -- and a restart in between rebuilds it from the start rather
 * than from its old point.
 */
static bool
live_fail (struct md_live *live, unsigned slot)
{
  if (live->slot[slot].repl.attached)
    live->slot[slot].repl.recovery_offset = 0;  /* one event: the failure */
  return md_live_apply (live, &(struct md_event) { .kind = MD_EV_FAIL,
                                                   .slot = slot });
}

/* The array has failed: every slot health holds faulty -- the one out,
 * those whose loss failed it -- recorded so in the superblocks of the
 * members left, as md records them (raid5_error marks the device Faulty
 * on a broken array too and sets MD_SB_CHANGE_DEVS; md_update_sb writes
 * the others): a later start refuses the array, and force=true takes
 * the newest member back knowingly (mdadm --force's "clearing FAULTY
 * flag").  Without it a member one event behind, the one that failed,
 * would come back as current.  A member failing this write is taken out
 * too and the others written again (md_update_sb's rewrite); nothing
 * else is failed by it.  meta.lock held (meta_array_failed takes it).
 */
void
meta_record_failed_locked (struct array *a)
{
  struct meta *m = &a->meta;
  struct io_op ops[2 * ARRAY_MEMBERS];
  struct array_err err;
  bool again = false;         /* a replacement let go: written again */
  int r = 0;

  if (!health_failed (&a->health) || a->read_only)
    return;
  for (unsigned round = 0; round <= ARRAY_MEMBERS; round++) {
    uint64_t events = m->live.common.events;
    bool changed = false;
    size_t n;

    for (unsigned s = 0; s < a->geom.members; s++)
      if (health_state (&a->health, s) == MEMBER_FAULTY &&
          md_live_writes (&m->live, s))
        changed |= live_fail (&m->live, s);
    if (changed)              /* one update for them all, as md's */
      m->live.common.events = events + 1;
    else if (r == 0)
      return;                 /* nothing to record */
    else if (!again)
      break;                  /* a write failed, nobody to blame */
    m->live.common.utime = (uint64_t) time (NULL);
    if (m->has_bitmap)
      meta_bitmap_stamp (m);
    n = queue_writes (a, true, ops);
    if ((r = io_run (a->members, ops, n, IO_FUA)) == 0) {
      m->dirty = m->live.dirty;   /* as meta_write_out's */
      meta_note_recorded (a);
      meta_bits_durable (m);
      return;
    }
    m->dirty |= m->live.dirty;  /* some may say so now: the close cleans */
    /* A replacement failing is let go; a member is taken out (no more
     * than marked faulty: the array has failed), recorded next round.
     */
    if (!(again = replace_took (a, ops, n)))
      (void) !array_take_out (a, ops, n, r, NULL, &err);
  }
  array_log (a, ARRAY_LOG_ERROR, "recording the failed array's members in "
             "the superblocks: %s", strerror (-r));
}

void
meta_array_failed (struct array *a)
{
  if (!a->meta.enabled)
    return;
  pthread_mutex_lock (&a->meta.lock);
  meta_record_failed_locked (a);
  pthread_mutex_unlock (&a->meta.lock);
}

/* The slot health has taken out, marked faulty in the live state if it
 * does not say so yet (a member being rebuilt is out but recovering, not
 * failed).  True if that changed what the superblocks say.
 */
static bool
live_take_out (struct array *a)
{
  int out = health_out (&a->health);

  if (out < 0 || !md_live_writes (&a->meta.live, (unsigned) out) ||
      (health_state (&a->health, (unsigned) out) == MEMBER_REBUILDING &&
       a->meta.live.slot[out].state == MD_SLOT_RECOVERING))
    return false;
  return live_fail (&a->meta.live, (unsigned) out);
}

int
meta_sync_members (struct array *a, bool record, struct array_err *err)
{
  struct io_op ops[R5_MAX_MEMBERS];

  for (;;) {
    size_t n = 0;
    int r;

    for (unsigned s = 0; s < a->geom.members; s++)
      if (md_live_writes (&a->meta.live, s) &&
          health_state (&a->health, s) != MEMBER_FAULTY)
        ops[n++] = (struct io_op) { .kind = IO_FSYNC, .member = s };
    r = io_run (a->members, ops, n, 0);
    if (r == 0) {
      replace_sync (a);
      return 0;
    }
    if ((r = array_take_out (a, ops, n, r, NULL, err)) < 0) {
      meta_record_failed_locked (a);
      return r;
    }
    if (record)               /* the one just taken out: the array lives */
      (void) live_take_out (a);
  }
}

/* Write the superblocks (if sb) and the bitmap to every member in
 * service, durably; meta.lock held.  A member that fails the write is
 * taken out of service and the superblocks are written again, recording
 * it as faulty (md_error during md_update_sb does the same).
 */
int
meta_write_out (struct array *a, bool sb, struct array_err *err)
{
  struct meta *m = &a->meta;
  struct io_op ops[2 * ARRAY_MEMBERS];

  /* md_update_sb returns at once on an array that is not read-write:
   * the change stays in memory (a member failed stays failed until the
   * array is stopped).
   */
  if (a->read_only) {
    m->dirty = m->live.dirty;
    meta_note_recorded (a);
    meta_bits_durable (m);
    return 0;
  }
  /* md writes every superblock with REQ_PREFLUSH (md.c, md_super_write):
   * what a superblock records -- a rebuild's or a resync's point or end,
   * a replace's, the clean mark -- may reach the disks only once the
   * writes it vouches for have.  A member failing the flush is taken out
   * and recorded by this very write.  A write of the bitmap alone does
   * without: it sets bits ahead of writes and vouches for none (md
   * flushes there too; the one that clears bits flushes first, in
   * meta_mark_clean).
   */
  if (sb) {
    int r = meta_sync_members (a, true, err);

    if (r < 0)
      return r;
  }
  for (;;) {
    size_t n;
    int r, out;

    m->live.common.utime = (uint64_t) time (NULL);
    if (m->has_bitmap)
      meta_bitmap_stamp (m);
    n = queue_writes (a, sb, ops);
    r = io_run (a->members, ops, n, IO_FUA);
    if (r == 0) {
      m->dirty = m->live.dirty;
      meta_note_recorded (a);
      meta_bits_durable (m);
      return 0;
    }
    if (replace_took (a, ops, n))
      continue;               /* written again, without the replacement */
    if ((r = array_take_out (a, ops, n, r, NULL, err)) < 0) {
      meta_record_failed_locked (a);
      return r;
    }
    out = health_out (&a->health);
    if (out < 0 || !md_live_writes (&m->live, (unsigned) out))
      return -EIO;            /* cannot happen: the failed one was written */
    live_fail (&m->live, (unsigned) out);
    sb = true;
  }
}

int
meta_write_bitmap_first (struct array *a, struct array_err *err)
{
  int r = a->meta.has_bitmap ? meta_write_out (a, false, err) : 0;

  if (r < 0)
    return r;
  array_test_crash ("bitmap-written");
  return meta_write_out (a, true, err);
}

/* Apply ev and write the superblocks if it changed what they say;
 * meta.lock held.
 */
int
meta_update (struct array *a, const struct md_event *ev, struct array_err *err)
{
  if (ev->kind == MD_EV_FAIL)
    return live_fail (&a->meta.live, ev->slot)
      ? meta_write_out (a, true, err) : 0;
  return md_live_apply (&a->meta.live, ev) ? meta_write_out (a, true, err) : 0;
}

/* The slot health has taken out, recorded if the superblocks do not say
 * so yet; meta.lock held.
 */
int
meta_record_out_locked (struct array *a, struct array_err *err)
{
  return live_take_out (a) ? meta_write_out (a, true, err) : 0;
}

/* Do the superblocks already say what health says of the out slot? */
static bool
recorded (const struct array *a, int out)
{
  const struct meta *m = &a->meta;

  return m->recorded_out == out &&
    (m->recorded_lost ||
     health_state (&a->health, (unsigned) out) == MEMBER_REBUILDING);
}

int
meta_record_out (struct array *a, struct array_err *err)
{
  struct meta *m = &a->meta;
  int out = health_out (&a->health), r;

  if (!m->enabled || out < 0 || recorded (a, out))
    return 0;
  pthread_mutex_lock (&m->lock);
  /* Under the lock the live state is what the disks say (every change is
   * written before the lock is let go; an absent slot is written with the
   * first write's dirty mark, which meta_write_begin made before this).
   */
  if ((r = meta_record_out_locked (a, err)) == 0)
    meta_note_recorded (a);
  pthread_mutex_unlock (&m->lock);
  return r;
}

int
meta_member_failed (struct array *a, unsigned slot, uint32_t gen,
                    struct array_err *err)
{
  int r;

  if (!a->meta.enabled)
    return 0;
  pthread_mutex_lock (&a->meta.lock);
  /* A rebuild may have put another member into the slot meanwhile (its
   * superblocks recorded the old one out already): not that one.
   */
  r = md_live_writes (&a->meta.live, slot) &&
    health_gen (&a->health, slot) == gen
    ? meta_update (a, &(struct md_event) { .kind = MD_EV_FAIL,
                                           .slot = slot }, err)
    : 0;
  pthread_mutex_unlock (&a->meta.lock);
  return r;
}

int
meta_replace (struct array *a, unsigned slot, enum md_event_kind kind,
              uint64_t sectors, struct array_err *err)
{
  struct meta *m = &a->meta;
  uint8_t uuid[16];
  int r;

  if (!m->enabled)
    return 0;
  meta_random_uuid (uuid);
  pthread_mutex_lock (&m->lock);
  /* A checkpoint that looked before the slot's member failed: the
   * failure recorded the copy at 0 (live_fail), and it stays there until
   * the replacement takes the slot.
   */
  if (kind == MD_EV_REPLACE_CP && sectors > 0 &&
      m->live.slot[slot].state == MD_SLOT_FAULTY) {
    pthread_mutex_unlock (&m->lock);
    return 0;
  }
  r = meta_update (a, &(struct md_event) {
      .kind = kind, .slot = slot, .sectors = sectors, .device_uuid = uuid,
      .data_size = a->members[ARRAY_REPLACEMENT].size / 512 -
        m->live.common.data_offset,
    }, err);
  pthread_mutex_unlock (&m->lock);
  return r;
}

void
meta_note_corrected (struct array *a, unsigned slot, uint64_t sectors)
{
  if (!a->meta.enabled)
    return;
  pthread_mutex_lock (&a->meta.lock);
  (void) md_live_apply (&a->meta.live, &(struct md_event) {
      .kind = MD_EV_CORRECTED_READ, .slot = slot, .sectors = sectors });
  pthread_mutex_unlock (&a->meta.lock);
}

int
meta_apply (struct array *a, const struct md_event *ev, struct array_err *err)
{
  int r;

  if (!a->meta.enabled)
    return 0;
  pthread_mutex_lock (&a->meta.lock);
  r = meta_update (a, ev, err);
  pthread_mutex_unlock (&a->meta.lock);
  return r;
}

/* Apply a recovery event to slot if it is being rebuilt (checked under
 * meta.lock: a failure may have been recorded meanwhile).
 */
static int
recovery_event (struct array *a, enum md_event_kind kind, unsigned slot,
                uint64_t sectors, struct array_err *err)
{
  int r = 0;

  if (!a->meta.enabled)
    return 0;
  pthread_mutex_lock (&a->meta.lock);
  if (a->meta.live.slot[slot].state == MD_SLOT_RECOVERING)
    r = meta_update (a, &(struct md_event) { .kind = kind, .slot = slot,
                                             .sectors = sectors }, err);
  pthread_mutex_unlock (&a->meta.lock);
  return r;
}

int
meta_rebuild_progress (struct array *a, uint64_t stripe,
                       struct array_err *err)
{
  int out = health_out (&a->health);

  if (out < 0)
    return 0;
  return recovery_event (a, MD_EV_RECOVERY_CP, (unsigned) out,
                         stripe * a->geom.chunk / 512, err);
}

int
meta_rebuild_done (struct array *a, unsigned slot, struct array_err *err)
{
  return recovery_event (a, MD_EV_RECOVERY_DONE, slot, 0, err);
}

int
meta_add_member (struct array *a, unsigned slot, enum meta_join how,
                 const struct md_sb *dev, struct array_err *err)
{
  struct meta *m = &a->meta;
  uint8_t uuid[16];
  struct md_event ev = {
    .kind = how == META_JOIN_NEW ? MD_EV_ADD : MD_EV_RE_ADD, .slot = slot,
    .device_uuid = uuid, .bitmap = how == META_JOIN_RE_ADD,
    .data_size = a->members[slot].size / 512 - m->live.common.data_offset,
  };
  int r;

  if (!m->enabled)
    return 0;
  if ((r = ppl_init_member (a, slot, err)) < 0)
    return r;
  if (how == META_JOIN_NEW)
    meta_random_uuid (uuid);
  else {
    memcpy (uuid, dev->device_uuid, 16);
    ev.dev_number = dev->dev_number;
  }
  pthread_mutex_lock (&m->lock);
  /* Whatever the slot's device was doing (in sync, being rebuilt), it is
   * let go for this one.
   */
  if (md_live_writes (&m->live, slot))
    md_live_apply (&m->live, &(struct md_event) { .kind = MD_EV_FAIL,
                                                   .slot = slot });
  r = meta_update (a, &ev, err);
  pthread_mutex_unlock (&m->lock);
  return r;
}

bool
meta_dev_number_taken (struct array *a, unsigned slot, uint32_t dev)
{
  bool taken;

  pthread_mutex_lock (&a->meta.lock);
  taken = md_live_dev_number_taken (&a->meta.live, dev, slot);
  pthread_mutex_unlock (&a->meta.lock);
  return taken;
}

int
meta_readd_check (struct array *a, unsigned slot, const struct md_sb *dev,
                  struct array_err *err)
{
  char why[200];
  int r;

  pthread_mutex_lock (&a->meta.lock);
  r = md_readd_check (&a->meta.live, &(struct md_readd) {
                        .dev = dev, .slot = slot,
                        .has_bitmap = a->meta.has_bitmap,
                        .events_cleared = a->meta.bm.events_cleared },
                      why, sizeof why);
  pthread_mutex_unlock (&a->meta.lock);
  if (r < 0)
    array_set_err (err, "%s", why);
  return r;
}

int
meta_resize (struct array *a, uint64_t to, const uint64_t *sizes, bool clean,
             struct array_err *err)
{
  struct meta *m = &a->meta;
  int r;

  pthread_rwlock_wrlock (&m->gate);
  pthread_mutex_lock (&m->lock);
  if ((r = meta_bitmap_grow (a, m->live.common.size, to, !clean,
                             err)) == 0) {
    md_live_apply (&m->live, &(struct md_event) {
                     .kind = MD_EV_RESIZE, .sectors = to,
                     .data_sizes = sizes, .clean = clean });
    r = meta_write_bitmap_first (a, err);
  }
  pthread_mutex_unlock (&m->lock);
  pthread_rwlock_unlock (&m->gate);
  return r;
}
