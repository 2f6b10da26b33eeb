/* io/tls.h -- how members that are NBD exports are reached over TLS
 * (io/nbd-tls.c).  Files and block devices ignore it.
 *
 * A URI of the nbds:// or nbds+unix:// scheme always takes TLS: the
 * server must offer it and the handshake must succeed, or the open fails.
 * With require, a plain-text URI (nbd://, nbd+unix://) is refused too.
 * The server is authenticated with one of:
 * - certificates: a directory holding ca-cert.pem, the CA the servers'
 *   certificates must be signed by; each server's certificate is
 *   verified (its chain to that CA, its dates, and -- over TCP -- that it
 *   was issued for the URI's host).  client-cert.pem and client-key.pem
 *   there, if present, are shown to servers that ask for a client
 *   certificate.  (libnbd 1.14 checks no certificate over a Unix socket:
 *   it has no host name to check; who may serve on the socket is its
 *   file permissions' business.)
 * - psk_file: a file of USERNAME:HEXKEY lines (psktool writes them); the
 *   key of the URI's user (nbds://USER@HOST/...) if it names one, else of
 *   username, else of the effective user's name.  A server that does not
 *   know the same key fails the handshake.
 * A TLS URI opened with neither is refused: libnbd would then take the
 * system's CAs and verify nothing.
 *
 * The strings are the caller's: they must outlive every member opened
 * with them (io_open_opts, member.h); the backend copies what it keeps.
 */
#ifndef IO_TLS_H
#define IO_TLS_H

#include <stdbool.h>

struct io_tls {
  bool require;               /* plain-text NBD URIs are refused */
  const char *certificates;   /* a directory, or NULL */
  const char *psk_file;       /* or NULL; not both */
  const char *username;       /* the PSK user when the URI names none;
                                 NULL: the effective user's name */
};

/* Can t be used: not both a certificates directory and a PSK file, the
 * directory's ca-cert.pem readable (without it libnbd would fall back to
 * the system's CAs and verify nothing), the PSK file readable.  Returns
 * 0, or -EINVAL (both given) or access(2)'s -errno, with the reason in
 * words from io_strerror (member.h).  A set with neither is fine here:
 * only a TLS URI opened with it is refused.
 */
int io_tls_check (const struct io_tls *t)
  __attribute__((nonnull, warn_unused_result));

/* Does uri (one the NBD backend takes) ask for TLS: nbds://, nbds+unix://? */
bool io_tls_uri (const char *uri) __attribute__((nonnull));

#endif /* IO_TLS_H */
