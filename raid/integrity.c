/* raid/integrity.c -- the integrity record's format (integrity.h). */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include <isa-l/crc.h>

#include "raid/geom.h"
#include "raid/integrity.h"
#include "raid/le.h"

#define MAGIC "R5INTEG1"
#define R5I_VERSION 1u
#define OFF_VERSION 8u
#define OFF_UNIT 12u
#define OFF_UUID 16u
#define OFF_MEMBERS 32u
#define OFF_DATA_OFFSET 40u
#define OFF_UNITS 48u
#define OFF_REGION 56u
#define OFF_BITS 64u
#define OFF_TABLE 72u
#define OFF_END 80u
#define OFF_EVENTS 88u
#define OFF_CRC (R5I_HEADER - 4u)

/* Larger than any member md could hold, in units: 2^52 bytes. */
#define MAX_UNITS (UINT64_C (1) << 40)

uint32_t
r5i_crc (const void *buf, size_t len)
{
  const unsigned char *p = buf;
  uint32_t crc = UINT32_MAX;

  while (len > 0) {             /* crc32_iscsi takes an int length */
    size_t n = len < (1u << 30) ? len : (1u << 30);

    crc = crc32_iscsi ((unsigned char *) p, (int) n, crc);
    p += n;
    len -= n;
  }
  return ~crc;
}

static uint64_t
round_up (uint64_t v, uint64_t to)
{
  return (v + to - 1) / to * to;
}

void
r5i_layout_of (const struct r5i_header *h, struct r5i_layout *l)
{
  l->regions = (h->units + R5I_REGION_UNITS - 1) / R5I_REGION_UNITS;
  l->bits_off = R5I_HEADER;
  l->bits_bytes = round_up ((h->members * l->regions + 7) / 8, R5I_UNIT);
  l->table_off = l->bits_off + l->bits_bytes;
  l->table_bytes = round_up (h->members * h->units * 4, R5I_UNIT);
  l->file_bytes = l->table_off + l->table_bytes;
}

void
r5i_header_encode (const struct r5i_header *h, uint8_t *buf)
{
  struct r5i_layout l;

  r5i_layout_of (h, &l);
  memset (buf, 0, R5I_HEADER);
  memcpy (buf, MAGIC, 8);
  le_put (buf + OFF_VERSION, 4, R5I_VERSION);
  le_put (buf + OFF_UNIT, 4, R5I_UNIT);
  memcpy (buf + OFF_UUID, h->uuid, 16);
  le_put (buf + OFF_MEMBERS, 4, h->members);
  le_put (buf + OFF_DATA_OFFSET, 8, h->data_offset);
  le_put (buf + OFF_UNITS, 8, h->units);
  le_put (buf + OFF_REGION, 4, R5I_REGION_UNITS);
  le_put (buf + OFF_BITS, 8, l.bits_off);
  le_put (buf + OFF_TABLE, 8, l.table_off);
  le_put (buf + OFF_END, 8, l.file_bytes);
  le_put (buf + OFF_EVENTS, 8, h->events);
  le_put (buf + OFF_CRC, 4, r5i_crc (buf, OFF_CRC));
}

/* The fixed fields, and the parts where the shape puts them. */
static int
check_shape (const uint8_t *buf, const struct r5i_header *h, char *why,
             size_t len)
{
  struct r5i_layout l;

  if (le_get (buf + OFF_VERSION, 4) != R5I_VERSION)
    return le_bad (why, len, -EINVAL, "version %" PRIu64 ", not %u",
                   le_get (buf + OFF_VERSION, 4), R5I_VERSION);
  if (le_get (buf + OFF_UNIT, 4) != R5I_UNIT ||
      le_get (buf + OFF_REGION, 4) != R5I_REGION_UNITS)
    return le_bad (why, len, -EINVAL, "unit or region size not %u and %u",
                   R5I_UNIT, R5I_REGION_UNITS);
  if (h->members < R5_MIN_MEMBERS || h->members > R5_MAX_MEMBERS ||
      h->units == 0 || h->units > MAX_UNITS || h->data_offset % R5I_UNIT)
    return le_bad (why, len, -EINVAL, "%u members of %" PRIu64 " units "
                   "from byte %" PRIu64 ": not an array's shape",
                   h->members, h->units, h->data_offset);
  r5i_layout_of (h, &l);
  if (le_get (buf + OFF_BITS, 8) != l.bits_off ||
      le_get (buf + OFF_TABLE, 8) != l.table_off ||
      le_get (buf + OFF_END, 8) != l.file_bytes)
    return le_bad (why, len, -EINVAL, "its parts are not where its shape "
                   "puts them");
  return 0;
}

int
r5i_header_decode (const uint8_t *buf, struct r5i_header *h, char *why,
                   size_t why_len)
{
  struct r5i_header d;
  int r;

  if (memcmp (buf, MAGIC, 8) != 0)
    return le_bad (why, why_len, -EINVAL, "no integrity record (magic)");
  if (le_get (buf + OFF_CRC, 4) != r5i_crc (buf, OFF_CRC))
    return le_bad (why, why_len, -EBADMSG, "its header checksum is wrong");
  memcpy (d.uuid, buf + OFF_UUID, 16);
  d.members = (unsigned) le_get (buf + OFF_MEMBERS, 4);
  d.data_offset = le_get (buf + OFF_DATA_OFFSET, 8);
  d.units = le_get (buf + OFF_UNITS, 8);
  d.events = le_get (buf + OFF_EVENTS, 8);
  if (le_get (buf + OFF_MEMBERS, 4) > R5_MAX_MEMBERS)
    d.members = 0;
  if ((r = check_shape (buf, &d, why, why_len)) == 0)
    *h = d;
  return r;
}
