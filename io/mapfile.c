/* io/mapfile.c -- see mapfile.h. */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/mapfile.h"

void
io_mapfile_init (struct io_mapfile *f)
{
  f->fd = -1;
  f->map = NULL;
  f->map_bytes = 0;
}

static int
open_flags (struct io_mapfile *f, const char *path, int flags,
            uint64_t *size)
{
  struct stat st;
  int fd = open (path, O_RDWR | O_CLOEXEC | flags, 0600);

  if (fd == -1)
    return -errno;
  if (fstat (fd, &st) == -1) {
    int e = -errno;

    close (fd);
    if (flags & O_EXCL)
      (void) unlink (path);   /* made just now: nothing of it is kept */
    return e;
  }
  f->fd = fd;
  *size = (uint64_t) st.st_size;
  return 0;
}

int
io_mapfile_open (struct io_mapfile *f, const char *path, uint64_t *size)
{
  return open_flags (f, path, O_CREAT, size);
}

int
io_mapfile_create (struct io_mapfile *f, const char *path, uint64_t *size)
{
  return open_flags (f, path, O_CREAT | O_EXCL, size);
}

int
io_mapfile_open_existing (struct io_mapfile *f, const char *path,
                          uint64_t *size)
{
  return open_flags (f, path, 0, size);
}

int
io_mapfile_remove (const char *path)
{
  return unlink (path) == 0 ? 0 : -errno;
}

int
io_mapfile_allocate (struct io_mapfile *f, uint64_t bytes)
{
  int e = posix_fallocate (f->fd, 0, (off_t) bytes);

  return -e;
}

int
io_mapfile_pwrite (struct io_mapfile *f, const void *buf, size_t len,
                   uint64_t off)
{
  ssize_t n = pwrite (f->fd, buf, len, (off_t) off);

  return n == (ssize_t) len ? 0 : n < 0 ? -errno : -EIO;
}

int
io_mapfile_pread (const struct io_mapfile *f, void *buf, size_t len,
                  uint64_t off)
{
  ssize_t n = pread (f->fd, buf, len, (off_t) off);

  return n == (ssize_t) len ? 0 : n < 0 ? -errno : -EIO;
}

int
io_mapfile_datasync (struct io_mapfile *f)
{
  return fdatasync (f->fd) == -1 ? -errno : 0;
}

int
io_mapfile_map (struct io_mapfile *f, uint64_t bytes)
{
  void *m = mmap (NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd, 0);

  if (m == MAP_FAILED)
    return -errno;
  f->map = m;
  f->map_bytes = bytes;
  return 0;
}

int
io_mapfile_sync (const struct io_mapfile *f, uint64_t off, uint64_t len)
{
  long page = sysconf (_SC_PAGESIZE);
  uint64_t first = off / (uint64_t) page * (uint64_t) page;

  if (msync (f->map + first, off + len - first, MS_SYNC) == -1)
    return -errno;
  return 0;
}

void
io_mapfile_close (struct io_mapfile *f)
{
  if (f->map)
    munmap (f->map, f->map_bytes);
  if (f->fd >= 0)
    close (f->fd);
  io_mapfile_init (f);
}
