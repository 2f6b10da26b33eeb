/* io/memmap.c -- a member in memory mapped whole for the request path:
 * see memmap.h.
 *
 * Why a copy can never meet a hole the server makes (all atomics are
 * sequentially consistent):
 * - a punch, under the lock, counts itself in punching, clears its
 *   granules' marks, then waits until copying is 0; a copy counts itself
 *   in copying, then gives up if punching is not 0, then reads the marks.
 *   Either the copy's count comes first (the punch waits for it) or the
 *   punch's (the copy sees it and uses system calls);
 * - a look reads punched before its lseek, and sets its mark under the
 *   lock only if no punch is running and none has ended since: a punch
 *   that began after the look's lseek has not cleared its marks yet (it
 *   needs the lock), and clears the look's mark when it does.
 */
#define _GNU_SOURCE
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/memmap.h"
#include "io/sigbus.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23      /* Linux 5.14; older headers lack it */
#endif

#define MEMMAP_DENSE 0x80u          /* the granule has no hole */
#define MEMMAP_MAPPED 0x40u         /* ... and its pages are in the mapping */
#define MEMMAP_MISSES 0x3fu         /* writes made with pwrite since cleared */
#define MIN_SHIFT 16u               /* 64 KiB */
#define MAX_GRANULES (1u << 20)
/* A member whose data lies in more pieces than this is walked no further
 * at open; the granules past it are found dense as they are written.
 */
#define MAX_EXTENTS_WALKED 65536u

struct io_memmap_state {
  _Atomic bool faulted;       /* a copy met SIGBUS: calls from now on */
  _Atomic bool shrunk;        /* ... and the file is shorter than mapped:
                               * every op fails (io_memmap_shrunk); set
                               * before faulted, so that an op that sees
                               * faulted and turns to calls sees it too */
  unsigned shift;             /* log2 of a granule's bytes */
  uint64_t granules;
  pthread_mutex_t lock;       /* marks set or cleared; punches one at a time */
  _Atomic uint64_t copying;   /* copies through the mapping running now */
  _Atomic uint64_t punching;  /* punches running now */
  _Atomic uint64_t punched;   /* punches ended so far */
  _Atomic uint8_t marks[];    /* per granule: DENSE | MAPPED | misses */
};

static uint64_t
granule_end (const struct io_memmap *mm, uint64_t g)
{
  uint64_t end = (g + 1) << mm->st->shift;

  return end < mm->size ? end : mm->size;
}

/* The granules [*g0, *g1] that [off, off+len) touches, clipped to the
 * member; false if none.
 */
static bool
granules_of (const struct io_memmap *mm, uint64_t off, uint64_t len,
             uint64_t *g0, uint64_t *g1)
{
  if (mm->map == NULL || len == 0 || off >= mm->size)
    return false;
  if (len > mm->size - off)
    len = mm->size - off;
  *g0 = off >> mm->st->shift;
  *g1 = (off + len - 1) >> mm->st->shift;
  return true;
}

/* Mark dense the granules lying wholly inside [a, b), known to be data
 * (at open: no other thread yet).
 */
static void
mark_inside (struct io_memmap *mm, uint64_t a, uint64_t b)
{
  struct io_memmap_state *st = mm->st;
  uint64_t g = (a + (1ull << st->shift) - 1) >> st->shift;

  for (; g < st->granules && granule_end (mm, g) <= b; g++)
    atomic_store (&st->marks[g], MEMMAP_DENSE);
}

/* One walk of the member's data (SEEK_DATA, SEEK_HOLE) at open. */
static int
mark_data (struct io_memmap *mm, int fd)
{
  off_t pos = 0;

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

/* --- copies guarded against SIGBUS ------------------------------------
 *
 * A copy that faults (io/sigbus.h) fails -ENXIO, and the member is used
 * with system calls from then on (engine.c redoes the op so: a read past
 * the end then fails as such, a write into a full tmpfs with ENOSPC).
 */
struct copy {
  void *dst;
  const void *src;
  size_t len;
};

static void
copy (void *arg)
{
  const struct copy *c = arg;

  memcpy (c->dst, c->src, c->len);
}

int
io_memmap_copy (const struct io_memmap *mm, int fd, void *dst,
                const void *src, size_t len, bool to_map)
{
  struct copy c = { dst, src, len };
  struct io_sigbus_range mapped;

  mapped.lo = to_map ? dst : src;
  mapped.hi = mapped.lo + len;
  if (io_sigbus_run (&mapped, 1, copy, &c, NULL, NULL) < 0) {
    (void) io_memmap_fault_shrunk (mm, fd);
    atomic_store (&mm->st->faulted, true);
    return -ENXIO;
  }
  return 0;
}

bool
io_memmap_shrunk (const struct io_memmap *mm)
{
  return mm->st != NULL && atomic_load (&mm->st->shrunk);
}

bool
io_memmap_fault_shrunk (const struct io_memmap *mm, int fd)
{
  struct stat st;

  if (fstat (fd, &st) == 0 && (uint64_t) st.st_size >= mm->size)
    return false;
  atomic_store (&mm->st->shrunk, true);
  return true;
}

void
io_memmap_open (struct io_memmap *mm, int fd, uint64_t size)
{
  const char *access = getenv ("RAID5_MEMBER_ACCESS");
  struct io_memmap_state *st;
  unsigned shift = MIN_SHIFT;
  uint64_t granules;
  void *map;

  memset (mm, 0, sizeof *mm);
  if (size == 0 || (access != NULL && strcmp (access, "read") == 0))
    return;
  while ((size - 1) >> shift >= MAX_GRANULES)
    shift++;
  granules = ((size - 1) >> shift) + 1;
  st = calloc (1, sizeof *st + granules * sizeof st->marks[0]);
  if (st == NULL)
    return;                     /* calls, as before: not worth failing for */
  map = mmap (NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (map == MAP_FAILED) {
    free (st);
    return;
  }
  st->shift = shift;
  st->granules = granules;
  pthread_mutex_init (&st->lock, NULL);
  *mm = (struct io_memmap) { .map = map, .size = size, .st = st };
  /* A core dump of the server is not the place for the members' bytes. */
  (void) madvise (map, size, MADV_DONTDUMP);
  if (mark_data (mm, fd) < 0)
    io_memmap_close (mm);
}

void
io_memmap_close (struct io_memmap *mm)
{
  if (mm->map != NULL) {
    munmap (mm->map, mm->size);
    pthread_mutex_destroy (&mm->st->lock);
    free (mm->st);
  }
  memset (mm, 0, sizeof *mm);
}

/* Put the pages of dense granule g (mark v) into the mapping, all in one
 * call (memmap.h).  The copy that asks is counted, so no punch runs
 * meanwhile.  Errors (an old kernel without MADV_POPULATE_WRITE: EINVAL)
 * leave the pages to be faulted in.
 */
static void
put_in (const struct io_memmap *mm, uint64_t g, uint8_t v)
{
  uint64_t at = g << mm->st->shift;

  (void) madvise (mm->map + at, granule_end (mm, g) - at, MADV_POPULATE_WRITE);
  atomic_compare_exchange_strong (&mm->st->marks[g], &v,
                                  (uint8_t) (v | MEMMAP_MAPPED));
}

bool
io_memmap_copy_begin (const struct io_memmap *mm, uint64_t off, uint64_t len)
{
  struct io_memmap_state *st = mm->st;
  uint64_t g0, g1;

  if (!granules_of (mm, off, len, &g0, &g1) || len > mm->size - off ||
      atomic_load (&st->faulted))
    return false;
  atomic_fetch_add (&st->copying, 1);
  if (atomic_load (&st->punching) > 0)
    goto calls;
  for (uint64_t g = g0; g <= g1; g++) {
    uint8_t v = atomic_load (&st->marks[g]);

    if (!(v & MEMMAP_DENSE))
      goto calls;
    if (!(v & MEMMAP_MAPPED))
      put_in (mm, g, v);
  }
  return true;
calls:
  atomic_fetch_sub (&st->copying, 1);
  return false;
}

void
io_memmap_copied (const struct io_memmap *mm)
{
  atomic_fetch_sub (&mm->st->copying, 1);
}

/* Count a write made with pwrite into granule g, not marked dense: is it
 * time to look again?  After the 1st, 2nd, 4th ... 32nd, then one in 31.
 */
static bool
time_to_look (struct io_memmap_state *st, uint64_t g)
{
  uint8_t v = atomic_load (&st->marks[g]), n;

  if (v & MEMMAP_DENSE)
    return false;
  n = (uint8_t) ((v & MEMMAP_MISSES) + 1);
  if (n > MEMMAP_MISSES)
    n = 33;                     /* 33 ... 63: one look in 31 writes */
  /* Lost to another thread's count or a mark: no look this time. */
  if (!atomic_compare_exchange_strong (&st->marks[g], &v, n))
    return false;
  return (n & (n - 1)) == 0 || n == MEMMAP_MISSES;
}

/* Mark granule g dense if lseek finds no hole in it, unless a punch ran
 * or began since the look did (see the top of this file).
 */
static void
look (const struct io_memmap *mm, int fd, uint64_t g)
{
  struct io_memmap_state *st = mm->st;
  uint64_t punched = atomic_load (&st->punched);
  off_t hole;

  if (atomic_load (&st->punching) > 0)
    return;
  hole = lseek (fd, (off_t) (g << st->shift), SEEK_HOLE);
  if (hole == -1 || (uint64_t) hole < granule_end (mm, g))
    return;
  pthread_mutex_lock (&st->lock);
  if (atomic_load (&st->punching) == 0 && atomic_load (&st->punched) == punched)
    atomic_fetch_or (&st->marks[g], MEMMAP_DENSE);
  pthread_mutex_unlock (&st->lock);
}

void
io_memmap_wrote (const struct io_memmap *mm, int fd, uint64_t off,
                 uint64_t len)
{
  uint64_t g0, g1;

  if (!granules_of (mm, off, len, &g0, &g1))
    return;
  for (uint64_t g = g0; g <= g1; g++)
    if (time_to_look (mm->st, g))
      look (mm, fd, g);
}

void
io_memmap_punch_begin (const struct io_memmap *mm, uint64_t off,
                       uint64_t len)
{
  struct io_memmap_state *st = mm->st;
  uint64_t g0, g1;

  if (mm->map == NULL)
    return;
  pthread_mutex_lock (&st->lock);
  atomic_fetch_add (&st->punching, 1);
  if (granules_of (mm, off, len, &g0, &g1))
    for (uint64_t g = g0; g <= g1; g++)
      atomic_store (&st->marks[g], 0);
  /* Copies that began before: each a memcpy of at most one request. */
  while (atomic_load (&st->copying) > 0)
    sched_yield ();
  pthread_mutex_unlock (&st->lock);
}

void
io_memmap_punch_end (const struct io_memmap *mm)
{
  if (mm->map == NULL)
    return;
  atomic_fetch_add (&mm->st->punched, 1);      /* before punching drops */
  atomic_fetch_sub (&mm->st->punching, 1);
}
