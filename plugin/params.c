/* plugin/params.c -- parse and check the plugin's parameters. */
#include <config.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "io/member.h"
#include "io/nbd.h"
#include "io/tls.h"
#include "plugin/params.h"
#include "raid/layout.h"
#include "raid/number.h"

#define DEFAULT_CHUNK (512u << 10)  /* mdadm's default */

/* Numbers are parsed by raid/number.h only, as raid5ctl's: decimal
 * digits, no sign, space, hex or exponent, within a range the error line
 * names (nbdkit_parse_uint64_t would take 0x10 and 010 as 16 and 8).
 */

/* SECONDS (a decimal, e.g. 2.5) -> milliseconds, 0.1 s to 1 hour. */
static int
parse_timeout (const char *key, const char *value, unsigned *ms)
{
  double s;

  if (r5_parse_decimal (value, 0.1, 3600, NULL, &s) < 0) {
    nbdkit_error ("%s=%s: expected seconds, 0.1 to 3600", key, value);
    return -1;
  }
  *ms = (unsigned) (s * 1000 + 0.5);
  return 0;
}

/* TIME with a unit (us, ms, s; bare: ms) -> microseconds, 50 us to 10 s. */
static int
parse_latency (const char *key, const char *value, uint64_t *us)
{
  static const struct { const char *unit; double scale; } units[] = {
    { "us", 1 }, { "ms", 1000 }, { "s", 1000000 }, { "", 1000 },
  };
  const char *end;
  double v;

  /* The range is judged after the unit; this bound keeps v finite. */
  if (r5_parse_decimal (value, 0, 1e12, &end, &v) < 0)
    end = NULL;
  for (unsigned i = 0; end != NULL && i < 4; i++)
    if (strcmp (end, units[i].unit) == 0) {
      v *= units[i].scale;
      if (v >= 50 && v <= 10000000) {
        *us = (uint64_t) (v + 0.5);
        return 0;
      }
      break;
    }
  nbdkit_error ("%s=%s: expected a time from 50us to 10s (500us, 2ms, "
                "0.1s; a bare number is ms)", key, value);
  return -1;
}

/* A member's name as given, made absolute (nbdkit may chdir to / when
 * it daemonizes); an NBD URI is not a path and is kept as it is: the
 * rule raid5ctl applies too (io_member_locate).
 */
static char *
member_path (const char *value)
{
  char *path = io_member_locate (value);

  if (path == NULL)
    nbdkit_error ("%s: cannot make it absolute: %m", value);
  return path;
}

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
  c->paths[c->members] = member_path (value);
  if (c->paths[c->members] == NULL)
    return -1;                /* nbdkit_absolute_path said why */
  c->members++;
  return 0;
}

/* Sizes as nbdkit writes them (a number and one optional suffix of
 * b k m g t p e, powers of 1024, or s for 512-byte sectors; a bare
 * number is bytes), from min to max (range names them).  Parsed here
 * rather than with nbdkit_parse_size() so that the one error line can
 * name the parameter and the range.
 */
static int
parse_size (const char *key, const char *value, uint64_t min, uint64_t max,
            const char *range, uint64_t *out)
{
  if (r5_parse_size (value, 1, min, max, out) == 0)
    return 0;
  nbdkit_error ("%s=%s: expected a size %s (a number with an optional "
                "suffix such as 64K or 1M)", key, value, range);
  return -1;
}

/* sync-speed-min and -max: KiB/s per member, 1 to ARRAY_SYNC_SPEED_LIMIT
 * (0 is not "md's default": leave the parameter out for that).
 */
static int
parse_speed (const char *key, const char *value, uint64_t *kib)
{
  if (r5_parse_uint (value, 1, ARRAY_SYNC_SPEED_LIMIT, kib) == 0)
    return 0;
  nbdkit_error ("%s=%s: expected KiB/s from 1 to %" PRIu64, key, value,
                ARRAY_SYNC_SPEED_LIMIT);
  return -1;
}

/* member-connections=N: connections to each NBD member whose server
 * offers multi-conn -- io/'s setting for every NBD member this process
 * opens (io/nbd.h), as nbdkit runs one array.
 */
static int
parse_connections (const char *key, const char *value)
{
  uint64_t n;

  if (r5_parse_uint (value, 1, IO_NBD_CONNECTIONS_MAX, &n) == 0 &&
      io_nbd_set_connections ((unsigned) n) == 0)
    return 0;
  nbdkit_error ("%s=%s: expected a number of connections from 1 to %u",
                key, value, IO_NBD_CONNECTIONS_MAX);
  return -1;
}

static int
parse_metadata (struct params *p, const char *value)
{
  if (strcmp (value, "auto") == 0)
    p->array.metadata = ARRAY_META_AUTO;
  else if (strcmp (value, "none") == 0)
    p->array.metadata = ARRAY_META_NONE;
  else {
    nbdkit_error ("metadata=%s: expected auto or none", value);
    return -1;
  }
  return 0;
}

/* re-add=auto (mdadm's POLICY action=re-add) or manual. */
static int
parse_readd (struct params *p, const char *value)
{
  if (strcmp (value, "auto") == 0 || strcmp (value, "manual") == 0) {
    p->array.manual_readd = value[0] == 'm';
    return 0;
  }
  nbdkit_error ("re-add=%s: expected auto or manual", value);
  return -1;
}

/* nbdkit_parse_bool() would name only the value in its error. */
static int
parse_bool (const char *key, const char *value, bool *out)
{
  static const char *const yes[] = { "1", "true", "t", "yes", "y", "on" };
  static const char *const no[] = { "0", "false", "f", "no", "n", "off" };

  for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
    if (strcasecmp (value, yes[i]) == 0) {
      *out = true;
      return 0;
    }
    if (strcasecmp (value, no[i]) == 0) {
      *out = false;
      return 0;
    }
  }
  nbdkit_error ("%s=%s: expected true or false", key, value);
  return -1;
}

/* tls-certificates=DIR, tls-psk=FILE (made absolute: members connect
 * again long after nbdkit may have changed to /), tls-username=NAME.
 */
static int
set_tls_string (const char *key, const char *value, const char **dst)
{
  free ((char *) *dst);
  *dst = strcmp (key, "tls-username") == 0 ? strdup (value)
                                           : nbdkit_absolute_path (value);
  if (*dst == NULL && strcmp (key, "tls-username") == 0)
    nbdkit_error ("%s=%s: %m", key, value);
  return *dst ? 0 : -1;
}

/* tls=require: plain-text NBD members are refused; tls=auto (the
 * default): TLS for the members whose URI asks for it (nbds://).
 */
static int
parse_tls (struct params *p, const char *value)
{
  if (strcmp (value, "require") == 0 || strcmp (value, "auto") == 0) {
    p->array.tls.require = value[0] == 'r';
    return 0;
  }
  nbdkit_error ("tls=%s: expected require (or auto: TLS for nbds:// "
                "members only, the default)", value);
  return -1;
}

/* The TLS settings usable (io_tls_check), and given to every member
 * whose URI takes TLS: without them its server could not be verified.
 */
static int
check_tls (const struct params *p)
{
  const struct io_tls *t = &p->array.tls;
  const struct array_config *c = &p->array;
  int r;

  if (t->certificates && t->psk_file) {
    nbdkit_error ("tls-certificates= and tls-psk=: give one of them");
    return -1;
  }
  if ((r = io_tls_check (t)) < 0 && t->psk_file) {
    nbdkit_error ("tls-psk=%s: %s", t->psk_file, strerror (-r));
    return -1;
  }
  if (r < 0) {
    nbdkit_error ("tls-certificates=%s: %s", t->certificates,
                  io_strerror (r));
    return -1;
  }
  if (t->username && t->psk_file == NULL) {
    nbdkit_error ("tls-username=%s: only with tls-psk=FILE", t->username);
    return -1;
  }
  if (t->certificates || t->psk_file)
    return 0;
  for (unsigned i = 0; i < c->members; i++)
    if (c->paths[i] && io_tls_uri (c->paths[i])) {
      nbdkit_error ("member %u (%s): a TLS member needs tls-certificates=DIR "
                    "or tls-psk=FILE to verify its server", i, c->paths[i]);
      return -1;
    }
  if (c->spare && io_tls_uri (c->spare)) {
    nbdkit_error ("spare=%s: a TLS member needs tls-certificates=DIR or "
                  "tls-psk=FILE to verify its server", c->spare);
    return -1;
  }
  return 0;
}

void
params_init (struct params *p)
{
  memset (p, 0, sizeof *p);
  p->array.chunk = DEFAULT_CHUNK;
  p->array.layout = R5_LEFT_SYMMETRIC;
  p->array.metadata = ARRAY_META_AUTO;
}

/* The handlers of the key table below: each takes its key's value. */

static int
set_disk (struct params *p, const char *key, const char *value)
{
  return add_disk (p, value);
}

static int
set_chunk (struct params *p, const char *key, const char *value)
{
  p->array.given |= ARRAY_GIVEN_CHUNK;
  return parse_size (key, value, R5_MIN_CHUNK, R5_MAX_CHUNK,
                     "from 4K to 64M", &p->array.chunk);
}

static int
set_data_offset (struct params *p, const char *key, const char *value)
{
  p->array.given |= ARRAY_GIVEN_DATA_OFFSET;
  return parse_size (key, value, 0, INT64_MAX, "below 8E",
                     &p->array.data_offset);
}

static int
set_metadata (struct params *p, const char *key, const char *value)
{
  return parse_metadata (p, value);
}

static int
set_layout (struct params *p, const char *key, const char *value)
{
  p->array.given |= ARRAY_GIVEN_LAYOUT;
  if (r5_layout_parse (value, &p->array.layout) == 0)
    return 0;
  nbdkit_error ("layout=%s: unknown layout (expected " R5_LAYOUT_NAMES ")",
                value);
  return -1;
}

/* A file parameter's value: not empty, made absolute (nbdkit changes to
 * / when it forks); *dst owns it.
 */
static int
set_file (const char *key, const char *value, const char **dst)
{
  if (value[0] == '\0') {
    nbdkit_error ("%s=: empty path", key);
    return -1;
  }
  *dst = nbdkit_absolute_path (value);
  return *dst ? 0 : -1;
}

static int
set_control (struct params *p, const char *key, const char *value)
{
  return set_file (key, value, (const char **) &p->control);
}

/* A spare is named as a member is: an NBD URI stays as it is. */
static int
set_spare (struct params *p, const char *key, const char *value)
{
  if (value[0] == '\0') {
    nbdkit_error ("%s=: empty path", key);
    return -1;
  }
  p->array.spare = member_path (value);
  return p->array.spare ? 0 : -1;
}

static int
set_integrity (struct params *p, const char *key, const char *value)
{
  return set_file (key, value, &p->array.integrity);
}

static int
set_backup_file (struct params *p, const char *key, const char *value)
{
  return set_file (key, value, &p->array.grow_backup);
}

static int
set_tls (struct params *p, const char *key, const char *value)
{
  return parse_tls (p, value);
}

static int
set_tls_certificates (struct params *p, const char *key, const char *value)
{
  return set_tls_string (key, value, &p->array.tls.certificates);
}

static int
set_tls_psk (struct params *p, const char *key, const char *value)
{
  return set_tls_string (key, value, &p->array.tls.psk_file);
}

static int
set_tls_username (struct params *p, const char *key, const char *value)
{
  return set_tls_string (key, value, &p->array.tls.username);
}

static int
set_direct (struct params *p, const char *key, const char *value)
{
  return parse_bool (key, value, &p->array.direct);
}

static int
set_force (struct params *p, const char *key, const char *value)
{
  return parse_bool (key, value, &p->array.force);
}

static int
set_readonly (struct params *p, const char *key, const char *value)
{
  return parse_bool (key, value, &p->array.read_only);
}

static int
set_spare_force (struct params *p, const char *key, const char *value)
{
  return parse_bool (key, value, &p->array.spare_force);
}

static int
set_readd (struct params *p, const char *key, const char *value)
{
  return parse_readd (p, value);
}

static int
set_member_timeout (struct params *p, const char *key, const char *value)
{
  return parse_timeout (key, value, &p->array.member_timeout_ms);
}

static int
set_member_connections (struct params *p, const char *key, const char *value)
{
  return parse_connections (key, value);
}

static int
set_sync_speed_min (struct params *p, const char *key, const char *value)
{
  return parse_speed (key, value, &p->sync_speed_min);
}

static int
set_sync_speed_max (struct params *p, const char *key, const char *value)
{
  return parse_speed (key, value, &p->sync_speed_max);
}

static int
set_sync_latency_max (struct params *p, const char *key, const char *value)
{
  return parse_latency (key, value, &p->sync_latency_max_us);
}

/* Every key the plugin takes, and how.  Every key but disk= is given
 * once: a second chunk= or sync-speed-max= would silently replace the
 * first (mdadm: "may only be specified once").
 */
static const struct {
  const char *key;
  int (*set) (struct params *p, const char *key, const char *value);
  bool many;
} keys[] = {
  { "disk", set_disk, true },
  { "chunk", set_chunk, false },
  { "data-offset", set_data_offset, false },
  { "metadata", set_metadata, false },
  { "layout", set_layout, false },
  { "control", set_control, false },
  { "spare", set_spare, false },
  { "integrity", set_integrity, false },
  { "backup-file", set_backup_file, false },
  { "tls", set_tls, false },
  { "tls-certificates", set_tls_certificates, false },
  { "tls-psk", set_tls_psk, false },
  { "tls-username", set_tls_username, false },
  { "direct", set_direct, false },
  { "force", set_force, false },
  { "readonly", set_readonly, false },
  { "spare-force", set_spare_force, false },
  { "re-add", set_readd, false },
  { "member-timeout", set_member_timeout, false },
  { "member-connections", set_member_connections, false },
  { "sync-speed-min", set_sync_speed_min, false },
  { "sync-speed-max", set_sync_speed_max, false },
  { "sync-latency-max", set_sync_latency_max, false },
};

int
params_config (struct params *p, const char *key, const char *value)
{
  _Static_assert (sizeof keys / sizeof keys[0] <= 32, "bits of p->given");
  for (unsigned i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    if (strcmp (key, keys[i].key) != 0)
      continue;
    if (!keys[i].many && (p->given & (1u << i))) {
      nbdkit_error ("%s= given twice (the second: %s=%s): give it once", key,
                    key, value);
      return -1;
    }
    p->given |= 1u << i;
    return keys[i].set (p, key, value);
  }
  nbdkit_error ("unknown parameter '%s' (see nbdkit raid5 --help)", key);
  return -1;
}

int
params_complete (struct params *p)
{
  struct array_err err;

  /* Both given (0: not given) and crossed: which one is meant is not
   * ours to guess.  One alone past the other's default moves it along.
   */
  if (p->sync_speed_min && p->sync_speed_max &&
      p->sync_speed_min > p->sync_speed_max) {
    nbdkit_error ("sync-speed-min=%" PRIu64 " is above sync-speed-max=%"
                  PRIu64 ": the minimum cannot exceed the maximum",
                  p->sync_speed_min, p->sync_speed_max);
    return -1;
  }
  /* The max alone below md's default min: the cap given holds, the min
   * comes down to it (array_set_sync_speed would raise the max instead).
   */
  if (p->sync_speed_max && !p->sync_speed_min &&
      p->sync_speed_max < ARRAY_SYNC_SPEED_MIN)
    p->sync_speed_min = p->sync_speed_max;
  if (array_check_config (&p->array, &err) < 0) {
    nbdkit_error ("%s", err.msg);
    return -1;
  }
  return check_tls (p);
}

void
params_free (struct params *p)
{
  for (unsigned i = 0; i < p->array.members; i++)
    free ((char *) p->array.paths[i]);
  free (p->control);
  free ((char *) p->array.spare);
  free ((char *) p->array.integrity);
  free ((char *) p->array.grow_backup);
  free ((char *) p->array.tls.certificates);
  free ((char *) p->array.tls.psk_file);
  free ((char *) p->array.tls.username);
  params_init (p);
}
