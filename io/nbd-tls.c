/* io/nbd-tls.c -- NBD members over TLS (tls.h, nbd-tls.h): the settings
 * checked and kept, a libnbd handle set up with them, and a failed
 * handshake said in words.
 *
 * libnbd verifies a server's certificate only when it was given a
 * directory holding ca-cert.pem: without one it falls back to the
 * system's CAs and checks nothing, so a TLS URI is opened only with a
 * readable ca-cert.pem or with a PSK file.
 */
#include <config.h>

#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "io/backend.h"
#include "io/nbd-tls.h"

bool
io_tls_uri (const char *uri)
{
  return strncmp (uri, "nbds://", 7) == 0 ||
    strncmp (uri, "nbds+unix://", 12) == 0;
}

/* access (path, R_OK) as 0 or -errno. */
static int
readable (const char *path)
{
  return access (path, R_OK) == 0 ? 0 : -errno;
}

int
io_tls_check (const struct io_tls *t)
{
  char *ca;
  int r;

  if (t->certificates && t->psk_file) {
    io_set_why (-EINVAL, "both a certificates directory and a PSK file: "
                "give one");
    return -EINVAL;
  }
  if (t->psk_file && (r = readable (t->psk_file)) < 0) {
    io_set_why (r, "%s: %s", t->psk_file, strerror (-r));
    return r;
  }
  if (t->certificates == NULL)
    return 0;
  if (asprintf (&ca, "%s/ca-cert.pem", t->certificates) < 0)
    return -ENOMEM;
  if ((r = readable (ca)) < 0)
    io_set_why (r, "%s: %s (the CA certificate that servers' "
                "certificates are verified against)", ca, strerror (-r));
  free (ca);
  return r;
}

/* The effective user's name (malloc'd), or NULL. */
static char *
user_name (void)
{
  struct passwd pw, *found = NULL;
  char buf[1024];

  if (getpwuid_r (geteuid (), &pw, buf, sizeof buf, &found) != 0 ||
      found == NULL)
    return NULL;
  return strdup (pw.pw_name);
}

/* The user that uri names (nbds://USER@HOST/...), malloc'd, or NULL:
 * the PSK's user, which libnbd takes from the URI before any other.
 */
static char *
uri_user (const char *uri)
{
  const char *from = strstr (uri, "://") + 3;
  size_t len = strcspn (from, "/?#");
  const char *at = memchr (from, '@', len);

  return at ? strndup (from, (size_t) (at - from)) : NULL;
}

/* The user whose key a PSK member uses (malloc'd, or NULL: libnbd's
 * default): the URI's, else t's, else the effective user's (libnbd's own
 * default, the login name, needs a terminal).
 */
static char *
psk_user (const char *uri, const struct io_tls *t)
{
  char *user = uri_user (uri);

  if (user == NULL && t->username)
    user = strdup (t->username);
  return user ? user : user_name ();
}

/* *dst = a copy of src (NULL stays NULL): 0 or -ENOMEM. */
static int
copy (char **dst, const char *src)
{
  *dst = src ? strdup (src) : NULL;
  return src && *dst == NULL ? -ENOMEM : 0;
}

int
nbd_tls_prepare (struct nbd_tls *out, const char *uri, const struct io_tls *t)
{
  int r;

  *out = (struct nbd_tls) { .on = io_tls_uri (uri) };
  if (!out->on) {
    if (t == NULL || !t->require)
      return 0;
    io_set_why (-EPROTONOSUPPORT, "TLS is required and this URI is plain "
                "text (nbds:// or nbds+unix:// takes TLS)");
    return -EPROTONOSUPPORT;
  }
  if (t == NULL || (t->certificates == NULL && t->psk_file == NULL)) {
    io_set_why (-ENOKEY, "TLS without a CA certificate or a PSK file: "
                "the server could not be authenticated");
    return -ENOKEY;
  }
  if ((r = io_tls_check (t)) < 0)
    return r;
  if ((r = copy (&out->certificates, t->certificates)) < 0 ||
      (r = copy (&out->psk_file, t->psk_file)) < 0) {
    nbd_tls_free (out);
    return r;
  }
  if (out->psk_file)
    out->username = psk_user (uri, t);
  return 0;
}

void
nbd_tls_free (struct nbd_tls *t)
{
  free (t->certificates);
  free (t->psk_file);
  free (t->username);
  *t = (struct nbd_tls) { .on = false };
}

int
nbd_tls_setup (struct nbd_handle *h, const struct nbd_tls *t)
{
  if (!t->on)
    return 0;
  if (nbd_set_tls (h, LIBNBD_TLS_REQUIRE) == -1 ||
      nbd_set_tls_verify_peer (h, true) == -1 ||
      (t->certificates &&
       nbd_set_tls_certificates (h, t->certificates) == -1) ||
      (t->psk_file && nbd_set_tls_psk_file (h, t->psk_file) == -1) ||
      (t->username && nbd_set_tls_username (h, t->username) == -1)) {
    int e = nbd_get_errno ();

    return e > 0 ? -e : -EIO;
  }
  return 0;
}

/* msg without libnbd's leading "nbd_CALL: ". */
static const char *
plain_msg (const char *msg)
{
  size_t n = strspn (msg, "abcdefghijklmnopqrstuvwxyz_");

  return strncmp (msg, "nbd_", 4) == 0 && strncmp (msg + n, ": ", 2) == 0
    ? msg + n + 2 : msg;
}

int
nbd_tls_explain (const struct nbd_tls *t, int r, const char *msg)
{
  const char *m = plain_msg (msg);

  if (!t->on && strstr (m, "requires TLS")) {
    io_set_why (-EPROTONOSUPPORT, "the server requires TLS and this URI is "
                "plain text (nbds:// or nbds+unix:// takes TLS) (%s)", m);
    return -EPROTONOSUPPORT;
  }
  if (!t->on)
    return r;
  if (strstr (m, "local file access")) {
    io_set_why (r, "TLS: a URI may not name its own CA or PSK file "
                "(tls-certificates=, tls-psk-file=): the TLS settings "
                "decide for every member (%s)", m);
    return r;
  }
  if (strstr (m, "certificate verification")) {
    io_set_why (-EACCES, "TLS: the server's certificate is not trusted: "
                "not signed by the CA in %s/ca-cert.pem, expired or not "
                "yet valid, or not issued for the URI's host (%s)",
                t->certificates ? t->certificates : "?", m);
    return -EACCES;
  }
  if (strstr (m, "server refused TLS")) {
    io_set_why (-EPROTONOSUPPORT, "TLS: the server does not offer TLS (it "
                "serves plain text) (%s)", m);
    return -EPROTONOSUPPORT;
  }
  if (t->psk_file && strstr (m, "gnutls_handshake")) {
    io_set_why (-EACCES, "TLS: the handshake failed: the server does not "
                "take the key of user %s in %s (%s)",
                t->username ? t->username : "?", t->psk_file, m);
    return -EACCES;
  }
  if (strstr (m, "gnutls") || strstr (m, "TLS") || strstr (m, "PSK"))
    io_set_why (r, "TLS: %s", m);
  return r;
}
