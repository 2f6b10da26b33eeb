/* io/memmap.h -- internal to io/: a member in memory (tmpfs) mapped whole,
 * so that the request path reads and writes its pages with a memory copy
 * instead of a system call.
 *
 * Why: a 4K random write on three members is one read and two writes,
 * each a preadv/pwritev whose own cost (entering the kernel, the page
 * cache's lookup and page lock) is several times the copy of 4 KiB; on
 * the AMD EPYC VM the array's 4K random writes went from 0.6 of nbdkit's
 * file plugin to 1.0 through the mapping, 1M writes from 0.75 to 0.93
 * (docs/performance.md).  A page's first touch through a mapping is a
 * fault, which on that machine costs more than three pwrites of it: the
 * pages of a granule (below) are put into the mapping all at once the
 * first time it is used (MADV_POPULATE_WRITE, a thirtieth of the faults'
 * cost), and stay there.
 *
 * Holes: a store (or a load) through a shared mapping of a tmpfs hole
 * allocates a page, and raises SIGBUS when the tmpfs is full; pread
 * returns zeros for a hole and allocates nothing, pwrite fails with
 * ENOSPC.  So the mapping is used only for ranges known to have no hole.
 * The member is cut into granules (64 KiB, more for members over 64 GiB:
 * at most 2^20 of them); a granule is marked dense when lseek(SEEK_HOLE)
 * finds no hole in it: all of them at open (one walk of the file's
 * extents), and afterwards after writes made with pwrite into a granule
 * not marked (they may have filled it: looked at after the 1st, 2nd, 4th
 * ... 32nd such write, then one in 31, so a granule that stays sparse
 * costs few extra calls).  A punch or zero range of the member clears
 * the marks of the granules it touches before it runs
 * (io_memmap_punch_begin), and a mark set by a look that raced with one
 * is taken back.
 *
 * A member truncated under the server raises SIGBUS on its lost pages,
 * as with views (view.h): members are locked against other servers, not
 * against truncation.
 *
 * Threads: opened and closed by one thread while no op runs; the other
 * calls from any thread at once, through the member shared read-only
 * (member.h): the marks and counts are atomics.  Errors: -errno.
 */
#ifndef IO_MEMMAP_H
#define IO_MEMMAP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct io_memmap {
  char *map;                  /* the whole member, shared, read-write;
                                 NULL: not mapped (every op a call) */
  uint64_t size;              /* bytes mapped: the member's size */
  unsigned shift;             /* log2 of a granule's bytes */
  uint64_t granules;
  _Atomic uint8_t *marks;     /* per granule: MEMMAP_DENSE | writes missed */
  _Atomic uint64_t punching;  /* punches running now */
  _Atomic uint64_t punched;   /* punches ended so far */
};

/* Map the member open read-write as fd, size bytes, and mark its dense
 * granules, unless RAID5_MEMBER_ACCESS=read (tests: every op a call).
 * 0, also when it is left unmapped (mm->map NULL: no address space, an
 * empty member); -errno only for lseek's errors (mm then unmapped).
 */
int io_memmap_open (struct io_memmap *mm, int fd, uint64_t size)
  __attribute__((nonnull));

/* Unmap; mm is then "not mapped".  Safe on one never opened (zeroed). */
void io_memmap_close (struct io_memmap *mm) __attribute__((nonnull));

/* Is [off, off+len) mapped and free of holes, so that it may be copied
 * to or from mm->map + off?  Puts the pages of its granules used for the
 * first time into the mapping.
 */
bool io_memmap_dense (const struct io_memmap *mm, uint64_t off, uint64_t len)
  __attribute__((nonnull));

/* [off, off+len) was just written with pwrite: look again, now and then,
 * whether its granules not marked dense have become so.
 */
void io_memmap_wrote (const struct io_memmap *mm, int fd, uint64_t off,
                      uint64_t len) __attribute__((nonnull));

/* Around a punch (or zero range) of [off, off+len): begin clears the
 * marks it touches, before the op runs; end after it.
 */
void io_memmap_punch_begin (const struct io_memmap *mm, uint64_t off,
                            uint64_t len) __attribute__((nonnull));
void io_memmap_punch_end (const struct io_memmap *mm) __attribute__((nonnull));

#endif /* IO_MEMMAP_H */
