/* io/nbd.h -- settings of the NBD backend (io/nbd.c; see backend.h).
 */
#ifndef IO_NBD_H
#define IO_NBD_H

#define IO_NBD_TIMEOUT_MS_DEFAULT 5000u

/* How long an NBD member may go with requests in flight and none
 * completing before it counts as failed (its connection is closed for
 * good and its requests fail with -ETIMEDOUT).  0: the default.  Set
 * before members are opened; read by every thread after.
 */
void io_nbd_set_timeout_ms (unsigned ms);

#endif /* IO_NBD_H */
