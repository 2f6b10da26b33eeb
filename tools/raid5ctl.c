/* tools/raid5ctl.c -- raid5ctl: create, inspect and look after arrays of
 * nbdkit-raid5 (md v1.2 RAID-5 members).  Dispatch to the subcommands and
 * the helpers they share (see raid5ctl.h).
 */
#include <config.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array/array.h"
#include "array/commands.h"
#include "raid/number.h"
#include "tools/ctl.h"
#include "tools/raid5ctl.h"

/* raid5ctl's own commands, in the order --help lists them; where
 * raid5ctl --control hands the command to a server too, its summary comes
 * from the control table (array/commands.h), whose server-only commands
 * (status, fail, ...) are listed after "rebuild"'s kind.
 */
static const struct tool_cmd commands[] = {
  { "create", "write md v1.2 superblocks to new members and sync parity",
    create_main, true },
  { "examine", "show the md superblock of each member, as mdadm --examine",
    examine_main, true },
  { "check", NULL, check_main, true },
  { "repair", NULL, repair_main, true },
  { "rebuild", NULL, rebuild_main, true },
  { "re-add", NULL, readd_main, true },
  { "replace", NULL, replace_main, true },
  { "grow", "add members and reshape the array onto them, as mdadm --grow",
    grow_main, true },
  { "layout", "draw which member holds each data and parity chunk",
    layout_main, true },
  { "map", "where an array byte (or range) lives on the members", map_main,
    true },
  { "explain", "what a read/write/zero/trim does on the members, and why",
    explain_main, true },
  { "mkfs-hint", "mkfs.ext4/xfs stripe options and alignment for a geometry",
    mkfs_hint_main, true },
  { "monitor", "watch served arrays and report events, as mdadm --monitor",
    monitor_main, false },
};
#define NCOMMANDS (sizeof commands / sizeof commands[0])

static const char *running = "";

const char *
tool_sub (void)
{
  return running;
}

int
tool_error (const char *fmt, ...)
{
  va_list ap;

  fflush (stdout);
  fprintf (stderr, "raid5ctl%s%s: ", *running ? " " : "", running);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
  return TOOL_FAIL;
}

/* An option with a value given a second time (--add excepted, which
 * takes one disk each time): refused, as mdadm refuses a second --chunk
 * ("may only be specified once"), rather than the last one winning.
 * One command line is parsed per process, so what was seen is static.
 */
static bool
given_twice (int c, const struct option *longopts)
{
  static bool seen[256];
  const struct option *o = longopts;

  while (o->name && o->val != c)
    o++;
  if (!o->name || o->has_arg != required_argument ||
      strcmp (o->name, "add") == 0 || c < 0 || c >= 256)
    return false;
  if (seen[c]) {
    tool_error ("option --%s given twice: give it once", o->name);
    return true;
  }
  seen[c] = true;
  return false;
}

/* Was arg "--NAME=VALUE" for a flag (getopt_long then sets optopt to
 * the flag's own value)?  arg may be an earlier word when an unknown
 * short option sat inside a cluster, so the name is matched too.
 */
static bool
flag_with_value (const char *arg, int opt, const struct option *longopts)
{
  size_t len = strcspn (arg, "=");

  if (opt == 0 || strncmp (arg, "--", 2) != 0 || arg[len] != '=')
    return false;
  for (const struct option *o = longopts; o->name; o++)
    if (o->val == opt && o->has_arg == no_argument &&
        strncmp (o->name, arg + 2, len - 2) == 0)
      return true;
  return false;
}

int
tool_getopt (int argc, char **argv, const char *shortopts,
             const struct option *longopts)
{
  char opts[64];
  int c;

  snprintf (opts, sizeof opts, ":%s", shortopts);
  opterr = 0;
  c = getopt_long (argc, argv, opts, longopts, NULL);
  if (c != '?' && c != ':' && c != -1 && given_twice (c, longopts))
    return '?';
  if (c == '?') {
    if (flag_with_value (argv[optind - 1], optopt, longopts))
      tool_error ("option %.*s takes no value",
                  (int) strcspn (argv[optind - 1], "="), argv[optind - 1]);
    else if (optopt != 0)
      tool_error ("unknown option -%c (see raid5ctl %s --help)", optopt,
                  running);
    else
      tool_error ("unknown option %s (see raid5ctl %s --help)",
                  argv[optind - 1], running);
  }
  else if (c == ':') {
    if (optopt != 0 && argv[optind - 1][1] != '-')
      tool_error ("option -%c needs a value", optopt);
    else
      tool_error ("option %s needs a value", argv[optind - 1]);
    c = '?';
  }
  return c;
}

int
tool_parse_uint (const char *opt, const char *arg, uint64_t min, uint64_t max,
                 uint64_t *out)
{
  if (r5_parse_uint (arg, min, max, out) < 0)
    return tool_error ("%s %s: expected a whole number from %" PRIu64
                       " to %" PRIu64, opt, arg, min, max);
  return TOOL_OK;
}

int
tool_parse_speed (const char *opt, const char *arg, uint64_t *kib)
{
  uint64_t bytes;

  if (r5_parse_size (arg, 1024, 1024, ARRAY_SYNC_SPEED_LIMIT * 1024,
                     &bytes) < 0)
    return tool_error ("%s %s: not a speed (KiB per second and member, or "
                       "a size with K, M, G or T; 1K to 1T)", opt, arg);
  *kib = bytes / 1024;
  return TOOL_OK;
}

const char *
tool_human (uint64_t bytes, char *buf, size_t len)
{
  static const char *units[] = { "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
  unsigned i = 0;
  uint64_t scale = 1024;

  if (bytes < 1024) {
    snprintf (buf, len, "%" PRIu64 " bytes", bytes);
    return buf;
  }
  while (i + 1 < sizeof units / sizeof units[0] && bytes / scale >= 1024)
    scale *= 1024, i++;
  if (bytes % scale == 0)
    snprintf (buf, len, "%" PRIu64 " %s", bytes / scale, units[i]);
  else
    snprintf (buf, len, "%.2f %s", (double) bytes / (double) scale, units[i]);
  return buf;
}

void
tool_print_shell_word (const char *s)
{
  if (*s != '\0' && strspn (s, "abcdefghijklmnopqrstuvwxyz"
                            "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                            "@%+=:,./_-") == strlen (s)) {
    fputs (s, stdout);
    return;
  }
  putchar ('\'');
  for (; *s; s++)
    if (*s == '\'')
      fputs ("'\\''", stdout);
    else
      putchar (*s);
  putchar ('\'');
}

static void
usage (FILE *fp)
{
  fprintf (fp,
           "usage: raid5ctl [--control SOCKET] COMMAND [OPTIONS] ...\n"
           "\n"
           "Create, inspect, check, repair and rebuild nbdkit-raid5 arrays: "
           "RAID-5\nmembers laid out as Linux md does, with md v1.2 "
           "superblocks (served by\n`nbdkit raid5 disk=...`).\n"
           "\n"
           "Commands:\n");
  for (size_t i = 0; i < NCOMMANDS; i++) {
    const struct array_cmd *c = array_cmd_find (commands[i].name);

    fprintf (fp, "  %-10s%s %s\n", commands[i].name, c ? "*" : " ",
             c ? c->summary : commands[i].summary);
    if (strcmp (commands[i].name, "re-add") == 0)
      for (size_t k = 0; k < array_ncmds; k++)   /* the server-only ones */
        if (array_cmds[k].text)
          fprintf (fp, "  %-10s* %s\n", array_cmds[k].name,
                   array_cmds[k].summary);
  }
  fprintf (fp,
           "\n"
           "* With --control SOCKET (before or after the command), the "
           "server of the\narray carries it out: `nbdkit raid5 ... "
           "control=SOCKET`.  Without it, check,\nrepair, rebuild, re-add, grow "
           "and replace work on the members (nothing may\nserve them).\n"
           "\n"
           "Members may be NBD exports (nbd://, nbds://, nbd+unix://, "
           "nbds+unix://);\nthe TLS options (--tls-certificates DIR, --tls-psk "
           "FILE, --tls-username NAME,\n--tls=require) go before the command "
           "or among its options.\n"
           "\n"
           "`raid5ctl COMMAND --help` describes a command.  Sizes take a "
           "suffix\n"
           "(s = 512-byte sectors, K, M, G, T); a bare number is KiB, as in "
           "mdadm.\n");
}

/* A command only a server carries out: its --help, or "needs --control". */
static const struct tool_cmd server_only = { NULL, NULL, ctl_only_main,
                                             false };

static const struct tool_cmd *
find_command (const char *name)
{
  const struct array_cmd *c = array_cmd_find (name);

  for (size_t i = 0; i < NCOMMANDS; i++)
    if (strcmp (name, commands[i].name) == 0)
      return &commands[i];
  return c && c->text ? &server_only : NULL;
}

/* --control SOCKET or --control=SOCKET at argv[i]: how many words it
 * takes (0: not that option), or -1 after an error line.
 */
static int
control_opt (int argc, char **argv, int i, const char **path)
{
  if (strncmp (argv[i], "--control=", 10) == 0) {
    *path = argv[i] + 10;
    return 1;
  }
  if (strcmp (argv[i], "--control") != 0)
    return 0;
  if (i + 1 >= argc) {
    tool_error ("option --control needs a value (the server's control "
                "socket)");
    return -1;
  }
  *path = argv[i + 1];
  return 2;
}

/* Take --control out of a command's arguments (up to "--"). */
static int
take_control (int *argc, char **argv, const char **path)
{
  for (int i = 1, n; i < *argc && strcmp (argv[i], "--") != 0; ) {
    if ((n = control_opt (*argc, argv, i, path)) < 0)
      return TOOL_FAIL;
    if (n == 0) {
      i++;
      continue;
    }
    memmove (&argv[i], &argv[i + n], (size_t) (*argc - i - n + 1) *
             sizeof argv[0]);
    *argc -= n;
  }
  return TOOL_OK;
}

static bool
wants_help (int argc, char **argv)
{
  for (int i = 1; i < argc && strcmp (argv[i], "--") != 0; i++)
    if (strcmp (argv[i], "--help") == 0 || strcmp (argv[i], "-h") == 0)
      return true;
  return false;
}

/* Run cmd with its arguments (argv[0] = its name). */
static int
run_command (const struct tool_cmd *cmd, const char *control, int argc,
             char **argv)
{
  bool online = array_cmd_find (argv[0]) != NULL;

  running = argv[0];
  if (online && take_control (&argc, argv, &control) != TOOL_OK)
    return TOOL_FAIL;
  if (control && !online)
    return tool_error ("--control: only %s talk to a server",
                       array_cmd_names ());
  if (wants_help (argc, argv))
    return cmd->run (argc, argv);
  if (tool_tls_given () && control)
    return tool_error ("%s: with --control the server reaches its members "
                       "itself, with its own tls-* parameters",
                       tool_tls_given ());
  if (tool_tls_given () && !cmd->members)
    return tool_error ("%s: %s names no members", tool_tls_given (),
                       argv[0]);
  if (control)
    return ctl_main (control, argc, argv);
  if (tool_check_tls (argc, argv) != TOOL_OK)
    return TOOL_FAIL;
  return cmd->run (argc, argv);
}

static int
help (int argc, char **argv)
{
  const struct tool_cmd *cmd;

  if (argc > 2 && strcmp (argv[1], "help") == 0) {
    char *args[] = { argv[2], (char *) "--help", NULL };

    if ((cmd = find_command (argv[2])) == NULL)
      return tool_error ("unknown command '%s' (see raid5ctl --help)",
                         argv[2]);
    return run_command (cmd, NULL, 2, args);
  }
  usage (stdout);
  return TOOL_OK;
}

int
main (int argc, char **argv)
{
  const struct tool_cmd *cmd;
  const char *control = NULL;
  int first = 1, n;

  if (tool_take_tls (&argc, argv) != TOOL_OK)
    return TOOL_FAIL;
  while (first < argc &&
         (n = control_opt (argc, argv, first, &control)) != 0) {
    if (n < 0)
      return TOOL_FAIL;
    first += n;
  }
  argc -= first - 1;
  argv += first - 1;
  if (argc < 2) {
    usage (stderr);
    return TOOL_FAIL;
  }
  if (strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0 ||
      strcmp (argv[1], "help") == 0)
    return help (argc, argv);
  if (strcmp (argv[1], "--version") == 0) {
    printf ("raid5ctl %s\n", PACKAGE_VERSION);
    return TOOL_OK;
  }
  if ((cmd = find_command (argv[1])) == NULL)
    return tool_error ("unknown %s '%s' (see raid5ctl --help)",
                       argv[1][0] == '-' ? "option" : "command", argv[1]);
  return run_command (cmd, control, argc - 1, argv + 1);
}
