/* raid/geom.c -- validate RAID-5 parameters and derive the array's size. */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

#include "raid/geom.h"

static bool
is_power_of_two (uint64_t v)
{
  return v != 0 && (v & (v - 1)) == 0;
}

/* Each check returns a message, or NULL when the parameters pass it. */
static const char *
check_params (char *buf, unsigned len, const struct r5_geom_params *p,
              int *err)
{
  unsigned members = p->members;
  uint64_t chunk = p->chunk, data_offset = p->data_offset;
  uint64_t member_bytes = p->member_bytes;
  enum r5_layout layout = p->layout;

  *err = -EINVAL;
  if (members < R5_MIN_MEMBERS || members > R5_MAX_MEMBERS)
    snprintf (buf, len, "%u members: RAID-5 needs %u to %u", members,
              R5_MIN_MEMBERS, R5_MAX_MEMBERS);
  else if (!is_power_of_two (chunk))
    snprintf (buf, len, "chunk %" PRIu64 " is not a power of two", chunk);
  else if (chunk < R5_MIN_CHUNK || chunk > R5_MAX_CHUNK)
    snprintf (buf, len, "chunk %" PRIu64 " is outside %u..%u bytes", chunk,
              R5_MIN_CHUNK, R5_MAX_CHUNK);
  else if ((unsigned) layout >= R5_LAYOUTS)
    snprintf (buf, len, "layout %u is not a RAID-5 layout", (unsigned) layout);
  else if (data_offset % R5_SECTOR != 0)
    snprintf (buf, len, "data offset %" PRIu64 " is not a multiple of %u",
              data_offset, R5_SECTOR);
  else if (member_bytes < data_offset || member_bytes - data_offset < chunk) {
    *err = -ENOSPC;
    snprintf (buf, len, "members of %" PRIu64 " bytes cannot hold the data "
              "offset (%" PRIu64 ") plus one chunk (%" PRIu64 ")",
              member_bytes, data_offset, chunk);
  }
  else if ((member_bytes - data_offset) / chunk > INT64_MAX / chunk /
           (members - 1)) {
    *err = -EFBIG;
    snprintf (buf, len, "members of %" PRIu64 " bytes make an array larger "
              "than %" PRId64 " bytes", member_bytes, INT64_MAX);
  }
  else {
    *err = 0;
    return NULL;
  }
  return buf;
}

const char *
r5_geom_explain (char *buf, unsigned len, const struct r5_geom_params *p)
{
  int err;

  if (check_params (buf, len, p, &err) == NULL)
    snprintf (buf, len, "geometry is valid");
  return buf;
}

int
r5_geom_init (struct r5_geom *g, const struct r5_geom_params *p)
{
  uint64_t chunk = p->chunk;
  char msg[160];
  int err;

  if (check_params (msg, sizeof msg, p, &err) != NULL)
    return err;

  g->members = p->members;
  g->data_members = p->members - 1;
  g->layout = p->layout;
  g->chunk = chunk;
  g->data_offset = p->data_offset;
  g->stripes = (p->member_bytes - p->data_offset) / chunk;
  g->member_data = g->stripes * chunk;
  g->stripe_data = chunk * g->data_members;
  g->capacity = g->stripes * g->stripe_data;
  return 0;
}
