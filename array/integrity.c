/* array/integrity.c -- the live integrity record (integrity.h): its
 * file, the checksums of writes, verifying reads.  Healing is heal.c.
 */
#include <config.h>

#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "array/integrity.h"
#include "array/object.h"
#include "raid/jobplan.h"

#define REGION_BYTES ((uint64_t) R5I_REGION_UNITS * R5I_UNIT)

static uint32_t *
slot_of (const struct integrity *t, unsigned m, uint64_t unit)
{
  return (uint32_t *) (t->map + t->l.table_off) + m * t->h.units + unit;
}

static uint32_t
crc_get (const struct integrity *t, unsigned m, uint64_t unit)
{
  return le32toh (__atomic_load_n (slot_of (t, m, unit), __ATOMIC_RELAXED));
}

static void
crc_put (struct integrity *t, unsigned m, uint64_t unit, uint32_t crc)
{
  __atomic_store_n (slot_of (t, m, unit), htole32 (crc), __ATOMIC_RELAXED);
}

static uint8_t *
bits (const struct integrity *t)
{
  return t->map + t->l.bits_off;
}

static bool
bit_get (const uint8_t *b, uint64_t i)
{
  return __atomic_load_n (&b[i / 8], __ATOMIC_RELAXED) & (1u << (i % 8));
}

static void
bit_put (uint8_t *b, uint64_t i, bool on)
{
  if (on)
    __atomic_fetch_or (&b[i / 8], (uint8_t) (1u << (i % 8)), __ATOMIC_RELAXED);
  else
    __atomic_fetch_and (&b[i / 8], (uint8_t) ~(1u << (i % 8)),
                        __ATOMIC_RELAXED);
}

/* The pages of the file holding [off, off+len) durable. */
int
sync_range_of (const struct integrity *t, uint64_t off, uint64_t len)
{
  return io_mapfile_sync (&t->file, off, len);
}

/* Region r of member m marked, durably, before its checksums change. */
static int
mark (struct integrity *t, unsigned m, uint64_t r)
{
  uint64_t i = r5i_bit (&t->l, m, r);
  int e = 0;

  if (bit_get (t->durable, i))
    return 0;
  pthread_mutex_lock (&t->lock);
  if (!bit_get (t->durable, i)) {
    bit_put (bits (t), i, true);
    if ((e = sync_range_of (t, t->l.bits_off + i / 8, 1)) == 0)
      bit_put (t->durable, i, true);
  }
  pthread_mutex_unlock (&t->lock);
  return e;
}

/* The checksums of member m's bytes [off, off+len) (unit-aligned
 * member offsets of its data area), which are now buf (NULL: zeroes).
 */
static void
put_crcs (struct array *a, unsigned m, uint64_t off, uint64_t len,
          const char *buf)
{
  struct integrity *t = &a->integrity;
  uint64_t u = (off - t->h.data_offset) / R5I_UNIT;

  for (uint64_t at = 0; at < len; at += R5I_UNIT, u++)
    crc_put (t, m, u, buf ? r5i_crc (buf + at, R5I_UNIT) : t->zero_crc);
}

static bool
data_units (const struct integrity *t, uint64_t off, uint64_t len)
{
  return off >= t->h.data_offset && off % R5I_UNIT == 0 &&
    len % R5I_UNIT == 0 &&
    (off - t->h.data_offset) / R5I_UNIT + len / R5I_UNIT <= t->h.units;
}

int
integrity_note_writes (struct array *a, const struct io_op *ops, size_t n)
{
  struct integrity *t = &a->integrity;
  int e;

  for (size_t i = 0; i < n; i++) {
    const struct io_op *op = &ops[i];
    uint64_t first, last;

    if (op->kind == IO_READ || op->kind == IO_FSYNC || op->len == 0)
      continue;
    if (!data_units (t, op->off, op->len)) {
      array_log (a, ARRAY_LOG_ERROR, "integrity: member %u: a write of %"
                 PRIu64 " bytes at %" PRIu64 " is not of whole units",
                 op->member, op->len, op->off);
      continue;
    }
    first = (op->off - t->h.data_offset) / REGION_BYTES;
    last = (op->off + op->len - 1 - t->h.data_offset) / REGION_BYTES;
    for (uint64_t r = first; r <= last; r++)
      if ((e = mark (t, op->member, r)) < 0)
        return e;
    put_crcs (a, op->member, op->off, op->len,
              op->kind == IO_WRITE ? op->buf : NULL);
  }
  return 0;
}

/* Are the checksums of member m's units in [off, off + len) known (none
 * in a region left unknown), so that integrity_verify checks them?
 */
static bool
known (const struct integrity *t, unsigned m, uint64_t off, uint64_t len)
{
  uint64_t first = (off - t->h.data_offset) / REGION_BYTES;
  uint64_t last = (off + len - 1 - t->h.data_offset) / REGION_BYTES;

  for (uint64_t r = first; r <= last; r++)
    if (bit_get (t->unknown, r5i_bit (&t->l, m, r)))
      return false;
  return true;
}

bool
integrity_row_vouches (struct array *a, const struct r5_geom *g,
                       unsigned m, uint64_t off, uint64_t len,
                       const char *scratch)
{
  const struct integrity *t = &a->integrity;
  uint64_t stripe = (off - g->data_offset) / g->chunk;

  if (!data_units (t, off, len) ||
      array_member_bad (a, m, off, len, NULL) == MD_BB_NONE)
    return false;
  /* Not where a crash may have torn the row: its units, computed again
   * from the members at the start, pass their checksums torn.
   */
  if (meta_resync_due (a) && meta_resync_visits (a, stripe) &&
      stripe >= meta_resync_from (a) * 512 / g->chunk)
    return false;
  for (unsigned k = 0; k < g->members; k++)
    if (k != m && (!known (t, k, off, len) ||
                   !integrity_verify (a, k, off,
                                      scratch + r5_job_column (g, 0, k, len),
                                      len, NULL)))
      return false;
  return true;
}

void
integrity_writes_begin (struct array *a)
{
  pthread_rwlock_rdlock (&a->integrity.gate);
}

void
integrity_writes_end (struct array *a)
{
  pthread_rwlock_unlock (&a->integrity.gate);
}

bool
integrity_verify (struct array *a, unsigned member, uint64_t off,
                  const void *buf, uint64_t len, struct integrity_bad *bad)
{
  struct integrity *t = &a->integrity;
  uint64_t skip = (R5I_UNIT - (off - t->h.data_offset) % R5I_UNIT) % R5I_UNIT;

  if (off < t->h.data_offset)
    return true;
  for (uint64_t at = skip; at + R5I_UNIT <= len; at += R5I_UNIT) {
    uint64_t u = (off + at - t->h.data_offset) / R5I_UNIT;

    if (u >= t->h.units ||
        bit_get (t->unknown, r5i_bit (&t->l, member, u / R5I_REGION_UNITS)))
      continue;
    t->verified++;
    if (r5i_crc ((const char *) buf + at, R5I_UNIT) != crc_get (t, member, u)) {
      if (bad)
        *bad = (struct integrity_bad) { member, off + at };
      return false;
    }
  }
  return true;
}

/* Region r of member m computed from the member's bytes: 0; 1 if a
 * medium error kept it from being read -- its checksums are then unknown
 * (not verified), and it stays marked (integrity_settle) for the next
 * start to compute; a request that meets the error corrects it from the
 * other members, as md does, so one bad sector does not keep the array
 * from starting; or -errno (err).
 */
static int
recompute (struct array *a, unsigned m, uint64_t r, char *buf,
           struct array_err *err)
{
  struct integrity *t = &a->integrity;
  uint64_t off = t->h.data_offset + r * REGION_BYTES;
  uint64_t end = t->h.data_offset + t->h.units * R5I_UNIT;
  uint64_t len = end - off < REGION_BYTES ? end - off : REGION_BYTES;
  struct io_op op = { .kind = IO_READ, .member = m, .buf = buf, .off = off,
                      .len = len };
  int e = io_run (a->members, &op, 1, 0);

  if (e == 0) {
    put_crcs (a, m, off, len, buf);
    return 0;
  }
  if (io_op_medium_error (&op)) {
    bit_put (t->unknown, r5i_bit (&t->l, m, r), true);
    t->unread_regions++;
    array_log (a, ARRAY_LOG_ERROR, "integrity record %s: member %u (%s): "
               "read error in member bytes %" PRIu64 "+%" PRIu64 " (%s): "
               "their checksums are not known, and not verified, until a "
               "start reads them", t->path, m, array_member_path (a, m),
               off, len, strerror (-op.result));
    return 1;
  }
  array_set_err (err, "integrity record %s: member %u (%s): cannot read "
                 "region %" PRIu64 ": %s", t->path, m,
                 array_member_path (a, m), r, strerror (-e));
  return e;
}

int64_t
integrity_recompute_marked (struct array *a, struct array_err *err)
{
  struct integrity *t = &a->integrity;
  char *buf = aligned_alloc (R5I_UNIT, REGION_BYTES);
  int64_t n = 0;
  int e = 0;

  if (buf == NULL)
    return -ENOMEM;
  for (unsigned m = 0; m < t->h.members && e >= 0; m++)
    for (uint64_t r = 0; r < t->l.regions && e >= 0; r++) {
      if (!bit_get (bits (t), r5i_bit (&t->l, m, r)))
        continue;
      /* A member being rebuilt counts: below the cursor its bytes are in
       * service, above it the rebuild writes (and sets) them again.
       */
      if (health_state (&a->health, m) != MEMBER_ACTIVE &&
          health_state (&a->health, m) != MEMBER_REBUILDING)
        bit_put (t->unknown, r5i_bit (&t->l, m, r), true);
      else if ((e = recompute (a, m, r, buf, err)) == 0)
        n++;
    }
  free (buf);
  return e < 0 ? e : n;
}

int
integrity_settle (struct array *a)
{
  struct integrity *t = &a->integrity;
  int e;

  if (!t->on)
    return 0;
  pthread_rwlock_wrlock (&t->gate);
  e = sync_range_of (t, t->l.table_off, t->l.table_bytes);
  if (e == 0) {
    pthread_mutex_lock (&t->lock);
    memcpy (bits (t), t->unknown, t->l.bits_bytes);
    memcpy (t->durable, t->unknown, t->l.bits_bytes);
    e = sync_range_of (t, t->l.bits_off, t->l.bits_bytes);
    pthread_mutex_unlock (&t->lock);
  }
  pthread_rwlock_unlock (&t->gate);
  return e;
}

void
integrity_poison (struct array *a, unsigned member, uint64_t off)
{
  struct integrity *t = &a->integrity;
  uint64_t u = (off - t->h.data_offset) / R5I_UNIT;

  crc_put (t, member, u, ~crc_get (t, member, u));
}

void
integrity_member_rebuilt (struct array *a, unsigned member)
{
  struct integrity *t = &a->integrity;

  if (!t->on)
    return;
  pthread_mutex_lock (&t->lock);
  for (uint64_t r = 0; r < t->l.regions; r++)
    bit_put (t->unknown, r5i_bit (&t->l, member, r), false);
  pthread_mutex_unlock (&t->lock);
}
