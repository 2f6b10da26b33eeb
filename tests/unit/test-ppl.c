/* tests/unit/test-ppl.c -- raid/ppl.c against md's PPL format.
 *
 * The reference for every checksum is a bitwise CRC-32C written here
 * (reflected polynomial 0x82F63B78, md's crc32c_le), not ISA-L; byte
 * offsets are md_p.h's struct ppl_header; the empty header is the one
 * mdadm's write_init_ppl1 writes; entry extents follow the kernel's
 * ppl_recover_entry.
 */
#include <config.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>

#include "raid/ppl.h"

/* md's crc32c_le(crc, buf, len), bit by bit. */
static uint32_t
ref_crc32c_le (uint32_t crc, const uint8_t *p, size_t len)
{
  while (len--) {
    crc ^= *p++;
    for (int k = 0; k < 8; k++)
      crc = crc & 1 ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
  }
  return crc;
}

static uint32_t
get32 (const uint8_t *p)
{
  return (uint32_t) p[0] | (uint32_t) p[1] << 8 | (uint32_t) p[2] << 16 |
    (uint32_t) p[3] << 24;
}

static uint64_t
get64 (const uint8_t *p)
{
  return get32 (p) | (uint64_t) get32 (p + 4) << 32;
}

static const uint8_t uuid[16] = {
  0x3a, 0x41, 0x0b, 0x66, 0x1c, 0xd2, 0x4e, 0x80,
  0x9f, 0x07, 0x5e, 0x11, 0xa2, 0xc4, 0x77, 0x19,
};

Test (ppl, crc_is_standard_crc32c)
{
  uint8_t buf[9000];

  cr_assert_eq (ppl_checksum ("123456789", 9), 0xE3069283u,
                "the CRC-32C check value");
  srand (7);
  for (size_t i = 0; i < sizeof buf; i++)
    buf[i] = (uint8_t) rand ();
  cr_assert_eq (ppl_checksum (buf, sizeof buf),
                ~ref_crc32c_le (~0u, buf, sizeof buf));
  /* In pieces, as PP is accumulated page by page. */
  uint32_t crc = PPL_CRC_SEED;
  crc = ppl_crc_update (crc, buf, 4096);
  crc = ppl_crc_update (crc, buf + 4096, 4096);
  crc = ppl_crc_update (crc, buf + 8192, sizeof buf - 8192);
  cr_assert_eq (ppl_crc_final (crc), ppl_checksum (buf, sizeof buf));
}

Test (ppl, signature_is_md_native)
{
  cr_assert_eq (ppl_signature (uuid), ~ref_crc32c_le (~0u, uuid, 16));
}

/* mdadm's write_init_ppl1: 0xff reserved, the signature, all else zero,
 * then the checksum over the whole block.
 */
Test (ppl, empty_header_is_mdadms)
{
  uint8_t want[PPL_HEADER_SIZE] = { 0 }, got[PPL_HEADER_SIZE];
  struct ppl_header h = { .signature = ppl_signature (uuid) };
  uint32_t sig = ~ref_crc32c_le (~0u, uuid, 16), csum;

  memset (want, 0xff, 512);
  for (int i = 0; i < 4; i++)
    want[512 + i] = (uint8_t) (sig >> (8 * i));
  csum = ~ref_crc32c_le (~0u, want, sizeof want);
  for (int i = 0; i < 4; i++)
    want[532 + i] = (uint8_t) (csum >> (8 * i));
  ppl_header_encode (&h, got);
  cr_assert_arr_eq (got, want, sizeof want);
}

static struct ppl_header
sample_header (void)
{
  struct ppl_header h = { .signature = ppl_signature (uuid),
                          .generation = 0x0102030405060708ull,
                          .entries_count = 3 };

  h.entries[0] = (struct ppl_entry) { 2048, 4096, 8192, 2, 0xdeadbeef };
  h.entries[1] = (struct ppl_entry) { 4096, 0, 1u << 20, 1, 0 };
  h.entries[2] = (struct ppl_entry) { UINT64_C (0x123456789a), 65536,
                                      131072, 0, 7 };
  return h;
}

Test (ppl, header_bytes_are_md_p_h)
{
  struct ppl_header h = sample_header ();
  uint8_t b[PPL_HEADER_SIZE], z[PPL_HEADER_SIZE];

  ppl_header_encode (&h, b);
  for (int i = 0; i < 512; i++)
    cr_assert_eq (b[i], 0xff, "reserved byte %d", i);
  cr_assert_eq (get32 (b + 512), h.signature);
  cr_assert_eq (get32 (b + 516), 0, "padding");
  cr_assert_eq (get64 (b + 520), h.generation);
  cr_assert_eq (get32 (b + 528), 3);
  for (unsigned i = 0; i < 3; i++) {
    const uint8_t *e = b + 536 + 24 * i;

    cr_assert_eq (get64 (e), h.entries[i].data_sector, "entry %u", i);
    cr_assert_eq (get32 (e + 8), h.entries[i].pp_size);
    cr_assert_eq (get32 (e + 12), h.entries[i].data_size);
    cr_assert_eq (get32 (e + 16), h.entries[i].parity_disk);
    cr_assert_eq (get32 (e + 20), h.entries[i].checksum);
  }
  for (unsigned i = 536 + 24 * 3; i < PPL_HEADER_SIZE; i++)
    cr_assert_eq (b[i], 0, "byte %u past the entries", i);
  memcpy (z, b, sizeof z);
  memset (z + 532, 0, 4);
  cr_assert_eq (get32 (b + 532), ~ref_crc32c_le (~0u, z, sizeof z),
                "the checksum covers all 4096 bytes with its field zero");
}

Test (ppl, decode_round_trip)
{
  struct ppl_header h = sample_header (), d;
  uint8_t b[PPL_HEADER_SIZE];
  char why[200];

  ppl_header_encode (&h, b);
  cr_assert_eq (ppl_header_decode (b, h.signature, &d, why, sizeof why), 0,
                "%s", why);
  cr_assert_eq (d.generation, h.generation);
  cr_assert_eq (d.entries_count, 3);
  cr_assert_arr_eq (d.entries, h.entries, 3 * sizeof h.entries[0]);
}

Test (ppl, decode_refuses_what_md_refuses)
{
  struct ppl_header h = sample_header (), d;
  uint8_t b[PPL_HEADER_SIZE], z[PPL_HEADER_SIZE];
  uint32_t c;
  char why[200] = "";

  ppl_header_encode (&h, b);
  b[4000] ^= 1;                 /* covered though past the entries */
  cr_assert_eq (ppl_header_decode (b, h.signature, &d, why, sizeof why),
                -EBADMSG);
  cr_assert (strstr (why, "checksum"), "%s", why);

  ppl_header_encode (&h, b);
  cr_assert_eq (ppl_header_decode (b, h.signature ^ 1, &d, why, sizeof why),
                -EBADMSG);
  cr_assert (strstr (why, "signature"), "%s", why);

  /* 149 entries, with a checksum that is right. */
  b[528] = 149;
  memcpy (z, b, sizeof z);
  memset (z + 532, 0, 4);
  c = ~ref_crc32c_le (~0u, z, sizeof z);
  for (int i = 0; i < 4; i++)
    b[532 + i] = (uint8_t) (c >> (8 * i));
  cr_assert_eq (ppl_header_decode (b, h.signature, &d, why, sizeof why),
                -EBADMSG);
  cr_assert (strstr (why, "149"), "%s", why);
}

Test (ppl, next_header_skips_the_pp)
{
  struct ppl_header h = sample_header ();

  /* 8 sectors of header, then 4096 + 0 + 65536 bytes of PP. */
  cr_assert_eq (ppl_next_header (&h, 16), 16 + 8 + (4096 + 65536) / 512);
  h.entries_count = 0;
  cr_assert_eq (ppl_next_header (&h, 0), 8);
}

/* ppl_area_check of an area, why kept in area_why. */
static char area_why[200];

static int64_t
area (int32_t offset, uint32_t size, uint64_t sb_sector, uint32_t sb_sectors,
      uint64_t data_offset, uint64_t data_size)
{
  return ppl_area_check (&(struct ppl_area) { offset, size, sb_sector,
                                              sb_sectors, data_offset,
                                              data_size },
                         area_why, sizeof area_why);
}

Test (ppl, area_as_md_accepts_it)
{
  /* mdadm's v1.2 area: 2048 sectors at +8, data from 2048 + 24 on. */
  cr_assert_eq (area (8, 2048, 8, 8, 4096, 1 << 20), 2048, "%s", area_why);
  cr_assert (ppl_area_multiple (2048));
  cr_assert_eq (area (8, 21, 8, 8, 4096, 1 << 20), 16, "rounded down: 8 + 8");
  cr_assert (!ppl_area_multiple (16));
  cr_assert (!ppl_area_multiple (527) && ppl_area_multiple (528),
             "two of 4 KiB + 128 KiB");
  cr_assert_eq (area (8, 15, 8, 8, 4096, 1 << 20), -EINVAL,
                "no room past a header");
  cr_assert_eq (area (8, 2048, 8, 8, 2000, 1 << 20), -EINVAL);
  cr_assert (strstr (area_why, "overlaps the data"), "%s", area_why);
  cr_assert_eq (area (4, 64, 8, 8, 4096, 1 << 20), -EINVAL);
  cr_assert (strstr (area_why, "superblock"), "%s", area_why);
  cr_assert_eq (area (-16, 16, 2000, 8, 4096, 1 << 20), 16,
                "wholly before the sb");
  cr_assert_eq (area (-8, 16, 2000, 8, 4096, 1 << 20), -EINVAL);
}

/* ppl_recover_entry's arithmetic, 4 members, 64 KiB (128-sector) chunks. */
Test (ppl, extents_as_ppl_recover_entry)
{
  struct ppl_extent x;
  char why[200];

  /* A 4 KiB write into one chunk: PP is one 4 KiB block. */
  cr_assert_eq (ppl_entry_extent (&(struct ppl_entry) { 1000, 4096, 4096, 3,
                                                        0 }, 4, 128, &x, why,
                                  sizeof why), 0, "%s", why);
  cr_assert_eq (x.first, 1000);
  cr_assert_eq (x.data_disks, 1);
  cr_assert_eq (x.strip, 8);
  cr_assert_eq (x.last, 1008);
  /* 8 KiB on each of two chunks of a stripe (two stripe_heads). */
  cr_assert_eq (ppl_entry_extent (&(struct ppl_entry) { 1000, 8192, 16384, 3,
                                                        0 }, 4, 128, &x, why,
                                  sizeof why), 0, "%s", why);
  cr_assert_eq (x.data_disks, 2);
  cr_assert_eq (x.strip, 16);
  cr_assert_eq (x.last, 1000 + 128 + 16);
  /* Full-stripe writes: no PP, the data split over all data disks. */
  cr_assert_eq (ppl_entry_extent (&(struct ppl_entry) { 768, 0, 3 * 4096, 1,
                                                        0 }, 4, 128, &x, why,
                                  sizeof why), 0, "%s", why);
  cr_assert_eq (x.data_disks, 3);
  cr_assert_eq (x.strip, 8);
  cr_assert_eq (x.last, 768 + 2 * 128 + 8);
  /* PP of a whole chunk: the data is contiguous. */
  cr_assert_eq (ppl_entry_extent (&(struct ppl_entry) { 384, 65536,
                                                        2 * 65536, 0, 0 },
                                  4, 128, &x, why, sizeof why), 0, "%s", why);
  cr_assert_eq (x.data_disks, 3);
  cr_assert_eq (x.strip, 128);
  cr_assert_eq (x.last, 384 + 256);
}

Test (ppl, extents_refuse_what_md_cannot_have_written)
{
  struct ppl_extent x;
  char why[200];
  const struct ppl_entry bad[] = {
    { 0, 4096, 4096, 4, 0 },          /* parity disk past the array */
    { 0, 1000, 4096, 1, 0 },          /* not whole sectors */
    { 0, 4096, 4 * 4096, 1, 0 },      /* 4 data disks of 3 */
    { 0, 4096, 6144, 1, 0 },          /* not whole strips */
    { 0, 4096, 0, 1, 0 },             /* no data */
    { 0, 2 * 65536, 65536, 1, 0 },    /* PP longer than a chunk */
  };

  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
    cr_assert_eq (ppl_entry_extent (&bad[i], 4, 128, &x, why, sizeof why),
                  -EBADMSG, "case %zu", i);
}
