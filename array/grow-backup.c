/* array/grow-backup.c -- the backup file of a grow that keeps its data
 * offset (grow.h), in mdadm's format (raid/mdbackup.h), so that mdadm
 * --assemble --backup-file and this project restore each other's.
 *
 * A critical window (raid/reshape.h) is moved so (grow.c):
 *   1. the line recorded at its start (the superblocks);
 *   2. its bytes, read for the move, written to the file at byte 4096,
 *      synced; then the header saying which they are, synced;
 *   3. its new stripes written (over its own old bytes), the members
 *      synced, the line past it recorded;
 *   4. the header made empty (mdadm's forget_backup), synced -- only then
 *      does the line move past it and may a client write there, so a
 *      backup never holds bytes older than the array's.
 * A crash before 3 leaves the old bytes whole (and an empty or older
 * header); after 2, the backup holds them: on the next start the bytes
 * are written in the new shape from it (mdadm's Grow_restart) before
 * anything is served.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "array/grow.h"
#include "array/object.h"
#include "array/requests.h"
#include "array/runplan.h"
#include "raid/mdbackup.h"

static int
backup_fail (struct array *a, const char *what, int r, struct array_err *err)
{
  array_set_err (err, "backup file %s: %s: %s", a->grow.backup_path, what,
                 strerror (-r));
  return r;
}

static int write_header (struct array *a, uint64_t line, uint64_t len,
                         struct array_err *err);

/* A new grow's file: made, never one already there (it could be a
 * member, or anything: mdadm opens it O_EXCL too), its header empty and
 * durable before the grow is recorded, so that a crash before the first
 * window finds a backup that holds nothing rather than none.
 */
static int
backup_make (struct array *a, struct array_err *err)
{
  struct grow *g = &a->grow;
  uint64_t size;
  int r = io_mapfile_create (&g->backup, g->backup_path, &size);

  if (r == -EEXIST) {
    array_set_err (err, "backup file %s: it exists already: give the path "
                   "of a new file (as mdadm, which makes it anew)",
                   g->backup_path);
    return r;
  }
  if (r < 0)
    return backup_fail (a, "cannot make it", r, err);
  if ((r = write_header (a, 0, 0, err)) < 0) {
    io_mapfile_close (&g->backup);
    (void) io_mapfile_remove (g->backup_path);
  }
  return r;
}

int
grow_backup_open (struct array *a, bool make, struct array_err *err)
{
  struct grow *g = &a->grow;
  uint64_t size;
  int r;

  if (g->backup_path == NULL) {
    array_set_err (err, "no backup file given (mdadm's --backup-file)");
    return -ENOENT;
  }
  if (g->backup.fd >= 0)
    return 0;
  if (make)
    return backup_make (a, err);
  r = io_mapfile_open_existing (&g->backup, g->backup_path, &size);
  return r < 0 ? backup_fail (a, "cannot open", r, err) : 0;
}

/* The header: bytes [line, line + len) at byte 4096 (len 0: none). */
static int
write_header (struct array *a, uint64_t line, uint64_t len,
              struct array_err *err)
{
  struct grow *g = &a->grow;
  uint8_t block[MD_BACKUP_HEADER];
  struct md_backup b = {
    .mtime = (uint64_t) time (NULL), .devstart = MD_BACKUP_DATA_OFFSET / 512,
    .arraystart = line / 512, .length = len / 512,
  };
  int r;

  memcpy (b.set_uuid, a->meta.live.common.set_uuid, 16);
  md_backup_encode (&b, block);
  if ((r = io_mapfile_pwrite (&g->backup, block, sizeof block, 0)) < 0 ||
      (r = io_mapfile_datasync (&g->backup)) < 0)
    return backup_fail (a, "writing its header", r, err);
  return 0;
}

int
grow_backup_save (struct array *a, uint64_t line, uint64_t len,
                  const void *data, struct array_err *err)
{
  struct grow *g = &a->grow;
  int r;

  if ((r = grow_backup_open (a, false, err)) < 0)
    return r;
  if ((r = io_mapfile_pwrite (&g->backup, data, len,
                              MD_BACKUP_DATA_OFFSET)) < 0 ||
      (r = io_mapfile_datasync (&g->backup)) < 0)
    return backup_fail (a, "writing the window's bytes", r, err);
  return write_header (a, line, len, err);
}

int
grow_backup_forget (struct array *a, struct array_err *err)
{
  return write_header (a, 0, 0, err);
}

/* Array bytes [off, off + len) of buf written in the new shape (whole
 * stripes of it), durably.
 */
static int
write_new_shape (struct array *a, uint64_t off, uint64_t len, char *buf,
                 struct array_err *err)
{
  struct r5_plan p;
  uint64_t done = 0, planned;
  int r = 0;

  r5_plan_init (&p);
  while (r == 0 && done < len) {
    struct r5_range rg = {
      .op = R5_OP_WRITE, .off = off + done, .len = len - done, .req_off = off,
      .missing = health_out (&a->health), .budget = UINT64_MAX,
    };
    struct io_op *ops = NULL;
    char *scratch = NULL;

    r5_plan_reset (&p);
    if ((r = r5_plan_range (&p, &a->geom, &rg, &planned)) == 0 &&
        ((ops = calloc (p.nios + 1, sizeof *ops)) == NULL ||
         (p.scratch && (scratch = aligned_alloc (4096, p.scratch)) == NULL)))
      r = -ENOMEM;
    if (r == 0)
      r = plan_run (a, &(struct plan_run) {
          .plan = &p, .client = buf, .scratch = scratch, .zero = a->zero,
          .ops = ops, .io_flags = IO_FUA });
    free (ops);
    free (scratch);
    done += planned;
  }
  r5_plan_free (&p);
  if (r < 0)
    array_set_err (err, "writing the backup's bytes in the new shape: %s",
                   strerror (-r));
  return r;
}

/* Section s of the backup read, and written in the new shape. */
static int
restore_section (struct array *a, const struct md_backup_section *s,
                 struct array_err *err)
{
  uint64_t len = s->length * 512;
  char *buf = malloc (len ? len : 1);
  int r;

  if (buf == NULL)
    return -ENOMEM;
  if ((r = io_mapfile_pread (&a->grow.backup, buf, len, s->file_off)) < 0)
    r = backup_fail (a, "reading a backed-up section", r, err);
  else
    r = write_new_shape (a, s->arraystart * 512, len, buf, err);
  free (buf);
  return r;
}

/* The header of the backup, decoded; 0 or -EINVAL (err says why). */
static int
read_header (struct array *a, struct md_backup *b, struct array_err *err)
{
  uint8_t block[MD_BACKUP_HEADER];
  char why[ARRAY_ERR_LEN / 2];
  int r;

  if ((r = io_mapfile_pread (&a->grow.backup, block, sizeof block, 0)) < 0)
    return backup_fail (a, "reading its header", r, err);
  if (md_backup_decode (block, a->meta.live.common.set_uuid, b, why,
                        sizeof why) < 0) {
    array_set_err (err, "backup file %s: %s", a->grow.backup_path, why);
    return -EINVAL;
  }
  if (!md_backup_fresh (b, a->meta.live.common.utime)) {
    array_set_err (err, "backup file %s: its time (%" PRIu64 ") is too far "
                   "from the array's (%" PRIu64 "): an old backup, as mdadm "
                   "says", a->grow.backup_path, b->mtime,
                   a->meta.live.common.utime);
    return -EINVAL;
  }
  return 0;
}

/* A grow going on past its critical section: a backup file given that
 * is this array's (mdadm's header, its set UUID, a time near the
 * array's) is the one the grow made, and goes when the grow is done;
 * anything else is left alone.
 */
static void
backup_adopt (struct array *a)
{
  struct grow *g = &a->grow;
  struct array_err ignored = { .msg = "" };
  struct md_backup b;
  uint64_t size;

  if (g->backup_path == NULL || g->backup.fd >= 0 ||
      io_mapfile_open_existing (&g->backup, g->backup_path, &size) < 0)
    return;
  if (read_header (a, &b, &ignored) < 0)
    io_mapfile_close (&g->backup);
}

int
grow_backup_restore (struct array *a, struct array_err *err)
{
  struct grow *g = &a->grow;
  struct md_backup_section s[2];
  struct md_backup b;
  uint64_t after;
  unsigned n;
  int r = 0;

  if (!g->active)
    return 0;
  if (!r5_reshape_critical (&g->r, g->safe)) {
    if (!a->read_only)
      backup_adopt (a);       /* read-only: the grow waits, as its jobs */
    return 0;
  }
  if (a->read_only) {
    array_set_err (err, "the grow stopped in its critical section (array "
                   "byte %" PRIu64 "), whose bytes only its backup file "
                   "holds: restoring them writes, and the array is "
                   "read-only (open it writable with the backup file "
                   "first)", (uint64_t) g->safe);
    return -EROFS;
  }
  if ((r = grow_backup_open (a, false, err)) < 0 ||
      (r = read_header (a, &b, err)) < 0) {
    char why[ARRAY_ERR_LEN];

    snprintf (why, sizeof why, "%s", err->msg);
    array_set_err (err, "the grow stopped in its critical section (array "
                   "byte %" PRIu64 "), whose bytes only its backup file "
                   "holds: %s", (uint64_t) g->safe, why);
    return r;
  }
  /* Nothing to restore: the window at the line was not written (its
   * header is written before any of its new stripes).
   */
  if ((n = md_backup_restore_plan (&b, g->safe / 512, s, &after)) == 0)
    return 0;
  for (unsigned i = 0; i < n && r == 0; i++)
    r = restore_section (a, &s[i], err);
  if (r == 0 && (r = grow_record (a, after * 512, err)) == 0) {
    a->job.cursor = g->safe / a->geom.stripe_data;
    array_log (a, ARRAY_LOG_NOTICE, "restored the grow's critical section "
               "from %s: array bytes below %" PRIu64 " in the new shape",
               g->backup_path, after * 512);
  }
  return r;
}

void
grow_backup_close (struct array *a, bool done)
{
  struct grow *g = &a->grow;
  bool used = g->backup.fd >= 0;      /* made, or read as this grow's */

  io_mapfile_close (&g->backup);
  if (done && used && io_mapfile_remove (g->backup_path) == 0)
    array_log (a, ARRAY_LOG_DEBUG, "removed the backup file %s",
               g->backup_path);
}
