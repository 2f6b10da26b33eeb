/* array/array.h -- the live RAID-5 array: members and their health, stripe
 * locks, and requests carried out as raid/ plans through io/.
 *
 * Thread safety: after array_open() returns, every request function may be
 * called from any number of threads at once, and so may array_control()
 * and the job functions.  Member health has one owner (health.h): a slot
 * goes out of service once, atomically, while the failing request holds
 * its stripe lock, and comes back only when its rebuild ends; requests
 * re-check it under their own lock and replan (exec.c).  What the md
 * superblocks say changes only under meta.lock (meta.h), and a write that
 * leaves a failed member out waits until they say it is out.
 *
 * Errors: functions return 0 or -errno.  A request that fails fills
 * struct array_err with one line naming what failed (member, path,
 * operation, offset); the caller decides how to report it.  A member that
 * fails while the array can still serve every byte is not a request
 * error: it is marked faulty, reported through the log hook, and the
 * request is redone degraded.
 */
#ifndef ARRAY_ARRAY_H
#define ARRAY_ARRAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "raid/badblocks.h"
#include "raid/geom.h"
#include "raid/jobplan.h"
#include "raid/plan.h"
#include "io/tls.h"

#define ARRAY_ERR_LEN 512

struct array_err {
  char msg[ARRAY_ERR_LEN];
};

enum member_state {
  MEMBER_ACTIVE,
  MEMBER_MISSING,             /* absent from the start (disk=missing) */
  MEMBER_FAULTY,              /* failed an I/O while serving */
  MEMBER_REBUILDING,          /* valid below the rebuild cursor only */
};

enum array_metadata {
  ARRAY_META_AUTO,            /* md superblocks define the array if present */
  ARRAY_META_NONE,            /* raw members, geometry from the config */
};

/* Which geometry fields the user gave explicitly (they must then agree
 * with the superblocks).
 */
#define ARRAY_GIVEN_CHUNK 1u
#define ARRAY_GIVEN_LAYOUT 2u
#define ARRAY_GIVEN_DATA_OFFSET 4u

/* What array_open() needs.  paths[i] == NULL means member i is missing.
 * With superblocks, the order of paths does not matter: each member's
 * superblock says its slot.
 */
struct array_config {
  unsigned members;
  const char *paths[R5_MAX_MEMBERS];
  uint64_t chunk;             /* bytes */
  enum r5_layout layout;
  uint64_t data_offset;       /* bytes */
  bool direct;                /* O_DIRECT member I/O */
  enum array_metadata metadata;
  unsigned given;             /* ARRAY_GIVEN_* */
  bool force;                 /* start even if dirty and degraded */
  bool run;                   /* start degraded even where the others
                               * still count the missing member (mdadm
                               * --run; a disk=missing implies it) */
  const char *spare;          /* hot spare, or NULL */
  bool spare_force;           /* use a spare that holds a file system or
                               * another array's superblock (guard.h) */
  unsigned member_timeout_ms; /* NBD members: silence that fails one; 0:
                                 the default (io/nbd.h) */
  struct io_tls tls;          /* NBD members over TLS (io/tls.h; zeros:
                               * none).  Its strings must outlive the
                               * array: members opened later (spare,
                               * rebuild, re-add, grow) use them too */
  const char *integrity;      /* the integrity record's file (made if
                               * empty or absent), or NULL */
  const char *grow_backup;    /* mdadm's --backup-file of a grow that keeps
                               * its data offset (the members have no room
                               * to move it): made by array_grow_start,
                               * read to restore a grow stopped in its
                               * critical section; or NULL */
  bool manual_readd;          /* a member that can come back by itself (an
                               * NBD export, io_member_can_return) is not
                               * re-added by itself (array/comeback.c) */
  bool read_only;             /* nothing is ever written to a member (md's
                               * read-only array): members opened for
                               * reading only, no log recovered or
                               * reserved, nothing recorded in the
                               * superblocks, a read error not rewritten;
                               * only a check runs.  No spare, no grow's
                               * backup file, no integrity record */
};

enum array_log_level {
  ARRAY_LOG_DEBUG,
  ARRAY_LOG_NOTICE,           /* worth telling though nothing failed (a log
                               * recovered after a crash) */
  ARRAY_LOG_ERROR,
};

/* Where the array reports events that are not request errors (a member
 * failing, members of different sizes).  May be called from any thread.
 */
typedef void (*array_log_fn) (enum array_log_level level, const char *msg);

/* Request flags. */
#define ARRAY_FUA 1u          /* durable on return */
#define ARRAY_MAY_TRIM 2u     /* zero may punch holes */

struct array;

/* Check the parameters alone (before any member is opened).
 * Returns 0, or -EINVAL with the reason in *err.
 */
int array_check_config (const struct array_config *cfg, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Open, check and lock the members and build the array.  Nothing is
 * written to any member.  Returns 0 and *out, or -errno with the reason in
 * *err (e.g. "member 2 (/x/c.img): cannot open: No such file or directory").
 */
int array_open (const struct array_config *cfg, array_log_fn log,
                struct array **out, struct array_err *err)
  __attribute__((nonnull (1, 3, 4), warn_unused_result));

/* Close the members and free everything; a NULL array is fine.  No
 * request may be running.
 */
void array_close (struct array *a);

const struct r5_geom *array_geom (const struct array *a)
  __attribute__((nonnull));
/* The bytes served: geom's capacity -- but while a grow is under way
 * the old shape's (md grows the array's size when the reshape ends).
 */
uint64_t array_capacity (const struct array *a) __attribute__((nonnull));
enum member_state array_member_state (const struct array *a, unsigned member)
  __attribute__((nonnull));
/* Can a member out of service come back by a re-add (the bitmap's
 * regions only) rather than a whole rebuild?  Only with a bitmap, which
 * marks what it missed, and not while a grow is under way: md refuses
 * both (super_1_validate; the reshape check in add_new_disk).
 */
bool array_readd_possible (const struct array *a) __attribute__((nonnull));
/* Has the array failed (two members out: every request fails)? */
bool array_has_failed (const struct array *a) __attribute__((nonnull));
const char *array_member_path (const struct array *a, unsigned member)
  __attribute__((nonnull));
/* Is [offset, offset + len) of slot's member bad, by its md bad-block
 * log?  BYTES from the member's start, its data offset included (md's
 * table counts sectors of the device, raid/badblocks.h); a sector is bad
 * or not as a whole.  MD_BB_NONE also for a member without a table (no
 * log, raw members, or a member that took the slot after assembly).
 * With MD_BB_SOME or MD_BB_ALL, *first_bad (if not NULL) is the byte
 * offset of the first bad sector's start in the range (at least offset).
 * Read-only: any thread, no lock.
 */
enum md_bb_hit array_member_bad (const struct array *a, unsigned slot,
                                 uint64_t offset, uint64_t len,
                                 uint64_t *first_bad)
  __attribute__((nonnull (1)));

/* The md array UUID as mdadm prints it; -ENOENT for raw members. */
int array_md_uuid (const struct array *a, char out[36])
  __attribute__((nonnull, warn_unused_result));

/* Requests on array bytes [off, off+len): off + len <= capacity, len > 0
 * (len 0 is a no-op).  Buffers belong to the caller.
 */
int array_read (struct array *a, void *buf, uint64_t len, uint64_t off,
                struct array_err *err)
  __attribute__((nonnull, warn_unused_result));
int array_write (struct array *a, const void *buf, uint64_t len, uint64_t off,
                 unsigned flags, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));
int array_zero (struct array *a, uint64_t len, uint64_t off, unsigned flags,
                struct array_err *err)
  __attribute__((nonnull, warn_unused_result));
int array_trim (struct array *a, uint64_t len, uint64_t off, unsigned flags,
                struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* fdatasync every member in service. */
int array_flush (struct array *a, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Counters since open; each read atomically, the set not as a snapshot. */
struct array_stats {
  uint64_t reads, writes, zeroes, trims, flushes;
  uint64_t segs[R5_SEG_KINDS];  /* stripe segments by strategy */
  uint64_t member_failures;
};
void array_get_stats (const struct array *a, struct array_stats *out)
  __attribute__((nonnull));

/* Background work: a thread that marks the array clean when idle (md
 * superblocks only) and runs the array's job (resync, check, repair,
 * rebuild) at the sync speed.  Start it after any fork; stop it before
 * array_close().  Returns 0 or -errno.
 */
int array_start_background (struct array *a) __attribute__((nonnull));
void array_stop_background (struct array *a) __attribute__((nonnull));

/* Jobs: at most one at a time, as md's sync_action.  A resync starts by
 * itself after an unclean stop; a rebuild starts when a member is
 * replaced (or a spare takes a failed member's place).  Their kinds are
 * raid/jobplan.h's enum r5_job, named by r5_job_name().
 */

/* Resync/rebuild speed limits in KiB/s per member (md's sync_speed_min
 * and _max): max while clients are idle, min while they are busy.
 * Changeable at any time; 0 keeps the current value.  Whoever takes a
 * limit from a user (the plugin's parameters, the speed command,
 * raid5ctl) takes 1 to ARRAY_SYNC_SPEED_LIMIT: 1 TiB/s is past any
 * member, and keeps the job's byte arithmetic far from 64 bits.
 */
#define ARRAY_SYNC_SPEED_LIMIT (UINT64_C (1) << 30)
/* md's defaults (sync_speed_min, sync_speed_max), KiB/s per member. */
#define ARRAY_SYNC_SPEED_MIN 1000
#define ARRAY_SYNC_SPEED_MAX 200000
void array_set_sync_speed (struct array *a, uint64_t min_kib,
                           uint64_t max_kib)
  __attribute__((nonnull));

/* The latency-target mode (raid/pace.h): while clients are busy, the
 * job runs as fast as keeps their requests' p99 under target_us, between
 * the speed limits, instead of at min.  0: md's pacing.  Changeable at
 * any time.
 */
void array_set_sync_latency (struct array *a, uint64_t target_us)
  __attribute__((nonnull));

/* Start a check or repair in the background.  Returns 0, -EBUSY if a job
 * is running (err names it), -ENODEV if the array is degraded.
 */
int array_job_start (struct array *a, enum r5_job kind,
                     struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Pause or resume the running job (it keeps its place). */
void array_job_pause (struct array *a, bool pause) __attribute__((nonnull));

/* Replace the member in slot (which must be out of service) by the file
 * or device at path -- or, path NULL, by the member already there (a
 * re-add) or the hot spare -- and start rebuilding it.  A path or spare
 * holding anything but this array's superblock (a file system, another
 * array's: array/guard.h) is refused with -EEXIST unless force (for the
 * spare: spare-force=true), which wipes what it held.  The new member
 * gets a superblock at once; progress is kept in it (md's
 * recovery_offset), so a restart resumes.  Returns 0 or -errno (err).
 */
int array_rebuild_start (struct array *a, unsigned slot, const char *path,
                         bool force, struct array_err *err)
  __attribute__((nonnull (1, 5), warn_unused_result));

/* Re-add the member that left slot (which must be out of service): path,
 * or NULL for the one assembly left out of that slot (or the one still in
 * it, failed while serving).  Only the regions the write-intent bitmap
 * marks are rebuilt -- md's --re-add -- so it is refused (err says why)
 * unless the member's own superblock names this array and slot and the
 * bitmap was not cleared since it left.  A member that left part-way
 * through a rebuild onto it (not a bitmap-guided one) is rebuilt whole,
 * as md does (md_readd_whole).  Returns 0 (bitmap-guided), 1 (rebuilt
 * whole) or -errno.
 */
int array_readd_start (struct array *a, unsigned slot, const char *path,
                       struct array_err *err)
  __attribute__((nonnull (1, 4), warn_unused_result));

/* Grow the array by n members (md's reshape: mdadm --add, then --grow
 * --raid-devices=N+n): the devices at paths join in the slots after the
 * last, the superblocks record the grow at once, and the job RESHAPE
 * moves the data to the new shape (array_job_run carries it on offline).
 * The data offset moves down by mdadm's least (no backup file) where the
 * members have that much room before their data; else, with a backup
 * file (array_grow_backup_file, array_config.grow_backup), it is kept and
 * the critical section goes through the file.  Each path is probed as
 * a rebuild's is (-EEXIST unless force).  Refused (err says why, nothing
 * written) on raw members, a degraded array, a running job, a bitmap,
 * PPL or integrity record, too little room.  Requests may run meanwhile
 * (they are held while the array takes its new shape).  n == 0: a grow
 * under way whose reshape stopped goes on.  0 or -errno.
 */
int array_grow_start (struct array *a, const char *const *paths, unsigned n,
                      bool force, struct array_err *err)
  __attribute__((nonnull (1, 5), warn_unused_result));

/* Grow the component size (sectors of each member used after its data
 * offset) to `sectors`, or with 0 to all the room the smallest member
 * has, in whole chunks: md's update_size and raid5_resize (mdadm --grow
 * --size=SIZE|max).  The array gains whole stripes at its end; the
 * superblocks record the size at once (each member's data_size its own
 * room) and the new space is due a resync from the old end (the job
 * RESYNC, which array_job_run carries out offline), its bitmap chunks
 * set first -- none with clean (mdadm --assume-clean: the new space is
 * taken as consistent).  The members' sizes are read again first (files
 * and devices grown while served).  Requests are held while it records
 * the size; a server's job thread runs the resync.  Refused (err says
 * why, nothing written) on raw members, a degraded array, a job running
 * or due, a grow or replace under way, an integrity record, a size
 * below the present one (-EINVAL) or above a member's room (-ENOSPC);
 * -EALREADY when there is no whole chunk more.  0 or -errno.
 */
int array_resize (struct array *a, uint64_t sectors, bool clean,
                  struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Add an internal bitmap (on) or remove it: mdadm --grow
 * --bitmap=internal|none.  Added where and as mdadm adds one (8 sectors
 * after the superblock, its chunk as at create for the room before the
 * bad-block log, every bit set), the superblocks recording it at once;
 * removed, the superblocks no longer name it (its bytes stay, as
 * mdadm leaves them).  Requests are held meanwhile.  Refused (err says
 * why, nothing written) as array_resize is, and with a partial parity
 * log, or without room (-ENOSPC); -EALREADY when there is one already
 * (none).  0 or -errno.
 */
int array_set_bitmap (struct array *a, bool on, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* The backup file a grow that keeps its data offset uses from now on
 * (mdadm's --backup-file), made at path when one begins.  Refused
 * (-EBUSY) while a grow is under way.  0 or -errno.
 */
int array_grow_backup_file (struct array *a, const char *path,
                            struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Replace the member in slot, which stays in service meanwhile, by the
 * file or device at path (md's want_replacement; mdadm --replace --with):
 * path is checked as a rebuild's (-EEXIST unless force), gets its
 * superblock as the slot's replacement at once, and the job REPLACE
 * copies the slot onto it (array_job_run carries it on offline), writes
 * going to both; then it takes the slot and the old member is let go.
 * Refused (err says why, nothing written) on a degraded or failed
 * array, a running job, a grow, a replace under way.  0 or -errno;
 * -EALREADY (err says so) if path is the slot's member already (asked
 * again once its replace ended).
 */
int array_replace_start (struct array *a, unsigned slot, const char *path,
                         bool force, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Take the member in slot out of service by hand (md's --fail). */
int array_fail (struct array *a, unsigned slot, struct array_err *err)
  __attribute__((nonnull, warn_unused_result));

/* Where the job stands; mismatch_cnt as md counts it (512-byte sectors,
 * 8 per wrong 4 KiB unit).  found[] lists the first stripes with wrong
 * parity of the running or last check/repair/resync.
 */
#define ARRAY_FOUND_MAX 64
struct array_mismatch {
  uint64_t stripe;
  unsigned parity;            /* member holding the stripe's parity */
  uint64_t member_off;        /* bytes: first wrong 4 KiB unit of parity */
  uint64_t last_off;          /* ... and the last (units between may be
                               * right) */
  unsigned units;             /* wrong 4 KiB units in the chunk */
  uint64_t array_off, array_len;  /* array bytes the stripe holds */
  /* With an integrity record: the member whose units fail their
   * checksum, or -1; how many; the member offset of the first; how many
   * a repair rewrote from the other members.
   */
  int csum_member;
  unsigned csum_units, csum_healed;
  uint64_t csum_off;
};
struct array_job_status {
  enum r5_job kind;   /* running, or NONE */
  bool paused;
  int slot;                   /* rebuild target, or -1 */
  uint64_t done, total;       /* stripes */
  uint64_t stripe_bytes;      /* member bytes per stripe (the chunk) */
  uint64_t speed_kib;         /* recent speed, KiB/s per member */
  uint64_t speed_min, speed_max;
  /* The latency-target mode (0: off): the target, the rate the pacer
   * keeps while clients are busy, the clients' p99 in its last window
   * and how many windows were over it.
   */
  uint64_t latency_max_us, paced_kib, client_p99_us, pace_cuts;
  uint64_t throttled_ms;      /* waited for the speed limit, since open:
                               * a job below speed_min that did not wait
                               * was running as fast as it could */
  uint64_t mismatches;        /* sectors */
  uint64_t stripes_bad;
  unsigned nfound;
  struct array_mismatch found[ARRAY_FOUND_MAX];
  bool resync_due;            /* not stopped cleanly: parity may be stale
                               * where writes were in flight */
  bool ppl;                   /* a partial parity log keeps it: not a
                               * resync but the log's replay makes a dirty
                               * array whole (when served or repaired) */
  enum r5_job last_kind;  /* the last job that ended */
  int last_result;            /* 0 or -errno */
  char last_why[ARRAY_ERR_LEN];   /* why it stopped, naming member and
                                   * offset ("" if it did not) */
  uint64_t last_mismatches, last_stripes_bad;
  /* Stripes skipped (a scrub) or not wholly rebuilt (a rebuild) for the
   * bad blocks of their rows: the running job's, the last one's.
   */
  uint64_t bb_stripes, last_bb_stripes;
  /* Sectors a scrub rewrote from the other members where one member's
   * bad-block log listed them, and cleared: the running job's, the last
   * one's.
   */
  uint64_t bb_rewritten, last_bb_rewritten;
  /* Stripes a read-only check skipped for read errors (not corrected):
   * the running job's, the last one's.
   */
  uint64_t unread_stripes, last_unread_stripes;
  uint64_t jobs_ended;        /* since open: a watcher tells one job's end
                               * from the next's by it */
};
void array_job_status (struct array *a, struct array_job_status *out)
  __attribute__((nonnull));

/* Offline use (raid5ctl, nothing serving the members): run a job to its
 * end in the calling thread, unthrottled.  R5_JOB_RESYNC runs the
 * pending resync (if any); CHECK and REPAIR scrub every stripe; REBUILD
 * continues what array_rebuild_start() began.  On a dirty array (a resync
 * pending after an unclean stop) a CHECK counts what the crash left and
 * the resync stays due; a REPAIR is the resync, done over every stripe,
 * and the array is recorded clean after it.  watch (NULL: nobody
 * watches) hears of progress now and then and of each stripe found with
 * wrong parity.  Returns 0 or -errno (err set).
 */
typedef void (*array_progress_fn) (void *opaque, uint64_t done,
                                   uint64_t total);
typedef void (*array_mismatch_fn) (void *opaque,
                                   const struct array_mismatch *mm);
struct array_job_watch {
  array_progress_fn progress; /* or NULL */
  array_mismatch_fn found;    /* or NULL */
  void *opaque;               /* passed to both */
  /* Offline: at most this many bytes of each member a step (0: as much
   * as the job's memory takes), so that a caller pacing the job from
   * progress (raid5ctl --max-speed) is called often enough to.
   */
  uint64_t step_bytes;
};
int array_job_run (struct array *a, enum r5_job kind,
                   const struct array_job_watch *watch,
                   struct array_err *err)
  __attribute__((nonnull (1, 4), warn_unused_result));

/* Carry out one control command line (see array/control.c for the
 * commands) and return the reply: its output, then "OK" or "ERROR: why",
 * each line ending in a newline.  malloc'd; the caller frees it.  Safe
 * from any thread while the array serves requests.
 */
char *array_control (struct array *a, const char *line)
  __attribute__((nonnull, malloc));

/* The status report: md-style members line, job progress, speed,
 * counters; as text or as one JSON object.  One moment's look: written
 * with job.lock held, so out should be a stream in memory (as the
 * control socket's reply is), never one that can block.
 */
void array_status_print (struct array *a, bool json, FILE *out)
  __attribute__((nonnull));

/* Test-only: member in slot fails every I/O after `after` more ops. */
void array_inject_failure (struct array *a, unsigned slot, int64_t after)
  __attribute__((nonnull));

#endif /* ARRAY_ARRAY_H */
