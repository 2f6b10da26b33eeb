/* raid/layout.c -- md's RAID-5 layouts (raid5_compute_sector and its
 * inverse raid5_compute_blocknr, for algorithms 0..5).
 *
 * md's rule (drivers/md/raid5.c, raid5_compute_sector, level 5), with
 * D = N-1 data members, stripe s and data index dd:
 *
 *   ALGORITHM_LEFT_*     pd = D - s % N
 *   ALGORITHM_RIGHT_*    pd = s % N
 *   ALGORITHM_PARITY_0   pd = 0,  data on dd + 1
 *   ALGORITHM_PARITY_N   pd = D,  data on dd
 *   *_ASYMMETRIC         data on dd < pd ? dd : dd + 1
 *   *_SYMMETRIC          data on (pd + 1 + dd) % N
 *
 * With parity fixed on the first or last member, the asymmetric rule
 * gives exactly md's dd + 1 and dd, so parity-first and parity-last take
 * the asymmetric path here (and in the inverse) once pd is known.
 */
#include <config.h>

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "raid/layout.h"

static bool
is_left (enum r5_layout layout)
{
  return layout == R5_LEFT_ASYMMETRIC || layout == R5_LEFT_SYMMETRIC;
}

static bool
is_symmetric (enum r5_layout layout)
{
  return layout == R5_LEFT_SYMMETRIC || layout == R5_RIGHT_SYMMETRIC;
}

static bool
is_fixed (enum r5_layout layout)
{
  return layout == R5_PARITY_FIRST || layout == R5_PARITY_LAST;
}

unsigned
r5_parity_member (const struct r5_geom *g, uint64_t stripe)
{
  unsigned rot;

  if (g->layout == R5_PARITY_FIRST)
    return 0;
  if (g->layout == R5_PARITY_LAST)
    return g->data_members;
  rot = (unsigned) (stripe % g->members);
  return is_left (g->layout) ? g->data_members - rot : rot;
}

unsigned
r5_data_member (const struct r5_geom *g, uint64_t stripe, unsigned dd)
{
  unsigned pd = r5_parity_member (g, stripe);

  assert (dd < g->data_members);
  if (is_symmetric (g->layout))
    return (pd + 1 + dd) % g->members;
  return dd < pd ? dd : dd + 1;
}

int
r5_data_index (const struct r5_geom *g, uint64_t stripe, unsigned member)
{
  unsigned pd = r5_parity_member (g, stripe);

  assert (member < g->members);
  if (member == pd)
    return -1;
  if (is_symmetric (g->layout))
    return (int) ((member + g->members - pd - 1) % g->members);
  return (int) (member > pd ? member - 1 : member);
}

unsigned
r5_layout_period (const struct r5_geom *g)
{
  return is_fixed (g->layout) ? 1 : g->members;
}

uint64_t
r5_stripe_array_off (const struct r5_geom *g, uint64_t stripe)
{
  return stripe * g->stripe_data;
}

uint64_t
r5_stripe_member_off (const struct r5_geom *g, uint64_t stripe)
{
  return g->data_offset + stripe * g->chunk;
}

int
r5_map (const struct r5_geom *g, uint64_t off, struct r5_loc *loc)
{
  uint64_t chunk_number;

  if (off >= g->capacity)
    return -EINVAL;
  chunk_number = off / g->chunk;
  loc->stripe = chunk_number / g->data_members;
  loc->dd = (unsigned) (chunk_number % g->data_members);
  loc->member = r5_data_member (g, loc->stripe, loc->dd);
  loc->parity = r5_parity_member (g, loc->stripe);
  loc->chunk_off = off % g->chunk;
  loc->member_off = r5_stripe_member_off (g, loc->stripe) + loc->chunk_off;
  return 0;
}

/* mdadm's names (maps.c r5layout); parity-first and parity-last have no
 * short form there, so none here.
 */
static const struct {
  const char *name, *alias;   /* alias may be NULL */
  enum r5_layout layout;
} layout_names[] = {
  { "left-asymmetric", "la", R5_LEFT_ASYMMETRIC },
  { "right-asymmetric", "ra", R5_RIGHT_ASYMMETRIC },
  { "left-symmetric", "ls", R5_LEFT_SYMMETRIC },
  { "right-symmetric", "rs", R5_RIGHT_SYMMETRIC },
  { "parity-first", NULL, R5_PARITY_FIRST },
  { "parity-last", NULL, R5_PARITY_LAST },
};

const char *
r5_layout_name (enum r5_layout layout)
{
  for (size_t i = 0; i < sizeof layout_names / sizeof layout_names[0]; i++)
    if (layout_names[i].layout == layout)
      return layout_names[i].name;
  return "unknown";
}

int
r5_layout_parse (const char *name, enum r5_layout *layout)
{
  for (size_t i = 0; i < sizeof layout_names / sizeof layout_names[0]; i++)
    if (strcmp (name, layout_names[i].name) == 0 ||
        (layout_names[i].alias &&
         strcmp (name, layout_names[i].alias) == 0)) {
      *layout = layout_names[i].layout;
      return 0;
    }
  return -EINVAL;
}
