/* tools/raid5ctl.h -- what the subcommands of raid5ctl share.
 *
 * raid5ctl.c holds main(): it picks the subcommand named by argv[1] from
 * its table and calls its run function with argv[0] = the subcommand's
 * name.  With --control SOCKET (before the subcommand, or among its
 * arguments) a subcommand the server knows goes to ctl_main() instead.  Each subcommand lives in its own file (create.c, examine.c, ...)
 * and parses its own options with tool_getopt().
 *
 * Conventions every subcommand keeps:
 *  - --help prints its usage to stdout and exits 0;
 *  - an error prints exactly one line to stderr, "raid5ctl SUB: WHAT:
 *    WHY" (tool_error), and the exit status is non-zero;
 *  - everything is checked before anything is written.
 * Reports go to stdout; progress of long jobs to stderr.
 */
#ifndef TOOLS_RAID5CTL_H
#define TOOLS_RAID5CTL_H

#include <getopt.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "io/tls.h"

/* Exit statuses. */
#define TOOL_OK 0
#define TOOL_FAIL 1             /* the job failed, or bad usage */

struct tool_cmd {
  const char *name;
  const char *summary;        /* one line for raid5ctl --help; NULL: the
                               * control table's (array/commands.h) */
  int (*run) (int argc, char **argv);   /* returns an exit status */
  bool members;               /* it names members (takes the TLS options) */
};

/* The subcommands (one file each). */
int create_main (int argc, char **argv);
int examine_main (int argc, char **argv);
int check_main (int argc, char **argv);
int repair_main (int argc, char **argv);
int rebuild_main (int argc, char **argv);
int readd_main (int argc, char **argv);
int grow_main (int argc, char **argv);
/* grow --size's argument: max (*sectors 0) or a size per member in whole
 * sectors (bare: KiB).  TOOL_OK, or TOOL_FAIL with the error said.
 */
int grow_parse_size (const char *arg, uint64_t *sectors);
/* grow --bitmap's argument: internal (*on 1) or none (0).  TOOL_OK, or
 * TOOL_FAIL with the error said.
 */
int grow_parse_bitmap (const char *arg, int *on);
int replace_main (int argc, char **argv);
int layout_main (int argc, char **argv);       /* teaching: teach.h */
int map_main (int argc, char **argv);
int explain_main (int argc, char **argv);
int mkfs_hint_main (int argc, char **argv);
int monitor_main (int argc, char **argv);      /* served arrays' events */

/* The running subcommand's name, for messages ("create"); set by main. */
const char *tool_sub (void);

/* Print "raid5ctl SUB: MESSAGE" and a newline to stderr.  Returns
 * TOOL_FAIL so that callers can `return tool_error (...)`.
 */
int tool_error (const char *fmt, ...) __attribute__((format (printf, 1, 2)));

/* getopt_long() with one-line errors: returns the option's value, -1 at
 * the end of the options, or '?' after printing "raid5ctl SUB: unknown
 * option --x (see raid5ctl SUB --help)" or "... --x needs a value".
 * shortopts need not start with ':'; it is added here.
 */
int tool_getopt (int argc, char **argv, const char *shortopts,
                 const struct option *longopts);

/* Numbers and sizes are parsed by raid/number.h alone (no sign, space,
 * hex or exponent; within a range).  Parse opt's value arg as a whole
 * number from min to max: TOOL_OK with *out set, or TOOL_FAIL after
 * "OPT ARG: expected a whole number from MIN to MAX".
 */
int tool_parse_uint (const char *opt, const char *arg, uint64_t min,
                     uint64_t max, uint64_t *out)
  __attribute__((nonnull, warn_unused_result));

/* Parse a speed option's value: KiB per second and member, or a size with
 * K, M, G or T; 1K to 1T (ARRAY_SYNC_SPEED_LIMIT KiB).  Returns TOOL_OK
 * with *kib set, or TOOL_FAIL after one error line naming opt and arg.
 */
int tool_parse_speed (const char *opt, const char *arg, uint64_t *kib)
  __attribute__((nonnull, warn_unused_result));

/* bytes as a short human size: "512 KiB", "1.50 GiB", "7 bytes".
 * Writes into buf (len >= 32 is always enough) and returns buf.
 */
const char *tool_human (uint64_t bytes, char *buf, size_t len)
  __attribute__((nonnull));

/* Write s to stdout quoted for a POSIX shell when it needs quoting. */
void tool_print_shell_word (const char *s) __attribute__((nonnull));

/* NBD members over TLS (tools/tls.c; io/tls.h): --tls-certificates DIR,
 * --tls-psk FILE, --tls-username NAME and --tls=require|auto, before the
 * command or among its arguments (up to "--"), for every command that
 * names members, as the plugin's tls-* parameters.
 *
 * tool_take_tls takes them out of argv (main does, before anything
 * else): TOOL_OK, or TOOL_FAIL after one error line.  tool_check_tls,
 * before the command runs, refuses settings that cannot be used
 * (io_tls_check), a --tls-username without --tls-psk, and a TLS URI among
 * the arguments with neither certificates nor PSK.  tool_tls_given
 * names the first option given (NULL: none).  tool_tls is what
 * every member is opened with; tool_tls_help prints the options for a
 * command's --help.
 */
int tool_take_tls (int *argc, char **argv) __attribute__((nonnull));
const char *tool_tls_given (void);     /* the first given, or NULL */
int tool_check_tls (int argc, char **argv) __attribute__((nonnull));
const struct io_tls *tool_tls (void);
void tool_tls_help (void);

#endif /* TOOLS_RAID5CTL_H */
