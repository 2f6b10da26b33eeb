/* raid/parity.h -- RAID-5 parity: byte-wise XOR over equal-length buffers.
 *
 * Shaped like ISA-L's xor_gen(): one array of pointers, sources first and
 * the destination LAST; vects counts them all.  r5_xor_gen() uses ISA-L
 * where its alignment contract holds (every pointer 32-byte aligned, whole
 * 64-byte blocks) and unaligned vector loads for the rest (the widest the
 * processor has), so callers may pass any pointers and any length
 * (nbdkit's request buffers are only 16-byte aligned).  The *_ref
 * functions are the test oracle.
 *
 * Pure and thread-safe.  Buffers are owned by the caller.  The destination
 * may be the same buffer as a source only in the reference versions.
 */
#ifndef RAID_PARITY_H
#define RAID_PARITY_H

#include <stddef.h>

#include "raid/geom.h"

/* Most buffers one call takes: a read-modify-write of every data chunk
 * (old data, new data, old parity) plus the destination.
 */
#define R5_XOR_VECTS_MAX (2 * R5_MAX_MEMBERS + 1)

/* dst = src[0] ^ src[1] ^ ... ^ src[vects-2], where dst = array[vects-1].
 * 2 <= vects <= R5_XOR_VECTS_MAX (with 2 this is a copy).  len may be 0.
 */
void r5_xor_gen (unsigned vects, size_t len, void **array)
  __attribute__((nonnull));
void r5_xor_gen_ref (unsigned vects, size_t len, void **array)
  __attribute__((nonnull));

/* Check that the XOR of all vects buffers is zero (data chunks plus their
 * parity).  Returns the offset of the first byte where it is not, or len if
 * the whole range is consistent.  2 <= vects <= R5_XOR_VECTS_MAX.
 *
 * Two ways, the same answers: r5_xor_check_isal() is ISA-L's xor_check
 * (SSE only, as of ISA-L 2.30, whatever the processor has);
 * r5_xor_check_gen() XORs the sources with r5_xor_gen() (ISA-L picks
 * AVX-512 or AVX2 when the processor has them) into a scratch of
 * R5_XOR_CHECK_SLICE bytes on the stack, which stays in the L1 cache, and
 * compares it with the parity (memcmp), a slice at a time: each byte of
 * the members is loaded once either way.  r5_xor_check() uses the faster
 * on this processor, measured once at its first call (4 buffers of 16
 * KiB in the cache: under 1 ms, most of it the first touch of their
 * pages); r5_xor_check_way() names it.
 */
#define R5_XOR_CHECK_SLICE 8192u
size_t r5_xor_check (unsigned vects, size_t len, void **array)
  __attribute__((nonnull));
size_t r5_xor_check_isal (unsigned vects, size_t len, void **array)
  __attribute__((nonnull));
size_t r5_xor_check_gen (unsigned vects, size_t len, void **array)
  __attribute__((nonnull));
size_t r5_xor_check_ref (unsigned vects, size_t len, void **array)
  __attribute__((nonnull));

/* "xor_gen+compare" or "xor_check": what r5_xor_check() uses (measured
 * now if it has not been yet).  A static string.
 */
const char *r5_xor_check_way (void);

#endif /* RAID_PARITY_H */
