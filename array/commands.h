/* array/commands.h -- the control commands, in one table: the server
 * dispatches by it (array/control.c), raid5ctl parses, checks, documents
 * and lists them by it (tools/ctl.c, tools/raid5ctl.c).
 *
 * Each command is one line on the control socket, its words split on
 * white space; the server answers with lines, the last "OK" or
 * "ERROR: why".  raid5ctl's own options (--wait, --list, sizes with
 * suffixes) are turned into the server's line by raid5ctl; the server's
 * syntax is the entry's wire usage.
 *
 * The table is constant: safe from any thread.
 */
#ifndef ARRAY_COMMANDS_H
#define ARRAY_COMMANDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Options raid5ctl takes for a command with --control. */
#define ACMD_JSON 1u
#define ACMD_WAIT 2u
#define ACMD_LIST 4u
#define ACMD_SLOT 8u
#define ACMD_NEW 16u
#define ACMD_MIN 32u
#define ACMD_MAX 64u
#define ACMD_FILES 128u
#define ACMD_FS_OFFSET 256u
#define ACMD_FORCE 512u
#define ACMD_HIDDEN 1024u /* raid5ctl's own use: not a command it offers */
#define ACMD_ADD 2048u
#define ACMD_BACKUP 4096u
#define ACMD_SIZE 8192u
#define ACMD_ASSUME_CLEAN 16384u
#define ACMD_BITMAP 32768u

/* The most bytes one read command returns: its reply (hex, newlines) is
 * then under 600 KiB, within what raid5ctl takes.
 */
#define ARRAY_READ_MAX (256u << 10)

/* How a reply begins when the command changed nothing (grow --size
 * with no room, grow --bitmap already so): raid5ctl --wait then has no
 * job to follow.
 */
#define ACMD_UNCHANGED "unchanged: "

struct array;
struct array_err;

struct array_cmd {
  const char *name;
  const char *summary;        /* one line, for raid5ctl --help */
  const char *wire;           /* the server's usage: "rebuild SLOT [PATH]" */
  unsigned min_words, max_words;  /* words of the line, the name included */
  unsigned opts;              /* ACMD_* raid5ctl takes with --control */
  unsigned args;              /* raid5ctl's positional arguments at most */
  const char *synopsis;       /* after "raid5ctl NAME --control SOCKET" */
  /* --help for a command only a server carries out, or NULL: raid5ctl
   * also runs it on members (its own --help says both).
   */
  const char *text;
  /* The server's part: words w[0..n) checked against the counts above;
   * output to out; 0 or -errno with err set.
   */
  int (*run) (struct array *a, char **w, unsigned n, FILE *out,
              struct array_err *err);
};

extern const struct array_cmd array_cmds[];
extern const size_t array_ncmds;

/* The entry named name, or NULL. */
const struct array_cmd *array_cmd_find (const char *name)
  __attribute__((nonnull));

/* "status, check, repair, ..., speed": every name, for messages. */
const char *array_cmd_names (void);

#endif /* ARRAY_COMMANDS_H */
