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
 * (re-add=manual turns it off).  The background thread tries to reach the
 * faulty member again, 1 s after it failed and then at doubling intervals
 * up to COMEBACK_MAX_NS, each try bounded by the member timeout.  A try is
 * a re-add by hand without a path (array_readd_start): the same
 * superblock rule (md_readd_check) decides, so a member that missed
 * writes the bitmap cannot name, or that holds other data, is refused.
 * Refused, status says why and that it must be rebuilt; it is still tried
 * at the longest interval (what a server serves can change: an admin
 * putting the right image back), and the log hears of each outcome once.
 * A member failed by hand (raid5ctl fail, md's --fail) was meant to go:
 * it is left alone.
 */
#include <config.h>

#include <errno.h>
#include <string.h>

#include "array/internal.h"

#define COMEBACK_FIRST_NS (1000 * 1000000ULL)
#define COMEBACK_MAX_NS (10000 * 1000000ULL)

/* The slot whose member may come back by itself, or -1. */
static int
returnable_slot (const struct array *a)
{
  int out = health_out (&a->health);

  if (out < 0 || a->manual_readd || !a->meta.enabled ||
      health_failed (&a->health) ||
      health_state (&a->health, (unsigned) out) != MEMBER_FAULTY ||
      !io_member_can_return (&a->members[out]))
    return -1;
  return out;
}

/* Start watching slot (its member just failed); job.lock held. */
static void
watch (struct comeback *c, int slot, uint32_t gen, uint64_t now)
{
  *c = (struct comeback) { .state = COMEBACK_WAITING, .slot = slot,
                           .gen = gen, .delay_ns = COMEBACK_FIRST_NS,
                           .next_ns = now + COMEBACK_FIRST_NS };
}

/* Record the outcome of a try, and log it if it is news; job.lock held. */
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
  if (st == COMEBACK_REFUSED)
    c->delay_ns = COMEBACK_MAX_NS;
  else if (c->tries > 1 && c->delay_ns < COMEBACK_MAX_NS)
    c->delay_ns = c->delay_ns * 2 < COMEBACK_MAX_NS ? c->delay_ns * 2
                                                    : COMEBACK_MAX_NS;
  c->next_ns = now + c->delay_ns;
  if (!news)
    return;
  if (st == COMEBACK_REFUSED)
    array_log (a, ARRAY_LOG_ERROR, "slot %d (%s) answers again, but is not "
               "re-added (it needs a rebuild): %s", c->slot, path, why);
  else
    array_log (a, ARRAY_LOG_DEBUG, "slot %d (%s) cannot be reached yet (%s): "
               "trying again every %llu s at most", c->slot, path, why,
               (unsigned long long) (COMEBACK_MAX_NS / 1000000000));
}

/* One try: re-add the member in place if it answers and the rule lets it. */
static void
try_back (struct array *a)
{
  struct comeback *c = &a->comeback;
  struct array_err err;
  int slot = c->slot, r;

  /* Unlocked: a try waits up to the member timeout, and status must not. */
  pthread_mutex_unlock (&a->job.lock);
  r = array_readd_start (a, (unsigned) slot, NULL, &err);
  pthread_mutex_lock (&a->job.lock);
  if (r == 0) {
    array_log (a, ARRAY_LOG_ERROR, "slot %d (%s) answers again: re-added, "
               "resyncing what the bitmap says it missed", slot,
               a->members[slot].path);
    c->state = COMEBACK_NONE;
    return;
  }
  if (returnable_slot (a) != slot)
    return;                   /* acted on meanwhile (by hand): not ours */
  /* -EINVAL: the rule refused it (it answered); else it did not answer. */
  record (a, r == -EINVAL ? COMEBACK_REFUSED : COMEBACK_WAITING, err.msg,
          array_now_ns ());
}

void
comeback_tick (struct array *a)
{
  struct comeback *c = &a->comeback;
  int slot = returnable_slot (a);
  uint64_t now = array_now_ns ();

  pthread_mutex_lock (&a->job.lock);
  if (slot < 0)
    c->state = COMEBACK_NONE;
  else if (c->state == COMEBACK_NONE || c->slot != slot ||
           c->gen != health_gen (&a->health, (unsigned) slot))
    watch (c, slot, health_gen (&a->health, (unsigned) slot), now);
  else if (c->state != COMEBACK_HELD && now >= c->next_ns &&
           a->job.kind == ARRAY_JOB_NONE)
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

void
comeback_get (struct array *a, struct comeback *out)
{
  pthread_mutex_lock (&a->job.lock);
  *out = a->comeback;
  pthread_mutex_unlock (&a->job.lock);
}
