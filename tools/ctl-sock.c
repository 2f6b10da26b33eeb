/* tools/ctl-sock.c -- one command over the control socket: connect, send
 * the line, read the reply to the end (see ctl.h).
 */
#include <config.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "tools/ctl.h"
#include "tools/raid5ctl.h"

#define REPLY_TIMEOUT_S 60
#define REPLY_MAX (1u << 20)

static int
connect_to (const char *path)
{
  struct sockaddr_un addr = { .sun_family = AF_UNIX };
  struct timeval tv = { REPLY_TIMEOUT_S, 0 };
  int fd;

  if (strlen (path) >= sizeof addr.sun_path) {
    tool_error ("%s: path too long for a unix socket", path);
    return -1;
  }
  strcpy (addr.sun_path, path);
  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd == -1 || connect (fd, (struct sockaddr *) &addr, sizeof addr) == -1) {
    tool_error ("%s: cannot connect: %s (is nbdkit raid5 serving with "
                "control=%s?)", path, strerror (errno), path);
    if (fd >= 0)
      close (fd);
    return -1;
  }
  setsockopt (fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

static int
send_all (int fd, const char *buf, size_t len)
{
  while (len > 0) {
    ssize_t k = send (fd, buf, len, MSG_NOSIGNAL);

    if (k == -1 && errno == EINTR)
      continue;
    if (k == -1)
      return -1;
    buf += k;
    len -= (size_t) k;
  }
  return 0;
}

static int
send_line (int fd, const char *path, const char *line)
{
  if (send_all (fd, line, strlen (line)) == -1 || send_all (fd, "\n", 1) == -1)
    return tool_error ("%s: sending the command: %s", path,
                       strerror (errno));
  return TOOL_OK;
}

/* Room for more of the reply; false without memory. */
static bool
grow (char **buf, size_t len, size_t *cap)
{
  char *bigger;

  if (len + 1 < *cap)
    return true;
  if ((bigger = realloc (*buf, *cap * 2)) == NULL)
    return false;
  *buf = bigger;
  *cap *= 2;
  return true;
}

/* Read until the server closes; *out is malloc'd and NUL-terminated. */
static int
read_all (int fd, const char *path, char **out)
{
  size_t len = 0, cap = 4096;
  char *buf = malloc (cap);
  ssize_t k = -1;

  while (buf && len < REPLY_MAX && grow (&buf, len, &cap)) {
    k = read (fd, buf + len, cap - len - 1);
    if (k == -1 && errno == EINTR)
      continue;
    if (k <= 0)
      break;
    len += (size_t) k;
  }
  if (k == 0) {
    buf[len] = '\0';
    *out = buf;
    return TOOL_OK;
  }
  free (buf);
  if (k == -1 && errno == EAGAIN)
    return tool_error ("%s: no reply within %d s", path, REPLY_TIMEOUT_S);
  if (k == -1)
    return tool_error ("%s: reading the reply: %s", path, strerror (errno));
  return tool_error ("%s: %s", path, len >= REPLY_MAX ? "reply too long"
                     : "out of memory");
}

/* The start of the reply's last line (it ends in a newline). */
static const char *
last_line (const char *reply)
{
  size_t len = strlen (reply);
  const char *p;

  if (len == 0 || reply[len - 1] != '\n')
    return NULL;
  for (p = reply + len - 1; p > reply && p[-1] != '\n'; p--)
    ;
  return p;
}

int
ctl_request (const char *path, const char *line, char **reply)
{
  int fd = connect_to (path), r;
  const char *last;

  if (fd < 0)
    return TOOL_FAIL;
  r = send_line (fd, path, line);
  if (r == TOOL_OK)
    r = read_all (fd, path, reply);
  close (fd);
  if (r != TOOL_OK)
    return r;
  last = last_line (*reply);
  if (last && (strcmp (last, "OK\n") == 0 ||
               strncmp (last, "ERROR: ", 7) == 0))
    return TOOL_OK;
  free (*reply);
  return tool_error ("%s: the server closed the connection before the end "
                     "of its reply", path);
}

int
ctl_reply (const char *reply, FILE *out)
{
  const char *last = last_line (reply);

  if (out)
    fwrite (reply, 1, (size_t) (last - reply), out);
  if (strcmp (last, "OK\n") == 0)
    return TOOL_OK;
  return tool_error ("%.*s", (int) strcspn (last + 7, "\n"), last + 7);
}
