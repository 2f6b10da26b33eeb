/* array/grow-backup.c -- the backup of a grow that keeps its data offset
 * (grow.h), in mdadm's format (raid/mdbackup.h), so that mdadm
 * --assemble [--backup-file] and this project restore each other's: in
 * the file given (--backup-file), or, with none, on every new member,
 * where mdadm keeps it without a file (Grow.c reshape_prepare_fdlist,
 * Grow_restart): the header in the last 4 KiB of the member's used space
 * (data_offset + size), the bytes a window before it -- the new shape's
 * last rows, which only the reshape's last windows write, long after the
 * critical section.
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

/* --- where it lives: the file, or the new members ------------------- */

/* On a new member (mdadm's layout for a device, Grow.c grow_backup): the
 * header 4 KiB before the bytes, the bytes, and the header again in the
 * last 4 KiB of the used space, where Grow_restart reads it.
 */
static uint64_t
header_at (const struct r5_reshape *rs, uint64_t size_sectors)
{
  return rs->to.data_offset + size_sectors * 512 - MD_BACKUP_DATA_OFFSET;
}

static uint64_t
member_header_at (const struct array *a)
{
  return header_at (&a->grow.r, a->meta.live.common.size);
}

static uint64_t
member_data_at (const struct array *a)
{
  return member_header_at (a) - a->grow.r.window;
}

static bool
on_members (const struct array *a)
{
  return a->grow.backup_path == NULL;
}

bool
grow_backup_fits (const struct array *a, const struct r5_reshape *rs)
{
  uint64_t top = header_at (rs, a->meta.live.common.size), line = 0;

  while (line < rs->end && r5_reshape_critical (rs, line))
    line += r5_reshape_window_len (rs, line);
  /* The leading header and the bytes, above the data offset and above
   * every row the critical windows write (mdadm refuses a backup as big
   * as half the component: "reshape aborted").
   */
  return top >= 2 * MD_BACKUP_DATA_OFFSET + rs->window + rs->to.data_offset &&
    top - rs->window - MD_BACKUP_DATA_OFFSET >=
    r5_reshape_to_member_end (rs, line);
}

static int
member_fail (struct array *a, unsigned s, const char *what, uint64_t at, int r,
             struct array_err *err)
{
  array_set_err (err, "the grow's backup on member %u (%s): %s at member "
                 "offset %" PRIu64 ": %s", s, array_member_path (a, s), what,
                 at, r == -ENXIO ? "it ends before that (cut short?)"
                 : strerror (-r));
  return r;
}

/* buf (len bytes, page aligned, whole pages) written durably on every new
 * member in service: as the header (header: both its places) or the
 * bytes.  0, -ENODEV with none in service, or -errno (err).
 */
static int
members_write (struct array *a, bool header, const void *buf, size_t len,
               struct array_err *err)
{
  const struct grow *g = &a->grow;
  const char *what = header ? "writing its header" : "writing the window's "
    "bytes";
  uint64_t at = header ? member_header_at (a) : member_data_at (a);
  uint64_t lead = member_data_at (a) - MD_BACKUP_DATA_OFFSET;
  unsigned n = 0;
  int r;

  for (unsigned s = g->r.from.members; s < g->r.to.members; s++) {
    if (health_out (&a->health) == (int) s)
      continue;
    /* The header twice, as mdadm's grow_backup writes it: 4 KiB before
     * the bytes (Grow_restart compares the two) and at its place.
     */
    /* Cut short under the tool or server: these writes near its end
     * would extend it again, and then pass the windows' size checks.
     */
    if ((io_member_shrunk (&a->members[s], at + len, NULL) && (r = -ENXIO)) ||
        (header && (r = io_member_pwrite (&a->members[s], buf, len,
                                          lead)) < 0) ||
        (r = io_member_pwrite (&a->members[s], buf, len, at)) < 0 ||
        (r = io_member_sync (&a->members[s])) < 0)
      return member_fail (a, s, what, at, r, err);
    n++;
  }
  if (n == 0) {
    array_set_err (err, "the grow's backup: no new member is in service to "
                   "keep its critical section on");
    return -ENODEV;
  }
  return 0;
}

/* len bytes of buf (page aligned, len whole pages) written durably as the
 * backup's header (header) or bytes, on every place it lives.
 */
static int
place_write (struct array *a, bool header, const void *buf, size_t len,
             struct array_err *err)
{
  struct grow *g = &a->grow;
  int r;

  if (on_members (a))
    return members_write (a, header, buf, len, err);
  if ((r = io_mapfile_pwrite (&g->backup, buf, header ? MD_BACKUP_HEADER
                              : len, header ? 0 : MD_BACKUP_DATA_OFFSET)) < 0 ||
      (r = io_mapfile_datasync (&g->backup)) < 0)
    return backup_fail (a, header ? "writing its header"
                        : "writing the window's bytes", r, err);
  return 0;
}

/* len bytes at off of the backup's place src (-1: the file; else the new
 * member in slot src) into buf (page aligned, len whole pages).
 */
static int
place_read (struct array *a, int src, void *buf, size_t len, uint64_t off,
            struct array_err *err)
{
  int r;

  if (src < 0) {
    if ((r = io_mapfile_pread (&a->grow.backup, buf, len, off)) < 0)
      return backup_fail (a, "reading it", r, err);
    return 0;
  }
  if ((r = io_member_pread (&a->members[src], buf, len, off)) < 0)
    return member_fail (a, (unsigned) src, "reading it", off, r, err);
  return 0;
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

  if (on_members (a))
    return 0;                 /* nothing to open: grow_backup_begin */
  if (g->backup.fd >= 0)
    return 0;
  if (make)
    return backup_make (a, err);
  r = io_mapfile_open_existing (&g->backup, g->backup_path, &size);
  return r < 0 ? backup_fail (a, "cannot open", r, err) : 0;
}

/* The header: bytes [line, line + len) where the place keeps them (len
 * 0: none), on the new members (members) or in the file.
 */
static int
header_to (struct array *a, bool members, uint64_t line, uint64_t len,
           struct array_err *err)
{
  uint8_t *block = aligned_alloc (4096, MD_BACKUP_DATA_OFFSET);
  struct md_backup b = {
    .mtime = (uint64_t) time (NULL),
    .devstart = (members ? member_data_at (a) : MD_BACKUP_DATA_OFFSET) / 512,
    .arraystart = line / 512, .length = len / 512,
  };
  int r;

  if (block == NULL)
    return -ENOMEM;
  memset (block, 0, MD_BACKUP_DATA_OFFSET);
  memcpy (b.set_uuid, a->meta.live.common.set_uuid, 16);
  md_backup_encode (&b, block);
  r = members ? members_write (a, true, block, MD_BACKUP_DATA_OFFSET, err)
    : place_write (a, true, block, MD_BACKUP_DATA_OFFSET, err);
  free (block);
  return r;
}

static int
write_header (struct array *a, uint64_t line, uint64_t len,
              struct array_err *err)
{
  return header_to (a, on_members (a), line, len, err);
}

int
grow_backup_save (struct array *a, uint64_t line, uint64_t len,
                  const void *data, struct array_err *err)
{
  int r;

  if ((r = grow_backup_open (a, false, err)) < 0 ||
      (r = place_write (a, false, data, len, err)) < 0)
    return r;
  array_test_crash ("grow-backup-bytes");
  return write_header (a, line, len, err);
}

int
grow_backup_forget (struct array *a, struct array_err *err)
{
  return write_header (a, 0, 0, err);
}

int
grow_backup_begin (struct array *a, bool wipe, struct array_err *err)
{
  uint8_t *zero;
  int r;

  if (on_members (a) && !wipe)
    return write_header (a, 0, 0, err);
  if ((zero = aligned_alloc (4096, MD_BACKUP_DATA_OFFSET)) == NULL)
    return -ENOMEM;
  memset (zero, 0, MD_BACKUP_DATA_OFFSET);
  r = members_write (a, true, zero, MD_BACKUP_DATA_OFFSET, err);
  free (zero);
  return r == -ENODEV ? 0 : r;
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
          .ops = ops, .io_flags = IO_FUA | IO_FIXED_SIZE });
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

/* Section s of the backup at src (place_read) read, and written in the
 * new shape.
 */
static int
restore_section (struct array *a, int src, const struct md_backup_section *s,
                 struct array_err *err)
{
  uint64_t len = s->length * 512;
  char *buf = aligned_alloc (4096, (len + 4095) / 4096 * 4096 + 4096);
  int r;

  if (buf == NULL)
    return -ENOMEM;
  if ((r = place_read (a, src, buf, len, s->file_off, err)) == 0)
    r = write_new_shape (a, s->arraystart * 512, len, buf, err);
  free (buf);
  return r;
}

/* The header copy 4 KiB before the bytes (b->devstart) matches the one
 * read (tail: its first 512 bytes) as far as mdadm's Grow_restart
 * compares them (to pad1, or to pad for "-2"); mdadm's forget_backup
 * empties only that copy.
 */
static bool
lead_matches (struct array *a, int src, const struct md_backup *b,
              const uint8_t *tail)
{
  uint8_t *lead = aligned_alloc (4096, MD_BACKUP_DATA_OFFSET);
  struct array_err ignored;
  bool same = false;

  if (lead != NULL && b->devstart * 512 >= MD_BACKUP_DATA_OFFSET &&
      place_read (a, src, lead, MD_BACKUP_DATA_OFFSET,
                  b->devstart * 512 - MD_BACKUP_DATA_OFFSET, &ignored) == 0)
    same = memcmp (lead, tail, b->two ? 100 : 68) == 0;
  free (lead);
  return same;
}

/* The header of the backup at src, decoded; 0 or -EINVAL (err says why). */
static int
read_header (struct array *a, int src, struct md_backup *b,
             struct array_err *err)
{
  uint8_t *block = aligned_alloc (4096, MD_BACKUP_DATA_OFFSET);
  char why[ARRAY_ERR_LEN / 2];
  const char *where = src < 0 ? a->grow.backup_path
    : array_member_path (a, (unsigned) src);
  int r;

  if (block == NULL)
    return -ENOMEM;
  if ((r = place_read (a, src, block, src < 0 ? MD_BACKUP_HEADER
                       : MD_BACKUP_DATA_OFFSET,
                       src < 0 ? 0 : member_header_at (a), err)) == 0 &&
      (r = md_backup_decode (block, a->meta.live.common.set_uuid, b, why,
                             sizeof why)) < 0)
    array_set_err (err, "the grow's backup on %s: %s", where, why);
  if (r == 0 && src >= 0 && !lead_matches (a, src, b, block)) {
    array_set_err (err, "the grow's backup on %s: its two headers differ "
                   "(an emptied backup, as mdadm empties it)", where);
    r = -EINVAL;
  }
  free (block);
  if (r == 0 && !md_backup_fresh (b, a->meta.live.common.utime)) {
    array_set_err (err, "the grow's backup on %s: its time (%" PRIu64 ") is "
                   "too far from the array's (%" PRIu64 "): an old backup, "
                   "as mdadm says", where, b->mtime,
                   a->meta.live.common.utime);
    r = -EINVAL;
  }
  return r;
}

/* The new members' backups, as mdadm's Grow_restart looks at each: the
 * first that holds a section, else the first that holds none (nothing
 * to restore); its slot, or -errno (err: the last member's reason).
 */
static int
find_on_members (struct array *a, struct md_backup *b, struct array_err *err)
{
  const struct grow *g = &a->grow;
  struct md_backup found;
  int r = -ENOENT, empty = -1;

  array_set_err (err, "no new member in service holds it");
  for (unsigned s = g->r.from.members; s < g->r.to.members; s++) {
    if (health_out (&a->health) == (int) s ||
        !io_member_is_open (&a->members[s]) ||
        (r = read_header (a, (int) s, &found, err)) < 0)
      continue;
    if (found.length || (found.two && found.length2)) {
      *b = found;
      return (int) s;
    }
    if (empty < 0) {
      *b = found;
      empty = (int) s;
    }
  }
  return empty >= 0 ? empty : r;
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
  if (read_header (a, -1, &b, &ignored) < 0)
    io_mapfile_close (&g->backup);
}

/* The grow's backup header into *b, from the file given or else the new
 * members (where mdadm looks next: a grow made without a file keeps it
 * there); *src its place (place_read).  0 or -errno (err).
 */
static int
find_backup (struct array *a, struct md_backup *b, int *src,
             struct array_err *err)
{
  struct array_err file_err;
  int r;

  *src = -1;
  if (!on_members (a)) {
    if ((r = grow_backup_open (a, false, err)) == 0 &&
        (r = read_header (a, -1, b, err)) == 0)
      return 0;
    file_err = *err;
  }
  if ((r = find_on_members (a, b, err)) >= 0) {
    *src = r;
    return 0;
  }
  if (!on_members (a))
    *err = file_err;
  return r;
}

int
grow_backup_restore (struct array *a, struct array_err *err)
{
  struct grow *g = &a->grow;
  struct md_backup_section s[2];
  struct md_backup b;
  uint64_t after;
  unsigned n;
  int src = -1, r = 0;

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
  if ((r = find_backup (a, &b, &src, err)) < 0) {
    char why[ARRAY_ERR_LEN];

    snprintf (why, sizeof why, "%s", err->msg);
    array_set_err (err, "the grow stopped in its critical section (array "
                   "byte %" PRIu64 "), whose bytes only its backup holds "
                   "(%s): %s%s", (uint64_t) g->safe, on_members (a) ?
                   "on the new members: no backup file was given"
                   : "the backup file", why, on_members (a) ? "; if the "
                   "grow began with a backup file, give it again "
                   "(backup-file=FILE; raid5ctl grow --backup-file FILE), as "
                   "mdadm --assemble --backup-file" : "");
    return r;
  }
  /* Nothing to restore: the window at the line was not written (its
   * header is written before any of its new stripes).
   */
  if ((n = md_backup_restore_plan (&b, g->safe / 512, s, &after)) == 0)
    return 0;
  r = 0;
  for (unsigned i = 0; i < n && r == 0; i++)
    r = restore_section (a, src, &s[i], err);
  /* Emptied once the line is past it: the next window's bytes go where
   * these are, and a crash before its header must not find this one.
   */
  if (r == 0 && (r = grow_record (a, after * 512, err)) == 0 &&
      (r = header_to (a, src >= 0, 0, 0, err)) == 0) {
    a->job.cursor = g->safe / a->geom.stripe_data;
    array_log (a, ARRAY_LOG_NOTICE, "restored the grow's critical section "
               "from %s: array bytes below %" PRIu64 " in the new shape",
               src < 0 ? g->backup_path : array_member_path (a, (unsigned) src),
               after * 512);
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
