/* array/grow.h -- growing the array by members (jobs room): md's
 * reshape (raid/reshape.h plans it, raid/mdstate.h says what the
 * superblocks hold), run as the job R5_JOB_RESHAPE.
 *
 * While a grow is under way a->geom is the NEW shape (N+k members, the
 * data offset moved down, the same stripes per member): member loops,
 * superblock writes and the job's progress (stripes of the new shape)
 * need nothing else.  The old shape lives here; the line is the job's
 * cursor (stripes of the new shape).  The array serves the old size
 * until the grow ends (md's array size grows in raid5_finish_reshape).
 *
 * Requests (grow-line.c, the write path's "reshape line"): a batch ahead
 * of the line runs in the old shape and holds its stripes' locks, reads
 * too; the job moves a window holding the locks of its old stripes, and
 * moves the line before it lets them go.  A write behind the line but
 * past what the superblocks record waits until they record it (md's
 * reshape_safe): after a crash those bytes are read in the old shape.
 *
 * Crash safety (reshape.h): before a window is written past what the
 * superblocks allow, every member is synced and the line recorded in
 * them (md's reshape_position); otherwise the line is recorded every
 * GROW_RECORD_NS for progress.  A restart goes on from the recorded line.
 *
 * Who calls what: assemble.c hands a grow under way over (grow_resume);
 * array_grow_start begins one (tools/grow.c offline, control.c online);
 * job.c runs its steps (grow_step) and ends it (grow_done, grow_free);
 * the write path calls grow_shape and grow_holds for every batch while
 * one is under way.  Locking: job.lock is held around grow_step and
 * grow_done, as around every job step; record_lock around each record of
 * the line.  Errors: -errno with one line in err.
 */
#ifndef ARRAY_GROW_H
#define ARRAY_GROW_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "array/array.h"
#include "array/runplan.h"
#include "io/mapfile.h"
#include "raid/mdsb.h"
#include "raid/reshape.h"

#define GROW_RECORD_NS (1000000000ull)  /* md: every 10 s; a restart
                                                * loses at most this much */

/* A page of an old row a window moved though two members are out there
 * (grow-lost.c): the old stripe, the chunk offset, the members (a mask).
 */
struct grow_lost_row {
  uint64_t stripe, off, out;
};

/* A page of the new shape the window lists bad and keeps so: a member and
 * its offset.
 */
struct grow_kept {
  unsigned member;
  uint64_t off;
};

struct grow {
  _Atomic bool active;
  struct r5_reshape r;        /* from: the old shape; to == a->geom */
  _Atomic uint64_t safe;      /* array bytes the superblocks count moved */
  uint64_t recorded_ns;
  pthread_mutex_t record_lock;
  /* The job's memory, made at its first step, kept to its end. */
  struct r5_plan plan;
  char *scratch;
  uint64_t scratch_len;
  struct io_op *ops;
  size_t ops_cap;
  uint64_t windows;           /* moved since open */
  /* The window's rows moved with lost pages, and the new pages listed
   * for them (grow-lost.c); made again with each plan.
   */
  struct grow_lost_row *lost;
  size_t nlost, lost_cap;
  struct grow_kept *kept;
  size_t nkept, kept_cap;
  uint64_t lost_pages;        /* since open: data pages moved as lost */
  /* A grow that keeps its data offset: mdadm's backup file of its
   * critical windows (grow-backup.c), its path from the configuration.
   */
  char *backup_path;
  struct io_mapfile backup;
};

/* Assembly found sb (the freshest) mid-grow: set a->geom to the new
 * shape and the grow's state from the superblocks.  0, or -ENOTSUP /
 * -EINVAL when the recorded shapes cannot be made.
 */
int grow_resume (struct array *a, const struct md_sb *sb,
                 struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* One step of the job: windows from the line (a->job.cursor, stripes of
 * the new shape) until reach bytes of each member are covered or the end.
 * 0, or -errno (a member failed: it is out of service, the job stops and
 * may be resumed degraded).
 */
int grow_step (struct array *a, uint64_t reach, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* The job's memory for the window at the reshape's start (grow-move.c),
 * had before anything is written; 0 or -ENOMEM/-errno with err set.
 */
int grow_window_memory (struct array *a, const struct r5_reshape *rs,
                        struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* A reshape over a row two members are out of (grow-lost.c).
 * grow_lost_note: r5_around.lost for the window's plan (ctx: its struct
 * bb_around) -- the row noted, its members out returned (0: no memory,
 * the window stops).  grow_lost_list: once the window's reads are done
 * and before its backup and writes, each data page noted in [line, line
 * + len) listed in the new shape on its member and its row's parity
 * member, durably, and logged; 0 or -errno (err: a log that cannot take
 * it; the window is not moved).  grow_lost_kept: is member m's page at
 * off one of those (its listing kept when the window writes it)?
 */
uint64_t grow_lost_note (void *ctx, uint64_t stripe, uint64_t off,
                         uint64_t len)
  __attribute__((nonnull));
int grow_lost_list (struct array *a, uint64_t line, uint64_t len,
                    struct array_err *err)
  __attribute__((nonnull, warn_unused_result));
bool grow_lost_kept (const struct array *a, unsigned m, uint64_t off)
  __attribute__((nonnull));

/* The last window is moved: members synced, the superblocks say the
 * data starts at the new offset and the reshape is over.
 */
int grow_done (struct array *a, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

void grow_free (struct grow *g) __attribute__((nonnull));

/* The backup (grow-backup.c), in the file given or, with none, on the
 * new members (where mdadm keeps it without --backup-file).  The file
 * opened -- if make, made new with an
 * empty header (a file already there is refused, -EEXIST, and left as
 * it was: mdadm's O_EXCL), else one that exists; a critical window's
 * bytes [line, line + len) saved in it, durably, header last; the
 * header emptied once the window is moved and recorded past; at start
 * (after meta_start), a grow whose recorded line is in its critical
 * section restored from it -- its bytes written in the new shape, the
 * line recorded past them -- or refused without it (err); closed, and
 * removed when the grow is done if this grow used it (made it, or read
 * it as its own).  0 or -errno.
 */
int grow_backup_open (struct array *a, bool make, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));
int grow_backup_save (struct array *a, uint64_t line, uint64_t len,
                      const void *data, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));
int grow_backup_forget (struct array *a, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));
/* Before the grow is recorded (the shape a->grow.r, the new members
 * open): with no backup file, an empty header on every new member, so
 * that a crash before its first window finds a backup holding nothing
 * rather than none; with a file, or wipe (a grow not recorded after
 * all), the places there zeroed, so that a start without the file finds
 * no stale backup.
 */
int grow_backup_begin (struct array *a, bool wipe, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Can the new members of rs keep the backup (no file): its bytes and
 * headers within their used space, above every row the critical windows
 * write?
 */
bool grow_backup_fits (const struct array *a, const struct r5_reshape *rs)
  __attribute__((nonnull));
int grow_backup_restore (struct array *a, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));
void grow_backup_close (struct array *a, bool done) __attribute__((nonnull));

/* The reshape line: array bytes below it are in the new shape. */
uint64_t grow_line (const struct array *a) __attribute__((nonnull));

/* Record line (at most the line, a stripe boundary of the new shape) in
 * the superblocks, every member synced first, unless they record as much
 * already.  Any thread; serialised by record_lock.  0 or -errno.
 */
int grow_record (struct array *a, uint64_t line, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* The stripes (meta.h) a write of len > 0 bytes at array offset off may
 * touch in whichever shape it runs: its stripes in the new shape and,
 * while a grow is under way, in the old too -- md marks the stripe_head
 * of the shape it writes in; the two ranges, not the span between them,
 * which grows with off.  Any thread, under the shape lock.
 */
struct meta_marks;
void grow_write_stripes (const struct array *a, uint64_t off, uint64_t len,
                         struct meta_marks *marks)
  __attribute__((nonnull));

/* The write path's row (writepath.h): shape a batch by the line, and
 * say whether the line has passed it since.
 */
struct wp_batch;
int grow_shape (struct array *a, struct wp_batch *b, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));
bool grow_holds (const struct array *a, const struct wp_batch *b)
  __attribute__((nonnull));


#endif /* ARRAY_GROW_H */
