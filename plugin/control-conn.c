/* plugin/control-conn.c -- one connection of the control socket (see
 * control-conn.h).
 */
#include <config.h>

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "plugin/control-conn.h"

/* A too-long line is read and dropped up to its newline, up to this
 * many bytes; a client sending more may see its connection reset.
 */
#define DRAIN_MAX (1u << 20)

/* A client that does not read its reply holds its thread no longer. */
#define SEND_TIMEOUT_S 10

/* The array's commands were only ever run one at a time (one connection
 * was served at a time): keep it so across concurrent connections.
 */
static pthread_mutex_t cmd_lock = PTHREAD_MUTEX_INITIALIZER;

enum line_end {
  LINE_OK,                      /* a line (or what came before EOF) */
  LINE_GONE,                    /* EOF or an error before any byte */
  LINE_LONG,                    /* no newline within CONTROL_LINE_MAX */
  LINE_IDLE,                    /* no newline before the deadline */
};

/* Milliseconds from now to deadline (CLOCK_MONOTONIC), at least 0. */
static int
ms_left (const struct timespec *deadline)
{
  struct timespec now;
  long long ms;

  clock_gettime (CLOCK_MONOTONIC, &now);
  ms = (deadline->tv_sec - now.tv_sec) * 1000LL +
       (deadline->tv_nsec - now.tv_nsec) / 1000000;
  return ms < 0 ? 0 : (int) ms;
}

/* Receive what fd has, waiting until deadline: > 0 bytes, 0 at EOF, -1
 * on an error, -2 when the deadline passed first.
 */
static ssize_t
recv_until (int fd, char *buf, size_t len, const struct timespec *deadline)
{
  for (;;) {
    struct pollfd p = { .fd = fd, .events = POLLIN };
    int ms = ms_left (deadline), r;
    ssize_t k;

    if (ms == 0)
      return -2;
    r = poll (&p, 1, ms);
    if (r == -1 && errno == EINTR)
      continue;
    if (r == 0)
      continue;                 /* ms_left says whether time is up */
    if (r == -1)
      return -1;
    k = recv (fd, buf, len, MSG_DONTWAIT);
    if (k == -1 && (errno == EINTR || errno == EAGAIN))
      continue;
    return k;
  }
}

/* Read into buf (CONTROL_LINE_MAX + 1 bytes) up to the first newline;
 * *len = the line's length without it.  Bytes after the newline are
 * left for drain().
 */
static enum line_end
read_line (int fd, char *buf, size_t *len, const struct timespec *deadline)
{
  size_t n = 0, cap = CONTROL_LINE_MAX + 1;

  while (n < cap) {
    ssize_t k = recv_until (fd, buf + n, cap - n, deadline);
    char *nl;

    if (k == -2)
      return LINE_IDLE;
    if (k <= 0) {
      *len = n;
      return n > 0 && k == 0 ? LINE_OK : LINE_GONE;
    }
    if ((nl = memchr (buf + n, '\n', (size_t) k)) != NULL) {
      *len = (size_t) (nl - buf);
      return LINE_OK;
    }
    n += (size_t) k;
  }
  return LINE_LONG;
}

/* Read and drop the rest of a too-long line, up to its newline. */
static void
drop_line (int fd, const struct timespec *deadline)
{
  char buf[4096];
  size_t total = 0;
  ssize_t k;

  while (total < DRAIN_MAX &&
         (k = recv_until (fd, buf, sizeof buf, deadline)) > 0) {
    if (memchr (buf, '\n', (size_t) k))
      return;
    total += (size_t) k;
  }
}

/* Read and drop what the client has sent so far, not waiting. */
static void
drain (int fd)
{
  char buf[4096];
  size_t total = 0;
  ssize_t k;

  while (total < DRAIN_MAX &&
         (k = recv (fd, buf, sizeof buf, MSG_DONTWAIT)) != 0) {
    if (k == -1 && errno == EINTR)
      continue;
    if (k == -1)
      return;
    total += (size_t) k;
  }
}

static void
send_all (int fd, const char *s, int flags)
{
  size_t len = strlen (s);

  while (len > 0) {
    ssize_t k = send (fd, s, len, flags | MSG_NOSIGNAL);

    if (k == -1 && errno == EINTR)
      continue;
    if (k <= 0)
      return;
    s += k;
    len -= (size_t) k;
  }
}

/* The reply to a line read whole; malloc'd (NULL without memory). */
static char *
run_line (struct array *array, char *line, size_t len)
{
  char *reply;

  if (memchr (line, '\0', len))
    return strdup ("ERROR: NUL byte in the command line\n");
  line[len] = '\0';
  nbdkit_debug ("control: %s", line);
  pthread_mutex_lock (&cmd_lock);
  reply = array_control (array, line);
  pthread_mutex_unlock (&cmd_lock);
  return reply;
}

/* The ERROR reply to a line not run; malloc'd (NULL without memory). */
static char *
error_reply (enum line_end end)
{
  char msg[96];

  if (end == LINE_LONG)
    snprintf (msg, sizeof msg, "ERROR: line too long (at most %d bytes)\n",
              CONTROL_LINE_MAX);
  else
    snprintf (msg, sizeof msg, "ERROR: no complete command line within "
              "%d ms\n", CONTROL_IDLE_MS);
  return strdup (msg);
}

/* *t = CONTROL_IDLE_MS from now. */
static void
idle_deadline (struct timespec *t)
{
  clock_gettime (CLOCK_MONOTONIC, t);
  t->tv_sec += CONTROL_IDLE_MS / 1000;
  t->tv_nsec += (CONTROL_IDLE_MS % 1000) * 1000000L;
  if (t->tv_nsec >= 1000000000L) {
    t->tv_sec++;
    t->tv_nsec -= 1000000000L;
  }
}

void
control_conn_serve (int fd, struct array *array)
{
  struct timeval tv = { SEND_TIMEOUT_S, 0 };
  struct timespec deadline;
  char line[CONTROL_LINE_MAX + 1], *reply = NULL;
  size_t len = 0;
  enum line_end end;

  setsockopt (fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  idle_deadline (&deadline);
  end = read_line (fd, line, &len, &deadline);
  if (end == LINE_GONE)
    return;
  if (end == LINE_LONG)
    drop_line (fd, &deadline);
  reply = end == LINE_OK ? run_line (array, line, len) : error_reply (end);
  send_all (fd, reply ? reply : "ERROR: out of memory\n", 0);
  free (reply);
  shutdown (fd, SHUT_WR);
  drain (fd);
}

void
control_conn_refuse (int fd, const char *why)
{
  char line[256];

  drain (fd);
  snprintf (line, sizeof line, "ERROR: %s\n", why);
  send_all (fd, line, MSG_DONTWAIT);
  shutdown (fd, SHUT_WR);
}
