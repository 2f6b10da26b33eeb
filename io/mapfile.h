/* io/mapfile.h -- a file of the array's own beside its members (the
 * integrity record), kept mapped read-write: opened (made if absent),
 * allocated, written and read at offsets, mapped, ranges of the mapping
 * made durable, closed.  The array keeps what is in it; this is only how
 * its bytes reach the disk, so that array/ makes no system call.
 *
 * Ownership: a struct io_mapfile is its opener's, used by one thread at
 * a time except io_mapfile_sync (any thread: msync).  Errors: -errno,
 * nothing printed (the caller names the file).
 */
#ifndef IO_MAPFILE_H
#define IO_MAPFILE_H

#include <stddef.h>
#include <stdint.h>

struct io_mapfile {
  int fd;                     /* -1: not open */
  uint8_t *map;               /* NULL: not mapped */
  uint64_t map_bytes;
};

/* Not open: safe to io_mapfile_close. */
void io_mapfile_init (struct io_mapfile *f) __attribute__((nonnull));

/* Open path read-write, made (mode 0600) if absent; *size is its size
 * now (0 for a file just made).
 */
int io_mapfile_open (struct io_mapfile *f, const char *path, uint64_t *size)
  __attribute__((nonnull, warn_unused_result));

/* The same, but only a file that does not exist yet (-EEXIST
 * otherwise: nothing of a file already there is touched).
 */
int io_mapfile_create (struct io_mapfile *f, const char *path,
                       uint64_t *size)
  __attribute__((nonnull, warn_unused_result));

/* The same, but only a file that exists (-ENOENT otherwise). */
int io_mapfile_open_existing (struct io_mapfile *f, const char *path,
                              uint64_t *size)
  __attribute__((nonnull, warn_unused_result));

/* Remove the file at path (a backup whose work is done); 0 or -errno. */
int io_mapfile_remove (const char *path) __attribute__((nonnull));

/* The first bytes of the file allocated, not sparse (a store into the
 * mapping must not fault on a full file system).
 */
int io_mapfile_allocate (struct io_mapfile *f, uint64_t bytes)
  __attribute__((nonnull, warn_unused_result));

/* Whole transfers at off: 0, -EIO if short, or -errno. */
int io_mapfile_pwrite (struct io_mapfile *f, const void *buf, size_t len,
                       uint64_t off)
  __attribute__((nonnull, warn_unused_result));
int io_mapfile_pread (const struct io_mapfile *f, void *buf, size_t len,
                      uint64_t off)
  __attribute__((nonnull, warn_unused_result));

/* What was written so far durable (fdatasync). */
int io_mapfile_datasync (struct io_mapfile *f)
  __attribute__((nonnull, warn_unused_result));

/* Map the first bytes read-write, shared: f->map. */
int io_mapfile_map (struct io_mapfile *f, uint64_t bytes)
  __attribute__((nonnull, warn_unused_result));

/* [off, off+len) of the mapping durable (msync of its pages). */
int io_mapfile_sync (const struct io_mapfile *f, uint64_t off, uint64_t len)
  __attribute__((nonnull, warn_unused_result));

/* Unmap and close; a file not open is fine. */
void io_mapfile_close (struct io_mapfile *f) __attribute__((nonnull));

#endif /* IO_MAPFILE_H */
