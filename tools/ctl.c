/* tools/ctl.c -- raid5ctl --control SOCKET COMMAND: parse the command's
 * options, send the command line, print the reply (see ctl.h).
 *
 * The line sent is the server's own syntax; raid5ctl checks what it can
 * first (options, slot numbers, sizes), makes a PATH absolute (the
 * server's working directory is not ours) and refuses white space in it
 * (the protocol splits words on it).
 */
#include <config.h>

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "array/commands.h"
#include "io/member.h"
#include "raid/geom.h"
#include "raid/number.h"
#include "tools/check.h"
#include "tools/ctl.h"
#include "tools/raid5ctl.h"

/* raid5ctl's names of the ACMD_* options, by bit. */
static const char *const opt_names[] = {
  "--json", "--wait", "--list", "--slot", "--new", "--min", "--max",
  "--files", "--fs-offset", "--force", "", "--add", "--backup-file",
  "--size", "--assume-clean", "--bitmap",
};

/* What the command line said. */
struct ctl_args {
  const struct array_cmd *cmd;
  unsigned given;             /* ACMD_* seen */
  bool json, wait, force;
  unsigned list;
  const char *slot, *path;
  const char *add[R5_MAX_MEMBERS];  /* grow's --add */
  unsigned nadd;
  const char *backup;         /* grow's --backup-file */
  uint64_t size_sectors;      /* ... parsed: 0 for max */
  int bitmap;                 /* grow's --bitmap: 1 internal, 0 none */
  unsigned slot_no;           /* slot, parsed */
  uint64_t min_kib, max_kib;
  uint64_t fs_off;            /* --fs-offset, or CHECK_FS_AUTO */
};

bool
ctl_knows (const char *command)
{
  return array_cmd_find (command) != NULL;
}

static void
usage (const struct array_cmd *c)
{
  printf ("usage: raid5ctl %s --control SOCKET%s%s\n"
          "       raid5ctl --control SOCKET %s%s%s\n\n%s"
          "\nSOCKET is the control socket of the server of the array "
          "(nbdkit raid5 ...\ncontrol=SOCKET).\n", c->name,
          *c->synopsis ? " " : "", c->synopsis, c->name,
          *c->synopsis ? " " : "", c->synopsis, c->text);
}

int
ctl_only_main (int argc, char **argv)
{
  const struct array_cmd *c = array_cmd_find (argv[0]);

  for (int i = 1; i < argc && strcmp (argv[i], "--") != 0; i++)
    if (strcmp (argv[i], "--help") == 0 || strcmp (argv[i], "-h") == 0) {
      usage (c);
      return TOOL_OK;
    }
  return tool_error ("needs --control SOCKET: a server of the array does "
                     "this (nbdkit raid5 ... control=SOCKET)");
}

static int
take_option (struct ctl_args *a, int c, const char *arg)
{
  switch (c) {
  case 'j': a->given |= ACMD_JSON; a->json = true; return TOOL_OK;
  case 'w': a->given |= ACMD_WAIT; a->wait = true; return TOOL_OK;
  case 'l': a->given |= ACMD_LIST; return check_parse_list (arg, &a->list);
  case 's': a->given |= ACMD_SLOT; a->slot = arg; return TOOL_OK;
  case 'n': a->given |= ACMD_NEW; a->path = arg; return TOOL_OK;
  case 'm':
    a->given |= ACMD_MIN;
    return tool_parse_speed ("--min", arg, &a->min_kib);
  case 'M':
    a->given |= ACMD_MAX;
    return tool_parse_speed ("--max", arg, &a->max_kib);
  case 'f': a->given |= ACMD_FILES; return TOOL_OK;
  case 'F': a->given |= ACMD_FORCE; a->force = true; return TOOL_OK;
  case 'a':
    a->given |= ACMD_ADD;
    if (a->nadd == R5_MAX_MEMBERS - R5_MIN_MEMBERS)
      return tool_error ("--add %s: too many (an array has at most %d "
                         "members)", arg, R5_MAX_MEMBERS);
    a->add[a->nadd++] = arg;
    return TOOL_OK;
  case 'b': a->given |= ACMD_BACKUP; a->backup = arg; return TOOL_OK;
  case 'o':
    a->given |= ACMD_FS_OFFSET;
    return check_parse_fs_offset (arg, &a->fs_off);
  case 'z':
    a->given |= ACMD_SIZE;
    return grow_parse_size (arg, &a->size_sectors);
  case 'C': a->given |= ACMD_ASSUME_CLEAN; return TOOL_OK;
  case 'i': a->given |= ACMD_BITMAP; return grow_parse_bitmap (arg, &a->bitmap);
  default: return TOOL_FAIL;
  }
}

static int
parse_options (int argc, char **argv, struct ctl_args *a)
{
  static const struct option longopts[] = {
    { "json", no_argument, NULL, 'j' },
    { "wait", no_argument, NULL, 'w' },
    { "list", required_argument, NULL, 'l' },
    { "slot", required_argument, NULL, 's' },
    { "new", required_argument, NULL, 'n' },
    { "min", required_argument, NULL, 'm' },
    { "max", required_argument, NULL, 'M' },
    { "files", no_argument, NULL, 'f' },
    { "fs-offset", required_argument, NULL, 'o' },
    { "force", no_argument, NULL, 'F' },
    { "add", required_argument, NULL, 'a' },
    { "backup-file", required_argument, NULL, 'b' },
    { "size", required_argument, NULL, 'z' },
    { "assume-clean", no_argument, NULL, 'C' },
    { "bitmap", required_argument, NULL, 'i' },
    { NULL, 0, NULL, 0 },
  };
  unsigned bad;
  int c;

  while ((c = tool_getopt (argc, argv, "", longopts)) != -1)
    if (take_option (a, c, optarg) != TOOL_OK)
      return TOOL_FAIL;
  if ((bad = a->given & ~a->cmd->opts) != 0)
    return tool_error ("%s is not an option of %s with --control (see "
                       "raid5ctl %s --help)",
                       opt_names[__builtin_ctz (bad)], a->cmd->name,
                       a->cmd->name);
  if ((a->json || (a->given & ACMD_LIST)) && !a->wait &&
      a->cmd->opts & ACMD_WAIT)
    return tool_error ("--json and --list report a finished job: they "
                       "need --wait");
  if ((a->given & (ACMD_FILES | ACMD_FS_OFFSET)) && !a->wait)
    return tool_error ("--files explains a finished check: it needs --wait");
  if ((a->given & ACMD_FS_OFFSET) && !(a->given & ACMD_FILES))
    return tool_error ("--fs-offset: only with --files");
  if (!!(a->given & (ACMD_ADD | ACMD_BACKUP | ACMD_FORCE)) +
      !!(a->given & ACMD_SIZE) + !!(a->given & ACMD_BITMAP) > 1)
    return tool_error ("--add, --size and --bitmap change one thing each: "
                       "one at a time (as mdadm)");
  if ((a->given & ACMD_ASSUME_CLEAN) && !(a->given & ACMD_SIZE))
    return tool_error ("--assume-clean goes with --size");
  /* Both given and crossed: a mistake (the plugin refuses it too).  One
   * alone: a --min above the max raises the max (the reply says so), a
   * --max below the min is refused by the plugin.
   */
  if ((a->given & ACMD_MIN) && (a->given & ACMD_MAX) &&
      a->min_kib > a->max_kib)
    return tool_error ("--min %" PRIu64 "K is above --max %" PRIu64 "K",
                       a->min_kib, a->max_kib);
  return TOOL_OK;
}

/* SLOT [PATH] as arguments, or --slot and --new. */
static int
parse_args (int argc, char **argv, struct ctl_args *a)
{
  int n = argc - optind;
  uint64_t slot = 0;

  if ((unsigned) n > a->cmd->args)
    return tool_error ("unexpected argument '%s' (see raid5ctl %s --help)",
                       argv[optind + (int) a->cmd->args], a->cmd->name);
  if (n > 0 && a->slot)
    return tool_error ("the slot is given twice (--slot %s and %s)",
                       a->slot, argv[optind]);
  if (n > 0)
    a->slot = argv[optind];
  if (n > 1 && a->path)
    return tool_error ("the new member is given twice (--new %s and %s)",
                       a->path, argv[optind + 1]);
  if (n > 1)
    a->path = argv[optind + 1];
  if (a->cmd->args > 0 && a->slot == NULL)
    return tool_error ("which slot? (usage: raid5ctl %s --control SOCKET "
                       "%s)", a->cmd->name, a->cmd->synopsis);
  if (a->slot && r5_parse_uint (a->slot, 0, R5_MAX_MEMBERS - 1, &slot) < 0)
    return tool_error ("slot '%s': not a slot number (0 to %d)", a->slot,
                       R5_MAX_MEMBERS - 1);
  a->slot_no = (unsigned) slot;
  return TOOL_OK;
}

/* PATH as the server must see it: absolute (a URI as it is), one word. */
static int
server_path (const char *path, char *out, size_t len)
{
  char *where;

  if (strpbrk (path, " \t\r\n"))
    return tool_error ("%s: the control protocol cannot carry white space "
                       "in a path", path);
  if ((where = io_member_locate (path)) == NULL)
    return tool_error ("%s: cannot make it absolute: %m", path);
  if ((size_t) snprintf (out, len, "%s", where) >= len) {
    free (where);
    return tool_error ("%s: path too long", path);
  }
  free (where);
  return TOOL_OK;
}

/* A file the server makes or reads (not a member): absolute, one word. */
static int
server_file (const char *file, char *out, size_t len)
{
  char cwd[PATH_MAX];

  if (strpbrk (file, " \t\r\n"))
    return tool_error ("%s: the control protocol cannot carry white space "
                       "in a path", file);
  if (file[0] != '/' && getcwd (cwd, sizeof cwd) == NULL)
    return tool_error ("%s: cannot make it absolute: %m", file);
  if ((size_t) snprintf (out, len, "%s%s%s", file[0] == '/' ? "" : cwd,
                         file[0] == '/' ? "" : "/", file) >= len)
    return tool_error ("%s: path too long", file);
  return TOOL_OK;
}

/* The command line the server understands. */
static int
compose (const struct ctl_args *a, char *line, size_t len)
{
  char path[PATH_MAX + 8] = "";
  int n = snprintf (line, len, "%s", a->cmd->name);

  if (a->path && server_path (a->path, path, sizeof path) != TOOL_OK)
    return TOOL_FAIL;
  for (unsigned i = 0; i < a->nadd; i++) {
    if (server_path (a->add[i], path, sizeof path) != TOOL_OK)
      return TOOL_FAIL;
    n += snprintf (line + n, len - (size_t) n, " %s", path);
    path[0] = '\0';
  }
  if (a->backup) {
    if (server_file (a->backup, path, sizeof path) != TOOL_OK)
      return TOOL_FAIL;
    n += snprintf (line + n, len - (size_t) n, " --backup-file=%s", path);
    path[0] = '\0';
  }
  if (a->json && !a->wait)
    n += snprintf (line + n, len - (size_t) n, " --json");
  if (a->slot)
    n += snprintf (line + n, len - (size_t) n, " %u%s%s", a->slot_no,
                   *path ? " " : "", path);
  if (a->min_kib)
    n += snprintf (line + n, len - (size_t) n, " --min %" PRIu64, a->min_kib);
  if (a->max_kib)
    n += snprintf (line + n, len - (size_t) n, " --max %" PRIu64, a->max_kib);
  if (a->force)
    n += snprintf (line + n, len - (size_t) n, " --force");
  if ((a->given & ACMD_SIZE) && a->size_sectors)
    n += snprintf (line + n, len - (size_t) n, " --size=%" PRIu64,
                   a->size_sectors);
  else if (a->given & ACMD_SIZE)
    n += snprintf (line + n, len - (size_t) n, " --size=max");
  if (a->given & ACMD_ASSUME_CLEAN)
    n += snprintf (line + n, len - (size_t) n, " --assume-clean");
  if (a->given & ACMD_BITMAP)
    n += snprintf (line + n, len - (size_t) n, " --bitmap=%s",
                   a->bitmap ? "internal" : "none");
  return TOOL_OK;
}

static enum r5_job
job_of (const struct ctl_args *a)
{
  const struct array_cmd *c = a->cmd;

  if (a->given & ACMD_SIZE)
    return R5_JOB_RESYNC;     /* grow --size: its new space's */
  return strcmp (c->name, "check") == 0 ? R5_JOB_CHECK
    : strcmp (c->name, "repair") == 0 ? R5_JOB_REPAIR
    : strcmp (c->name, "grow") == 0 ? R5_JOB_RESHAPE
    : strcmp (c->name, "replace") == 0 ? R5_JOB_REPLACE : R5_JOB_REBUILD;
}

int
ctl_main (const char *path, int argc, char **argv)
{
  struct ctl_args a = { .cmd = array_cmd_find (argv[0]),
                        .list = ARRAY_FOUND_MAX, .fs_off = CHECK_FS_AUTO };
  static char line[(R5_MAX_MEMBERS + 1) * (PATH_MAX + 8)];
  char *reply;
  bool nothing;
  int r;

  if (a.cmd == NULL || a.cmd->opts & ACMD_HIDDEN)
    return tool_error ("not a command of the control socket (%s)",
                       array_cmd_names ());
  if (parse_options (argc, argv, &a) != TOOL_OK ||
      parse_args (argc, argv, &a) != TOOL_OK ||
      compose (&a, line, sizeof line) != TOOL_OK ||
      ctl_request (path, line, &reply) != TOOL_OK)
    return TOOL_FAIL;
  r = ctl_reply (reply, a.wait && a.json ? stderr : stdout);
  /* grow --size with nothing to resync: no job to wait for. */
  nothing = (a.given & (ACMD_ASSUME_CLEAN | ACMD_BITMAP)) ||
    strstr (reply, ACMD_UNCHANGED) != NULL;
  free (reply);
  if (r != TOOL_OK || !a.wait || nothing)
    return r;
  fflush (stdout);
  return ctl_wait (&(struct ctl_wait) {
      .path = path, .kind = job_of (&a), .json = a.json, .list = a.list,
      .files = a.given & ACMD_FILES, .fs_off = a.fs_off,
      .slot = a.slot_no });
}
