/* array/runner-map.c -- a job's runner (runner.h) and members in
 * memory: whether their mapped pages beat reads into a buffer on this
 * machine (measured when the runner is made, or as RAID5_MEMBER_ACCESS
 * says), and the members mapped for a step.
 */
#include <config.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "array/runner-int.h"
#include "io/sigbus.h"
#include "raid/layout.h"
#include "raid/parity.h"

/* Bytes of a member in memory read each way, once, to tell whether its
 * mapped pages beat reads into a reused buffer (mapping_pays); and if
 * neither way is twice as fast as the other, more of them, twice.
 */
#define PROBE_FIRST (1u << 20)
#define PROBE_BYTES (4u << 20)

/* Members in memory are read in place where that pays (r->map), and
 * then a rebuilt one is written in place too where it is allocated
 * already (a spare zeroed beforehand, a member rebuilt again): XOR
 * computes into its pages, a copy fewer than a write from a buffer.
 * Its holes are written with pwrite, which allocates as it copies:
 * filling them first would zero pages only to overwrite them (Xeon, 512
 * MiB members: onto a new sparse file 0.21 s written against 0.30 s
 * mapped; onto a zeroed one 0.19 s against 0.16 s).  Where mapping does
 * not pay, the rebuilt member is not mapped either: a page written
 * through a fresh mapping costs what one read does (AMD EPYC VM, 512
 * MiB onto a zeroed spare, survivors read: 2.0 s with the new member
 * mapped, 0.15 s with pwrite).  r->base[m]: the bytes of stripes
 * [first, first+n) of member m mapped through the runner's views, or
 * NULL to read or write them.
 */
void
runner_view_members (struct job_runner *r, uint64_t first, unsigned n)
{
  struct array *a = r->a;
  int slot = job_slot (a);
  uint64_t off = r5_stripe_member_off (&a->geom, first);
  uint64_t len = (uint64_t) n * a->geom.chunk;

  for (unsigned m = 0; m < a->geom.members; m++)
    if (!r->map ||
        io_view_get (&r->views[m], &a->members[m], off, len,
                     (int) m == slot ? IO_VIEW_WRITE_DENSE : IO_VIEW_READ,
                     &r->base[m]) < 0)
      r->base[m] = NULL;
  r->mapped = (struct plan_views) { r->base, off, len, slot };
}

/* Read len bytes from bytes as a job would: XOR them (with zeroes: a
 * chunk's worth at most) into dst, in the cache, a piece at a time.
 */
#define PROBE_PIECE (128u << 10)
static void
consume (const struct array *a, const char *bytes, uint64_t len, char *dst)
{
  uint64_t piece = a->geom.chunk < PROBE_PIECE ? a->geom.chunk : PROBE_PIECE;

  for (uint64_t at = 0; at < len; at += piece) {
    void *v[3] = { (char *) bytes + at, a->zero, dst };

    r5_xor_gen (3, len - at < piece ? len - at : piece, v);
  }
}

struct consumed {
  const struct array *a;
  const char *bytes;
  uint64_t len;
  char *dst;
};

static void
consume_mapped (void *arg)
{
  const struct consumed *c = arg;

  consume (c->a, c->bytes, c->len, c->dst);
}

/* Nanoseconds to read len bytes of m at off through a view (mapped,
 * faulted, unmapped, as a job's window is), or UINT64_MAX if it cannot
 * be mapped (a hole, a failure injected) or faults (truncated under the
 * server: io/sigbus.h).  scratch: MEMORY_SCRATCH bytes.
 */
static uint64_t
time_mapped (const struct array *a, const struct io_member *m, uint64_t off,
             uint64_t len, char *scratch)
{
  uint64_t t = array_now_ns ();
  struct consumed c = { a, NULL, len, scratch };
  struct io_sigbus_range mapped;
  struct io_view v;
  char *bytes;
  int e;

  io_view_init (&v);
  if ((e = io_view_get (&v, m, off, len, IO_VIEW_READ, &bytes)) == 0) {
    c.bytes = mapped.lo = bytes;
    mapped.hi = bytes + len;
    e = io_sigbus_run (&mapped, 1, consume_mapped, &c, NULL, NULL);
  }
  io_view_close (&v);
  return e < 0 ? UINT64_MAX : array_now_ns () - t;
}

/* ... and read into a buffer (the first half of scratch) a piece at a
 * time.
 */
static uint64_t
time_read (const struct array *a, const struct io_member *m, uint64_t off,
           uint64_t len, char *scratch)
{
  uint64_t t = array_now_ns ();

  for (uint64_t at = 0; at < len; at += PROBE_PIECE) {
    uint64_t n = len - at < PROBE_PIECE ? len - at : PROBE_PIECE;

    if (io_member_pread (m, scratch, n, off + at) < 0)
      return UINT64_MAX;
    consume (a, scratch, n, scratch + PROBE_PIECE);
  }
  return array_now_ns () - t;
}

/* Each way's best time over len bytes of m at the start of its data,
 * over rounds, alternately.
 */
struct probe { uint64_t map, read, len; };

static struct probe
probe_ways (const struct job_runner *r, const struct io_member *m,
            uint64_t len, int rounds)
{
  const struct array *a = r->a;
  uint64_t off = r5_stripe_member_off (&a->geom, 0);
  char *scratch = r->buf + runner_cols_bytes (a);
  struct probe p = { UINT64_MAX, UINT64_MAX, len };

  for (int i = 0; i < rounds; i++) {
    uint64_t tm = time_mapped (a, m, off, len, scratch);
    uint64_t tr = time_read (a, m, off, len, scratch);

    p.map = tm < p.map ? tm : p.map;
    p.read = tr < p.read ? tr : p.read;
  }
  return p;
}

/* Reads twice as fast as the mapping: no need to look closer.  (Not the
 * other way round: a mapping chosen wrongly costs the most, 10x on the
 * EPYC, and one round of reads held up by another process could pass
 * for it.)
 */
static bool
reads_win_clearly (struct probe p)
{
  return p.map / 2 > p.read;
}

/* Members in memory: do their mapped pages beat reads into a reused
 * buffer, on this machine?  It differs by machine more than by anything
 * else: touching freshly mapped pages costs a page fault every 16 pages,
 * and on some virtual machines that is dear (measured on an AMD EPYC
 * VM: a tmpfs file read at 1.5 GiB/s through mmap, 8.0 GiB/s with pread
 * into one reused buffer; on an Intel Xeon VM 2.5-5.5 against 4.5).  So
 * the runner measures, on the data of the first member in service, each
 * way on 1 MiB; unless reading is twice as fast (the EPYC: the probe
 * then costs 2 ms, not 10), on 4 MiB twice, alternately, keeping the
 * better of each.  For a scrub mapping must win by a fifth: it has
 * costs this does not see (every unmap stops every thread of the
 * process to flush its TLB, under the clients' requests), and where the
 * two are close reading won the whole check (Xeon, 512 MiB tmpfs
 * members, the probe within 5%: 0.17 s read against 0.19 s mapped).
 * A rebuild that maps also writes the new member in place where it is
 * allocated anyway (runner_view_members), and then mapped members won
 * where the probe was as close (0.16 s against 0.18 s): it reads and
 * writes through buffers only if reading wins by a fifth.
 */
static bool
mapping_pays (struct job_runner *r)
{
  const struct array *a = r->a;
  uint64_t len = a->geom.stripes * a->geom.chunk;
  const struct io_member *m = NULL;
  struct probe p;
  bool map;

  for (unsigned k = 0; k < a->geom.members && m == NULL; k++)
    if (health_state (&a->health, k) == MEMBER_ACTIVE)
      m = &a->members[k];
  if (m == NULL)
    return false;
  len = len < PROBE_BYTES ? len : PROBE_BYTES;
  /* Its pages touched first, as the job's first part would anyway: a
   * first touch of 256 KiB took 1 ms on the EPYC, against 0.25 ms to
   * read 1 MiB.
   */
  memset (r->buf + runner_cols_bytes (a), 0, 2 * PROBE_PIECE);
  p = probe_ways (r, m, len < PROBE_FIRST ? len : PROBE_FIRST, 1);
  if (!reads_win_clearly (p))
    p = probe_ways (r, m, len, 2);
  map = r->kind == R5_JOB_REBUILD ? p.read >= p.map - p.map / 5
                                  : p.map < p.read - p.read / 5;
  array_log (a, ARRAY_LOG_DEBUG, "%s: members in memory %s (%" PRIu64 " KiB "
             "of %s: mapped in %" PRIu64 " us, read in %" PRIu64 " us)",
             r5_job_name (r->kind), map ? "read in place"
             : "read into a buffer", p.len >> 10, m->path, p.map / 1000,
             p.read / 1000);
  return map;
}

/* Read members in memory in place?  As RAID5_MEMBER_ACCESS says
 * ("mapped" or "read": for tests and benchmarks, which must take each
 * path on any machine; said in the log), else as measured here.
 */
bool
runner_access_mapped (struct job_runner *r)
{
  const char *want = getenv ("RAID5_MEMBER_ACCESS");

  if (want == NULL || (strcmp (want, "mapped") != 0 &&
                       strcmp (want, "read") != 0))
    return mapping_pays (r);
  array_log (r->a, ARRAY_LOG_NOTICE, "%s: members in memory %s, as "
             "RAID5_MEMBER_ACCESS says", r5_job_name (r->kind),
             want[0] == 'm' ? "read in place" : "read into a buffer");
  return want[0] == 'm';
}
