/* io/nbd-tls.h -- TLS for the NBD backend (io/nbd-tls.c), used by
 * io/nbd.c only: what a member keeps of its io_tls (io/tls.h), how a
 * libnbd handle is set up with it, and a failed handshake in words.
 */
#ifndef IO_NBD_TLS_H
#define IO_NBD_TLS_H

#include <stdbool.h>
#include <stddef.h>

#include <libnbd.h>

#include "io/tls.h"

/* A member's TLS settings, owned (its connections are made again long
 * after the open that was given them).
 */
struct nbd_tls {
  bool on;                    /* the URI takes TLS */
  char *certificates;         /* or NULL */
  char *psk_file;             /* or NULL */
  char *username;             /* with a PSK: the URI's user, else the
                                 io_tls's, else the effective user's
                                 name; NULL without (or if unknown) */
};

/* What opening uri needs of t (NULL: no settings) into *out: nothing for
 * a plain-text URI, which t may refuse (-EPROTONOSUPPORT); a TLS URI
 * needs a usable certificates directory or PSK file (io_tls_check; none:
 * -ENOKEY).  Returns 0, or -errno with the reason given to io_set_why;
 * *out then owns nothing.
 */
int nbd_tls_prepare (struct nbd_tls *out, const char *uri,
                     const struct io_tls *t)
  __attribute__((nonnull (1, 2), warn_unused_result));

void nbd_tls_free (struct nbd_tls *t) __attribute__((nonnull));

/* Set h, not yet connected, up for t: TLS required and the server
 * verified, with the certificates or the PSK.  0, or libnbd's -errno.
 */
int nbd_tls_setup (struct nbd_handle *h, const struct nbd_tls *t)
  __attribute__((nonnull, warn_unused_result));

/* The first connection to a member failed with r and libnbd's message
 * msg: if TLS is what failed, say why in words (io_set_why).  Returns
 * the -errno to report: -EACCES when the server was not authenticated
 * (its certificate, a PSK), -EPROTONOSUPPORT when the server and the
 * URI disagree on TLS (one plain, the other not); else r.
 */
int nbd_tls_explain (const struct nbd_tls *t, int r, const char *msg)
  __attribute__((nonnull, warn_unused_result));

#endif /* IO_NBD_TLS_H */
