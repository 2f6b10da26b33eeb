/* tests/unit/test-backend.c -- io/'s member backends (backend.h): which
 * backend a path names, and how io_run cuts one batch into sub-batches
 * per backend.  A member backend of the test's own ("mem": a buffer in
 * this process, counting what reaches it) sits beside real files, as an
 * NBD member will sit beside local ones.  Asserts: every op reaches its
 * own member's backend and no other, once, in batch order; the bytes move
 * where they should; results land on the right ops and io_run returns
 * the first error; an injected failure strikes before any backend sees
 * the op, and counts per op; an op on a member not open is -EBADF while
 * the rest still run; a batch of one backend goes to it whole (the
 * caller's ops, no copy); a member opened for reads only fails its
 * writes and zeroes -EROFS without reaching it (its reads run); NBD URIs
 * go to the NBD backend, paths to the file backend, and a URI whose
 * server is not there fails to open and
 * leaves nothing open; a file in memory says it can be mapped and is in
 * memory, one on a disk that it is not, and a member keeps the timeout
 * it was opened with; a file in memory prefers requests of a few pages
 * and one on a disk any length; an NBD export flushes and takes FUA as
 * its nbdkit server says, and one whose server takes at most 1 MiB a
 * command says so and has longer reads and writes cut to it (the server
 * fails a longer command).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/magic.h>

#include <criterion/criterion.h>

#include "io/backend.h"
#include "io/batch.h"
#include "io/member.h"

#define MEM_SIZE (1u << 20)

/* What the mem backend saw. */
static struct {
  unsigned runs;
  size_t ops_seen;
  const struct io_op *last_ops;
  bool foreign;               /* an op on a member of another backend */
} seen;

static int
mem_run (const struct io_member *members, struct io_op *ops, size_t n,
         unsigned flags)
{
  int first = 0;

  (void) flags;
  seen.runs++;
  seen.last_ops = ops;
  for (size_t i = 0; i < n; i++) {
    const struct io_member *m = &members[ops[i].member];
    char *bytes = m->state;

    seen.ops_seen++;
    if (m->backend->run != mem_run) {
      seen.foreign = true;
      ops[i].result = -EXDEV;
    }
    else if (ops[i].off + ops[i].len > m->size)
      ops[i].result = -EIO;
    else if (ops[i].kind == IO_READ)
      memcpy (ops[i].buf, bytes + ops[i].off, ops[i].len), ops[i].result = 0;
    else if (ops[i].kind == IO_WRITE)
      memcpy (bytes + ops[i].off, ops[i].buf, ops[i].len), ops[i].result = 0;
    else
      ops[i].result = 0;
    if (first == 0)
      first = ops[i].result;
  }
  return first;
}

static const struct io_backend mem_backend = {
  .name = "mem", .run = mem_run,
};

static char files[2][64];
static unsigned nfiles;
static struct io_member members[4];

static void
cleanup (void)
{
  for (unsigned i = 0; i < 4; i++)
    if (members[i].backend == &mem_backend) {
      free (members[i].state);
      members[i].backend = NULL;   /* io_member_close would call close */
      io_member_init (&members[i]);
    }
    else
      io_member_close (&members[i]);
  for (unsigned i = 0; i < nfiles; i++)
    unlink (files[i]);
  nfiles = 0;
  memset (&seen, 0, sizeof seen);
}

static void
open_file (struct io_member *m)
{
  char *path = files[nfiles++];
  int fd;

  snprintf (path, sizeof files[0], "/tmp/r5-backend-XXXXXX");
  fd = mkstemp (path);
  cr_assert (fd >= 0);
  cr_assert_eq (ftruncate (fd, MEM_SIZE), 0);
  close (fd);
  io_member_init (m);
  cr_assert_eq (io_member_open (m, path, false), 0);
  cr_assert_eq (m->backend, &io_file_backend);
}

static void
open_mem (struct io_member *m)
{
  io_member_init (m);
  m->backend = &mem_backend;
  m->size = MEM_SIZE;
  m->state = calloc (1, MEM_SIZE);
  cr_assert (m->state);
}

/* members: 0 file, 1 mem, 2 file, 3 mem. */
static void
setup (void)
{
  open_file (&members[0]);
  open_mem (&members[1]);
  open_file (&members[2]);
  open_mem (&members[3]);
}

TestSuite (backend, .init = setup, .fini = cleanup);

static void
fill (char *buf, size_t len, unsigned seed)
{
  for (size_t i = 0; i < len; i++)
    buf[i] = (char) (i * 31 + seed * 7 + i / 251);
}

Test (backend, mixed_batch_goes_to_each_backend)
{
  enum { LEN = 8192 };
  static char out[4][LEN], in[4][LEN];
  struct io_op w[4], r[4];

  for (unsigned m = 0; m < 4; m++) {
    fill (out[m], LEN, m + 1);
    w[m] = (struct io_op) { IO_WRITE, m, out[m], 4096 * (m + 1), LEN, 99,
                            false };
    r[m] = (struct io_op) { IO_READ, 3 - m, in[3 - m], 4096 * (4 - m), LEN,
                            99, false };
  }
  cr_assert_eq (io_run (members, w, 4, 0), 0);
  cr_assert_eq (seen.runs, 1, "one sub-batch for the mem members");
  cr_assert_eq (seen.ops_seen, 2, "mem saw %zu ops, wanted its 2",
                seen.ops_seen);
  cr_assert (!seen.foreign, "an op of a file member reached mem");
  cr_assert_eq (io_run (members, r, 4, 0), 0);
  for (unsigned m = 0; m < 4; m++) {
    cr_assert_eq (w[m].result, 0);
    cr_assert_eq (r[m].result, 0);
    cr_assert (memcmp (in[m], out[m], LEN) == 0, "member %u: other bytes", m);
  }
  cr_assert_eq (memcmp ((char *) members[1].state + 8192, out[1], LEN), 0,
                "mem member 1 does not hold what was written to it");
}

Test (backend, results_land_on_their_ops)
{
  static char buf[4][4096];
  struct io_op ops[4] = {
    { IO_READ, 0, buf[0], 0, 4096, 99, false },
    { IO_READ, 1, buf[1], MEM_SIZE - 2048, 4096, 99, false }, /* past end */
    { IO_READ, 2, buf[2], 0, 4096, 99, false },
    { IO_READ, 3, buf[3], 0, 4096, 99, false },
  };

  cr_assert_eq (io_run (members, ops, 4, 0), -EIO);
  cr_assert_eq (ops[0].result, 0);
  cr_assert_eq (ops[1].result, -EIO);
  cr_assert_eq (ops[2].result, 0);
  cr_assert_eq (ops[3].result, 0);
}

Test (backend, injected_failure_strikes_before_the_backend)
{
  static char buf[4096];
  struct io_op ops[3];

  io_member_inject_failure (&members[3], 2);
  for (unsigned i = 0; i < 3; i++)
    ops[i] = (struct io_op) { IO_WRITE, 3, buf, 4096 * i, 4096, 99, false };
  cr_assert_eq (io_run (members, ops, 3, 0), -EIO);
  cr_assert_eq (ops[0].result, 0);
  cr_assert_eq (ops[1].result, 0);
  cr_assert_eq (ops[2].result, -EIO);
  cr_assert_eq (seen.ops_seen, 2, "the failed op reached the backend");
  ops[0].result = 99;
  cr_assert_eq (io_run (members, ops, 1, 0), -EIO, "struck once, for good");
  cr_assert_eq (seen.ops_seen, 2);
}

Test (backend, member_not_open)
{
  static char buf[2][4096];
  struct io_op ops[2] = {
    { IO_READ, 1, buf[0], 0, 4096, 99, false },
    { IO_READ, 0, buf[1], 0, 4096, 99, false },
  };

  io_member_close (&members[0]);
  cr_assert_eq (io_run (members, ops, 2, 0), -EBADF);
  cr_assert_eq (ops[0].result, 0, "the open member's op still ran");
  cr_assert_eq (ops[1].result, -EBADF);
}

Test (backend, a_member_opened_for_reads_refuses_writes)
{
  static char buf[3][4096], back[4096];
  struct io_op ops[3] = {
    { IO_WRITE, 0, buf[0], 0, 4096, 99, false },
    { IO_READ, 0, buf[1], 4096, 4096, 99, false },
    { IO_ZERO, 0, NULL, 8192, 4096, 99, false },
  };
  char path[64];

  snprintf (path, sizeof path, "%s", files[0]);
  fill (buf[0], sizeof buf[0], 5);
  io_member_close (&members[0]);
  cr_assert_eq (io_member_open_opts (&members[0], path, &(struct io_open_opts) {
                                       .reads_only = true }), 0);
  cr_assert (members[0].reads_only);
  cr_assert_eq (io_run (members, ops, 3, 0), -EROFS);
  cr_assert_eq (ops[0].result, -EROFS);
  cr_assert_eq (ops[1].result, 0, "the read ran");
  cr_assert_eq (ops[2].result, -EROFS);
  cr_assert_eq (io_member_pwrite (&members[0], buf[0], 4096, 0), -EROFS);
  cr_assert_eq (io_member_pread (&members[0], back, 4096, 0), 0);
  for (size_t i = 0; i < sizeof back; i++)
    cr_assert_eq (back[i], 0, "a write reached the member at %zu", i);
}

/* A job's write (IO_FIXED_SIZE) past the end of a file cut short fails
 * -ENXIO, the batch's other ops not run, the file not extended (it
 * was, the bytes cut off coming back as holes); writes up to the end run.
 */
Test (backend, a_jobs_write_never_makes_a_file_longer)
{
  static char buf[3][4096];
  struct io_op ops[3] = {
    { IO_WRITE, 2, buf[0], 0, 4096, 99, false },
    { IO_WRITE, 0, buf[1], 0, 4096, 99, false },
    { IO_WRITE, 0, buf[2], 8192, 4096, 99, false },   /* past the cut */
  };
  struct stat st;

  cr_assert_eq (truncate (files[0], 8192), 0);
  cr_assert_eq (io_run (members, ops, 3, IO_JOB), -ENXIO);
  cr_assert_eq (ops[0].result, -ECANCELED);
  cr_assert_eq (ops[1].result, -ECANCELED);
  cr_assert_eq (ops[2].result, -ENXIO);
  cr_assert (io_op_member_shrank (&ops[2]));
  cr_assert_eq (stat (files[0], &st), 0);
  cr_assert_eq (st.st_size, 8192, "extended to %jd", (intmax_t) st.st_size);
  ops[2].off = 4096;             /* up to the end: runs */
  cr_assert_eq (io_run (members, ops, 3, IO_JOB), 0);
  /* Past the size it was opened at, the file that long: refused too
   * (members[2].size is MEM_SIZE), and a zero the same.
   */
  ops[0] = (struct io_op) { IO_WRITE, 2, buf[0], MEM_SIZE, 4096, 99, false };
  cr_assert_eq (io_run (members, ops, 1, IO_JOB), -ENXIO);
  ops[0] = (struct io_op) { IO_ZERO, 2, NULL, MEM_SIZE - 4096, 8192, 99,
                            false };
  cr_assert_eq (io_run (members, ops, 1, IO_JOB), -ENXIO);
  cr_assert_eq (stat (files[1], &st), 0);
  cr_assert_eq (st.st_size, MEM_SIZE, "extended to %jd", (intmax_t) st.st_size);
}

Test (backend, one_backend_gets_the_batch_whole)
{
  static char buf[2][4096];
  struct io_op ops[2] = {
    { IO_READ, 1, buf[0], 0, 4096, 99, false },
    { IO_READ, 3, buf[1], 0, 4096, 99, false },
  };

  cr_assert_eq (io_run (members, ops, 2, 0), 0);
  cr_assert_eq (seen.runs, 1);
  cr_assert_eq (seen.last_ops, ops, "a copy was made for one backend");
}

Test (backend, which_backend_a_path_names)
{
  static const char *const uris[] = {
    "nbd://host/export", "nbds://host:10809/e", "nbd+unix:///e?socket=/s",
    "nbds+unix:///?socket=/run/s",
  };
  static const char *const paths[] = {
    "/dev/sdb", "m0.img", "nbd:/x", "./nbd://x", "nbdx://y",
  };
  struct io_member m;

  for (size_t i = 0; i < sizeof uris / sizeof uris[0]; i++)
    cr_assert_eq (io_backend_for (uris[i]), &io_nbd_backend, "%s", uris[i]);
  for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
    cr_assert_eq (io_backend_for (paths[i]), &io_file_backend, "%s",
                  paths[i]);
  io_member_init (&m);
  cr_assert_lt (io_member_open (&m, "nbd+unix:///?socket=/nonexistent/r5.sock",
                                false), 0);
  cr_assert (!io_member_is_open (&m));
  cr_assert_null (m.path, "a failed open kept its path");
  cr_assert_null (m.state, "a failed open kept its connection");
}

/* A file of len bytes made in dir; its path in out (PATH_MAX). */
static void
make_file (const char *dir, char *out, off_t len)
{
  int fd;

  snprintf (out, PATH_MAX, "%s/r5-caps-XXXXXX", dir);
  fd = mkstemp (out);
  cr_assert_geq (fd, 0, "mkstemp in %s", dir);
  cr_assert_eq (ftruncate (fd, len), 0);
  close (fd);
}

Test (backend, what_a_member_can_do)
{
  char shm[PATH_MAX], disk[PATH_MAX];
  struct statfs sf;
  struct io_member m;

  io_member_init (&m);
  cr_assert_eq (io_member_caps (&m), 0, "a member not open can do nothing");
  if (statfs ("/dev/shm", &sf) == 0 && sf.f_type == TMPFS_MAGIC) {
    make_file ("/dev/shm", shm, 1 << 20);
    cr_assert_eq (io_member_open (&m, shm, false), 0);
    cr_assert_eq (io_member_caps (&m) & (IO_CAP_MAP | IO_CAP_MEMORY),
                  IO_CAP_MAP | IO_CAP_MEMORY, "a file on tmpfs is in memory");
    cr_assert (io_member_caps (&m) & IO_CAP_FLUSH);
    cr_assert_gt (io_member_request_size (&m).preferred, 0,
                  "copies in memory want pieces that stay in the cache");
    cr_assert_eq (io_member_request_size (&m).preferred % 4096, 0);
    io_member_close (&m);
    unlink (shm);
  }
  /* The build folder is on a disk's file system, not in memory. */
  if (statfs (".", &sf) == 0 && sf.f_type != TMPFS_MAGIC) {
    make_file (".", disk, 1 << 20);
    cr_assert_eq (io_member_open_opts (&m, disk, &(struct io_open_opts) {
                                         .timeout_ms = 1234 }), 0);
    cr_assert_eq (io_member_caps (&m) & (IO_CAP_MAP | IO_CAP_MEMORY), 0,
                  "a file on a disk is not in memory");
    cr_assert_eq (io_member_caps (&m) & (IO_CAP_FLUSH | IO_CAP_FUA),
                  IO_CAP_FLUSH | IO_CAP_FUA);
    cr_assert_eq (m.timeout_ms, 1234, "the timeout asked at open is kept");
    cr_assert_eq (io_member_request_size (&m).preferred, 0, "a disk streams");
    cr_assert_eq (io_member_request_size (&m).maximum, 0);
    io_member_close (&m);
    unlink (disk);
  }
  cr_assert (io_member_is_uri ("nbd://host/e") && !io_member_is_uri ("m0"),
             "a URI is what the backend table says");
}

/* An nbdkit server of the test's own on a Unix socket (it dies with this
 * process), for the NBD backend's answers.
 */
static struct {
  pid_t pid;
  char dir[32], sock[48], pidfile[48];
} srv[2];
static struct io_member nm[2];

static void
nbd_setup (void)
{
  io_member_init (&nm[0]);
  io_member_init (&nm[1]);
}

static void
nbd_cleanup (void)
{
  for (unsigned i = 0; i < 2; i++) {
    io_member_close (&nm[i]);
    if (srv[i].pid > 0) {
      kill (srv[i].pid, SIGTERM);
      waitpid (srv[i].pid, NULL, 0);
      unlink (srv[i].sock);
      unlink (srv[i].pidfile);
      rmdir (srv[i].dir);
    }
    srv[i].pid = 0;
  }
}

TestSuite (nbd, .init = nbd_setup, .fini = nbd_cleanup, .timeout = 60);

/* Start server i with args (plugin, its parameters, filters; NULL ends)
 * and put its URI in uri (64 bytes).  Skips if nbdkit is not installed.
 */
static void
start_nbdkit (unsigned i, const char *const *args, char *uri)
{
  const char *argv[16] = { "nbdkit", "-f", "--exit-with-parent", "-U",
                           srv[i].sock, "-P", srv[i].pidfile };
  char dir[sizeof srv[i].dir] = "/tmp/r5-nbd-XXXXXX";
  unsigned n = 7;

  if (system ("nbdkit --version >/dev/null 2>&1") != 0)
    cr_skip_test ("nbdkit is not installed");
  cr_assert_not_null (mkdtemp (dir));
  memcpy (srv[i].dir, dir, sizeof dir);
  snprintf (srv[i].sock, sizeof srv[i].sock, "%s/sock", dir);
  snprintf (srv[i].pidfile, sizeof srv[i].pidfile, "%s/pid", dir);
  while (*args && n < 15)
    argv[n++] = *args++;
  srv[i].pid = fork ();
  cr_assert_geq (srv[i].pid, 0);
  if (srv[i].pid == 0) {
    execvp ("nbdkit", (char *const *) argv);
    _exit (127);
  }
  /* nbdkit writes its pid file once the socket listens (at most 10 s). */
  for (unsigned t = 0; t < 200 && access (srv[i].pidfile, F_OK) != 0; t++) {
    cr_assert_eq (waitpid (srv[i].pid, NULL, WNOHANG), 0, "nbdkit died");
    nanosleep (&(struct timespec) { .tv_nsec = 50000000 }, NULL);
  }
  cr_assert_eq (access (srv[i].pidfile, F_OK), 0, "nbdkit never listened");
  snprintf (uri, 64, "nbd+unix:///?socket=%s", srv[i].sock);
}

Test (nbd, an_export_flushes_and_takes_fua_as_its_server_says)
{
  static const char *const memory[] = { "memory", "1M", NULL };
  static const char *const bare[] = {
    "eval", "get_size=echo 1048576", "can_flush=exit 3",
    "can_fua=echo none",
    "pread=dd if=/dev/zero count=$3 iflag=count_bytes 2>/dev/null", NULL,
  };
  char uri[2][64];

  start_nbdkit (0, memory, uri[0]);
  start_nbdkit (1, bare, uri[1]);
  cr_assert_eq (io_member_open_opts (&nm[0], uri[0], &(struct io_open_opts) {
                                       .timeout_ms = 1500 }), 0);
  cr_assert_eq (nm[0].backend, &io_nbd_backend);
  cr_assert_eq (io_member_caps (&nm[0]), IO_CAP_FLUSH | IO_CAP_FUA,
                "caps %#x", io_member_caps (&nm[0]));
  cr_assert_eq (io_member_request_size (&nm[0]).preferred, 0,
                "a remote member takes batches as long as they come");
  cr_assert_eq (io_member_request_size (&nm[0]).maximum, 32u << 20,
                "a server that sets no maximum gets the backend's own");
  cr_assert_eq (nm[0].timeout_ms, 1500);
  /* Neither flush nor FUA (nor writes: opened read-only). */
  cr_assert_eq (io_member_open_ro (&nm[1], uri[1]), 0);
  cr_assert_eq (io_member_caps (&nm[1]), 0, "caps %#x",
                io_member_caps (&nm[1]));
}

Test (nbd, commands_are_cut_at_the_servers_maximum)
{
  /* The filter advertises the sizes and fails a longer command (EINVAL)
   * instead of passing it on.
   */
  static const char *const limited[] = {
    "--filter=blocksize-policy", "memory", "16M",
    "blocksize-minimum=512", "blocksize-preferred=4096",
    "blocksize-maximum=1M", "blocksize-error-policy=error", NULL,
  };
  enum { LEN = 5u << 20 };      /* five of the server's maximum */
  static unsigned char out[LEN], in[LEN];
  char uri[64];

  start_nbdkit (0, limited, uri);
  cr_assert_eq (io_member_open (&nm[0], uri, false), 0);
  cr_assert_eq (io_member_request_size (&nm[0]).maximum, 1u << 20,
                "maximum %" PRIu64, io_member_request_size (&nm[0]).maximum);
  for (size_t i = 0; i < LEN; i++)
    out[i] = (unsigned char) (i * 7 + i / 4093);
  cr_assert_eq (io_member_pwrite (&nm[0], out, LEN, 3u << 20), 0,
                "a 5 MiB write to a server that takes 1 MiB a command");
  cr_assert_eq (io_member_pread (&nm[0], in, LEN, 3u << 20), 0);
  cr_assert_eq (memcmp (in, out, LEN), 0, "the bytes read back differ");
}
