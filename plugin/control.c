/* plugin/control.c -- the control socket: one command line per
 * connection, answered by array_control() (see array/control.c).  An
 * accept thread starts a thread per connection (plugin/control-conn.c),
 * up to CONNS_MAX at a time, so that no client -- an idle one, one that
 * reads its reply slowly -- keeps the others waiting; the connection
 * after the last is answered with an ERROR line.
 */
#include <config.h>

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "plugin/control.h"
#include "plugin/control-conn.h"

#define CONNS_MAX 64

/* A connection's thread.  fd is closed (and set to -1) under conns_lock,
 * so that control_close never shuts down a number reused meanwhile.
 */
struct conn {
  pthread_t thread;
  int fd;
  bool used;                    /* thread started, not joined yet */
  bool done;                    /* the thread is ending: join it */
};

static int listen_fd = -1;
static char *sock_path;
static pthread_t thread;
static bool thread_started;
static struct array *served;
static pthread_mutex_t conns_lock = PTHREAD_MUTEX_INITIALIZER;
static struct conn conns[CONNS_MAX];

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
  if (r == -1 || listen (listen_fd, CONNS_MAX) == -1) {
    nbdkit_error ("control=%s: bind/listen: %m", path);
    close (listen_fd);
    listen_fd = -1;
    return -1;
  }
  sock_path = strdup (path);
  return 0;
}

static void *
conn_main (void *arg)
{
  struct conn *c = arg;

  control_conn_serve (c->fd, served);
  pthread_mutex_lock (&conns_lock);
  close (c->fd);
  c->fd = -1;
  c->done = true;
  pthread_mutex_unlock (&conns_lock);
  return NULL;
}

/* Join the threads that ended and return a free slot, or NULL;
 * conns_lock held (an ending thread no longer needs it).
 */
static struct conn *
free_slot_locked (void)
{
  struct conn *free_one = NULL;

  for (struct conn *c = conns; c < conns + CONNS_MAX; c++) {
    if (c->used && c->done) {
      pthread_join (c->thread, NULL);
      c->used = false;
    }
    if (!c->used && free_one == NULL)
      free_one = c;
  }
  return free_one;
}

static void
start_conn (int fd)
{
  char why[64] = "";
  struct conn *c;
  int r;

  pthread_mutex_lock (&conns_lock);
  if ((c = free_slot_locked ()) == NULL)
    snprintf (why, sizeof why, "too many control connections (at most %d)",
              CONNS_MAX);
  else {
    *c = (struct conn) { .fd = fd, .used = true };
    if ((r = pthread_create (&c->thread, NULL, conn_main, c)) != 0) {
      *c = (struct conn) { .fd = -1 };
      snprintf (why, sizeof why, "cannot start a thread: %s", strerror (r));
    }
  }
  pthread_mutex_unlock (&conns_lock);
  if (why[0]) {
    control_conn_refuse (fd, why);
    close (fd);
  }
}

/* Out of file descriptors or memory: wait a little, the clients go. */
static bool
accept_again (int err)
{
  struct timespec pause = { 0, 100 * 1000000L };

  if (err == EINTR || err == ECONNABORTED)
    return true;
  if (err != EMFILE && err != ENFILE && err != ENOBUFS && err != ENOMEM)
    return false;
  nanosleep (&pause, NULL);
  return true;
}

static void *
accept_loop (void *arg)
{
  for (;;) {
    int fd = accept4 (listen_fd, NULL, NULL, SOCK_CLOEXEC);

    if (fd >= 0)
      start_conn (fd);
    else if (!accept_again (errno))
      break;                  /* control_close shut the socket down */
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

/* Wake every connection's thread (a shut-down socket ends its poll and
 * its send) and join them all; the accept thread is gone.
 */
static void
stop_conns (void)
{
  pthread_mutex_lock (&conns_lock);
  for (struct conn *c = conns; c < conns + CONNS_MAX; c++)
    if (c->used && c->fd >= 0)
      shutdown (c->fd, SHUT_RDWR);
  pthread_mutex_unlock (&conns_lock);
  for (struct conn *c = conns; c < conns + CONNS_MAX; c++)
    if (c->used) {
      pthread_join (c->thread, NULL);
      c->used = false;
    }
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
  stop_conns ();
  close (listen_fd);
  listen_fd = -1;
  if (sock_path)
    unlink (sock_path);
  free (sock_path);
  sock_path = NULL;
}
