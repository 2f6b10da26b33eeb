/* array/comeback.c -- a member lost with its host or link comes back by
 * itself.
 *
 * md's rule.  The kernel leaves a failed member faulty until someone
 * acts; mdadm's incremental mode, which udev runs for every device that
 * appears, adds a device that was an active member back to a running
 * array only where POLICY action=re-add allows it: "It is generally not
 * OK to add non-spare drives to a running array as they are probably
 * missing because they failed ... Also if action policy is re-add or
 * better we allow re-add" (mdadm Incremental.c), and re-add "will include
 * the device in the array if it appears to be a current member or a
 * member that was recently removed and the array has a write-intent-
 * bitmap to allow the re-add functionality" (mdadm.conf(5), POLICY).
 *
 * Here.  An NBD member is lost when its host or its link is, which says
 * nothing about its storage, so for members that can come back by
 * themselves (io_member_can_return) action=re-add is the default
 * (re-add=manual turns it off) -- for a member taken out because it could
 * not be reached (FAULT_LINK_LOST, as its backend tells: connection reset,
 * refused, timed out, hung up).  One that answered with an error (EIO,
 * ENOSPC... over a live connection) is a member whose storage fails, as a
 * disk's would: like a file, it stays out until a person re-adds or
 * rebuilds it, rather than flapping back into service after every error.
 * The background thread tries to reach the faulty member again, 1 s
 * after it failed and then at doubling intervals up to COMEBACK_MAX_NS.
 * A try first reads the member's superblock afresh without the job lock
 * (a host still away costs up to the member timeout, and status must not
 * wait for it); if it answers, a re-add by
 * hand in place (array_readd_start) follows: the same superblock rule
 * (md_readd_check) decides, so a member that missed writes the bitmap
 * cannot name, or that holds other data, is refused.  A member re-added
 * this way that fails again before its resync is done keeps its backoff.
 * Refused, status says why and that it must be rebuilt; it is still tried
 * at the longest interval (what a server serves can change: an admin
 * putting the right image back), and the log hears of each outcome once.
 * A member failed by hand (raid5ctl fail, md's --fail) was meant to go:
 * it is left alone.
 */
#include <config.h>

#include <errno.h>
#include <string.h>

#include "array/object.h"
#include "array/state.h"

#define COMEBACK_FIRST_NS (1000 * 1000000ULL)
#define COMEBACK_MAX_NS (10000 * 1000000ULL)

bool
comeback_applies (const struct array *a, unsigned slot)
{
  return !a->manual_readd && !a->read_only && a->meta.enabled &&
    a->left_out[slot] == NULL && io_member_can_return (&a->members[slot]);
}

/* The slot whose member may come back by itself, or -1; job.lock held
 * (so that a fail by hand, which holds it to say so, is seen whole): its
 * link was lost, or it was failed by hand (watched, but HELD).  Not
 * a slot where a rebuild onto another member failed: that member was
 * never in sync, and a re-add without a path would take the one assembly
 * left out (left_out) instead.
 */
static int
returnable_slot (struct array *a)
{
  int out = health_out (&a->health);
  enum fault_kind kind;

  if (out < 0 || health_failed (&a->health) ||
      health_state (&a->health, (unsigned) out) != MEMBER_FAULTY ||
      !comeback_applies (a, (unsigned) out))
    return -1;
  kind = fault_of (a, (unsigned) out, NULL);
  return kind == FAULT_LINK_LOST || kind == FAULT_BY_HAND ? out : -1;
}

/* Start watching slot (its member just failed); job.lock held. */
static void
watch (struct comeback *c, int slot, uint32_t gen, uint64_t now)
{
  *c = (struct comeback) { .state = COMEBACK_WAITING, .slot = slot,
                           .gen = gen, .delay_ns = COMEBACK_FIRST_NS,
                           .next_ns = now + COMEBACK_FIRST_NS };
}

/* Record the outcome of a try, and log it if it is news; job.lock held.
 * The wait doubles after every try that did not bring it back (1, 2, 4,
 * 8, 10 s ...), and is the longest after a refusal.
 */
static void
record (struct array *a, enum comeback_state st, const char *why,
        uint64_t now)
{
  struct comeback *c = &a->comeback;
  const char *path = a->members[c->slot].path;
  bool news = st != c->state || strcmp (why, c->why) != 0 || c->tries == 0;

  c->tries++;
  c->state = st;
  snprintf (c->why, sizeof c->why, "%s", why);
  c->delay_ns = st == COMEBACK_REFUSED || c->delay_ns * 2 > COMEBACK_MAX_NS
    ? COMEBACK_MAX_NS : c->delay_ns * 2;
  c->next_ns = now + c->delay_ns;
  if (!news)
    return;
  if (st == COMEBACK_REFUSED)
    array_log (a, ARRAY_LOG_ERROR, "slot %d (%s) answers again, but is not "
               "re-added (it needs a rebuild): %s", c->slot, path, why);
  else
    array_log (a, ARRAY_LOG_DEBUG, "slot %d (%s) not back yet (%s): trying "
               "again every %llu s at most", c->slot, path, why,
               (unsigned long long) (COMEBACK_MAX_NS / 1000000000));
}

/* Does an error from a re-add mean that the member answered and was
 * refused (its superblock: not this array's, corrupt, unusable, or the
 * bitmap cannot say what it missed), rather than that it did not answer?
 */
static bool
answered (int r)
{
  return r == -EINVAL || r == -EBADMSG || r == -ENOTSUP;
}

/* Is the member there at all?  Its superblock read afresh (new
 * connections), without job.lock: this is the part that waits up to the
 * member timeout when the host is still away.
 */
static int
probe (struct array *a, int slot, struct array_err *err)
{
  struct io_member *m = &a->members[slot];
  struct md_sb sb;
  int r;

  io_member_refresh (m);
  r = meta_read_sb (m, "re-add", &sb, err);
  return r < 0 && !answered (r) ? r : 0;
}

/* One try, from comeback_tick (job.lock held; dropped while the member
 * is probed, and for array_readd_start, which takes it): if it answers,
 * a re-add in place, which the rule may refuse.
 */
static void
try_back (struct array *a)
{
  struct comeback *c = &a->comeback;
  struct array_err err = { .msg = "" };
  int slot = c->slot, r;

  pthread_mutex_unlock (&a->job.lock);
  r = probe (a, slot, &err);
  pthread_mutex_lock (&a->job.lock);
  if (c->state == COMEBACK_HELD || returnable_slot (a) != slot)
    return;                   /* acted on meanwhile (by hand): not ours */
  if (r == 0) {               /* it answers: the rule decides */
    pthread_mutex_unlock (&a->job.lock);
    r = array_readd_start (a, (unsigned) slot, NULL, &err);
    pthread_mutex_lock (&a->job.lock);
    if (c->state == COMEBACK_HELD)
      return;                 /* failed by hand during the re-add */
  }
  /* Whatever happened, the member in the slot is the one watched: a
   * re-add that puts it back (its gen moves on) is not a new failure.
   */
  c->gen = health_gen (&a->health, (unsigned) slot);
  if (r >= 0) {
    array_log (a, ARRAY_LOG_ERROR, "slot %d (%s) answers again: re-added, "
               "%s", slot, a->members[slot].path, r == 1
               ? "rebuilt whole (it left part-way through a rebuild onto it)"
               : "resyncing what the bitmap says it missed");
    c->state = COMEBACK_READDED;
    return;
  }
  record (a, answered (r) ? COMEBACK_REFUSED : COMEBACK_WAITING,
          err.msg[0] ? err.msg : strerror (-r), array_now_ns ());
}

void
comeback_tick (struct array *a)
{
  struct comeback *c = &a->comeback;
  uint64_t now = array_now_ns ();
  uint32_t gen;
  int slot;

  pthread_mutex_lock (&a->job.lock);
  slot = returnable_slot (a);
  gen = slot >= 0 ? health_gen (&a->health, (unsigned) slot) : 0;
  if (slot < 0) {
    int out = health_out (&a->health);

    /* READDED: until its resync is done (or it failed again, for an
     * error of its own: then it is not ours any more).
     */
    if (c->state != COMEBACK_READDED || out < 0 ||
        health_state (&a->health, (unsigned) out) != MEMBER_REBUILDING)
      c->state = COMEBACK_NONE;
  }
  else if (c->state == COMEBACK_NONE || c->slot != slot ||
           (c->gen != gen && c->state != COMEBACK_READDED))
    watch (c, slot, gen, now);
  else if (c->state == COMEBACK_READDED) {
    /* Re-added by us, and failed again before it was in sync: the same
     * way back, the wait growing (no new 1 s cycle per failure).
     */
    c->gen = gen;
    record (a, COMEBACK_WAITING, "it failed again while being resynced",
            now);
  }
  else if (c->state != COMEBACK_HELD && now >= c->next_ns &&
           a->job.kind == R5_JOB_NONE && !a->job.stop)
    try_back (a);
  pthread_mutex_unlock (&a->job.lock);
}

void
comeback_hold (struct array *a, unsigned slot, uint32_t gen)
{
  pthread_mutex_lock (&a->job.lock);
  a->comeback = (struct comeback) { .state = COMEBACK_HELD,
                                    .slot = (int) slot, .gen = gen };
  pthread_mutex_unlock (&a->job.lock);
}
