/* tools/tls.c -- how raid5ctl reaches NBD members over TLS: the options
 * --tls-certificates DIR, --tls-psk FILE, --tls-username NAME and
 * --tls=require (io/tls.h), which go before the command or among its
 * arguments, as the plugin's tls-* parameters (see raid5ctl.h).
 */
#include <config.h>

#include <stdio.h>
#include <string.h>

#include "io/member.h"
#include "io/tls.h"
#include "tools/raid5ctl.h"

static struct io_tls tls;
static const char *tls_mode;  /* --tls's value, NULL if not given */

/* The options, and where each one's value goes. */
static const struct {
  const char *name;
  const char **value;
} opts[] = {
  { "--tls-certificates", &tls.certificates },
  { "--tls-psk", &tls.psk_file },
  { "--tls-username", &tls.username },
  { "--tls", &tls_mode },
};
#define NOPTS (sizeof opts / sizeof opts[0])

const struct io_tls *
tool_tls (void)
{
  return &tls;
}

const char *
tool_tls_given (void)
{
  for (size_t k = 0; k < NOPTS; k++)
    if (*opts[k].value)
      return opts[k].name;
  return NULL;
}

/* Option k at argv[i] (--NAME VALUE or --NAME=VALUE): how many words it
 * takes (0: not that option), or -1 after an error line.
 */
static int
take_one (int argc, char **argv, int i, size_t k)
{
  size_t len = strlen (opts[k].name);

  if (strncmp (argv[i], opts[k].name, len) != 0)
    return 0;
  if (argv[i][len] == '=') {
    *opts[k].value = argv[i] + len + 1;
    return 1;
  }
  if (argv[i][len] != '\0')
    return 0;                 /* --tls-psk is not --tls's */
  if (i + 1 >= argc) {
    tool_error ("option %s needs a value", opts[k].name);
    return -1;
  }
  *opts[k].value = argv[i + 1];
  return 2;
}

int
tool_take_tls (int *argc, char **argv)
{
  for (int i = 1, n = 0; i < *argc && strcmp (argv[i], "--") != 0; ) {
    for (size_t k = 0; k < NOPTS && (n = take_one (*argc, argv, i, k)) == 0;
         k++)
      ;
    if (n < 0)
      return TOOL_FAIL;
    if (n == 0) {
      i++;
      continue;
    }
    memmove (&argv[i], &argv[i + n], (size_t) (*argc - i - n + 1) *
             sizeof argv[0]);
    *argc -= n;
  }
  if (tls_mode && strcmp (tls_mode, "require") != 0 &&
      strcmp (tls_mode, "auto") != 0)
    return tool_error ("--tls=%s: expected require (or auto: TLS for "
                       "nbds:// members only, the default)", tls_mode);
  tls.require = tls_mode && strcmp (tls_mode, "require") == 0;
  return TOOL_OK;
}

/* A TLS URI among the arguments (up to "--"), or NULL. */
static const char *
tls_uri_in (int argc, char **argv)
{
  for (int i = 1; i < argc && strcmp (argv[i], "--") != 0; i++)
    if (io_member_is_uri (argv[i]) && io_tls_uri (argv[i]))
      return argv[i];
  return NULL;
}

int
tool_check_tls (int argc, char **argv)
{
  const char *uri;
  int r;

  if (tls.certificates && tls.psk_file)
    return tool_error ("--tls-certificates and --tls-psk: give one of them");
  if ((r = io_tls_check (&tls)) < 0 && tls.psk_file)
    return tool_error ("--tls-psk %s: %s", tls.psk_file, strerror (-r));
  if (r < 0)
    return tool_error ("--tls-certificates %s: %s", tls.certificates,
                       io_strerror (r));
  if (tls.username && tls.psk_file == NULL)
    return tool_error ("--tls-username %s: only with --tls-psk FILE",
                       tls.username);
  if (tls.certificates == NULL && tls.psk_file == NULL &&
      (uri = tls_uri_in (argc, argv)) != NULL)
    return tool_error ("%s: a TLS member needs --tls-certificates DIR or "
                       "--tls-psk FILE to verify its server", uri);
  return TOOL_OK;
}

void
tool_tls_help (void)
{
  printf (
"\n"
"A DISK may be an NBD export: nbd://HOST[:PORT]/EXPORT,\n"
"nbd+unix:///EXPORT?socket=PATH, or over TLS nbds://... and nbds+unix://...,\n"
"with these options (before the command or among its options):\n"
"  --tls-certificates DIR  verify the servers' certificates with\n"
"                     DIR/ca-cert.pem (and show DIR/client-cert.pem and\n"
"                     client-key.pem to servers that ask for them)\n"
"  --tls-psk FILE     or authenticate them with a pre-shared key (psktool's\n"
"                     USERNAME:HEXKEY lines) ...\n"
"  --tls-username NAME  ... of NAME (default: the URI's user, else yours)\n"
"  --tls=require      refuse plain-text members (nbd://, nbd+unix://)\n");
}
