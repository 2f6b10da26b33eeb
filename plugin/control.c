/* plugin/control.c -- the control socket: one command line per
 * connection, answered by array_control() (see array/control.c).
 */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "plugin/control.h"

#define LINE_MAX_BYTES 4096

static int listen_fd = -1;
static char *sock_path;
static pthread_t thread;
static bool thread_started;
static struct array *served;

static int
fill_addr (struct sockaddr_un *addr, const char *path)
{
  memset (addr, 0, sizeof *addr);
  addr->sun_family = AF_UNIX;
  if (strlen (path) >= sizeof addr->sun_path) {
    nbdkit_error ("control=%s: path too long for a unix socket", path);
    return -1;
  }
  strcpy (addr->sun_path, path);
  return 0;
}

/* A socket file left by a server that died may be reused; a live one,
 * or any other file, may not.
 */
static int
clear_stale (const struct sockaddr_un *addr, const char *path)
{
  struct stat st;
  int fd, live;

  if (lstat (path, &st) == -1)
    return 0;
  if (!S_ISSOCK (st.st_mode)) {
    nbdkit_error ("control=%s: exists and is not a socket", path);
    return -1;
  }
  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  live = fd >= 0 && connect (fd, (const struct sockaddr *) addr,
                             sizeof *addr) == 0;
  if (fd >= 0)
    close (fd);
  if (live) {
    nbdkit_error ("control=%s: another server is listening there", path);
    return -1;
  }
  unlink (path);
  return 0;
}

int
control_open (const char *path)
{
  struct sockaddr_un addr;
  mode_t old;
  int r;

  if (fill_addr (&addr, path) < 0 || clear_stale (&addr, path) < 0)
    return -1;
  listen_fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listen_fd == -1) {
    nbdkit_error ("control=%s: socket: %m", path);
    return -1;
  }
  /* Sockets are made 0777 & ~umask: 0177 makes this one 0600 (read and
   * write for the owner; connecting needs write, never execute).
   */
  old = umask (0177);
  r = bind (listen_fd, (struct sockaddr *) &addr, sizeof addr);
  umask (old);
  if (r == -1 || listen (listen_fd, 8) == -1) {
    nbdkit_error ("control=%s: bind/listen: %m", path);
    close (listen_fd);
    listen_fd = -1;
    return -1;
  }
  sock_path = strdup (path);
  return 0;
}

/* Read one line (up to a newline or end of stream). */
static ssize_t
read_line (int fd, char *buf, size_t len)
{
  size_t n = 0;

  while (n + 1 < len) {
    ssize_t k = read (fd, buf + n, len - 1 - n);

    if (k == -1 && errno == EINTR)
      continue;
    if (k <= 0)
      break;
    n += (size_t) k;
    if (memchr (buf, '\n', n))
      break;
  }
  buf[n] = '\0';
  return (ssize_t) n;
}

static void
write_all (int fd, const char *s)
{
  size_t len = strlen (s);

  while (len > 0) {
    ssize_t k = write (fd, s, len);

    if (k == -1 && errno == EINTR)
      continue;
    if (k <= 0)
      return;
    s += k;
    len -= (size_t) k;
  }
}

static void
serve_one (int fd)
{
  struct timeval tv = { 10, 0 };
  char line[LINE_MAX_BYTES], *reply;

  setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  if (read_line (fd, line, sizeof line) <= 0)
    return;
  line[strcspn (line, "\n")] = '\0';
  nbdkit_debug ("control: %s", line);
  reply = array_control (served, line);
  write_all (fd, reply ? reply : "ERROR: out of memory\n");
  free (reply);
}

static void *
accept_loop (void *arg)
{
  for (;;) {
    int fd = accept4 (listen_fd, NULL, NULL, SOCK_CLOEXEC);

    if (fd == -1 && errno == EINTR)
      continue;
    if (fd == -1)
      break;                  /* control_close shut the socket down */
    serve_one (fd);
    close (fd);
  }
  return NULL;
}

int
control_start (struct array *array)
{
  int r;

  if (listen_fd == -1)
    return 0;
  served = array;
  if ((r = pthread_create (&thread, NULL, accept_loop, NULL)) != 0) {
    errno = r;
    nbdkit_error ("control socket thread: %m");
    return -1;
  }
  thread_started = true;
  return 0;
}

void
control_close (void)
{
  if (listen_fd == -1)
    return;
  shutdown (listen_fd, SHUT_RDWR);  /* wakes accept() */
  if (thread_started)
    pthread_join (thread, NULL);
  thread_started = false;
  close (listen_fd);
  listen_fd = -1;
  if (sock_path)
    unlink (sock_path);
  free (sock_path);
  sock_path = NULL;
}
