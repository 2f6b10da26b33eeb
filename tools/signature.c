/* tools/signature.c -- signatures on a disk, as libblkid finds them
 * (see signature.h).
 */
#include <config.h>

#include <blkid.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools/raid5ctl.h"
#include "tools/signature.h"

/* What libblkid reports, with the magic of each hit (to hide it and look
 * again, and to zero it later).  wipefs's own choice of chains and flags:
 * a GPT is looked for even without its protective MBR, so a backup
 * header left at the end of the disk is found too.
 */
#define SUPERBLOCK_VALUES (BLKID_SUBLKS_TYPE | BLKID_SUBLKS_USAGE | \
                           BLKID_SUBLKS_LABEL | BLKID_SUBLKS_UUID | \
                           BLKID_SUBLKS_VERSION | BLKID_SUBLKS_MAGIC)
#define PARTITION_VALUES (BLKID_PARTS_MAGIC | BLKID_PARTS_FORCE_GPT)

/* A prober for fd, or NULL (errno set if libblkid set it). */
static blkid_probe
new_probe (int fd)
{
  blkid_probe pr = blkid_new_probe ();

  if (pr == NULL)
    return NULL;
  if (blkid_probe_set_device (pr, fd, 0, 0) != 0 ||
      blkid_probe_enable_superblocks (pr, 1) != 0 ||
      blkid_probe_set_superblocks_flags (pr, SUPERBLOCK_VALUES) != 0 ||
      blkid_probe_enable_partitions (pr, 1) != 0 ||
      blkid_probe_set_partitions_flags (pr, PARTITION_VALUES) != 0) {
    blkid_free_probe (pr);
    return NULL;
  }
  return pr;
}

/* Copy the current hit's value of key into out ("" if it has none).
 * Returns whether it had one.
 */
static bool
lookup (blkid_probe pr, const char *key, char *out, size_t len)
{
  const char *v;

  out[0] = '\0';
  if (blkid_probe_lookup_value (pr, key, &v, NULL) != 0)
    return false;
  snprintf (out, len, "%s", v);
  return true;
}

static enum sig_kind
kind_of_usage (const char *usage)
{
  if (strcmp (usage, "filesystem") == 0)
    return SIG_FILESYSTEM;
  if (strcmp (usage, "raid") == 0)
    return SIG_RAID;
  if (strcmp (usage, "crypto") == 0)
    return SIG_CRYPTO;
  return SIG_OTHER;
}

/* Where the current hit's magic is, and how long: superblocks and
 * partition tables name them differently.
 */
static void
read_magic (blkid_probe pr, struct sig *s)
{
  bool pt = s->kind == SIG_PARTITION_TABLE;
  const char *magic;
  size_t len = 0;
  char off[32];

  if (!lookup (pr, pt ? "PTMAGIC_OFFSET" : "SBMAGIC_OFFSET", off, sizeof off)
      || blkid_probe_lookup_value (pr, pt ? "PTMAGIC" : "SBMAGIC", &magic,
                                   &len) != 0)
    return;
  s->offset = strtoull (off, NULL, 10);
  s->len = len > SIG_MAGIC_MAX ? SIG_MAGIC_MAX : (uint32_t) len;
}

static void
read_hit (blkid_probe pr, struct sig *s)
{
  char usage[32];

  memset (s, 0, sizeof *s);
  if (lookup (pr, "TYPE", s->type, sizeof s->type)) {
    lookup (pr, "USAGE", usage, sizeof usage);
    s->kind = kind_of_usage (usage);
    lookup (pr, "UUID", s->uuid, sizeof s->uuid);
  } else {
    s->kind = SIG_PARTITION_TABLE;
    lookup (pr, "PTTYPE", s->type, sizeof s->type);
    lookup (pr, "PTUUID", s->uuid, sizeof s->uuid);
  }
  lookup (pr, "LABEL", s->label, sizeof s->label);
  lookup (pr, "VERSION", s->version, sizeof s->version);
  read_magic (pr, s);
}

/* Hide the hit in libblkid's buffer and make the same prober run again
 * (it may find a second copy: md's other versions, a GPT backup).  Not
 * when the magic is unknown or cannot be hidden: the prober would find
 * the same hit again, for ever.
 */
static void
look_again (blkid_probe pr, const struct sig *s)
{
  if (s->len > 0 && blkid_probe_hide_range (pr, s->offset, s->len) == 0)
    blkid_probe_step_back (pr);
}

int
sig_find (int fd, struct sig_list *list)
{
  blkid_probe pr;
  int r;

  list->n = 0;
  errno = 0;
  if ((pr = new_probe (fd)) == NULL)
    return errno ? -errno : -ENOMEM;
  while ((errno = 0, r = blkid_do_probe (pr)) == 0) {
    if (list->n == SIG_MAX) {
      r = -E2BIG;
      break;
    }
    read_hit (pr, &list->sig[list->n]);
    look_again (pr, &list->sig[list->n++]);
  }
  if (r == -1)
    r = errno ? -errno : -EIO;
  blkid_free_probe (pr);
  return r == 1 ? 0 : r;
}

bool
sig_is_md (const struct sig *s)
{
  return strcmp (s->type, "linux_raid_member") == 0;
}

/* Hex digits in groups of 8 joined by ':' (at out[8], [17], [26]). */
void
sig_md_uuid (const struct sig *s, char out[36])
{
  size_t n = 0;

  for (const char *c = s->uuid; *c != '\0' && n < 35; c++) {
    if (!isxdigit ((unsigned char) *c))
      continue;
    if (n % 9 == 8)
      out[n++] = ':';
    out[n++] = *c;
  }
  out[n] = '\0';
}

static const char *
kind_noun (enum sig_kind kind)
{
  switch (kind) {
  case SIG_FILESYSTEM: return "file system";
  case SIG_RAID: return "RAID or volume manager signature";
  case SIG_CRYPTO: return "encrypted volume";
  case SIG_PARTITION_TABLE: return "partition table";
  case SIG_OTHER: break;
  }
  return "signature";
}

/* "an ext4", "an xfs", "an LVM2_member", but "a gpt", "a swap". */
static const char *
article (const char *word)
{
  bool initialism = word[0] != '\0' && isupper ((unsigned char) word[1]);

  if (word[0] == '\0')
    return "a";
  if (strchr ("aeiouAEIOUx", word[0]) ||
      (initialism && strchr ("FHLMNRSX", word[0])))
    return "an";
  return "a";
}

const char *
sig_describe (const struct sig *s, char *buf, size_t len)
{
  char label[80] = "", uuid[56] = "";

  if (s->label[0] != '\0')
    snprintf (label, sizeof label, "label '%s', ", s->label);
  if (s->uuid[0] != '\0')
    snprintf (uuid, sizeof uuid, "UUID %s, ", s->uuid);
  snprintf (buf, len, "%s %s %s (%s%sat byte %" PRIu64 ")", article (s->type),
            s->type, kind_noun (s->kind), label, uuid, s->offset);
  return buf;
}

/* The one line for a disk holding signatures: the first that libblkid
 * found (an md superblock says which array it is), and how many more.
 */
int
sig_refuse (const char *disk, const struct sig_list *l)
{
  const struct sig *s = &l->sig[0];
  const char *them = l->n > 1 ? "them" : "it";
  char what[256], more[40] = "", uuid[36], name[80] = "";

  if (l->n > 1)
    snprintf (more, sizeof more, "; %u more signature%s", l->n - 1,
              l->n > 2 ? "s" : "");
  if (!sig_is_md (s))
    return tool_error ("%s holds %s%s (--force overwrites %s)", disk,
                       sig_describe (s, what, sizeof what), more, them);
  sig_md_uuid (s, uuid);
  if (s->label[0] != '\0')
    snprintf (name, sizeof name, ", name '%s'", s->label);
  return tool_error ("%s already holds an md superblock (v%s, at byte %"
                     PRIu64 "): it belongs to array UUID %s%s%s (--force "
                     "overwrites %s)", disk, s->version, s->offset, uuid,
                     name, more, them);
}
