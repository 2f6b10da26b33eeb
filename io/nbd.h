/* io/nbd.h -- settings of the NBD backend (io/nbd.c; see backend.h).
 */
#ifndef IO_NBD_H
#define IO_NBD_H

/* How long an NBD member may go with requests in flight and none
 * completing before it counts as failed (its connection is closed for
 * good and its requests fail with -ETIMEDOUT), unless the member was
 * opened with a timeout of its own (io_open_opts, member.h).
 */
#define IO_NBD_TIMEOUT_MS_DEFAULT 5000u

#endif /* IO_NBD_H */
