/* io/memmap.c -- a member in memory mapped whole for the request path:
 * see memmap.h.
 */
#define _GNU_SOURCE
#include <config.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23     /* Linux 5.14; older headers lack it */
#endif
#include <sys/stat.h>
#include <unistd.h>

#include "io/memmap.h"

#define MEMMAP_DENSE 0x80u         /* the granule has no hole */
#define MEMMAP_MAPPED 0x40u        /* ... and its pages are in the mapping */
#define MEMMAP_MISSES 0x3fu        /* writes made with pwrite since marked */
#define MIN_SHIFT 16u               /* 64 KiB */
#define MAX_GRANULES (1u << 20)
/* A member whose data lies in more pieces than this is walked no further
 * at open; the granules past it are found dense as they are written.
 */
#define MAX_EXTENTS_WALKED 65536u

/* The marks are atomics, changed by any thread through the member that
 * member.h shares read-only.
 */
static struct io_memmap *
writable (const struct io_memmap *mm)
{
  return (struct io_memmap *) mm;
}

static uint64_t
granule_end (const struct io_memmap *mm, uint64_t g)
{
  uint64_t end = (g + 1) << mm->shift;

  return end < mm->size ? end : mm->size;
}

/* Mark dense the granules lying wholly inside [a, b), known to be data. */
static void
mark_inside (struct io_memmap *mm, uint64_t a, uint64_t b)
{
  uint64_t g = (a + (1ull << mm->shift) - 1) >> mm->shift;

  for (; g < mm->granules && granule_end (mm, g) <= b; g++)
    atomic_store (&mm->marks[g], MEMMAP_DENSE);
}

/* One walk of the member's data (SEEK_DATA, SEEK_HOLE) at open. */
static int
mark_data (struct io_memmap *mm, int fd)
{
  struct stat st;
  off_t pos = 0;

  if (fstat (fd, &st) == -1)
    return -errno;
  /* All allocated: no need to walk it (as view.c). */
  if ((uint64_t) st.st_blocks * 512 >= mm->size) {
    mark_inside (mm, 0, mm->size);
    return 0;
  }
  for (unsigned n = 0; (uint64_t) pos < mm->size && n < MAX_EXTENTS_WALKED;
       n++) {
    off_t data = lseek (fd, pos, SEEK_DATA), hole;

    if (data == -1)
      return errno == ENXIO ? 0 : -errno;     /* ENXIO: no data after pos */
    if ((hole = lseek (fd, data, SEEK_HOLE)) == -1)
      return -errno;
    mark_inside (mm, (uint64_t) data, (uint64_t) hole);
    pos = hole;
  }
  return 0;
}

int
io_memmap_open (struct io_memmap *mm, int fd, uint64_t size)
{
  const char *access = getenv ("RAID5_MEMBER_ACCESS");
  void *map;
  int r;

  memset (mm, 0, sizeof *mm);
  if (size == 0 || (access != NULL && strcmp (access, "read") == 0))
    return 0;
  mm->size = size;
  mm->shift = MIN_SHIFT;
  while ((size - 1) >> mm->shift >= MAX_GRANULES)
    mm->shift++;
  mm->granules = ((size - 1) >> mm->shift) + 1;
  mm->marks = calloc (mm->granules, sizeof mm->marks[0]);
  if (mm->marks == NULL) {
    memset (mm, 0, sizeof *mm);
    return 0;                   /* calls, as before: not worth failing for */
  }
  map = mmap (NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) {
    io_memmap_close (mm);
    return 0;
  }
  mm->map = map;
  /* A core dump of the server is not the place for the members' bytes. */
  (void) madvise (map, size, MADV_DONTDUMP);
  if ((r = mark_data (mm, fd)) < 0)
    io_memmap_close (mm);
  return r;
}

void
io_memmap_close (struct io_memmap *mm)
{
  if (mm->map != NULL)
    munmap (mm->map, mm->size);
  free ((void *) mm->marks);
  memset (mm, 0, sizeof *mm);
}

/* Put the pages of dense granule g (mark v) into the mapping, all in one
 * call: a page's first touch through the mapping is a fault, which cost
 * 11 us on the AMD EPYC VM, three times a pwrite of it; MADV_POPULATE_WRITE
 * maps 16 pages for 0.4 us each (0.26 us over 256 MiB at once).  A punch
 * meanwhile takes the mark away (and unmaps its range): it is then not
 * set, so the granule is put in again once dense.  Errors (an old kernel
 * without MADV_POPULATE_WRITE: EINVAL) leave the pages to be faulted in.
 */
static void
put_in (struct io_memmap *mm, uint64_t g, uint8_t v)
{
  uint64_t at = g << mm->shift;

  (void) madvise (mm->map + at, granule_end (mm, g) - at, MADV_POPULATE_WRITE);
  atomic_compare_exchange_strong (&mm->marks[g], &v,
                                  (uint8_t) (v | MEMMAP_MAPPED));
}

bool
io_memmap_dense (const struct io_memmap *cmm, uint64_t off, uint64_t len)
{
  struct io_memmap *mm = writable (cmm);

  if (mm->map == NULL || len == 0 || off > mm->size || len > mm->size - off)
    return false;
  for (uint64_t g = off >> mm->shift; g <= (off + len - 1) >> mm->shift; g++) {
    uint8_t v = atomic_load (&mm->marks[g]);

    if (!(v & MEMMAP_DENSE))
      return false;
    if (!(v & MEMMAP_MAPPED))
      put_in (mm, g, v);
  }
  return true;
}

/* Count a write made with pwrite into granule g, not marked dense: is it
 * time to look again?  After the 1st, 2nd, 4th ... 32nd, then one in 31.
 */
static bool
time_to_look (struct io_memmap *mm, uint64_t g)
{
  uint8_t v = atomic_load (&mm->marks[g]), n;

  if (v & MEMMAP_DENSE)
    return false;
  n = (uint8_t) ((v & MEMMAP_MISSES) + 1);
  if (n > MEMMAP_MISSES)
    n = 33;                     /* 33 ... 63: one look in 31 writes */
  /* Lost to another thread's count or a mark: no look this time. */
  if (!atomic_compare_exchange_strong (&mm->marks[g], &v, n))
    return false;
  return (n & (n - 1)) == 0 || n == MEMMAP_MISSES;
}

/* Mark granule g dense if lseek finds no hole in it.  A punch that ran
 * (or began) while it looked may have made one: the mark is taken back.
 */
static void
look (struct io_memmap *mm, int fd, uint64_t g)
{
  uint64_t punched = atomic_load (&mm->punched);
  uint64_t end = granule_end (mm, g);
  off_t hole;

  if (atomic_load (&mm->punching) > 0)
    return;
  hole = lseek (fd, (off_t) (g << mm->shift), SEEK_HOLE);
  if (hole == -1 || (uint64_t) hole < end)
    return;
  atomic_fetch_or (&mm->marks[g], MEMMAP_DENSE);
  if (atomic_load (&mm->punching) > 0 || atomic_load (&mm->punched) != punched)
    atomic_store (&mm->marks[g], 0);
}

void
io_memmap_wrote (const struct io_memmap *cmm, int fd, uint64_t off,
                 uint64_t len)
{
  struct io_memmap *mm = writable (cmm);

  if (mm->map == NULL || len == 0 || off >= mm->size)
    return;
  if (len > mm->size - off)
    len = mm->size - off;
  for (uint64_t g = off >> mm->shift; g <= (off + len - 1) >> mm->shift; g++)
    if (time_to_look (mm, g))
      look (mm, fd, g);
}

void
io_memmap_punch_begin (const struct io_memmap *cmm, uint64_t off,
                       uint64_t len)
{
  struct io_memmap *mm = writable (cmm);

  if (mm->map == NULL)
    return;
  atomic_fetch_add (&mm->punching, 1);
  if (len == 0 || off >= mm->size)
    return;
  if (len > mm->size - off)
    len = mm->size - off;
  for (uint64_t g = off >> mm->shift; g <= (off + len - 1) >> mm->shift; g++)
    atomic_store (&mm->marks[g], 0);
}

void
io_memmap_punch_end (const struct io_memmap *cmm)
{
  struct io_memmap *mm = writable (cmm);

  if (mm->map == NULL)
    return;
  atomic_fetch_add (&mm->punched, 1);      /* before punching drops */
  atomic_fetch_sub (&mm->punching, 1);
}
