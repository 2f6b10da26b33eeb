/* plugin/control-conn.h -- one connection of the control socket: read
 * one command line, answer it, leave nothing unread (a unix socket
 * closed with unread bytes resets the peer, which then loses the reply).
 * Used by plugin/control.c, one thread per connection.
 */
#ifndef PLUGIN_CONTROL_CONN_H
#define PLUGIN_CONTROL_CONN_H

#include "array/array.h"

/* A command line is at most this many bytes, without its newline. */
#define CONTROL_LINE_MAX 4095

/* The whole line must arrive within this time of the connection's
 * accept (ms); an idle connection is then answered with an ERROR and
 * dropped, so that idle clients cannot hold connection slots.
 */
#define CONTROL_IDLE_MS 2000

/* Read the line from fd (a connected socket), run it with
 * array_control() -- commands one at a time, across connections -- and
 * write the reply.  A line too long, with a NUL byte, or incomplete at
 * the idle timeout gets an ERROR reply and is not run.  Shuts fd down
 * for writing; the caller closes it.
 */
void control_conn_serve (int fd, struct array *array);

/* Answer fd with the line "ERROR: why" without waiting for the client
 * (the accept thread refuses a connection so).  The caller closes fd.
 */
void control_conn_refuse (int fd, const char *why);

#endif /* PLUGIN_CONTROL_CONN_H */
