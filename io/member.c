/* io/member.c -- a member, whatever its backend: open through the
 * backend its path names (backend.h), then the synchronous calls of setup
 * and the tools dispatched to it.
 */
#include <config.h>

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/backend.h"
#include "io/member.h"

void
io_member_init (struct io_member *m)
{
  memset (m, 0, sizeof *m);
  m->file.fd = -1;
  m->dio_align = 1;
  m->fail_after = -1;
}

void
io_member_inject_failure (struct io_member *m, int64_t after)
{
  m->fail_after = after;
}

/* The backends, asked in turn which takes a path: the file backend,
 * which takes any, last.
 */
static const struct io_backend *const backends[] = {
  &io_nbd_backend,
  &io_file_backend,
};

const struct io_backend *
io_backend_for (const char *path)
{
  for (size_t i = 0; i + 1 < sizeof backends / sizeof backends[0]; i++)
    if (backends[i]->claims (path))
      return backends[i];
  return backends[sizeof backends / sizeof backends[0] - 1];
}

bool
io_member_is_uri (const char *name)
{
  return io_backend_for (name)->uri;
}

char *
io_member_locate (const char *name)
{
  char *cwd, *out;

  if (io_member_is_uri (name) || name[0] == '/')
    return strdup (name);
  if ((cwd = getcwd (NULL, 0)) == NULL)
    return NULL;
  if (asprintf (&out, "%s/%s", cwd, name) < 0)
    out = NULL;
  free (cwd);
  return out;
}

/* The reason this thread's last failed open gave beyond its -errno
 * (io_set_why), and that -errno; why[0] == '\0': none.
 */
static __thread struct {
  int r;
  char why[512];
} last_open;

void
io_set_why (int r, const char *fmt, ...)
{
  va_list ap;

  last_open.r = r;
  va_start (ap, fmt);
  vsnprintf (last_open.why, sizeof last_open.why, fmt, ap);
  va_end (ap);
}

const char *
io_strerror (int r)
{
  return r == last_open.r && last_open.why[0] ? last_open.why
                                                : strerror (-r);
}

static int
open_member (struct io_member *m, const char *path,
             const struct io_open_opts *o)
{
  const struct io_backend *b = io_backend_for (path);
  enum io_open_mode mode = o->read_only ? IO_OPEN_RO
    : o->reads_only ? (o->direct ? IO_OPEN_READS_DIRECT : IO_OPEN_READS)
    : o->direct ? IO_OPEN_RW_DIRECT : IO_OPEN_RW;
  int r;

  last_open.why[0] = '\0';
  io_member_close (m);
  m->path = strdup (path);
  if (m->path == NULL)
    return -ENOMEM;
  m->timeout_ms = o->timeout_ms;
  if ((r = b->open (m, path, mode, o->tls)) < 0) {
    io_member_close (m);      /* the path too: nothing left to close */
    return r;
  }
  m->backend = b;
  m->reads_only = o->reads_only && !o->read_only;
  return 0;
}

int
io_member_open_opts (struct io_member *m, const char *path,
                     const struct io_open_opts *o)
{
  return open_member (m, path, o);
}

unsigned
io_member_caps (const struct io_member *m)
{
  return m->backend && m->backend->caps ? m->backend->caps (m) : 0;
}

int
io_member_size_now (struct io_member *m)
{
  return m->backend && m->backend->size_now ? m->backend->size_now (m) : 0;
}

bool
io_member_shrunk (const struct io_member *m, uint64_t need, uint64_t *size)
{
  struct stat st;

  if (m->backend != &io_file_backend || fstat (m->file.fd, &st) < 0 ||
      !S_ISREG (st.st_mode) || (uint64_t) st.st_size >= need)
    return false;
  if (size)
    *size = (uint64_t) st.st_size;
  return true;
}

struct io_request_size
io_member_request_size (const struct io_member *m)
{
  struct io_request_size none = { 0, 0 };

  return m->backend && m->backend->request_size ?
    m->backend->request_size (m) : none;
}

int
io_member_open (struct io_member *m, const char *path, bool direct)
{
  return open_member (m, path, &(struct io_open_opts) { .direct = direct });
}

int
io_member_open_ro (struct io_member *m, const char *path)
{
  return open_member (m, path, &(struct io_open_opts) { .read_only = true });
}

int
io_member_sync (const struct io_member *m)
{
  return m->backend ? m->backend->sync (m) : -EBADF;
}

int
io_member_lock (struct io_member *m)
{
  if (m->backend == NULL)
    return -EBADF;
  return m->backend->lock ? m->backend->lock (m) : 0;
}

int
io_member_held (const struct io_member *m)
{
  if (m->backend == NULL)
    return -EBADF;
  return m->backend->held ? m->backend->held (m) : 0;
}

int
io_member_probe_read (struct io_member *m, uint64_t off, uint32_t len)
{
  size_t align = m->dio_align > 64 ? m->dio_align : 64;
  void *buf;
  int r;

  if (posix_memalign (&buf, align, len) != 0)
    return -ENOMEM;
  r = io_member_pread (m, buf, len, off);
  free (buf);
  return r;
}

int
io_member_pread (const struct io_member *m, void *buf, size_t len,
                 uint64_t off)
{
  return m->backend ? m->backend->pread (m, buf, len, off) : -EBADF;
}

int
io_member_pwrite (const struct io_member *m, const void *buf, size_t len,
                  uint64_t off)
{
  /* Test-only: once a member's injected failure has struck (its count
   * of batch ops ran out), these writes fail too, as a dead device's do.
   */
  if (atomic_load (&m->fail_after) == 0)
    return -EIO;
  if (m->reads_only)
    return -EROFS;
  return m->backend ? m->backend->pwrite (m, buf, len, off) : -EBADF;
}

bool
io_member_same (const struct io_member *a, const struct io_member *b)
{
  return a->backend != NULL && a->backend == b->backend &&
    a->backend->same (a, b);
}

bool
io_member_named (const struct io_member *m, const char *path)
{
  return m->backend != NULL && io_backend_for (path) == m->backend &&
    m->backend->named (m, path);
}

void
io_member_refresh (struct io_member *m)
{
  if (m->backend && m->backend->refresh)
    m->backend->refresh (m);
}

void
io_member_let_go (struct io_member *m)
{
  if (m->backend && m->backend->let_go)
    m->backend->let_go (m);
}

bool
io_member_can_return (const struct io_member *m)
{
  return m->backend && m->backend->may_return;
}

unsigned
io_member_idle_probe_ms (const struct io_member *m)
{
  return m->backend && m->backend->idle_probe_ms
    ? m->backend->idle_probe_ms (m) : 0;
}

void
io_member_get_stats (const struct io_member *m, struct io_member_figures *out)
{
  uint64_t batches = atomic_load_explicit (&m->stats.batches,
                                           memory_order_relaxed);
  uint64_t ns = atomic_load_explicit (&m->stats.busy_ns,
                                      memory_order_relaxed);

  *out = (struct io_member_figures) {
    .transport = m->backend ? m->backend->name : NULL,
    .batches = batches,
    .errors = atomic_load_explicit (&m->stats.errors, memory_order_relaxed),
    .reconnects = m->backend && m->backend->reconnects
      ? m->backend->reconnects (m) : 0,
    .latency_us = batches ? ns / batches / 1000 : 0,
  };
}

void
io_member_close (struct io_member *m)
{
  if (m->backend)
    m->backend->close (m);
  free (m->path);
  io_member_init (m);
}
