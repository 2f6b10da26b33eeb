/* array/array.c -- assemble the array: check parameters, open, check and
 * lock the members, and tear it all down again.
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "array/guard.h"
#include "array/object.h"
#include "array/jobs.h"
#include "array/requests.h"
#include "io/nbd.h"
#include "raid/layout.h"

/* The geometry cfg asks for, on members of member_bytes bytes. */
static struct r5_geom_params
geom_params (const struct array_config *cfg, uint64_t member_bytes)
{
  return (struct r5_geom_params) {
    .members = cfg->members, .chunk = cfg->chunk, .layout = cfg->layout,
    .data_offset = cfg->data_offset, .member_bytes = member_bytes,
  };
}

int
array_check_config (const struct array_config *cfg, struct array_err *err)
{
  unsigned missing = 0;
  struct r5_geom_params gp;
  struct r5_geom g;

  if (cfg->members < R5_MIN_MEMBERS || cfg->members > R5_MAX_MEMBERS) {
    array_set_err (err, "%u disks given: RAID-5 needs %u to %u disk= "
                   "parameters", cfg->members, R5_MIN_MEMBERS, R5_MAX_MEMBERS);
    return -EINVAL;
  }
  for (unsigned i = 0; i < cfg->members; i++)
    missing += cfg->paths[i] == NULL;
  if (missing > 1) {
    array_set_err (err, "%u disks are 'missing': RAID-5 survives the loss "
                   "of one member only", missing);
    return -EINVAL;
  }
  if (cfg->read_only && (cfg->spare || cfg->grow_backup || cfg->integrity)) {
    array_set_err (err, "%s is written to, and the array is opened "
                   "read-only", cfg->spare ? "a spare"
                   : cfg->grow_backup ? "a grow's backup file"
                   : "the integrity record");
    return -EINVAL;
  }
  /* With metadata=auto the superblocks may decide everything; then a
   * caller that leaves the geometry out (chunk 0) is judged later.
   */
  if (cfg->metadata == ARRAY_META_AUTO && cfg->chunk == 0)
    return 0;
  /* Everything but the member size, judged against a member just big
   * enough for one stripe.
   */
  gp = geom_params (cfg, cfg->data_offset + cfg->chunk);
  if (r5_geom_init (&g, &gp) < 0) {
    r5_geom_explain (err->msg, sizeof err->msg, &gp);
    return -EINVAL;
  }
  return 0;
}

static int
member_err (struct array_err *err, const char *path, unsigned i,
            const char *what, int r)
{
  array_set_err (err, "member %u (%s): %s: %s", i, path, what, strerror (-r));
  return r;
}

/* Open given member i into *m (given order) and refuse duplicates. */
static int
open_member (struct io_member *opened, const struct array_config *cfg,
             unsigned i, struct array_err *err)
{
  struct io_member *m = &opened[i];
  int r = io_member_open_opts (m, cfg->paths[i], &(struct io_open_opts) {
                                 .direct = cfg->direct,
                                 .timeout_ms = cfg->member_timeout_ms,
                                 .tls = &cfg->tls,
                                 .reads_only = cfg->read_only });

  if (r == -ENODEV)
    array_set_err (err, "member %u (%s): not a regular file or block device",
                   i, cfg->paths[i]);
  else if (r == -EOPNOTSUPP)
    array_set_err (err, "member %u (%s): its file system does not support "
                   "O_DIRECT (direct=true)", i, cfg->paths[i]);
  if (r == -ENODEV || r == -EOPNOTSUPP)
    return r;
  /* A member not there or not answering (md would assemble without
   * it: mdadm --run) is named with the way to start without it.
   */
  if (r < 0) {
    bool absent = r == -ENOENT || r == -ECONNREFUSED || r == -ETIMEDOUT ||
      r == -EHOSTUNREACH || r == -ENETUNREACH;

    array_set_err (err, "member %u (%s): cannot open: %s%s", i,
                   cfg->paths[i], io_strerror (r),
                   absent && cfg->members > 2 ? " (given as 'missing' in its "
                   "place, the array starts degraded without it)" : "");
    return r;
  }
  for (unsigned j = 0; j < i; j++)
    if (io_member_is_open (&opened[j]) && io_member_same (&opened[j], m)) {
      array_set_err (err, "member %u (%s): same file as member %u (%s)", i,
                     cfg->paths[i], j, cfg->paths[j]);
      return -EINVAL;
    }
  return 0;
}

/* Raw members: slots in the given order, the smallest member decides the
 * geometry, as in md.
 */
static int
raw_geometry (struct array *a, const struct array_config *cfg,
              struct io_member *opened, struct array_err *err)
{
  uint64_t smallest = UINT64_MAX, largest = 0;
  struct r5_geom_params gp;
  unsigned at = 0;
  int r;

  for (unsigned i = 0; i < cfg->members; i++) {
    a->members[i] = opened[i];
    io_member_init (&opened[i]);
    if (cfg->paths[i] == NULL) {
      health_set_out (&a->health, i, MEMBER_MISSING, 0, false);
      continue;
    }
    if (a->members[i].size < smallest)
      smallest = a->members[i].size, at = i;
    if (a->members[i].size > largest)
      largest = a->members[i].size;
  }
  gp = geom_params (cfg, smallest);
  r = r5_geom_init (&a->geom, &gp);
  if (r < 0) {
    char why[200];

    r5_geom_explain (why, sizeof why, &gp);
    array_set_err (err, "member %u (%s) is too small: %s", at,
                   cfg->paths[at], why);
    return r;
  }
  if (smallest != largest)
    array_log (a, ARRAY_LOG_DEBUG, "members differ in size (%" PRIu64
               "..%" PRIu64 " bytes); using %" PRIu64 " bytes of each, as "
               "the smallest (member %u) allows", smallest, largest,
               a->geom.data_offset + a->geom.member_data, at);
  return 0;
}

/* Check each member in its slot: O_DIRECT alignment, its first data
 * block read (its reads work), then lock it.  A read error there is a
 * bad sector, not a member that cannot be read: md reads no data at
 * assembly, and the first request to meet it corrects or records it
 * (heal.c) -- so it is said and the member kept.  (A recovery at start
 * that must read that block -- the integrity record computed again, a
 * PPL entry, a grow's critical section -- still stops the start there.)
 */
static int
probe_and_lock (struct array *a, struct array_err *err)
{
  for (unsigned s = 0; s < ARRAY_MEMBERS; s++) {
    struct io_member *m = &a->members[s];
    uint32_t len = m->dio_align > 4096 ? m->dio_align : 4096;
    int r;

    if (!io_member_is_open (m))
      continue;
    if (m->direct && a->geom.data_offset % m->dio_align != 0) {
      array_set_err (err, "member %u (%s): data offset %" PRIu64 " is not a "
                     "multiple of the O_DIRECT alignment %u", s, m->path,
                     a->geom.data_offset, m->dio_align);
      return -EINVAL;
    }
    if (len > a->geom.chunk)
      len = (uint32_t) a->geom.chunk;
    r = io_member_probe_read (m, a->geom.data_offset, len);
    if (r == -EIO || r == -ENODATA)   /* a disk's medium error: ENODATA */
      array_log (a, ARRAY_LOG_ERROR, "member %u (%s): read error at member "
                 "offset %" PRIu64 " at start: kept (a read error is "
                 "corrected from the other members when it is met)", s,
                 m->path, a->geom.data_offset);
    else if (r < 0) {
      array_set_err (err, "member %u (%s): read at %" PRIu64 ": %s", s,
                     m->path, a->geom.data_offset, strerror (-r));
      return r;
    }
    if ((r = io_member_lock (m)) == -EBUSY) {
      array_set_err (err, "member %u (%s): in use: another process holds "
                     "its lock (is the array already served?)", s, m->path);
      return r;
    }
    if (r < 0)
      return member_err (err, m->path, s, "lock", r);
  }
  return 0;
}

static int
open_members (struct array *a, const struct array_config *cfg,
              struct array_err *err)
{
  struct io_member opened[R5_MAX_MEMBERS];
  int r = 0;

  for (unsigned i = 0; i < R5_MAX_MEMBERS; i++)
    io_member_init (&opened[i]);
  for (unsigned i = 0; i < cfg->members && r == 0; i++)
    if (cfg->paths[i] != NULL)
      r = open_member (opened, cfg, i, err);
  if (r == 0)
    r = meta_assemble (a, cfg, opened, err);
  if (r == 0)
    r = a->meta.enabled ? meta_init (a, err)
                        : raw_geometry (a, cfg, opened, err);
  for (unsigned i = 0; i < R5_MAX_MEMBERS; i++)
    io_member_close (&opened[i]);   /* members left out, or all on error */
  return r < 0 ? r : probe_and_lock (a, err);
}

/* The hot spare: usable by this array, and ours alone. */
static int
open_spare (struct array *a, const struct array_config *cfg,
            struct array_err *err)
{
  struct io_member *m = &a->spare;
  int r;

  if (cfg->spare == NULL)
    return 0;
  if ((r = io_member_open_opts (m, cfg->spare, &(struct io_open_opts) {
                                   .direct = cfg->direct,
                                   .timeout_ms = cfg->member_timeout_ms,
                                   .tls = &cfg->tls })) < 0) {
    array_set_err (err, "spare=%s: cannot open: %s", cfg->spare,
                   io_strerror (r));
    return r;
  }
  for (unsigned s = 0; s < a->geom.members; s++)
    if (io_member_is_open (&a->members[s]) &&
        io_member_same (&a->members[s], m)) {
      array_set_err (err, "spare=%s is member %u already", cfg->spare, s);
      return -EINVAL;
    }
  if (m->size < a->geom.data_offset + a->geom.member_data) {
    array_set_err (err, "spare=%s is too small: %" PRIu64 " bytes, each "
                   "member needs %" PRIu64, cfg->spare, m->size,
                   a->geom.data_offset + a->geom.member_data);
    return -ENOSPC;
  }
  if ((r = io_member_lock (m)) < 0) {
    array_set_err (err, "spare=%s: in use: another process holds its lock",
                   cfg->spare);
    return r;
  }
  a->spare_force = cfg->spare_force;
  return spare_guard (a, err);
}

int
spare_guard (struct array *a, struct array_err *err)
{
  char uuid[36] = "", name[ARRAY_ERR_LEN / 2];
  struct array_guard g = { .own_uuid = uuid, .force = a->spare_force,
                           .override = "spare-force=true", .tls = &a->tls };

  if (array_md_uuid (a, uuid) < 0)
    uuid[0] = '\0';             /* raw members: nothing is ours */
  snprintf (name, sizeof name, "spare=%s", a->spare.path);
  return array_guard_path (a->spare.path, name, &g, &a->spare_sigs, err);
}

/* Pool buffers hold a whole batch: as much as the planner may put in one
 * (its budget is the buffer), and always one stripe's worst case (every
 * member's chunk and a computed one, and with a log the partial
 * parity's), which it plans whatever the budget.
 */
static size_t
pool_buf_bytes (const struct r5_geom *g, bool ppl)
{
  uint64_t stripe = (g->members + 1 + ppl) * g->chunk;

  return stripe > ARRAY_SCRATCH_MIN_BUF ? stripe : ARRAY_SCRATCH_MIN_BUF;
}

static unsigned
pool_bufs (const struct r5_geom *g, bool ppl)
{
  size_t n = ARRAY_SCRATCH_POOL / pool_buf_bytes (g, ppl);

  return n > ARRAY_SCRATCH_MIN_BUFS ? (unsigned) n : ARRAY_SCRATCH_MIN_BUFS;
}

static int
alloc_runtime (struct array *a, struct array_err *err)
{
  int r;

  a->zero = mmap (NULL, a->geom.chunk, PROT_READ,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (a->zero == MAP_FAILED) {
    a->zero = NULL;
    array_set_err (err, "cannot map %" PRIu64 " zero bytes: %m",
                   a->geom.chunk);
    return -ENOMEM;
  }
  if ((r = -pthread_key_create (&a->worker_key, array_worker_free)) < 0) {
    array_set_err (err, "pthread_key_create: %s", strerror (-r));
    return r;
  }
  a->key_made = true;
  if ((r = stripe_locks_init (&a->locks)) < 0) {
    array_set_err (err, "cannot create stripe locks: %s", strerror (-r));
    return r;
  }
  a->locks_made = true;
  if ((r = scratch_pool_init (&a->pool,
                              pool_buf_bytes (&a->geom, a->ppl.on),
                              pool_bufs (&a->geom, a->ppl.on))) < 0) {
    array_set_err (err, "cannot create the scratch pool: %s", strerror (-r));
    return r;
  }
  a->pool_made = true;
  if ((r = scratch_pool_init (&a->small, ARRAY_SCRATCH_SMALL_BUF,
                              ARRAY_SCRATCH_SMALL_BUFS)) < 0) {
    array_set_err (err, "cannot create the scratch pool: %s", strerror (-r));
    return r;
  }
  a->small_made = true;
  return 0;
}

int
array_pools_fit (struct array *a, const struct r5_geom *g,
                 struct array_err *err)
{
  size_t bytes = pool_buf_bytes (g, a->ppl.on);
  int r;

  if (bytes <= a->pool.buf_bytes)
    return 0;
  r = scratch_pool_resize (&a->pool, bytes, pool_bufs (g, a->ppl.on));
  if (r < 0)
    array_set_err (err, "cannot make the requests' scratch fit %u members: "
                   "%s", g->members, strerror (-r));
  return r;
}

/* The locks of the array's shape (object.h, grow.h), writers first. */
static int
shape_locks_init (struct array *a, struct array_err *err)
{
  pthread_rwlockattr_t attr;
  int r;

  pthread_rwlockattr_init (&attr);
  pthread_rwlockattr_setkind_np (&attr,
                                 PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
  r = pthread_rwlock_init (&a->shape_lock, &attr);
  pthread_rwlockattr_destroy (&attr);
  if (r == 0 && (r = pthread_mutex_init (&a->grow.record_lock, NULL)) != 0)
    pthread_rwlock_destroy (&a->shape_lock);
  if (r != 0) {
    array_set_err (err, "cannot create the shape locks: %s", strerror (r));
    return -r;
  }
  a->shape_lock_made = true;
  return 0;
}

/* The lock of the members' bad-block tables (badblocks.h). */
static int
bb_lock_init (struct array *a, struct array_err *err)
{
  int r = array_bb_init (a);

  if (r < 0)
    array_set_err (err, "cannot create the bad-block tables' lock: %s",
                   strerror (-r));
  return r;
}

/* The partial parity log's recovery, then the integrity record -- judged
 * by md's events and dirty state as assembled, before the recovery
 * changes them.
 */
static int
start_logs (struct array *a, const struct array_config *cfg,
            struct array_err *err)
{
  uint64_t events = a->meta.live.common.events;
  bool dirty = a->meta.live.dirty;
  int r;

  if ((r = ppl_init (a, err)) < 0 || (r = ppl_start (a, err)) < 0)
    return r;
  return cfg->integrity
    ? integrity_open (a, cfg->integrity, events, dirty, err) : 0;
}

int
array_open (const struct array_config *cfg, array_log_fn log,
            struct array **out, struct array_err *err)
{
  struct array *a;
  int r;

  if ((r = array_check_config (cfg, err)) < 0)
    return r;
  a = calloc (1, sizeof *a);
  if (a == NULL) {
    array_set_err (err, "out of memory");
    return -ENOMEM;
  }
  a->log = log;
  a->manual_readd = cfg->manual_readd;
  a->read_only = cfg->read_only;
  if (cfg->grow_backup &&
      (a->grow.backup_path = strdup (cfg->grow_backup)) == NULL) {
    free (a);
    array_set_err (err, "out of memory");
    return -ENOMEM;
  }
  a->member_timeout_ms = cfg->member_timeout_ms;
  a->tls = cfg->tls;
  health_init (&a->health);
  for (unsigned i = 0; i < ARRAY_MEMBERS; i++)
    io_member_init (&a->members[i]);
  a->replace.slot = -1;
  io_member_init (&a->spare);
  io_mapfile_init (&a->integrity.file);
  io_mapfile_init (&a->grow.backup);
  pthread_mutex_init (&a->pad_lock, NULL);
  pthread_mutex_init (&a->fault_lock, NULL);
  pthread_mutex_init (&a->replace.missed_lock, NULL);
  err->msg[0] = '\0';
  if ((r = shape_locks_init (a, err)) < 0 ||
      (r = bb_lock_init (a, err)) < 0 ||
      (r = open_members (a, cfg, err)) < 0 ||
      (r = open_spare (a, cfg, err)) < 0 ||
      (r = ppl_setup (a, err)) < 0 ||
      (r = alloc_runtime (a, err)) < 0 ||
      (r = start_logs (a, cfg, err)) < 0 ||
      (r = job_init (a)) < 0 ||
      (r = meta_start (a, err)) < 0 ||
      (r = grow_backup_restore (a, err)) < 0) {
    if (r == -ENOMEM && err->msg[0] == '\0')
      array_set_err (err, "out of memory");
    array_close (a);
    return r;
  }
  io_thread_release ();       /* the plugin forks after opening */
  *out = a;
  return 0;
}

void
array_close (struct array *a)
{
  struct array_err err;

  if (a == NULL)
    return;
  array_stop_background (a);
  if (a->job.kind == R5_JOB_REBUILD &&
      meta_rebuild_progress (a, a->job.cursor, &err) < 0)
    array_log (a, ARRAY_LOG_ERROR, "%s", err.msg);
  if (a->job.kind == R5_JOB_REPLACE)
    replace_checkpoint (a, true);
  if (meta_mark_clean (a, false, &err) < 0)
    array_log (a, ARRAY_LOG_ERROR, "%s", err.msg);
  if (a->integrity.on && array_flush (a, &err) < 0) {
    array_log (a, ARRAY_LOG_ERROR, "%s", err.msg);
    a->integrity.on = false;  /* not settled: its marks stay */
  }
  integrity_close (a);
  array_bb_free (a);
  meta_free (&a->meta);
  ppl_free (a);
  job_destroy (a);
  io_member_close (&a->spare);
  for (unsigned i = 0; i < ARRAY_MEMBERS; i++)
    io_member_close (&a->members[i]);
  for (unsigned i = 0; i < R5_MAX_MEMBERS; i++)
    free (a->left_out[i]);
  if (a->zero)
    munmap (a->zero, a->geom.chunk);
  if (a->key_made) {
    struct worker *w = pthread_getspecific (a->worker_key);

    array_worker_free (w);
    pthread_key_delete (a->worker_key);
  }
  if (a->locks_made)
    stripe_locks_destroy (&a->locks);
  if (a->pool_made)
    scratch_pool_destroy (&a->pool);
  if (a->small_made)
    scratch_pool_destroy (&a->small);
  pthread_mutex_destroy (&a->pad_lock);
  pthread_mutex_destroy (&a->fault_lock);
  pthread_mutex_destroy (&a->replace.missed_lock);
  if (a->shape_lock_made) {
    pthread_rwlock_destroy (&a->shape_lock);
    pthread_mutex_destroy (&a->grow.record_lock);
  }
  free (a);
}

void
array_inject_failure (struct array *a, unsigned slot, int64_t after)
{
  if (slot < a->geom.members && io_member_is_open (&a->members[slot]))
    io_member_inject_failure (&a->members[slot], after);
}

const struct r5_geom *
array_geom (const struct array *a)
{
  return &a->geom;
}

enum member_state
array_member_state (const struct array *a, unsigned member)
{
  return health_state (&a->health, member);
}

bool
array_readd_possible (const struct array *a)
{
  return a->meta.has_bitmap && !a->grow.active;
}

bool
array_has_failed (const struct array *a)
{
  return health_failed (&a->health);
}

const char *
array_member_path (const struct array *a, unsigned member)
{
  return a->members[member].path ? a->members[member].path : "missing";
}

int
array_md_uuid (const struct array *a, char out[36])
{
  if (!a->meta.enabled)
    return -ENOENT;
  md_uuid_format (a->meta.live.common.set_uuid, out);
  return 0;
}

void
array_get_stats (const struct array *a, struct array_stats *out)
{
  out->reads = a->count.reads;
  out->writes = a->count.writes;
  out->zeroes = a->count.zeroes;
  out->trims = a->count.trims;
  out->flushes = a->count.flushes;
  for (unsigned k = 0; k < R5_SEG_KINDS; k++)
    out->segs[k] = a->count.segs[k];
  out->member_failures = a->count.member_failures;
}
