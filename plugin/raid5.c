/* plugin/raid5.c -- nbdkit glue: serve an array/ over NBD.
 *
 * Thread model PARALLEL: requests run concurrently, also on one
 * connection.  That is safe because array/ serialises what must be
 * serialised (stripe locks) and keeps no per-connection state, which is
 * also why multi-conn is advertised: a flush syncs every member, so it
 * covers every connection's writes.
 */
#include <config.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "array/array.h"
#include "io/batch.h"
#include "plugin/control.h"
#include "plugin/params.h"

#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL

/* nbdkit refuses reads and writes over 64 MiB; say so up front. */
#define MAX_REQUEST (64u << 20)
#define MAX_PREFERRED (32u << 20)

/* Test-only fault injection: -D raid5.fail_member=SLOT makes that member
 * fail every I/O after -D raid5.fail_after=N more operations.
 */
NBDKIT_DLL_PUBLIC int raid5_debug_fail_member = -1;
NBDKIT_DLL_PUBLIC int raid5_debug_fail_after = 0;

static struct params params;
static struct array *array;   /* set in get_ready, read-only after */

static void
log_event (enum array_log_level level, const char *msg)
{
  if (level == ARRAY_LOG_ERROR)
    nbdkit_error ("%s", msg);
  else
    nbdkit_debug ("%s", msg);
}

static void
raid5_load (void)
{
  params_init (&params);
}

static void
raid5_unload (void)
{
  params_free (&params);
}

static int
raid5_config (const char *key, const char *value)
{
  return params_config (&params, key, value);
}

static int
raid5_config_complete (void)
{
  return params_complete (&params);
}

/* Open the members here, not later: errors are still visible and the
 * file descriptors survive nbdkit's fork.  Rings are made per worker
 * thread on first use, after the fork.
 */
static int
raid5_get_ready (void)
{
  struct array_err err;
  int r = io_probe ();

  if (r < 0) {
    errno = -r;
    nbdkit_error ("io_uring is not available here: %m");
    return -1;
  }
  if (array_open (&params.array, log_event, &array, &err) < 0) {
    nbdkit_error ("%s", err.msg);
    return -1;
  }
  if (params.control && control_open (params.control) < 0)
    return -1;
  if (raid5_debug_fail_member >= 0) {
    nbdkit_debug ("test: member %d fails after %d more I/Os",
                  raid5_debug_fail_member, raid5_debug_fail_after);
    array_inject_failure (array, (unsigned) raid5_debug_fail_member,
                          raid5_debug_fail_after);
  }
  return 0;
}

/* Threads do not survive nbdkit's fork, so background work starts here. */
static int
raid5_after_fork (void)
{
  int r;

  if (params.sync_speed_min || params.sync_speed_max)
    array_set_sync_speed (array,
                          params.sync_speed_min ? params.sync_speed_min
                                                : ARRAY_SYNC_SPEED_MIN,
                          params.sync_speed_max ? params.sync_speed_max
                                                : ARRAY_SYNC_SPEED_MAX);
  array_set_sync_latency (array, params.sync_latency_max_us);
  if ((r = array_start_background (array)) < 0) {
    errno = -r;
    nbdkit_error ("cannot start the background thread: %m");
    return -1;
  }
  return control_start (array);
}

static void
raid5_cleanup (void)
{
  control_close ();
  array_close (array);
  array = NULL;
}

static void *
raid5_open (int readonly)
{
  return NBDKIT_HANDLE_NOT_NEEDED;
}

static int64_t
raid5_get_size (void *handle)
{
  return (int64_t) array_capacity (array);
}

static uint32_t
power_of_two_below (uint64_t v)
{
  uint32_t p = 512;

  while ((uint64_t) p * 2 <= v && p * 2 <= MAX_PREFERRED)
    p *= 2;
  return p;
}

/* Any alignment works; a full stripe is what avoids reading for parity.
 * The protocol wants a power of two, so for 3, 5, 9... members a full
 * stripe is advertised and otherwise the largest power of two that
 * divides it (the chunk, at least).
 */
static int
raid5_block_size (void *handle, uint32_t *minimum, uint32_t *preferred,
                  uint32_t *maximum)
{
  uint64_t stripe = array_geom (array)->stripe_data;
  uint64_t divisor = stripe & -stripe;

  *minimum = 1;
  *preferred = power_of_two_below (divisor);
  *maximum = MAX_REQUEST;
  return 0;
}

static int
raid5_can_multi_conn (void *handle)
{
  return 1;
}

/* readonly=true: nbdkit refuses clients' writes itself (as with -r). */
static int
raid5_can_write (void *handle)
{
  return !params.array.read_only;
}

static int
raid5_can_fua (void *handle)
{
  return NBDKIT_FUA_NATIVE;
}

static int
raid5_can_fast_zero (void *handle)
{
  return 0;
}

/* Report a failed request: one line, and the errno nbdkit sends.  Once
 * the array has failed every request fails the same way: that is said
 * once, not a line a request (md logs the failure, not each bio).
 */
static int
fail (int r, const struct array_err *err)
{
  static atomic_bool told_failed;

  if (!array_has_failed (array) || !atomic_exchange (&told_failed, true))
    nbdkit_error ("%s", err->msg);
  errno = r == -ENOMEM ? ENOMEM : r == -EROFS ? EROFS : EIO;
  return -1;
}

static unsigned
array_flags (uint32_t flags)
{
  return (flags & NBDKIT_FLAG_FUA ? ARRAY_FUA : 0) |
    (flags & NBDKIT_FLAG_MAY_TRIM ? ARRAY_MAY_TRIM : 0);
}

static int
raid5_pread (void *handle, void *buf, uint32_t count, uint64_t offset,
             uint32_t flags)
{
  struct array_err err;
  int r = array_read (array, buf, count, offset, &err);

  return r < 0 ? fail (r, &err) : 0;
}

static int
raid5_pwrite (void *handle, const void *buf, uint32_t count, uint64_t offset,
              uint32_t flags)
{
  struct array_err err;
  int r = array_write (array, buf, count, offset, array_flags (flags), &err);

  return r < 0 ? fail (r, &err) : 0;
}

static int
raid5_zero (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  struct array_err err;
  int r = array_zero (array, count, offset, array_flags (flags), &err);

  return r < 0 ? fail (r, &err) : 0;
}

static int
raid5_trim (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  struct array_err err;
  int r = array_trim (array, count, offset, array_flags (flags), &err);

  return r < 0 ? fail (r, &err) : 0;
}

static int
raid5_flush (void *handle, uint32_t flags)
{
  struct array_err err;
  int r = array_flush (array, &err);

  return r < 0 ? fail (r, &err) : 0;
}

static struct nbdkit_plugin plugin = {
  .name = "raid5",
  .longname = "nbdkit RAID-5 plugin (Linux md layouts)",
  .version = PACKAGE_VERSION,
  .description = "Serve N >= 3 member files or block devices as one "
    "RAID-5 array, laid out like Linux md.",
  .load = raid5_load,
  .unload = raid5_unload,
  .config = raid5_config,
  .config_complete = raid5_config_complete,
  .config_help = PARAMS_HELP,
  .get_ready = raid5_get_ready,
  .after_fork = raid5_after_fork,
  .cleanup = raid5_cleanup,
  .open = raid5_open,
  .get_size = raid5_get_size,
  .block_size = raid5_block_size,
  .can_multi_conn = raid5_can_multi_conn,
  .can_write = raid5_can_write,
  .can_fua = raid5_can_fua,
  .can_fast_zero = raid5_can_fast_zero,
  .pread = raid5_pread,
  .pwrite = raid5_pwrite,
  .zero = raid5_zero,
  .trim = raid5_trim,
  .flush = raid5_flush,
  .errno_is_preserved = 1,
};

NBDKIT_REGISTER_PLUGIN (plugin)
