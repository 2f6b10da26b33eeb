/* io/signature.c -- what a member holds already, as libblkid finds it
 * (see signature.h).
 */
#include <config.h>

#include <blkid.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "io/backend.h"
#include "io/signature.h"

/* What libblkid reports, with the magic of each hit (to hide it and look
 * again, and to zero it later).  wipefs's own choice of chains and flags:
 * a GPT is looked for even without its protective MBR, so a backup
 * header left at the end of the disk is found too.
 */
#define SUPERBLOCK_VALUES (BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE | \
                           BLKID_SUBLKS_LABEL | BLKID_SUBLKS_UUID | \
                           BLKID_SUBLKS_VERSION | BLKID_SUBLKS_MAGIC)
#define PARTITION_VALUES (BLKID_PARTS_MAGIC | BLKID_PARTS_FORCE_GPT)

/* A prober for fd, or NULL (errno set if libblkid set it). */
static blkid_probe
new_probe (int fd)
{
  blkid_probe pr = blkid_new_probe ();

  if (pr == NULL)
    return NULL;
  if (blkid_probe_set_device (pr, fd, 0, 0) != 0 ||
      blkid_probe_enable_superblocks (pr, 1) != 0 ||
      blkid_probe_set_superblocks_flags (pr, SUPERBLOCK_VALUES) != 0 ||
      blkid_probe_enable_partitions (pr, 1) != 0 ||
      blkid_probe_set_partitions_flags (pr, PARTITION_VALUES) != 0) {
    blkid_free_probe (pr);
    return NULL;
  }
  return pr;
}

/* Copy the current hit's value of key into out ("" if it has none).
 * Returns whether it had one.
 */
static bool
lookup (blkid_probe pr, const char *key, char *out, size_t len)
{
  const char *v;

  out[0] = '\0';
  if (blkid_probe_lookup_value (pr, key, &v, NULL) != 0)
    return false;
  snprintf (out, len, "%s", v);
  return true;
}

static enum io_sig_kind
kind_of_usage (const char *usage)
{
  if (strcmp (usage, "filesystem") == 0)
    return IO_SIG_FILESYSTEM;
  if (strcmp (usage, "raid") == 0)
    return IO_SIG_RAID;
  if (strcmp (usage, "crypto") == 0)
    return IO_SIG_CRYPTO;
  return IO_SIG_OTHER;
}

/* Where the current hit's magic is, and how long: superblocks and
 * partition tables name them differently.
 */
static void
read_magic (blkid_probe pr, struct io_sig *s)
{
  bool pt = s->kind == IO_SIG_PARTITION_TABLE;
  const char *magic;
  size_t len = 0;
  char off[32];

  if (!lookup (pr, pt ? "PTMAGIC_OFFSET" : "SBMAGIC_OFFSET", off, sizeof off)
      || blkid_probe_lookup_value (pr, pt ? "PTMAGIC" : "SBMAGIC", &magic,
                                   &len) != 0)
    return;
  s->offset = strtoull (off, NULL, 10);
  s->len = len > IO_SIG_MAGIC_MAX ? IO_SIG_MAGIC_MAX : (uint32_t) len;
}

static void
read_hit (blkid_probe pr, struct io_sig *s)
{
  char usage[32];

  memset (s, 0, sizeof *s);
  if (lookup (pr, "TYPE", s->type, sizeof s->type)) {
    lookup (pr, "USAGE", usage, sizeof usage);
    s->kind = kind_of_usage (usage);
    lookup (pr, "UUID", s->uuid, sizeof s->uuid);
  } else {
    s->kind = IO_SIG_PARTITION_TABLE;
    lookup (pr, "PTTYPE", s->type, sizeof s->type);
    lookup (pr, "PTUUID", s->uuid, sizeof s->uuid);
  }
  lookup (pr, "LABEL", s->label, sizeof s->label);
  lookup (pr, "VERSION", s->version, sizeof s->version);
  read_magic (pr, s);
}

/* Hide the hit in libblkid's buffer and make the same prober run again
 * (it may find a second copy: md's other versions, a GPT backup).  Not
 * when the magic is unknown or cannot be hidden: the prober would find
 * the same hit again, for ever.
 */
static void
look_again (blkid_probe pr, const struct io_sig *s)
{
  if (s->len > 0 && blkid_probe_hide_range (pr, s->offset, s->len) == 0)
    blkid_probe_step_back (pr);
}

/* Where signatures live: within this much of either end of a disk (md
 * 1.1/1.2 and file systems near the start, md 0.90/1.0, a GPT backup and
 * ZFS's last labels near the end).
 */
#define PROBE_SPAN (1u << 20)

/* Copy [off, off+len) of what read reads into fd at the same place. */
static int
copy_range (int (*read) (void *, void *, uint64_t, uint64_t), void *opaque,
            int fd, uint64_t off, uint64_t len)
{
  char *buf = malloc (len);
  int r;

  if (buf == NULL)
    return -ENOMEM;
  r = read (opaque, buf, len, off);
  if (r == 0 && pwrite (fd, buf, len, (off_t) off) != (ssize_t) len)
    r = -EIO;
  free (buf);
  return r;
}

int
io_sig_ends_copy (int (*read) (void *, void *, uint64_t, uint64_t),
                  void *opaque, uint64_t size, uint64_t span,
                  const char *name)
{
  uint64_t head = size < span ? size : span;
  uint64_t tail = size - head < span ? size - head : span;
  int fd = memfd_create (name, MFD_CLOEXEC), r;

  if (fd == -1)
    return -errno;
  if (ftruncate (fd, (off_t) size) == -1)
    r = -errno;
  else if ((r = copy_range (read, opaque, fd, 0, head)) == 0 && tail > 0)
    r = copy_range (read, opaque, fd, size - tail, tail);
  if (r < 0) {
    close (fd);
    return r;
  }
  return fd;
}

static int
read_member (void *opaque, void *buf, uint64_t len, uint64_t off)
{
  return io_member_pread (opaque, buf, len, off);
}

/* libblkid probes file descriptors: a member that is not a file (an NBD
 * export) is probed through a copy of its ends.
 */
static int
probe_copy (const struct io_member *m)
{
  return io_sig_ends_copy (read_member, (void *) m, m->size, PROBE_SPAN,
                           "raid5-probe");
}

int
io_member_signatures (const struct io_member *m, struct io_sig_list *list)
{
  bool copy = m->backend != &io_file_backend;
  int fd = copy ? probe_copy (m) : m->file.fd;
  blkid_probe pr;
  int r;

  list->n = 0;
  if (fd < 0)
    return fd;
  errno = 0;
  if ((pr = new_probe (fd)) == NULL) {
    r = errno ? -errno : -ENOMEM;
    if (copy)
      close (fd);
    return r;
  }
  while ((errno = 0, r = blkid_do_probe (pr)) == 0) {
    if (list->n == IO_SIG_MAX) {
      r = -E2BIG;
      break;
    }
    read_hit (pr, &list->sig[list->n]);
    look_again (pr, &list->sig[list->n++]);
  }
  if (r == -1)
    r = errno ? -errno : -EIO;
  blkid_free_probe (pr);
  if (copy)
    close (fd);
  return r == 1 ? 0 : r;
}
