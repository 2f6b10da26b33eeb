/* tools/ctl.h -- raid5ctl --control SOCKET COMMAND: the commands a
 * serving plugin carries out (nbdkit raid5 ... control=SOCKET).
 *
 * The protocol (array/control.c, plugin/control.c): one connection per
 * command; the client sends one line, the server answers with lines, the
 * last "OK" or "ERROR: why", and closes.  The commands, their syntax on
 * the socket and in raid5ctl, and their help are one table,
 * array/commands.h, which ctl.c parses and checks by.
 *
 * ctl.c parses the command line, sends it and prints the reply;
 * ctl-wait.c follows a job to its end (--wait).  Errors are one line on
 * stderr (tool_error) and exit status 1.
 */
#ifndef TOOLS_CTL_H
#define TOOLS_CTL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "array/array.h"

/* Does the server know command (raid5ctl's name for it)? */
bool ctl_knows (const char *command) __attribute__((nonnull));

/* raid5ctl --control path COMMAND ARGS...: argv[0] is the command.
 * Returns an exit status: 0, 1 (error or failed job), 2 (check --wait
 * found wrong parity).
 */
int ctl_main (const char *path, int argc, char **argv)
  __attribute__((nonnull));

/* The run function of the commands only a server can do (the control
 * table's entries with a help text): --help prints the usage, anything
 * else says that --control is needed.
 */
int ctl_only_main (int argc, char **argv);

/* Send one command line to the socket at path and read the whole reply
 * into *reply (malloc'd, NUL-terminated, ending in its OK or ERROR line).
 * Returns 0, or TOOL_FAIL after one error line naming the socket.
 */
int ctl_request (const char *path, const char *line, char **reply)
  __attribute__((nonnull, warn_unused_result));

/* The reply's last line: 0 for OK; TOOL_FAIL after printing "raid5ctl
 * SUB: why" for ERROR.  Unless out is NULL, the lines before it are
 * written to out.
 */
int ctl_reply (const char *reply, FILE *out) __attribute__((nonnull (1)));

/* Follow the job just started to its end (ctl-wait.c): a progress bar,
 * then the report (check/repair: as offline check; rebuild: the slot in
 * service).  Returns an exit status as ctl_main.
 */
struct ctl_wait {
  const char *path;           /* the socket */
  enum r5_job kind;   /* CHECK, REPAIR or REBUILD */
  bool json;                  /* check/repair report as JSON */
  unsigned list;              /* stripes to list at most */
  unsigned slot;              /* rebuild: the slot */
  bool files;                 /* check: --files */
  uint64_t fs_off;            /* --fs-offset, or CHECK_FS_AUTO */
};
int ctl_wait (const struct ctl_wait *w) __attribute__((nonnull));

/* The array a server serves, read through its control socket (ctl-read.c,
 * for check --files): the geometry from status --json, the bytes by the
 * server's read command (its array_read: degraded reads reconstruct).
 */
struct ctl_array {
  const char *path;           /* the socket */
  struct r5_geom geom;
};
int ctl_array_open (const char *path, struct ctl_array *out)
  __attribute__((nonnull));   /* TOOL_OK, or TOOL_FAIL after a line */
/* fsmap_src's read: opaque is a struct ctl_array; 0 or -EIO (after a
 * line on stderr).
 */
int ctl_array_read (void *opaque, void *buf, uint64_t len, uint64_t off)
  __attribute__((nonnull));

#endif /* TOOLS_CTL_H */
