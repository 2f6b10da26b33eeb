/* io/view.h -- a member in memory (tmpfs) read and written in place,
 * through a mapping, instead of copied with pread and pwrite.
 *
 * Why: with members in memory a check or rebuild is bound by memory
 * bandwidth.  pread copies every byte once more than XOR needs (into a
 * buffer that XOR then reads), and pwrite copies the result once more
 * into the file, under the file's lock.  Through mappings XOR reads the
 * members' pages where they are and writes the rebuilt member's pages
 * directly: a rebuild on tmpfs then runs about as fast as reading the
 * members in parallel.
 *
 * A view maps a window of IO_VIEW_WINDOW bytes of one member (or the
 * range asked for, if longer) and moves it when asked for a range outside
 * it, so a job walking a member maps it a window at a time; the window's
 * pages are unmapped when the view moves or closes.
 *
 * Holes: a fault on a tmpfs hole allocates a page, and raises SIGBUS
 * when the tmpfs is full.  So a range is read through a view only if it
 * has no hole (pread returns zeros for holes and allocates nothing), and
 * a range to be written has its holes allocated first (fallocate, whose
 * ENOSPC is an error like a write's).  What lseek SEEK_HOLE says of the
 * member is kept until it is punched again (io_member.punches): the
 * kernel walks the file from the offset to the next hole for each ask.
 *
 * A member found shorter than it was opened is not mapped (a read then
 * meets its end and fails it with -ENXIO); one truncated while a view's
 * bytes are in use raises SIGBUS on the lost pages, which their user
 * turns into an error (io/sigbus.h).  The array's members are locked
 * against other servers, not against truncation.
 *
 * Ownership and threads: one thread gets and closes a view; the bytes it
 * gives stay mapped until its next io_view_get or io_view_close, and any
 * thread may use them meanwhile.  Errors: -errno, nothing printed.
 */
#ifndef IO_VIEW_H
#define IO_VIEW_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "io/member.h"

#define IO_VIEW_WINDOW (32u << 20)

enum io_view_access {
  IO_VIEW_READ,               /* only read through it */
  IO_VIEW_WRITE,              /* read and written (holes allocated first) */
  IO_VIEW_WRITE_DENSE,        /* read and written, only where the range
                               * has no hole: a hole is better written with
                               * pwrite, which allocates as it copies, than
                               * allocated (zeroed) and then overwritten */
};

struct io_view {
  int fd;                     /* the file mapped (-1: none) ... */
  dev_t dev;
  ino_t ino;                  /* ... and its identity: fds are reused */
  char *map;
  uint64_t map_off, map_len;  /* bytes of the member mapped */
  bool writable;
  /* No hole in [dense_from, dense_to) when the member's punch count was
   * punches.
   */
  uint64_t dense_from, dense_to, punches;
};

/* An empty view: safe to io_view_close(). */
void io_view_init (struct io_view *v) __attribute__((nonnull));

/* In *bytes, the bytes [off, off+len) of m, mapped for access.
 * Returns 0; -EAGAIN if m is not in memory, has a failure injected
 * (member.h) or has shrunk, or if access is IO_VIEW_READ or
 * IO_VIEW_WRITE_DENSE and the range holds a hole (read or write those
 * with pread and pwrite instead);
 * -EINVAL if the range is not within m; or the -errno of fstat, mmap,
 * lseek or (writing) fallocate.  On error *bytes is NULL and the view may
 * have moved.
 */
int io_view_get (struct io_view *v, const struct io_member *m, uint64_t off,
                 uint64_t len, enum io_view_access access, char **bytes)
  __attribute__((nonnull, warn_unused_result));

/* Make the page table entries of len bytes got from a view at once, from
 * any thread: reads fault 16 pages at a time (fault-around), stores every
 * page.  Only a hint; without it (Linux < 5.14) pages fault as they are
 * touched.
 */
void io_view_populate (char *bytes, uint64_t len) __attribute__((nonnull));

/* After a fault (io/sigbus.h) in bytes a view of m gave: is m shorter
 * than it was opened -- truncated under the server?  Then every op on m
 * fails -ENXIO from now on, as after a request's copy met its end
 * (memmap.h).  False: a hole another process punched, in a full tmpfs.
 */
bool io_view_fault_shrunk (const struct io_member *m) __attribute__((nonnull));

/* Unmap; the view is left as after io_view_init(). */
void io_view_close (struct io_view *v) __attribute__((nonnull));

#endif /* IO_VIEW_H */
