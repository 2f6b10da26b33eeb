/* tests/unit/test-integrity.c -- raid/integrity.c: the checksum is
 * crc32c, the header survives a round trip, and a header that is not
 * one, is damaged or of an impossible shape is refused with a reason.
 */
#include <config.h>

#include <errno.h>
#include <string.h>

#include <criterion/criterion.h>

#include "raid/integrity.h"

static const struct r5i_header sample = {
  .uuid = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16 },
  .members = 3, .data_offset = 1 << 20, .units = 2560, .events = 1234567,
};

Test (integrity, crc_is_crc32c)
{
  uint8_t zero[4096] = { 0 };

  cr_assert_eq (r5i_crc ("123456789", 9), 0xe3069283u);
  /* RFC 3720 B.4: 32 bytes of zeroes. */
  cr_assert_eq (r5i_crc (zero, 32), 0x8a9136aau);
}

Test (integrity, layout)
{
  struct r5i_layout l;

  r5i_layout_of (&sample, &l);
  cr_assert_eq (l.regions, 3);          /* 2560 units: 2.5 regions */
  cr_assert_eq (l.bits_off, 4096);
  cr_assert_eq (l.bits_bytes, 4096);
  cr_assert_eq (l.table_off, 8192);
  cr_assert_eq (l.table_bytes, 32768);  /* 30720, in whole pages */
  cr_assert_eq (l.file_bytes, 8192 + 32768);
  cr_assert_eq (r5i_bit (&l, 2, 1), 7);
}

Test (integrity, round_trip)
{
  uint8_t buf[R5I_HEADER];
  struct r5i_header h;

  r5i_header_encode (&sample, buf);
  cr_assert_eq (r5i_header_decode (buf, &h, NULL, 0), 0);
  cr_assert_eq (memcmp (h.uuid, sample.uuid, 16), 0);
  cr_assert_eq (h.members, sample.members);
  cr_assert_eq (h.data_offset, sample.data_offset);
  cr_assert_eq (h.units, sample.units);
  cr_assert_eq (h.events, sample.events);
}

Test (integrity, refusals)
{
  uint8_t buf[R5I_HEADER];
  struct r5i_header h, odd = sample;
  char why[128];

  memset (buf, 0, sizeof buf);
  cr_assert_eq (r5i_header_decode (buf, &h, why, sizeof why), -EINVAL);
  cr_assert_str_eq (why, "no integrity record (magic)");
  r5i_header_encode (&sample, buf);
  buf[40] ^= 1;                         /* data offset, checksum kept */
  cr_assert_eq (r5i_header_decode (buf, &h, why, sizeof why), -EBADMSG);
  odd.data_offset = 512;                /* not a whole unit */
  r5i_header_encode (&odd, buf);
  cr_assert_eq (r5i_header_decode (buf, &h, why, sizeof why), -EINVAL);
  cr_assert (strstr (why, "not an array's shape") != NULL, "%s", why);
  odd = sample;
  odd.members = 2;
  r5i_header_encode (&odd, buf);
  cr_assert_eq (r5i_header_decode (buf, &h, why, sizeof why), -EINVAL);
}
