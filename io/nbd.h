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

/* Connections to a member whose server offers multi-conn (one
 * otherwise), each carrying the commands of every batch at once.
 */
#define IO_NBD_CONNECTIONS_DEFAULT 2u
#define IO_NBD_CONNECTIONS_MAX 16u

/* Connections to each NBD member opened from now on in this process
 * (1 to IO_NBD_CONNECTIONS_MAX; the server's multi-conn still decides
 * whether more than one is made).  0, or -ERANGE.
 */
int io_nbd_set_connections (unsigned n) __attribute__((warn_unused_result));

#endif /* IO_NBD_H */
