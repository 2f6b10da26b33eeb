/* tools/ctl-read.c -- array bytes from a server, by its read command
 * (array/control.c: "read OFFSET LENGTH" answers hex lines, then OK), for
 * check --control --wait --files (ctl.h).
 */
#include <config.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array/commands.h"
#include "tools/ctl.h"
#include "tools/raid5ctl.h"

static int
hex_digit (char c)
{
  return c >= '0' && c <= '9' ? c - '0'
    : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The hex lines of reply into buf: exactly len bytes, or -EIO. */
static int
unhex (const char *reply, unsigned char *buf, uint64_t len)
{
  uint64_t n = 0;

  for (const char *p = reply; *p && strncmp (p, "OK\n", 3) != 0; p++) {
    int hi, lo;

    if (*p == '\n')
      continue;
    if ((hi = hex_digit (p[0])) < 0 || (lo = hex_digit (p[1])) < 0 ||
        n == len)
      return -EIO;
    buf[n++] = (unsigned char) (hi << 4 | lo);
    p++;
  }
  return n == len ? 0 : -EIO;
}

static int
read_piece (const struct ctl_array *c, unsigned char *buf, uint64_t len,
            uint64_t off)
{
  char line[64], *reply;
  int r;

  snprintf (line, sizeof line, "read %" PRIu64 " %" PRIu64, off, len);
  if (ctl_request (c->path, line, &reply) != TOOL_OK)
    return -EIO;
  if ((r = ctl_reply (reply, NULL)) == TOOL_OK &&
      (r = unhex (reply, buf, len)) < 0)
    tool_error ("%s: read %" PRIu64 " %" PRIu64 ": a reply raid5ctl does "
                "not understand", c->path, off, len);
  free (reply);
  return r == TOOL_OK ? 0 : -EIO;
}

int
ctl_array_read (void *opaque, void *buf, uint64_t len, uint64_t off)
{
  const struct ctl_array *c = opaque;

  for (uint64_t done = 0; done < len; ) {
    uint64_t n = len - done < ARRAY_READ_MAX ? len - done
                                              : ARRAY_READ_MAX;
    int r = read_piece (c, (unsigned char *) buf + done, n, off + done);

    if (r < 0)
      return r;
    done += n;
  }
  return 0;
}
