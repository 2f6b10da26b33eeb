/* io/memmap.h -- internal to io/: a member in memory (tmpfs) mapped whole,
 * so that the request path reads and writes its pages with a memory copy
 * instead of a system call.
 *
 * Why: a 4K random write on three members is one read and two writes,
 * each a preadv/pwritev whose own cost (entering the kernel, the page
 * cache's lookup and page lock) is several times the copy of 4 KiB; on
 * the AMD EPYC VM the array's 4K random writes went from about 0.6 of
 * nbdkit's file plugin to 0.93 through the mapping (docs/performance.md).
 * A page's first touch through a mapping traps (10-19 us there): the
 * pages of a granule (below) are put into the mapping all at once the
 * first time it is used (MADV_POPULATE_WRITE), which made a fresh
 * server's 4K random writes 2-3 times faster than faulting them in one at
 * a time, and they stay there.  Jobs, which stream each page once, do
 * not use the mapping (IO_CALLS, batch.h).
 *
 * Holes: a load or store through a shared mapping of a tmpfs hole
 * allocates a page, and raises SIGBUS when the tmpfs is full; pread
 * returns zeros for a hole and allocates nothing, pwrite fails with
 * ENOSPC.  So the mapping is used only for ranges known to have no hole.
 * The member is cut into granules (64 KiB, more for members over 64 GiB:
 * at most 2^20 of them); a granule is marked dense when lseek(SEEK_HOLE)
 * finds no hole in it: all of them at open (one walk of the file's
 * extents), and afterwards after writes made with pwrite into a granule
 * not marked (they may have filled it: looked at after the 1st, 2nd, 4th
 * ... 32nd such write, then one in 31, so a granule that stays sparse
 * costs few extra calls).  A punch or zero range of the member
 * (io_memmap_punch_begin) clears the marks of the granules it touches
 * and waits for the copies already running to end before it may punch;
 * copies that begin while a punch is running use system calls.  The
 * dense mark is set and cleared under one lock, and a look is not
 * published if a punch ran or began since it started: a granule is never
 * marked dense while it has a hole this server made.  (A zero range that
 * tmpfs makes by writing zeros leaves no hole, but its granules are
 * unmarked too, until a write into them looks again.)
 *
 * What the server does not make is not seen: a member truncated under it
 * raises SIGBUS on the lost pages, and a hole punched by another process
 * allocates a page when used (SIGBUS if the tmpfs is full): members are
 * locked against other servers, not against truncation or fallocate.  A
 * copy catches that SIGBUS (io_memmap_copy) and fails with -ENXIO.
 *
 * Threads: opened and closed by one thread while no op runs; the other
 * calls from any thread at once, through the member shared read-only
 * (member.h): what they change is atomics and a lock.  Errors: none
 * (what cannot be mapped is copied with system calls).
 */
#ifndef IO_MEMMAP_H
#define IO_MEMMAP_H

#include <stdbool.h>
#include <stdint.h>

struct io_memmap_state;      /* memmap.c: marks, lock and counts */

/* Moved by value with its member (a struct copy, then the source
 * zeroed): what threads change lives behind st.
 */
struct io_memmap {
  char *map;                  /* the whole member, shared, read-write;
                                 NULL: not mapped (every op a call) */
  uint64_t size;              /* bytes mapped: the member's size */
  struct io_memmap_state *st; /* owned; NULL when not mapped */
};

/* Map the member open read-write as fd, size bytes, and mark its dense
 * granules, unless RAID5_MEMBER_ACCESS=read (tests: every op a call).
 * A member that cannot be mapped or walked (no address space, lseek's
 * errors), or an empty one, is left unmapped: mm->map NULL.
 */
void io_memmap_open (struct io_memmap *mm, int fd, uint64_t size)
  __attribute__((nonnull));

/* Unmap; mm is then "not mapped".  Safe on one never opened (zeroed). */
void io_memmap_close (struct io_memmap *mm) __attribute__((nonnull));

/* May [off, off+len) be copied to or from mm->map + off?  True if it is
 * mapped, free of holes, and no punch is running; its granules used for
 * the first time are put into the mapping.  Each true must be followed
 * by io_memmap_copied once the copy is done (a punch waits for it), a
 * false by nothing.
 */
bool io_memmap_copy_begin (const struct io_memmap *mm, uint64_t off,
                           uint64_t len) __attribute__((nonnull));
void io_memmap_copied (const struct io_memmap *mm) __attribute__((nonnull));

/* Copy len bytes between the mapping and a buffer (between copy_begin
 * and copied; to_map: dst is in the mapping, else src), guarded: 0, or
 * -ENXIO if the mapping raised SIGBUS (the member truncated under the
 * server, or a hole punched by another process in a full tmpfs) -- the
 * member is then copied with system calls from now on (copy_begin says
 * false), and the caller redoes the op so, to learn what is wrong.  At
 * such a fault the member (open as fd) is first looked at
 * (io_memmap_fault_shrunk), so that an op that finds it copied with calls
 * finds io_memmap_shrunk true if it shrank: its write would extend it.
 */
int io_memmap_copy (const struct io_memmap *mm, int fd, void *dst,
                    const void *src, size_t len, bool to_map)
  __attribute__((nonnull, warn_unused_result));

/* After a copy met SIGBUS (io_memmap_copy): is the member (open as fd)
 * shorter than it was mapped -- truncated under the server?  Looked at
 * once, at the fault, and remembered: io_memmap_shrunk then says so (one
 * atomic load), and every op on it is to fail (-ENXIO): a write with a
 * system call would extend it again, its lost bytes reading as zeroes.
 */
bool io_memmap_fault_shrunk (const struct io_memmap *mm, int fd)
  __attribute__((nonnull));
bool io_memmap_shrunk (const struct io_memmap *mm) __attribute__((nonnull));

/* [off, off+len) was just written with pwrite: look again, now and then,
 * whether its granules not marked dense have become so.
 */
void io_memmap_wrote (const struct io_memmap *mm, int fd, uint64_t off,
                      uint64_t len) __attribute__((nonnull));

/* Around a punch (or zero range) of [off, off+len): begin clears the
 * marks it touches and waits for the copies running to end, before the
 * op runs; end after it.
 */
void io_memmap_punch_begin (const struct io_memmap *mm, uint64_t off,
                            uint64_t len) __attribute__((nonnull));
void io_memmap_punch_end (const struct io_memmap *mm) __attribute__((nonnull));

#endif /* IO_MEMMAP_H */
