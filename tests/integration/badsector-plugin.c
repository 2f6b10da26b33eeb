/* tests/integration/badsector-plugin.c -- an nbdkit plugin serving a file
 * as a disk with bad sectors, for the read-error tests:
 *
 *   nbdkit .../nbdkit-badsector-plugin.so file=IMG bad=LIST [log=LOG]
 *
 * LIST holds lines "read SECTOR COUNT" and "write SECTOR COUNT" (512-byte
 * sectors of IMG).  A read touching a bad sector of either kind fails
 * with EIO.  A "read" sector is one a disk remaps when it is written: a
 * write over it succeeds and it reads well from then on.  A "write"
 * sector cannot be written either: writes touching it fail with EIO.
 * LIST is read again whenever it changes (its size or mtime), so a test
 * can spoil sectors while the disk is served; a remapped sector stays
 * good until LIST changes again.  LOG, if given, gets a line for each
 * failed read ("read-error SECTOR COUNT"), failed write ("write-error
 * SECTOR COUNT") and remap ("remapped SECTOR COUNT").
 */
#include <config.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL

enum bad { GOOD, BAD_READ, BAD_WRITE };

static const char *file, *list, *logpath;
static int fd = -1;
static uint64_t sectors;
static unsigned char *state;            /* enum bad, one per sector */
static struct timespec list_mtime;
static off_t list_size = -1;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int
bs_config (const char *key, const char *value)
{
  if (strcmp (key, "file") == 0)
    file = value;
  else if (strcmp (key, "bad") == 0)
    list = value;
  else if (strcmp (key, "log") == 0)
    logpath = value;
  else {
    nbdkit_error ("badsector: unknown parameter '%s'", key);
    return -1;
  }
  return 0;
}

static int
bs_config_complete (void)
{
  struct stat st;

  if (file == NULL || list == NULL) {
    nbdkit_error ("badsector: file= and bad= are needed");
    return -1;
  }
  if ((fd = open (file, O_RDWR | O_CLOEXEC)) == -1 || fstat (fd, &st) == -1) {
    nbdkit_error ("badsector: %s: %m", file);
    return -1;
  }
  sectors = (uint64_t) st.st_size / 512;
  if ((state = calloc (sectors ? sectors : 1, 1)) == NULL) {
    nbdkit_error ("badsector: out of memory");
    return -1;
  }
  return 0;
}

static void
note (const char *what, uint64_t first, uint64_t n)
{
  FILE *fp;

  if (logpath == NULL || (fp = fopen (logpath, "a")) == NULL)
    return;
  fprintf (fp, "%s %" PRIu64 " %" PRIu64 "\n", what, first, n);
  fclose (fp);
}

/* LIST again if it changed; lock held. */
static void
reload (void)
{
  struct stat st;
  char kind[16];
  uint64_t first, n;
  FILE *fp;

  if (stat (list, &st) == -1) {
    memset (state, GOOD, sectors);
    list_size = -1;
    return;
  }
  if (st.st_size == list_size && st.st_mtim.tv_sec == list_mtime.tv_sec &&
      st.st_mtim.tv_nsec == list_mtime.tv_nsec)
    return;
  list_size = st.st_size;
  list_mtime = st.st_mtim;
  memset (state, GOOD, sectors);
  if ((fp = fopen (list, "r")) == NULL)
    return;
  while (fscanf (fp, "%15s %" SCNu64 " %" SCNu64, kind, &first, &n) == 3)
    for (uint64_t s = first; s < first + n && s < sectors; s++)
      state[s] = strcmp (kind, "write") == 0 ? BAD_WRITE : BAD_READ;
  fclose (fp);
}

/* Is any sector of [off, off + count) at least as bad as worst? */
static bool
touches (uint64_t off, uint64_t count, enum bad worst)
{
  for (uint64_t s = off / 512; s < (off + count + 511) / 512 && s < sectors;
       s++)
    if (state[s] >= worst)
      return true;
  return false;
}

static void *
bs_open (int readonly)
{
  (void) readonly;
  return NBDKIT_HANDLE_NOT_NEEDED;
}

static int64_t
bs_get_size (void *h)
{
  (void) h;
  return (int64_t) (sectors * 512);
}

static int
bs_pread (void *h, void *buf, uint32_t count, uint64_t offset, uint32_t flags)
{
  bool bad;

  (void) h; (void) flags;
  pthread_mutex_lock (&lock);
  reload ();
  bad = touches (offset, count, BAD_READ);
  pthread_mutex_unlock (&lock);
  if (bad) {
    note ("read-error", offset / 512, (count + 511) / 512);
    nbdkit_error ("badsector: read of a bad sector at byte %" PRIu64, offset);
    errno = EIO;
    return -1;
  }
  if (pread (fd, buf, count, (off_t) offset) != (ssize_t) count) {
    nbdkit_error ("badsector: pread: %m");
    return -1;
  }
  return 0;
}

/* Remap the read-bad sectors a write covers; lock held. */
static void
remap (uint64_t offset, uint32_t count)
{
  uint64_t first = UINT64_MAX, n = 0;

  for (uint64_t s = offset / 512; s < (offset + count + 511) / 512 &&
       s < sectors; s++)
    if (state[s] == BAD_READ) {
      state[s] = GOOD;
      first = first == UINT64_MAX ? s : first;
      n++;
    }
  if (n)
    note ("remapped", first, n);
}

static int
bs_pwrite (void *h, const void *buf, uint32_t count, uint64_t offset,
           uint32_t flags)
{
  bool bad;

  (void) h;
  pthread_mutex_lock (&lock);
  reload ();
  bad = touches (offset, count, BAD_WRITE);
  if (!bad)
    remap (offset, count);
  pthread_mutex_unlock (&lock);
  if (bad) {
    note ("write-error", offset / 512, (count + 511) / 512);
    nbdkit_error ("badsector: write of a bad sector at byte %" PRIu64,
                  offset);
    errno = EIO;
    return -1;
  }
  if (pwrite (fd, buf, count, (off_t) offset) != (ssize_t) count ||
      ((flags & NBDKIT_FLAG_FUA) && fdatasync (fd) == -1)) {
    nbdkit_error ("badsector: pwrite: %m");
    return -1;
  }
  return 0;
}

static int
bs_flush (void *h, uint32_t flags)
{
  (void) h; (void) flags;
  if (fdatasync (fd) == -1) {
    nbdkit_error ("badsector: fdatasync: %m");
    return -1;
  }
  return 0;
}

static int
bs_can_fua (void *h)
{
  (void) h;
  return NBDKIT_FUA_NATIVE;
}

static int
bs_can_multi_conn (void *h)
{
  (void) h;
  return 1;
}

static void
bs_unload (void)
{
  if (fd >= 0)
    close (fd);
  free (state);
}

static struct nbdkit_plugin plugin = {
  .name = "badsector",
  .config = bs_config,
  .config_complete = bs_config_complete,
  .open = bs_open,
  .get_size = bs_get_size,
  .pread = bs_pread,
  .pwrite = bs_pwrite,
  .flush = bs_flush,
  .can_fua = bs_can_fua,
  .can_multi_conn = bs_can_multi_conn,
  .unload = bs_unload,
};

NBDKIT_REGISTER_PLUGIN (plugin)
