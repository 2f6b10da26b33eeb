/* plugin/params.c -- parse and check the plugin's parameters. */
#include <config.h>

#include <stdlib.h>
#include <string.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "plugin/params.h"
#include "raid/layout.h"

#define DEFAULT_CHUNK (512u << 10)  /* mdadm's default */

static int
add_disk (struct params *p, const char *value)
{
  struct array_config *c = &p->array;

  if (c->members >= R5_MAX_MEMBERS) {
    nbdkit_error ("disk=%s: too many disks (at most %u)", value,
                  R5_MAX_MEMBERS);
    return -1;
  }
  if (strcmp (value, "missing") == 0) {
    c->paths[c->members++] = NULL;
    return 0;
  }
  if (value[0] == '\0') {
    nbdkit_error ("disk=: empty path (use disk=missing for an absent "
                  "member)");
    return -1;
  }
  c->paths[c->members] = strdup (value);
  if (c->paths[c->members] == NULL) {
    nbdkit_error ("strdup: %m");
    return -1;
  }
  c->members++;
  return 0;
}

static int
parse_size (const char *key, const char *value, uint64_t *out)
{
  int64_t v = nbdkit_parse_size (value);

  if (v < 0) {
    nbdkit_error ("%s=%s: not a size", key, value);
    return -1;
  }
  *out = (uint64_t) v;
  return 0;
}

static int
parse_metadata (struct params *p, const char *value)
{
  if (strcmp (value, "auto") == 0)
    p->metadata = METADATA_AUTO;
  else if (strcmp (value, "none") == 0)
    p->metadata = METADATA_NONE;
  else {
    nbdkit_error ("metadata=%s: expected auto or none", value);
    return -1;
  }
  return 0;
}

static int
parse_direct (struct params *p, const char *value)
{
  int b = nbdkit_parse_bool (value);

  if (b < 0)
    return -1;                /* nbdkit_parse_bool said why */
  p->array.direct = b;
  return 0;
}

void
params_init (struct params *p)
{
  memset (p, 0, sizeof *p);
  p->array.chunk = DEFAULT_CHUNK;
  p->array.layout = R5_LEFT_SYMMETRIC;
  p->metadata = METADATA_AUTO;
}

int
params_config (struct params *p, const char *key, const char *value)
{
  if (strcmp (key, "disk") == 0)
    return add_disk (p, value);
  if (strcmp (key, "chunk") == 0)
    return parse_size (key, value, &p->array.chunk);
  if (strcmp (key, "data-offset") == 0)
    return parse_size (key, value, &p->array.data_offset);
  if (strcmp (key, "metadata") == 0)
    return parse_metadata (p, value);
  if (strcmp (key, "direct") == 0)
    return parse_direct (p, value);
  if (strcmp (key, "layout") == 0) {
    if (r5_layout_parse (value, &p->array.layout) == 0)
      return 0;
    nbdkit_error ("layout=%s: unknown layout (left-symmetric, "
                  "left-asymmetric, right-symmetric, right-asymmetric)",
                  value);
    return -1;
  }
  nbdkit_error ("unknown parameter '%s' (see nbdkit raid5 --help)", key);
  return -1;
}

int
params_complete (struct params *p)
{
  struct array_err err;

  if (array_check_config (&p->array, &err) < 0) {
    nbdkit_error ("%s", err.msg);
    return -1;
  }
  return 0;
}

void
params_free (struct params *p)
{
  for (unsigned i = 0; i < p->array.members; i++)
    free ((char *) p->array.paths[i]);
  params_init (p);
}
