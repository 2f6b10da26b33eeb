/* io/view.c -- see view.h. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/backend.h"
#include "io/view.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22   /* Linux 5.14 */
#endif

void
io_view_init (struct io_view *v)
{
  *v = (struct io_view) { .fd = -1 };
}

void
io_view_populate (char *bytes, uint64_t len)
{
  uint64_t page = (uint64_t) sysconf (_SC_PAGESIZE);
  uint64_t skip = (uint64_t) (uintptr_t) bytes % page;

  (void) madvise (bytes - skip, len + skip, MADV_POPULATE_READ);
}

void
io_view_close (struct io_view *v)
{
  if (v->map != NULL)
    munmap (v->map, v->map_len);
  io_view_init (v);
}

static bool
same_file (const struct io_view *v, const struct io_member *m)
{
  return v->fd == m->file.fd && v->dev == m->file.dev && v->ino == m->file.ino;
}

/* Map the window holding [off, off+len) of m, unless it is mapped
 * already (writable if it must be).
 */
static int
map_window (struct io_view *v, const struct io_member *m, uint64_t off,
            uint64_t len, bool writable)
{
  uint64_t page = (uint64_t) sysconf (_SC_PAGESIZE);
  uint64_t start = off / page * page, span = off + len - start;
  int prot = writable ? PROT_READ | PROT_WRITE : PROT_READ;
  void *map;

  if (!same_file (v, m))
    io_view_close (v);        /* also forgets what it knew of holes */
  else if (v->map != NULL && start >= v->map_off &&
           off + len <= v->map_off + v->map_len && v->writable >= writable)
    return 0;
  else if (v->map != NULL) {
    munmap (v->map, v->map_len);
    v->map = NULL;
  }
  if (span < IO_VIEW_WINDOW)
    span = IO_VIEW_WINDOW;
  if (span > m->size - start)
    span = m->size - start;   /* never past the end: that faults */
  map = mmap (NULL, span, prot, MAP_SHARED, m->file.fd, (off_t) start);
  if (map == MAP_FAILED)
    return -errno;
  v->map = map;               /* what it knew of holes stays */
  v->map_off = start;
  v->map_len = span;
  v->writable = writable;
  v->fd = m->file.fd;
  v->dev = m->file.dev;
  v->ino = m->file.ino;
  return 0;
}

/* Is [off, off+len) of m free of holes?  0, -EAGAIN,
 * or lseek's -errno.
 */
static int
dense (struct io_view *v, const struct io_member *m, uint64_t off,
       uint64_t len)
{
  uint64_t punches = atomic_load (&m->punches);
  off_t hole;

  if (punches == v->punches && off >= v->dense_from &&
      off + len <= v->dense_to)
    return 0;
  /* Always ask: st_blocks would say "all allocated" of a file with
   * blocks fallocated past its end (fallocate --keep-size) and holes
   * inside, and a load through the mapping allocates a hole.
   */
  if ((hole = lseek (m->file.fd, (off_t) off, SEEK_HOLE)) < 0)
    return -errno;
  v->dense_from = off;
  v->dense_to = (uint64_t) hole;
  v->punches = punches;
  return off + len <= (uint64_t) hole ? 0 : -EAGAIN;
}

/* Allocate the holes of [off, off+len) of m, so that stores through the
 * mapping never need memory the tmpfs may not have.
 */
static int
fill_holes (struct io_view *v, const struct io_member *m, uint64_t off,
            uint64_t len)
{
  uint64_t punches = atomic_load (&m->punches);
  int r = dense (v, m, off, len);

  if (r != -EAGAIN)
    return r;
  if (fallocate (m->file.fd, FALLOC_FL_KEEP_SIZE, (off_t) off, (off_t) len) < 0)
    return -errno;
  /* Allocated, though SEEK_HOLE calls pages never written holes still. */
  v->dense_from = off;
  v->dense_to = off + len;
  v->punches = punches;
  return 0;
}

int
io_view_get (struct io_view *v, const struct io_member *m, uint64_t off,
             uint64_t len, enum io_view_access access, char **bytes)
{
  bool writable = access != IO_VIEW_READ;
  struct stat st;
  int r;

  *bytes = NULL;
  /* An injected failure must strike as a read or write would. */
  if (m->backend != &io_file_backend || !m->in_memory || atomic_load (&m->fail_after) >= 0)
    return -EAGAIN;
  if (len == 0 || off > m->size || len > m->size - off)
    return -EINVAL;
  if (fstat (m->file.fd, &st) < 0)
    return -errno;
  /* Shrunk behind our back: a read meets the end and names the member;
   * a mapping would raise SIGBUS there.
   */
  if ((uint64_t) st.st_size < m->size)
    return -EAGAIN;
  if ((r = map_window (v, m, off, len, writable)) < 0 ||
      (r = access == IO_VIEW_WRITE ? fill_holes (v, m, off, len)
                                   : dense (v, m, off, len)) < 0)
    return r;
  *bytes = v->map + (off - v->map_off);
  return 0;
}

bool
io_view_fault_shrunk (const struct io_member *m)
{
  if (m->file.mem.map != NULL)
    return io_memmap_fault_shrunk (&m->file.mem, m->file.fd);
  return io_member_shrunk (m, m->size, NULL);
}
