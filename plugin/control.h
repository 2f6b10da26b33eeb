/* plugin/control.h -- the control socket (control=PATH): a unix socket,
 * mode 0600, on which each connection sends one command line (at most
 * CONTROL_LINE_MAX bytes, within CONTROL_IDLE_MS: see control-conn.h)
 * and gets array_control()'s reply.  Made in get_ready (errors visible,
 * before nbdkit forks), served by threads started after the fork (one
 * per connection, up to 64), removed at cleanup.  Errors are reported
 * with nbdkit_error().
 */
#ifndef PLUGIN_CONTROL_H
#define PLUGIN_CONTROL_H

#include "array/array.h"

/* Create and bind the socket at path.  Returns 0 or -1. */
int control_open (const char *path);

/* Serve commands for array on threads.  Returns 0 or -1. */
int control_start (struct array *array);

/* Stop the threads (connections being served are cut), close and remove
 * the socket.  Safe if never opened.
 */
void control_close (void);

#endif /* PLUGIN_CONTROL_H */
