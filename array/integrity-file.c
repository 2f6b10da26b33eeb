/* array/integrity-file.c -- the integrity record's file: made, or
 * checked against the array it belongs to, mapped, its marked regions
 * computed again; and closed (integrity.h).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "array/integrity.h"
#include "array/object.h"

/* The header this array's record has. */
static void
expected (const struct array *a, struct r5i_header *h)
{
  memcpy (h->uuid, a->meta.live.common.set_uuid, 16);
  h->members = a->geom.members;
  h->data_offset = a->geom.data_offset;
  h->units = a->geom.member_data / R5I_UNIT;
}

/* A new record: its header, every region marked (so that every checksum
 * is computed at once).
 */
static int
make (struct integrity *t, const struct r5i_header *h, struct array_err *err)
{
  uint8_t *buf = calloc (1, R5I_HEADER);
  uint8_t *ones = malloc (t->l.bits_bytes);
  int e = 0;

  if (buf == NULL || ones == NULL)
    e = -ENOMEM;
  else {
    r5i_header_encode (h, buf);
    memset (ones, 0xff, t->l.bits_bytes);
    if ((e = io_mapfile_allocate (&t->file, t->l.file_bytes)) == 0 &&
        (e = io_mapfile_pwrite (&t->file, ones, t->l.bits_bytes,
                                t->l.bits_off)) == 0 &&
        (e = io_mapfile_pwrite (&t->file, buf, R5I_HEADER, 0)) == 0)
      e = io_mapfile_datasync (&t->file);
  }
  if (e < 0)
    array_set_err (err, "integrity record %s: cannot make it: %s", t->path,
                   strerror (-e));
  free (buf);
  free (ones);
  return e;
}

/* An existing record: of this array, and whole; its header in *got. */
static int
check (struct integrity *t, const struct r5i_header *want, uint64_t size,
       struct r5i_header *got, struct array_err *err)
{
  uint8_t buf[R5I_HEADER];
  struct r5i_header h;
  char why[160] = "";
  int e;

  if (io_mapfile_pread (&t->file, buf, R5I_HEADER, 0) < 0)
    snprintf (why, sizeof why, "shorter than its header");
  else if ((e = r5i_header_decode (buf, &h, why, sizeof why)) == 0) {
    if (memcmp (h.uuid, want->uuid, 16) != 0)
      snprintf (why, sizeof why, "it belongs to another array (uuid)");
    else if (h.members != want->members || h.data_offset != want->data_offset
             || h.units != want->units)
      snprintf (why, sizeof why, "it is of %u members of %" PRIu64 " units "
                "from byte %" PRIu64 ", the array of %u of %" PRIu64
                " from %" PRIu64, h.members, h.units, h.data_offset,
                want->members, want->units, want->data_offset);
    else if (size < t->l.file_bytes)
      snprintf (why, sizeof why, "%" PRIu64 " bytes, not %" PRIu64, size,
                t->l.file_bytes);
  }
  if (why[0] == '\0') {
    *got = h;
    return 0;
  }
  array_set_err (err, "integrity record %s: %s", t->path, why);
  return -EINVAL;
}

static int
open_file (struct array *a, struct array_err *err, bool *made,
           struct r5i_header *got)
{
  struct integrity *t = &a->integrity;
  struct r5i_header h;
  uint64_t size;
  int e = io_mapfile_open (&t->file, t->path, &size);

  if (e < 0) {
    array_set_err (err, "integrity record %s: cannot open: %s", t->path,
                   strerror (-e));
    return e;
  }
  expected (a, &h);
  t->h = h;
  r5i_layout_of (&h, &t->l);
  *made = size == 0;
  *got = h;
  e = *made ? make (t, &h, err) : check (t, &h, size, got, err);
  if (e == 0 && (e = io_mapfile_map (&t->file, t->l.file_bytes)) < 0)
    array_set_err (err, "integrity record %s: cannot map it: %s", t->path,
                   strerror (-e));
  if (e < 0) {
    io_mapfile_close (&t->file);
    return e;
  }
  t->map = t->file.map;
  return 0;
}

static int
refuse (const struct array *a, struct array_err *err)
{
  if (!a->meta.enabled) {
    array_set_err (err, "integrity=%s: needs md superblocks on the members "
                   "(the record is bound to the array's uuid)",
                   a->integrity.path);
    return -EINVAL;
  }
  if (a->geom.data_offset % R5I_UNIT) {
    array_set_err (err, "integrity=%s: the data offset (%" PRIu64 " bytes) "
                   "is not a multiple of 4 KiB", a->integrity.path,
                   a->geom.data_offset);
    return -EINVAL;
  }
  return 0;
}

static int
sync_in_service (struct array *a, struct array_err *err)
{
  struct io_op ops[R5_MAX_MEMBERS];
  size_t n = 0;
  int e;

  for (unsigned m = 0; m < a->geom.members; m++)
    if (health_takes_writes (&a->health, m))
      ops[n++] = (struct io_op) { .kind = IO_FSYNC, .member = m };
  if ((e = io_run (a->members, ops, n, 0)) < 0)
    array_set_err (err, "integrity record %s: cannot sync the members: %s",
                   a->integrity.path, strerror (-e));
  return e;
}

/* Were the members written without the record since it was settled?
 * Each clean or dirty transition of md counts an event: the record's
 * count is the members' after its last settle, and one more if they
 * were left dirty by a crash (ours).  Anything else -- mdadm, a server
 * or a repair without the record -- leaves more.
 */
static bool
stale (const struct r5i_header *rec, uint64_t events, bool dirty)
{
  return !(events == rec->events || (dirty && events == rec->events + 1));
}

void
integrity_record_events (struct array *a)
{
  struct integrity *t = &a->integrity;

  if (!t->on)
    return;
  t->h.events = a->meta.live.common.events;
  r5i_header_encode (&t->h, t->map);
  if (sync_range_of (t, 0, R5I_HEADER) < 0)
    array_log (a, ARRAY_LOG_ERROR, "integrity record %s: cannot write its "
               "header: %m", t->path);
}

int
integrity_open (struct array *a, const char *path, uint64_t events,
                bool dirty, struct array_err *err)
{
  struct integrity *t = &a->integrity;
  struct r5i_header rec;
  bool made = false, old = false;
  int64_t n;
  int e;

  io_mapfile_init (&t->file);
  t->zero_crc = r5i_crc (a->zero, R5I_UNIT);
  if ((t->path = strdup (path)) == NULL)
    return -ENOMEM;
  if ((e = refuse (a, err)) < 0 ||
      (e = open_file (a, err, &made, &rec)) < 0)
    return e;
  if ((t->unknown = calloc (1, t->l.bits_bytes)) == NULL ||
      (t->durable = malloc (t->l.bits_bytes)) == NULL)
    return -ENOMEM;
  if (!made && stale (&rec, events, dirty)) {
    old = true;
    array_log (a, ARRAY_LOG_NOTICE, "integrity record %s: settled at md "
               "events %" PRIu64 ", the members are at %" PRIu64 " (written "
               "without it): every checksum is computed again", path,
               rec.events, events);
    memset (t->map + t->l.bits_off, 0xff, t->l.bits_bytes);
  }
  memcpy (t->durable, t->map + t->l.bits_off, t->l.bits_bytes);
  pthread_mutex_init (&t->lock, NULL);
  pthread_rwlock_init (&t->gate, NULL);
  t->locks_made = true;
  if (!made && !old && (e = integrity_verify_behind (a, err)) < 0)
    return e;
  if ((n = integrity_recompute_marked (a, err)) < 0)
    return (int) n;
  t->recomputed = (uint64_t) n;
  /* What was read may be in a cache only (a process killed): on the
   * members before the marks go.
   */
  if (n > 0 && (e = sync_in_service (a, err)) < 0)
    return e;
  t->on = true;
  if (made || n > 0)
    array_log (a, ARRAY_LOG_NOTICE, "integrity record %s: %s: the "
               "checksums of %" PRId64 " regions of 4 MiB computed from the "
               "members", path, made ? "made" : old ? "stale"
               : "not settled at the last stop", n);
  if ((e = integrity_settle (a)) < 0) {
    array_set_err (err, "integrity record %s: cannot sync: %s", path,
                   strerror (-e));
    return e;
  }
  integrity_record_events (a);
  return 0;
}

void
integrity_close (struct array *a)
{
  struct integrity *t = &a->integrity;

  if (t->on && integrity_settle (a) < 0)
    array_log (a, ARRAY_LOG_ERROR, "integrity record %s: cannot sync: %m",
               t->path);
  else
    integrity_record_events (a);
  io_mapfile_close (&t->file);
  if (t->locks_made) {
    pthread_mutex_destroy (&t->lock);
    pthread_rwlock_destroy (&t->gate);
  }
  free (t->unknown);
  free (t->durable);
  free (t->path);
  memset (t, 0, sizeof *t);
  io_mapfile_init (&t->file);
}
