/* array/health.c -- member health of the live array (see health.h). */
#include <config.h>

#include "array/health.h"

void
health_init (struct health *h)
{
  for (unsigned s = 0; s < R5_MAX_MEMBERS; s++)
    h->state[s] = MEMBER_ACTIVE;
  h->out = -1;
  h->failed = false;
  h->rebuilt = 0;
  h->bitmap_rebuild = false;
}

enum member_state
health_state (const struct health *h, unsigned slot)
{
  return (enum member_state) h->state[slot];
}

int
health_out (const struct health *h)
{
  return h->out;
}

bool
health_takes_writes (const struct health *h, unsigned slot)
{
  enum member_state st = h->state[slot];

  return st == MEMBER_ACTIVE || st == MEMBER_REBUILDING;
}

uint32_t
health_gen (const struct health *h, unsigned slot)
{
  return h->gen[slot];
}

bool
health_failed (const struct health *h)
{
  return h->failed;
}

bool
health_rebuilding (const struct health *h)
{
  int out = h->out;

  return out >= 0 && h->state[out] == MEMBER_REBUILDING;
}

void
health_set_out (struct health *h, unsigned slot, enum member_state st,
                uint64_t from, bool bitmap)
{
  h->state[slot] = st;
  h->rebuilt = from;
  h->bitmap_rebuild = bitmap;
  h->out = (int) slot;
}

int
health_missing_for (const struct health *h, uint64_t first, uint64_t *limit)
{
  int out = h->out;
  uint64_t rebuilt;

  *limit = UINT64_MAX;
  if (out < 0 || h->state[out] != MEMBER_REBUILDING)
    return out;
  rebuilt = h->rebuilt;
  if (first < rebuilt) {
    *limit = rebuilt;         /* rebuilt: the member is in service */
    return -1;
  }
  return out;
}

enum health_taken
health_take_out (struct health *h, unsigned slot)
{
  int expected = -1;

  if (atomic_compare_exchange_strong (&h->out, &expected, (int) slot)) {
    h->state[slot] = MEMBER_FAULTY;
    return HEALTH_TAKEN;
  }
  if (expected == (int) slot && h->state[slot] == MEMBER_REBUILDING) {
    h->state[slot] = MEMBER_FAULTY;
    h->bitmap_rebuild = false;
    return HEALTH_REBUILD_LOST;
  }
  if (expected == (int) slot)
    return HEALTH_ALREADY;    /* another request got there first */
  h->state[slot] = MEMBER_FAULTY;
  h->failed = true;
  return HEALTH_SECOND;
}

void
health_member_replaced (struct health *h, unsigned slot)
{
  h->gen[slot]++;
}

void
health_fail_array (struct health *h)
{
  h->failed = true;
}

void
health_rebuild_begin (struct health *h, unsigned slot, bool bitmap,
                      uint64_t from)
{
  /* The mark first: requests read it to tell a rebuilt stripe. */
  h->rebuilt = from;
  h->bitmap_rebuild = bitmap;
  h->gen[slot]++;
  h->state[slot] = MEMBER_REBUILDING;
}

void
health_rebuild_failed (struct health *h)
{
  int out = h->out;

  if (out >= 0)
    h->state[out] = MEMBER_FAULTY;
  h->bitmap_rebuild = false;
}

void
health_rebuilt_to (struct health *h, uint64_t stripe)
{
  h->rebuilt = stripe;
}

void
health_rebuild_done (struct health *h)
{
  int out = h->out;

  if (out >= 0)
    h->state[out] = MEMBER_ACTIVE;
  h->bitmap_rebuild = false;
  h->out = -1;
}

void
health_ud (const struct health *h, unsigned members, char *buf)
{
  unsigned s;

  for (s = 0; s < members; s++)
    buf[s] = h->state[s] == MEMBER_ACTIVE ? 'U' : '_';
  buf[s] = '\0';
}

unsigned
health_in_service (const struct health *h, unsigned members)
{
  unsigned n = 0;

  for (unsigned s = 0; s < members; s++)
    n += h->state[s] == MEMBER_ACTIVE;
  return n;
}
