/* plugin/params.h -- the plugin's key=value parameters.
 *
 * Filled by nbdkit's config callbacks (single-threaded, before serving) and
 * read-only afterwards.  Errors are reported with nbdkit_error().
 */
#ifndef PLUGIN_PARAMS_H
#define PLUGIN_PARAMS_H

#include "array/array.h"

struct params {
  struct array_config array;  /* paths are owned here (NULL = missing) */
  uint64_t sync_speed_min, sync_speed_max;  /* KiB/s per member; 0: not given */
  uint64_t sync_latency_max_us;   /* latency-target mode; 0: md's pacing */
  char *control;              /* control socket path, or NULL */
  uint32_t given;             /* the keys seen (bits of params.c's table) */
};

/* Set the defaults (mdadm's: 512K chunk, left-symmetric). */
void params_init (struct params *p);

/* Handle one key=value.  Returns 0, or -1 after nbdkit_error(). */
int params_config (struct params *p, const char *key, const char *value);

/* Check the whole set once every key has been seen.  Returns 0 or -1. */
int params_complete (struct params *p);

/* Free the owned strings. */
void params_free (struct params *p);

#define PARAMS_HELP \
  "disk=PATH          (required, 3 or more) Members in role order; PATH\n" \
  "                   'missing' stands for one absent member.  An NBD\n" \
  "                   URI (nbd://HOST[:PORT]/EXPORT, nbds://...,\n" \
  "                   nbd+unix:///EXPORT?socket=PATH) is a member too.\n" \
  "tls-certificates=DIR  nbds:// members: verify their servers'\n" \
  "                   certificates with DIR/ca-cert.pem (and show\n" \
  "                   DIR/client-cert.pem, client-key.pem if there).\n" \
  "tls-psk=FILE       ... or authenticate them with a pre-shared key\n" \
  "                   (psktool's USER:HEXKEY lines) ...\n" \
  "tls-username=NAME  ... of NAME (default: the URI's user, else the\n" \
  "                   effective user's name).\n" \
  "tls=require        Refuse plain-text members (nbd://); default auto:\n" \
  "                   TLS for nbds:// members.\n" \
  "chunk=SIZE         Chunk size, a power of two >= 4K (default 512K).\n" \
  "layout=NAME        left-symmetric (default), left-asymmetric,\n" \
  "                   right-symmetric, right-asymmetric (ls/la/rs/ra),\n" \
  "                   parity-first or parity-last.\n" \
  "data-offset=SIZE   Where data starts on each member (default 0).\n" \
  "metadata=auto|none auto (default): md v1.2 superblocks, when the\n" \
  "                   members have them, define geometry and roles;\n" \
  "                   none: raw members, geometry from the parameters.\n" \
  "force=BOOL         Start a dirty and degraded array anyway.\n" \
  "readonly=BOOL      Write nothing to the members (md's read-only\n" \
  "                   array: opened for reading, no resync or rebuild,\n" \
  "                   no superblock update); clients may only read.\n" \
  "sync-speed-min=KIB Resync speed while clients are busy, KiB/s per\n" \
  "                   member (default 1000, as md).\n" \
  "sync-speed-max=KIB Resync speed while clients are idle (default\n" \
  "                   200000).\n" \
  "sync-latency-max=TIME  While clients are busy, pace the job by their\n" \
  "                   latency instead of at sync-speed-min: as fast as\n" \
  "                   keeps their p99 under TIME (500us, 2ms, 0.1s;\n" \
  "                   bare: ms), between min and max.\n" \
  "direct=BOOL        Use O_DIRECT member I/O (default false).\n" \
  "control=PATH       A control socket (mode 0600) for raid5ctl --control:\n" \
  "                   status, check, repair, rebuild, fail, pause, resume,\n" \
  "                   speed.\n" \
  "spare=PATH         A hot spare: a failed member is rebuilt onto it.\n" \
  "                   Refused if it holds a file system, another array's\n" \
  "                   superblock or any signature libblkid knows ...\n" \
  "spare-force=BOOL   ... unless true: then a rebuild overwrites it.\n" \
  "integrity=PATH     A crc32c per 4 KiB of every member, kept in PATH\n" \
  "                   (made if absent): reads verify and heal.\n" \
  "backup-file=PATH   mdadm's --backup-file of a grow that keeps its data\n" \
  "                   offset (needed to go on with one stopped early).\n" \
  "member-timeout=SECONDS  An NBD member with requests in flight and\n" \
  "                   none completing this long is failed (default 5).\n" \
  "member-connections=N  Connections to each NBD member whose server\n" \
  "                   offers multi-conn, 1 to 16 (default 2); each\n" \
  "                   carries many commands at once.\n" \
  "re-add=auto|manual auto (default): a failed NBD member is reached\n" \
  "                   again by itself and re-added when the bitmap\n" \
  "                   covers what it missed; manual: by hand only."

#endif /* PLUGIN_PARAMS_H */
