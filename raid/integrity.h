/* raid/integrity.h -- the integrity record: a crc32c of every 4 KiB of
 * every member's data area, kept in a file of its own (a sidecar) so the
 * members stay as md lays them out.  Parity can say that a row is wrong,
 * not which chunk; a checksum per unit says which.
 *
 * The file (all integers little-endian):
 *   [0, 4096)            header: magic "R5INTEG1", version, unit, the
 *                        array's md uuid, members, data offset and units
 *                        per member, the region size, where the parts
 *                        are, md's events at the last settle; crc32c of
 *                        its first 4092 bytes at 4092
 *   [4096, table_off)    dirty bits: one per region of a member (bit
 *                        member * regions + region), set (and durable)
 *                        before a region's units change and cleared once
 *                        the table and the members are synced -- after a
 *                        crash the checksums of a set region are computed
 *                        again from the members, as md resyncs what its
 *                        bitmap marks
 *   [table_off, end)     the checksums: member m's unit u (member byte
 *                        data_offset + u * 4096) at table_off + (m *
 *                        units + u) * 4
 * A region is R5I_REGION_UNITS units (4 MiB of a member): one 4 KiB page
 * of the table.
 *
 * Pure: no I/O.  Units: bytes.  Errors: -EINVAL (not an integrity file,
 * or of another shape), -EBADMSG (its header checksum is wrong).
 */
#ifndef RAID_INTEGRITY_H
#define RAID_INTEGRITY_H

#include <stddef.h>
#include <stdint.h>

#define R5I_UNIT 4096u
#define R5I_HEADER 4096u
#define R5I_REGION_UNITS 1024u

struct r5i_header {
  uint8_t uuid[16];           /* the array's (md set_uuid) */
  unsigned members;
  uint64_t data_offset;       /* bytes: the first unit's member offset */
  uint64_t units;             /* per member */
  uint64_t events;            /* md's events when the record was last
                               * settled: members written since without
                               * it (mdadm, a server without the record)
                               * have more */
};

/* Where the parts of a file of header h are. */
struct r5i_layout {
  uint64_t regions;           /* per member */
  uint64_t bits_off, bits_bytes;
  uint64_t table_off, table_bytes;
  uint64_t file_bytes;
};

void r5i_layout_of (const struct r5i_header *h, struct r5i_layout *l)
  __attribute__((nonnull));

/* The header's 4096 bytes.  decode: 0, or -EINVAL / -EBADMSG with why
 * (if not NULL) saying what is wrong in one phrase.
 */
void r5i_header_encode (const struct r5i_header *h, uint8_t *buf)
  __attribute__((nonnull));
int r5i_header_decode (const uint8_t *buf, struct r5i_header *h, char *why,
                       size_t why_len)
  __attribute__((nonnull (1, 2), warn_unused_result));

/* crc32c (Castagnoli, as iSCSI and ext4 use it: crc32c("123456789") is
 * 0xe3069283) of len bytes.
 */
uint32_t r5i_crc (const void *buf, size_t len) __attribute__((nonnull));

/* The dirty bit of region r of member m. */
static inline uint64_t
r5i_bit (const struct r5i_layout *l, unsigned m, uint64_t r)
{
  return (uint64_t) m * l->regions + r;
}

#endif /* RAID_INTEGRITY_H */
